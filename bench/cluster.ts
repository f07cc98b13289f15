/**
 * npm run bench -- --cluster (or npm run cluster:demo): three API instances on one PostgreSQL database
 * behind nginx (Debian's package; installed with apt-get when missing), and what such a deployment relies on:
 *
 * 1. an event committed through one instance reaches SSE clients connected to the others (and through nginx);
 * 2. outbox rows are delivered once across all workers (push outbox → a local webhook sink counting
 *    deliveries per x-push-id; every instance runs the workers);
 * 3. login rate limits hold across instances (the buckets live in PostgreSQL);
 * 4. uploads with the S3 driver: skipped, no local S3-compatible server is available here.
 *
 * Prints a PASS/FAIL summary; the exit code is 1 when a check fails.
 */
import { rm } from 'node:fs/promises';
import http from 'node:http';
import pg from 'pg';
import { api, login, startServer, startSink, stopServer, type ServerProcess } from '../test/hardening/server-process.js';
import { startNginx } from '../test/hardening/nginx.js';
import { benchDatabaseUrl } from './lib.js';

const base = benchDatabaseUrl();
const FREE_LOGIN_ATTEMPTS = 6;
const results: { check: string; pass: boolean | null; detail: string }[] = [];
const record = (check: string, pass: boolean | null, detail: string) => {
  results.push({ check, pass, detail });
  console.log(`  ${pass === null ? 'SKIP' : pass ? 'PASS' : 'FAIL'}  ${check}: ${detail}`);
};

