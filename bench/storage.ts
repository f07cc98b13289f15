import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdtemp, readFile, readdir, readlink, rm } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { once } from 'node:events';
import type { BenchEnv } from './lib.js';

/**
 * Uploads: 1 MiB PUTs through HTTP (slot opened beforehand) against writing the same bytes to disk
 * with SHA-256 and fsync in this process (the ratio is the target, >= 0.5), then the server's peak
 * RSS while one 50 MiB file streams in. The server needs `STORAGE_MAX_BYTES_OTHER >= 52428800`
 * (bench/run.ts: `BENCH_SERVER_STORAGE_MAX_BYTES_OTHER=67108864`), else the 50 MiB part is skipped.
 */
const MiB = 1024 * 1024;
const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });

/** Bytes that pass the PNG signature check: signature, IHDR, one IDAT chunk header, then filler. */
function pngLike(size: number): { head: Buffer; filler: (n: number) => Buffer } {
  const ihdr = Buffer.from('0000000d494844520000010000000100080200000090773d53', 'hex');
  const idat = Buffer.alloc(8);
  idat.writeUInt32BE(size - 8 - ihdr.length - 8);
  idat.write('IDAT', 4, 'ascii');
  const head = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), ihdr, idat]);
  const block = randomBytes(MiB);
  return { head, filler: (n) => block.subarray(0, n) };
}

function onePng(size: number): Buffer {
  const { head, filler } = pngLike(size);
  return Buffer.concat([head, filler(size - head.length)]);
}

interface Slot {
  upload_id: string;
  upload_token: string;
}

async function openSlot(env: BenchEnv, token: string, size: number): Promise<Slot | { status: number; body: string }> {
  const r = await fetch(`${env.baseUrl}/api/v1/storage/generic/uploads`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ purpose: 'other', mime_type: 'image/png', size_bytes: size, filename: 'bench.png' }),
  });
  if (r.status !== 201) return { status: r.status, body: await r.text() };
  return (await r.json()) as Slot;
}

/** PUT with node:http so the body can be a stream of chunks (never one 50 MiB buffer). */
function put(env: BenchEnv, token: string, slot: Slot, size: number, write: (req: http.ClientRequest) => Promise<void>): Promise<number> {
  const url = new URL(`${env.baseUrl}/api/v1/storage/uploads/${slot.upload_id}`);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        agent,
        method: 'PUT',
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        headers: {
          authorization: `Bearer ${token}`,
          'x-upload-token': slot.upload_token,
          'content-type': 'image/png',
          'content-length': size,
        },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    write(req).then(() => req.end(), reject);
  });
}

async function diskBaseline(body: Buffer, n: number): Promise<number> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'bench-storage-'));
  const t0 = performance.now();
  for (let i = 0; i < n; i++) {
    const hash = createHash('sha256');
    const out = createWriteStream(path.join(dir, `f${i}`), { flush: true });
    hash.update(body);
    out.end(body);
    await once(out, 'close');
    hash.digest('hex');
  }
  const seconds = (performance.now() - t0) / 1000;
  await rm(dir, { recursive: true, force: true });
  return (n * body.length) / MiB / seconds;
}

/** The server process: from the runner if it says, else the process listening on the port (Linux /proc). */
async function serverPid(env: BenchEnv): Promise<number | null> {
  const given = (env as BenchEnv & { serverPid?: number }).serverPid;
  if (given) return given;
  const port = Number(new URL(env.baseUrl).port).toString(16).toUpperCase().padStart(4, '0');
  const inodes = new Set<string>();
  for (const f of ['/proc/net/tcp', '/proc/net/tcp6']) {
    const text = await readFile(f, 'utf8').catch(() => '');
    for (const line of text.split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      if (cols[1]?.endsWith(`:${port}`) && cols[3] === '0A') inodes.add(cols[9]);
    }
  }
  for (const pid of (await readdir('/proc').catch(() => [])).filter((p) => /^\d+$/.test(p))) {
    const fds = await readdir(`/proc/${pid}/fd`).catch(() => []);
    for (const fd of fds) {
      const link = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '');
      const m = /^socket:\[(\d+)\]$/.exec(link);
      if (m && inodes.has(m[1])) return Number(pid);
    }
  }
  return null;
}

async function rssMiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) / 1024;
}

