/**
 * npm run bench [-- --quick] [-- --only=me,logistics] [-- --out=f.json | --out f.json] [-- --compare=old.json]:
 * builds and starts the compiled API (node dist/server.js) on a fresh PostgreSQL database seeded with the
 * demo data, runs the scenarios, prints a table of figures (and, with --compare, each line's ratio to the
 * old run) and writes them as JSON with --out.
 * npm run bench -- --soak [--soak-seconds=60] [--soak-scale=1] : only the mixed-workload soak (bench/soak.ts).
 * npm run bench -- --cluster : three instances behind nginx on one PostgreSQL (bench/cluster.ts, its own servers).
 */
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import pg from 'pg';
import { createPostgresDatabase } from '../src/platform/db/index.js';
import { benchDatabaseUrl, type BenchEnv, type BenchRow, type Scenario } from './lib.js';

const args = process.argv.slice(2);
/** `--name=value` or `--name value`. */
function option(name: string): string | undefined {
  const i = args.findIndex((a) => a === `--${name}` || a.startsWith(`--${name}=`));
  if (i < 0) return undefined;
  return args[i].includes('=') ? args[i].slice(name.length + 3) : args[i + 1];
}
const quick = args.includes('--quick');
const soak = args.includes('--soak');
const only = soak ? ['soak'] : option('only')?.split(',');
const outFile = option('out');
const compareFile = option('compare');
if (args.includes('--cluster')) {
  // The cluster demo starts its own instances and nginx; nothing below applies.
  await import('./cluster.js');
  process.exit(process.exitCode ?? 0);
}
const base = benchDatabaseUrl();
const PORT = Number(process.env.BENCH_PORT ?? 3100);

/**
 * The scenarios, in run order. A scenario is a module whose default export is `(env: BenchEnv) =>
 * Promise<void>` and reports rows with `env.report`; to add one, write bench/<name>.ts and add a line here.
 * `onDemand`: only when named (--only=<name>).
 */
const SCENARIOS: { name: string; load: () => Promise<{ default: Scenario }>; onDemand?: boolean }[] = [
  { name: 'startup', load: () => import('./startup.js') },
  { name: 'me', load: () => import('./me.js') },
  { name: 'logistics', load: () => import('./logistics.js') },
  { name: 'commerce', load: () => import('./commerce.js') },
  { name: 'memory', load: () => import('./memory.js') },
  { name: 'realtime', load: () => import('./realtime.js') },
  { name: 'storage', load: () => import('./storage.js') },
  { name: 'optimizer', load: () => import('./optimizer.js') },
  { name: 'exceptions', load: () => import('./exceptions.js') },
  { name: 'soak', load: () => import('./soak.js'), onDemand: true },
];
const unknown = only?.filter((n) => !SCENARIOS.some((s) => s.name === n)) ?? [];
if (unknown.length) throw new Error(`unknown scenario(s): ${unknown.join(', ')}; known: ${SCENARIOS.map((s) => s.name).join(', ')}`);

// The compiled server, as `npm start` runs it; the GC hook lets the runner force a collection.
const build = spawnSync(process.execPath, ['scripts/build-if-stale.mjs'], { stdio: 'inherit' });
if (build.status !== 0) throw new Error('build failed');

const dbName = `bench_${Date.now()}`;
const admin = new pg.Client({ connectionString: base });
await admin.connect();
await admin.query(`CREATE DATABASE ${dbName}`);
const url = new URL(base);
url.pathname = `/${dbName}`;
const databaseUrl = url.toString();
const socketDir = url.searchParams.get('host');
const transport = socketDir?.startsWith('/') ? `unix socket ${socketDir}` : `tcp ${url.host}`;

