import http from 'node:http';
import { readFile } from 'node:fs/promises';
import { sseFrames, type BenchEnv } from './lib.js';

/**
 * 2,000 concurrent SSE connections on one API instance: half on the organization stream, half on the
 * administrator's own stream. Events are recorded (a) directly in SQL (INSERT INTO event + pg_notify,
 * the shape of recordEvent; audience = the administrator, so every connection receives them) and
 * (b) through the API (POST /notifications/test: inbox row + notification.created on the personal
 * streams). Latency is measured at every receiving connection: for (a) from the moment COMMIT is sent,
 * for (b) from the moment the HTTP request is sent. Server RSS from /proc/<pid>/status when the
 * runner gives the pid, else from GET /admin/mobile-health (`instance.rss_bytes`).
 */
export default async function realtimeBench(env: BenchEnv) {
  const CONNECTIONS = Number(process.env.BENCH_SSE_CONNECTIONS) || (env.quick ? 500 : 2_000);
  const EVENTS_PER_SECOND = 20;
  const seconds = env.duration;
  const token = await env.login('admin@demo.test');
  const { rows } = await env.pool.query("SELECT organization_id, id FROM users WHERE email = 'admin@demo.test'");
  const { organization_id: orgId, id: adminId } = rows[0];
  const serverPid = (env as BenchEnv & { serverPid?: number }).serverPid;

  async function rssBytes(): Promise<number> {
    if (serverPid) {
      const status = await readFile(`/proc/${serverPid}/status`, 'utf8').catch(() => '');
      const m = /VmRSS:\s+(\d+) kB/.exec(status);
      if (m) return Number(m[1]) * 1024;
    }
    const r = await fetch(`${env.baseUrl}/api/v1/admin/mobile-health`, { headers: { authorization: `Bearer ${token}` } });
    return ((await r.json()) as { instance: { rss_bytes: number } }).instance.rss_bytes;
  }

  // seq or notification id → send time, and → receipt times (matched at the end: a receipt may beat the HTTP response).
  const sentAt = new Map<string, number>();
  const receipts = new Map<string, number[]>();
  const received = (key: string, at: number) => {
    const list = receipts.get(key);
    if (list) list.push(at);
    else receipts.set(key, [at]);
  };
  const streams: http.ClientRequest[] = [];
  let errors = 0;

  function openStream(path: string): Promise<void> {
    return new Promise((resolve, reject) => {
      const req = http.get(
        `${env.baseUrl}/api/v1${path}`,
        { agent: false, headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' } },
        (res) => {
          if (res.statusCode !== 200) return reject(new Error(`stream ${path}: ${res.statusCode}`));
          sseFrames(res, ({ id, type, text }, now) => {
            if (!id || !type) return;
            if (type === 'notification.created') {
              const nid = /"notification":\{"id":"([^"]+)"/.exec(text)?.[1];
              if (nid) received(`n:${nid}`, now);
            } else received(`s:${id}`, now);
          });
          res.on('error', () => errors++);
          resolve();
        },
      );
      req.on('error', (e) => {
        errors++;
        reject(e);
      });
      streams.push(req);
    });
  }

  /** utime + stime of the server process in ms (needs the pid), to see the server's own cost apart from a busy machine. */
  async function serverCpuMs(): Promise<number | null> {
    if (!serverPid) return null;
    const stat = await readFile(`/proc/${serverPid}/stat`, 'utf8').catch(() => null);
    if (!stat) return null;
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(f[11]) + Number(f[12])) * 1000) / 100; // clock ticks (USER_HZ = 100)
  }

  const rssIdle = await rssBytes();
  const t0 = performance.now();
  for (let i = 0; i < CONNECTIONS; i += 100) {
    await Promise.all(
      Array.from({ length: Math.min(100, CONNECTIONS - i) }, (_, j) =>
        openStream((i + j) % 2 ? '/realtime/me/stream' : '/realtime/organization/stream'),
      ),
    );
  }
  const openMs = performance.now() - t0;
  await new Promise((r) => setTimeout(r, 1000));
  const rssConnected = await rssBytes();

  async function sqlEvent(k: number) {
    const c = await env.pool.connect();
    try {
      await c.query('BEGIN');
      const { rows: r } = await c.query(
        `INSERT INTO event (organization_id, id, type, entity_type, entity_id, audience_user_ids, payload)
         VALUES ($1, gen_random_uuid()::text, 'trip.location_updated', 'trip', 'bench-trip', $2, $3) RETURNING seq`,
        [orgId, [adminId], JSON.stringify({ k, location: { type: 'Point', coordinates: [-68.1193, -16.4897] } })],
      );
      await c.query('SELECT pg_notify($1, $2)', ['app_events', JSON.stringify({ organization_id: orgId, seq: r[0].seq })]);
      sentAt.set(`s:${r[0].seq}`, performance.now());
      await c.query('COMMIT');
    } finally {
      c.release();
    }
  }

  async function apiEvent(k: number) {
    const start = performance.now();
    const r = await fetch(`${env.baseUrl}/api/v1/notifications/test`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ title: `bench ${k}` }),
    });
    if (r.status !== 201) {
      errors++;
      return;
    }
    const n = (await r.json()) as { id: string };
    sentAt.set(`n:${n.id}`, start);
  }

  let peakRss = rssConnected;
  const sampler = setInterval(() => void rssBytes().then((v) => (peakRss = Math.max(peakRss, v))), 500);
  const total = seconds * EVENTS_PER_SECOND;
  const cpuBefore = await serverCpuMs();
  const pending: Promise<void>[] = [];
  for (let k = 0; k < total; k++) {
    pending.push(k % 2 ? apiEvent(k) : sqlEvent(k));
    await new Promise((r) => setTimeout(r, 1000 / EVENTS_PER_SECOND));
  }
  await Promise.all(pending);
  await new Promise((r) => setTimeout(r, 2000));
  clearInterval(sampler);
  const cpuAfter = await serverCpuMs();
  peakRss = Math.max(peakRss, await rssBytes());
  for (const s of streams) s.destroy();
  const sqlLat: number[] = [];
  const apiLat: number[] = [];
  for (const [key, at] of receipts) {
    const sent = sentAt.get(key);
    if (sent === undefined) continue;
    for (const r of at) (key.startsWith('s:') ? sqlLat : apiLat).push(r - sent);
  }

  const pct = (a: number[], p: number) => {
    if (a.length === 0) return NaN;
    const s = [...a].sort((x, y) => x - y);
    return s[Math.min(s.length - 1, Math.floor(s.length * p))];
  };
  const sqlEvents = Math.ceil(total / 2);
  const apiEvents = Math.floor(total / 2);
  const note = `${CONNECTIONS} connections`;
  env.report({ scenario: 'realtime', metric: 'open connections (ms)', value: openMs, unit: 'ms', note });
  env.report({
    scenario: 'realtime',
    metric: 'SQL event → receipt p50',
    value: pct(sqlLat, 0.5),
    unit: 'ms',
    note: `${sqlLat.length}/${sqlEvents * CONNECTIONS} receipts`,
  });
  env.report({ scenario: 'realtime', metric: 'SQL event → receipt p99', value: pct(sqlLat, 0.99), unit: 'ms', note: 'target < 200' });
  env.report({
    scenario: 'realtime',
    metric: 'API event → receipt p50',
    value: pct(apiLat, 0.5),
    unit: 'ms',
    note: `${apiLat.length}/${apiEvents * (CONNECTIONS / 2)} receipts`,
  });
  env.report({
    scenario: 'realtime',
    metric: 'API event → receipt p99',
    value: pct(apiLat, 0.99),
    unit: 'ms',
    note: 'includes the request',
  });
  env.report({ scenario: 'realtime', metric: 'server RSS idle', value: rssIdle / 1048576, unit: 'MB' });
  env.report({ scenario: 'realtime', metric: 'server RSS connected', value: rssConnected / 1048576, unit: 'MB', note });
  env.report({ scenario: 'realtime', metric: 'server RSS peak under events', value: peakRss / 1048576, unit: 'MB', note: 'target < 400' });
  if (cpuBefore !== null && cpuAfter !== null) {
    const deliveries = Math.ceil(total / 2) * CONNECTIONS + Math.floor(total / 2) * (CONNECTIONS / 2);
    env.report({
      scenario: 'realtime',
      metric: 'server CPU per 1,000 deliveries',
      value: ((cpuAfter - cpuBefore) / deliveries) * 1000,
      unit: 'ms',
      note: `${deliveries} deliveries`,
    });
  }
  env.report({ scenario: 'realtime', metric: 'stream errors', value: errors });
}