export default async function storageBench(env: BenchEnv) {
  const token = await env.login('customer@demo.test');
  const n = env.quick ? 30 : 150;
  const body = onePng(MiB);

  // 1. In-process ceiling: the same bytes, SHA-256 and fsync, no HTTP, no database.
  const diskRate = await diskBaseline(body, n);

  // 2. Through the API, one at a time: slots opened first, the PUTs timed.
  const slots: Slot[] = [];
  const ts = performance.now();
  for (let i = 0; i < n; i++) {
    const s = await openSlot(env, token, body.length);
    if (!('upload_id' in s)) throw new Error(`slot: ${s.status} ${s.body}`);
    slots.push(s);
  }
  const slotMs = (performance.now() - ts) / n;
  const t0 = performance.now();
  for (const s of slots) {
    const status = await put(env, token, s, body.length, async (req) => void req.write(body));
    if (status !== 201) throw new Error(`PUT returned ${status}`);
  }
  const httpRate = (n * body.length) / MiB / ((performance.now() - t0) / 1000);

  // 3. Four concurrent uploaders.
  const conc: Slot[] = [];
  for (let i = 0; i < n; i++) conc.push((await openSlot(env, token, body.length)) as Slot);
  const t1 = performance.now();
  await Promise.all(
    Array.from({ length: 4 }, async (_, w) => {
      for (let i = w; i < n; i += 4) await put(env, token, conc[i], body.length, async (req) => void req.write(body));
    }),
  );
  const concRate = (n * body.length) / MiB / ((performance.now() - t1) / 1000);

  env.report({ scenario: 'storage', metric: '1 MiB write+sha256+fsync in-process', value: diskRate, unit: 'MiB/s', note: `${n} files` });
  env.report({
    scenario: 'storage',
    metric: '1 MiB PUT through HTTP (sequential)',
    value: httpRate,
    unit: 'MiB/s',
    note: 'verify, sha256, fsync, row',
  });
  env.report({ scenario: 'storage', metric: 'PUT / in-process ratio', value: httpRate / diskRate, note: 'target >= 0.5' });
  env.report({ scenario: 'storage', metric: 'slot request (POST) mean latency', value: slotMs, unit: 'ms' });
  env.report({ scenario: 'storage', metric: '1 MiB PUT mean latency', value: (body.length / MiB / httpRate) * 1000, unit: 'ms' });
  env.report({ scenario: 'storage', metric: '1 MiB PUT through HTTP (4 concurrent)', value: concRate, unit: 'MiB/s' });

  // 4. Peak RSS of the server while one 50 MiB file streams in.
  const big = 50 * MiB;
  const pid = await serverPid(env);
  const slot = await openSlot(env, token, big);
  if (!('upload_id' in slot)) {
    env.report({
      scenario: 'storage',
      metric: '50 MiB upload peak RSS',
      value: 0,
      unit: 'MiB',
      note: `skipped: slot ${slot.status} (raise STORAGE_MAX_BYTES_OTHER)`,
    });
    return;
  }
  if (!pid) {
    env.report({ scenario: 'storage', metric: '50 MiB upload peak RSS', value: 0, unit: 'MiB', note: 'skipped: server pid unknown' });
    return;
  }
  const before = await rssMiB(pid);
  let peak = before;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      peak = Math.max(peak, await rssMiB(pid).catch(() => peak));
      await new Promise((r) => setTimeout(r, 10));
    }
  })();
  const { head, filler } = pngLike(big);
  const t2 = performance.now();
  const status = await put(env, token, slot, big, async (req) => {
    req.write(head);
    for (let left = big - head.length; left > 0; left -= MiB) {
      if (!req.write(filler(Math.min(MiB, left)))) await once(req, 'drain');
    }
  });
  const secs = (performance.now() - t2) / 1000;
  sampling = false;
  await sampler;
  if (status !== 201) throw new Error(`50 MiB PUT returned ${status}`);
  env.report({ scenario: 'storage', metric: '50 MiB PUT', value: 50 / secs, unit: 'MiB/s' });
  env.report({
    scenario: 'storage',
    metric: '50 MiB upload peak RSS',
    value: peak,
    unit: 'MiB',
    note: `before ${before.toFixed(0)} MiB, +${(peak - before).toFixed(1)} MiB`,
  });
}