const serverEnv: NodeJS.ProcessEnv = {
  ...process.env,
  DATABASE_URL: databaseUrl,
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
  // The SSE scenario opens its 2,000 streams as one user.
  REALTIME_MAX_STREAMS_PER_USER: '100000',
  DATA_DIR: `/tmp/bench-data-${Date.now()}`,
  ...Object.fromEntries(
    Object.entries(process.env)
      .filter(([k]) => k.startsWith('BENCH_SERVER_'))
      .map(([k, v]) => [k.slice(13), v]),
  ),
};
// BENCH_NODE_ARGS: extra node flags for the server, e.g. '--cpu-prof --cpu-prof-dir=/tmp/prof' (a profile written when it stops).
const nodeArgs = process.env.BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
const serverCommand = {
  command: process.execPath,
  args: [...nodeArgs, '--expose-gc', '--import', './bench/gc-hook.mjs', 'dist/server.js'],
  env: serverEnv,
};
const startedAt = performance.now();
const server = spawn(serverCommand.command, serverCommand.args, {
  env: { ...serverEnv, PORT: String(PORT) },
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
  if (i > 2400) throw new Error('server did not start');
  await new Promise((r) => setTimeout(r, 25));
}
const firstStartMs = performance.now() - startedAt;

const rows: BenchRow[] = [];
const pool = new pg.Pool({ connectionString: databaseUrl, max: 20 });
const db = createPostgresDatabase(databaseUrl, { max: 20 });
const env: BenchEnv = {
  baseUrl,
  databaseUrl,
  pool,
  db,
  quick,
  duration: quick ? 3 : 10,
  serverPid: server.pid!,
  serverCommand,
  async forceGc() {
    server.kill('SIGUSR2');
    await new Promise((r) => setTimeout(r, 1500));
  },
  async login(email, password = 'Demo-pass-2026') {
    const r = await fetch(`${baseUrl}/api/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password }),
    });
    if (!r.ok) throw new Error(`login ${email}: ${r.status} ${await r.text()}`);
    return ((await r.json()) as { access_token: string }).access_token;
  },
  report(row) {
    rows.push(row);
    console.log(
      `  ${row.scenario.padEnd(12)} ${row.metric.padEnd(48)} ${fmt(row.value).padStart(10)} ${row.unit ?? ''} ${row.note ? ` (${row.note})` : ''}`,
    );
  },
};

function fmt(v: number) {
  if (!Number.isFinite(v)) return String(v);
  return Math.abs(v) >= 100 ? Math.round(v).toLocaleString('en-US') : v.toFixed(2);
}

/**
 * Before each scenario: VACUUM (ANALYZE) of the bench database, then a CHECKPOINT, so that no scenario pays for what
 * ran before it — autovacuum of the 100,000 trips and GPS points of the logistics scenario running during the next
 * one, or the dirty buffers and WAL of earlier work on the cluster (after a test suite, backends evicting dirty
 * buffers themselves made an order cost 3.4 ms of PostgreSQL CPU instead of 0.9: 425 against 1,094 orders/s). The
 * CHECKPOINT needs a superuser or pg_checkpoint; without, the runs go on and the summary says so.
 */
let checkpoints = 'VACUUM (ANALYZE) and CHECKPOINT before each scenario';
async function settle() {
  if (checkpoints.startsWith('no ')) return;
  try {
    await pool.query('VACUUM (ANALYZE)');
    await admin.query('CHECKPOINT');
  } catch (err) {
    checkpoints = `no VACUUM/CHECKPOINT (${(err as Error).message})`;
  }
}

const loadBefore = os.loadavg();
env.report({
  scenario: 'startup',
  metric: 'first start, fresh database (migrate + seed)',
  value: firstStartMs,
  unit: 'ms',
  note: 'spawn → GET /health 200',
});
let failed = false;
try {
  for (const s of SCENARIOS) {
    if (only ? !only.includes(s.name) : s.onDemand) continue;
    console.log(`\n== ${s.name}`);
    await settle();
    try {
      await (await s.load()).default(env);
    } catch (err) {
      failed = true;
      console.error(`scenario ${s.name} failed:`, err);
    }
  }
} finally {
  // Waits for the server to stop (up to 10 s): its graceful shutdown, and a --cpu-prof profile, complete.
  const exited = server.exitCode !== null ? Promise.resolve() : new Promise((r) => server.once('exit', r));
  server.kill('SIGTERM');
  await pool.end();
  await db.close();
  await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
  await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
  await admin.end();
}

// ---------------------------------------------------------------- table, JSON, comparison
interface BenchFile {
  date: string;
  quick: boolean;
  machine: { cpus: number; model: string; node: string; loadavg_before: number[]; loadavg_after: number[] };
  /** How the server and the ceilings reach PostgreSQL: 'unix socket' or 'tcp host:port'. */
  database: string;
  /** Whether each scenario started after a VACUUM (ANALYZE) and a CHECKPOINT. */
  checkpoints: string;
  rows: BenchRow[];
}
const result: BenchFile = {
  date: new Date().toISOString(),
  quick,
  machine: {
    cpus: os.cpus().length,
    model: os.cpus()[0]?.model ?? '',
    node: process.version,
    loadavg_before: loadBefore,
    loadavg_after: os.loadavg(),
  },
  database: transport,
  checkpoints,
  rows,
};
const old: BenchFile | null = compareFile ? (JSON.parse(readFileSync(compareFile, 'utf8')) as BenchFile) : null;
const key = (r: BenchRow) => `${r.scenario}\u0000${r.metric}`;
const oldRows = new Map((old?.rows ?? []).map((r) => [key(r), r]));
const table = rows.map((r) => {
  const line: Record<string, string> = { scenario: r.scenario, metric: r.metric, value: fmt(r.value), unit: r.unit ?? '' };
  if (old) {
    const o = oldRows.get(key(r));
    line.old = o ? fmt(o.value) : '';
    line['new ÷ old'] = o && o.value !== 0 && Number.isFinite(o.value) && Number.isFinite(r.value) ? (r.value / o.value).toFixed(2) : '';
  }
  line.note = r.note ?? '';
  return line;
});
const cols = Object.keys(table[0] ?? { scenario: '' });
const widths = cols.map((c) => Math.max(c.length, ...table.map((l) => l[c].length)));
const right = new Set(['value', 'old', 'new ÷ old']);
const fmtLine = (l: Record<string, string>) =>
  '| ' + cols.map((c, i) => (right.has(c) ? l[c].padStart(widths[i]) : l[c].padEnd(widths[i]))).join(' | ') + ' |';
console.log(
  `\nSummary (${result.date}, ${result.machine.cpus} CPUs, load average before ${loadBefore.map((x) => x.toFixed(2)).join(' ')}, PostgreSQL over ${transport}, ${checkpoints}${old ? `; compared with ${compareFile} of ${old.date}` : ''})`,
);
console.log(fmtLine(Object.fromEntries(cols.map((c) => [c, c]))));
console.log('|' + widths.map((w, i) => (right.has(cols[i]) ? '-'.repeat(w + 1) + ':' : '-'.repeat(w + 2))).join('|') + '|');
for (const l of table) console.log(fmtLine(l));
if (old) {
  const gone = [...oldRows.keys()].filter((k) => !rows.some((r) => key(r) === k));
  if (gone.length) console.log(`\nIn ${compareFile} only: ${gone.map((k) => k.replace('\u0000', ' / ')).join('; ')}`);
}
if (outFile) {
  writeFileSync(outFile, JSON.stringify(result, null, 2) + '\n');
  console.log(`\nwritten: ${outFile}`);
}
process.exit(failed ? 1 : 0);
