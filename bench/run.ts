/**
 * npm run bench [-- --quick] [-- --only=me,logistics] : starts the API on a fresh PostgreSQL database
 * (seeded with the demo data), runs the scenarios, prints a table of figures and ratios.
 * npm run bench -- --soak [--soak-seconds=60] [--soak-scale=1] : only the mixed-workload soak (bench/soak.ts).
 * npm run bench -- --cluster : three instances behind nginx on one PostgreSQL (bench/cluster.ts, its own servers).
 */
import { spawn } from 'node:child_process';
import pg from 'pg';
import type { BenchEnv, BenchRow, Scenario } from './lib.js';

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const soak = args.includes('--soak');
const only = soak ? ['soak'] : args.find((a) => a.startsWith('--only='))?.slice(7).split(',');
if (args.includes('--cluster')) {
  // The cluster demo starts its own instances and nginx; nothing below applies.
  await import('./cluster.js');
  process.exit(process.exitCode ?? 0);
}
const base = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const PORT = Number(process.env.BENCH_PORT ?? 3100);

/** Scenario name → module with a default export `(env) => Promise<void>`. */
const SCENARIOS: Record<string, () => Promise<{ default: Scenario }>> = {
  me: () => import('./me.js'),
  logistics: () => import('./logistics.js'),
  realtime: () => import('./realtime.js'),
  storage: () => import('./storage.js'),
  commerce: () => import('./commerce.js'),
  optimizer: () => import('./optimizer.js'),
  soak: () => import('./soak.js'),
};
/** Run only when asked for by name (--soak or --only=soak). */
const ON_DEMAND = new Set(['soak']);

const dbName = `bench_${Date.now()}`;
const admin = new pg.Client({ connectionString: base });
await admin.connect();
await admin.query(`CREATE DATABASE ${dbName}`);
const url = new URL(base);
url.pathname = `/${dbName}`;
const databaseUrl = url.toString();

const server = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
  env: {
    ...process.env,
    DATABASE_URL: databaseUrl,
    PORT: String(PORT),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    SEED_DEMO: 'true',
    JWT_SECRET: 'bench-secret-bench-secret-bench-secret-42',
    LOGIN_FREE_ATTEMPTS: '100000',
    LOGIN_ACCOUNT_CEILING: '100000',
    LOGIN_RATE_LIMIT_PER_IP: '100000',
    // Load generators act as a few users: no per-user limits on expensive routes.
    RATE_LIMIT_ORDERS_PER_MINUTE: '0',
    RATE_LIMIT_PLANS_PER_MINUTE: '0',
    RATE_LIMIT_REPORTS_PER_MINUTE: '0',
    STORAGE_MAX_BYTES_OTHER: '67108864',
    DATA_DIR: `/tmp/bench-data-${Date.now()}`,
    ...Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith('BENCH_SERVER_')).map(([k, v]) => [k.slice(13), v])),
  },
  stdio: ['ignore', 'ignore', 'inherit'],
});
const baseUrl = `http://127.0.0.1:${PORT}`;
for (let i = 0; ; i++) {
  try {
    const r = await fetch(`${baseUrl}/api/v1/health`);
    if (r.ok) break;
  } catch {
    /* not up yet */
  }
  if (i > 120) throw new Error('server did not start');
  await new Promise((r) => setTimeout(r, 500));
}

const rows: BenchRow[] = [];
const pool = new pg.Pool({ connectionString: databaseUrl, max: 20 });
const env: BenchEnv = {
  baseUrl,
  databaseUrl,
  pool,
  quick,
  duration: quick ? 3 : 10,
  serverPid: server.pid!,
  async login(email, password = 'Demo-pass-2026') {
    const r = await fetch(`${baseUrl}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password }) });
    if (!r.ok) throw new Error(`login ${email}: ${r.status} ${await r.text()}`);
    return ((await r.json()) as { access_token: string }).access_token;
  },
  report(row) {
    rows.push(row);
    console.log(`  ${row.scenario.padEnd(12)} ${row.metric.padEnd(40)} ${fmt(row.value).padStart(12)} ${row.unit ?? ''} ${row.note ? ` (${row.note})` : ''}`);
  },
};

function fmt(v: number) {
  return Math.abs(v) >= 100 ? Math.round(v).toLocaleString('en-US') : v.toFixed(2);
}

let failed = false;
try {
  for (const [name, load] of Object.entries(SCENARIOS)) {
    if (only ? !only.includes(name) : ON_DEMAND.has(name)) continue;
    console.log(`\n== ${name}`);
    try {
      await (await load()).default(env);
    } catch (err) {
      failed = true;
      console.error(`scenario ${name} failed:`, err);
    }
  }
} finally {
  server.kill('SIGTERM');
  await pool.end();
  await new Promise((r) => setTimeout(r, 1000));
  await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
  await admin.end();
}
console.log('\nSummary');
console.table(rows.map((r) => ({ scenario: r.scenario, metric: r.metric, value: Number(fmt(r.value).replace(/,/g, '')), unit: r.unit ?? '', note: r.note ?? '' })));
process.exit(failed ? 1 : 0);