/** An SSE client on /realtime/organization/stream that keeps the raw text it receives. */
function sseClient(baseUrl: string, token: string) {
  let text = '';
  let req: http.ClientRequest;
  const ready = new Promise<void>((resolve, reject) => {
    req = http.get(
      `${baseUrl}/api/v1/realtime/organization/stream`,
      { agent: false, headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' } },
      (res) => {
        if (res.statusCode !== 200) return reject(new Error(`stream: ${res.statusCode}`));
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('error', () => undefined);
        resolve();
      },
    );
    req.on('error', () => undefined);
  });
  return { ready, has: (s: string) => text.includes(s), close: () => req.destroy() };
}

const dbName = `cluster_${Date.now()}`;
const admin = new pg.Client({ connectionString: base });
await admin.connect();
// Parallel sessions may hold template1 for a moment (CREATE DATABASE then refuses): retry.
for (let attempt = 1; ; attempt++) {
  try {
    await admin.query(`CREATE DATABASE ${dbName}`);
    break;
  } catch (err) {
    if (attempt >= 10) throw err;
    await new Promise((r) => setTimeout(r, 200 * attempt));
  }
}
const url = new URL(base);
url.pathname = `/${dbName}`;
const databaseUrl = url.toString();
const pool = new pg.Pool({ connectionString: databaseUrl, max: 4 });
pool.on('error', () => undefined); // an idle client dropped by the server is replaced on the next query
const sink = await startSink();
const servers: ServerProcess[] = [];
let nginx: Awaited<ReturnType<typeof startNginx>> | null = null;

try {
  const env = {
    WORKERS: 'true',
    PUSH_WEBHOOK_URL: sink.url,
    PUSH_WEBHOOK_SECRET: 'cluster-sink-secret-0123456789',
    PUSH_WORKER_INTERVAL_MS: '50',
    PUSH_BATCH_SIZE: '5',
    LOGIN_FREE_ATTEMPTS: String(FREE_LOGIN_ATTEMPTS),
    // nginx and this script both reach the instances from loopback: believe X-Forwarded-For from there.
    TRUST_PROXY: 'loopback',
  };
  // The first instance migrates and seeds; the others start on the ready database.
  for (let i = 0; i < 3; i++) servers.push(await startServer({ databaseUrl, env }));
  nginx = await startNginx(servers.map((s) => s.port));
  const lb = `http://127.0.0.1:${nginx.port}`;
  console.log(`\n== cluster: instances on ports ${servers.map((s) => s.port).join(', ')}, nginx on ${nginx.port}, database ${dbName}`);
  const [adminToken, dispatchToken] = [await login(lb, 'admin@demo.test'), await login(lb, 'dispatch@demo.test')];

  // ---------------------------------------------------------------- 1. events across instances
  const clients = [servers[1], servers[2]].map((s) => sseClient(s.baseUrl, dispatchToken));
  const viaLb = Array.from({ length: 6 }, () => sseClient(lb, dispatchToken));
  await Promise.all([...clients, ...viaLb].map((c) => c.ready));
  await new Promise((r) => setTimeout(r, 300));
  const t0 = performance.now();
  const trip = await api(servers[0].baseUrl, dispatchToken, 'POST', '/trips', {
    pickup_location: { type: 'Point', coordinates: [-68.13, -16.5] },
    pickup_address: 'cluster pickup',
    dropoff_location: { type: 'Point', coordinates: [-68.12, -16.49] },
    dropoff_address: 'cluster dropoff',
  });
  if (trip.status !== 201) throw new Error(`POST /trips: ${trip.status}`);
  const all = [...clients, ...viaLb];
  while (performance.now() - t0 < 5000 && !all.every((c) => c.has(trip.body.id))) await new Promise((r) => setTimeout(r, 10));
  const ms = Math.round(performance.now() - t0);
  const got = all.filter((c) => c.has(trip.body.id)).length;
  record(
    'SSE across instances',
    got === all.length,
    `trip.created committed on instance 1 reached ${got}/${all.length} streams (2 direct on instances 2 and 3, 6 through nginx) in ${ms} ms`,
  );
  for (const c of all) c.close();

  // ---------------------------------------------------------------- 2. outbox delivered once across workers
  await api(lb, adminToken, 'POST', '/mobile/devices', { platform: 'android', push_token: 'cluster-device-token-1' });
  await api(lb, adminToken, 'POST', '/mobile/devices', { platform: 'ios', push_token: 'cluster-device-token-2' });
  const N = 100;
  let created = 0;
  for (let i = 0; i < N; i += 10) {
    const rs = await Promise.all(
      Array.from({ length: 10 }, (_, k) =>
        api(servers[(i + k) % 3].baseUrl, adminToken, 'POST', '/notifications/test', { title: `cluster ${i + k}` }),
      ),
    );
    created += rs.filter((r) => r.status === 201).length;
  }
  const deadline = Date.now() + 20_000;
  let open = -1;
  while (Date.now() < deadline) {
    open = Number((await pool.query("SELECT count(*) FROM push_outbox WHERE status IN ('pending', 'sending')")).rows[0].count);
    if (open === 0) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const { rows: pushRows } = await pool.query<{ id: string; status: string }>('SELECT id, status FROM push_outbox');
  const once = pushRows.filter((r) => sink.deliveries.get(r.id) === 1).length;
  const twice = pushRows.filter((r) => (sink.deliveries.get(r.id) ?? 0) > 1).length;
  record(
    'outbox delivered once across 3 workers',
    open === 0 && pushRows.length === created * 2 && once === pushRows.length,
    `${created} notifications × 2 devices = ${pushRows.length} push rows, ${once} delivered exactly once, ${twice} more than once, ${pushRows.length - once - twice} never; sink received ${sink.total()} requests`,
  );

  // ---------------------------------------------------------------- 3. login throttle across instances
  // A guesser at one address (X-Forwarded-For, believed from loopback) round-robin over the instances:
  // the back-off counted in PostgreSQL holds him after FREE_LOGIN_ATTEMPTS; the owner, through nginx
  // from another address, still logs in (throttling, not a lock-out).
  const statuses: number[] = [];
  for (let i = 0; i < FREE_LOGIN_ATTEMPTS + 3; i++) {
    const r = await fetch(`${servers[i % 3].baseUrl}/api/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': '203.0.113.9' },
      body: JSON.stringify({ email: 'customer@demo.test', password: 'wrong-password-1' }),
    });
    statuses.push(r.status);
  }
  const viaNginx = await api(lb, null, 'POST', '/auth/login', { email: 'customer@demo.test', password: 'Demo-pass-2026' });
  const firstLimited = statuses.indexOf(429);
  record(
    'login throttle shared by instances, owner not locked out',
    firstLimited === FREE_LOGIN_ATTEMPTS && statuses.slice(firstLimited).every((s) => s === 429) && viaNginx.status === 200,
    `${FREE_LOGIN_ATTEMPTS} free attempts per login and address; a guesser's attempts round-robin over the 3 instances answered ${statuses.join(',')}; the owner's right password through nginx from another address: ${viaNginx.status}`,
  );

  // ---------------------------------------------------------------- 4. S3
  record(
    'uploads with the S3 driver',
    null,
    'skipped: no local S3-compatible server is available on this machine (test/storage/s3.test.ts covers the S3 driver request path against a tiny local endpoint, not a multi-instance upload)',
  );
} catch (err) {
  record('cluster run', false, (err as Error).stack ?? String(err));
} finally {
  if (nginx) {
    nginx.child.kill('SIGQUIT');
    await new Promise((r) => setTimeout(r, 300));
    await rm(nginx.dir, { recursive: true, force: true });
  }
  await Promise.all(servers.map((s) => stopServer(s)));
  await sink.close();
  await pool.end();
  await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
  await admin.end();
}

console.log('\nCluster summary');
for (const r of results) console.log(`  ${r.pass === null ? 'SKIP' : r.pass ? 'PASS' : 'FAIL'}  ${r.check}`);
const failed = results.some((r) => r.pass === false);
console.log(failed ? '\nFAIL' : '\nPASS (skips listed above)');
process.exitCode = failed ? 1 : 0;
