import http from 'node:http';
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import autocannon from 'autocannon';
import pg from 'pg';
import type { Database, Prepared, TenantContext } from '../src/platform/db/index.js';

export interface BenchRow {
  scenario: string;
  metric: string;
  value: number;
  unit?: string;
  note?: string;
}

/**
 * The PostgreSQL server of the benchmarks: BENCH_DATABASE_URL, else the local one over its Unix socket when there is
 * one (as a same-host deployment should connect: docs/OPERATIONS.md, "Running at scale"), else 127.0.0.1:5432 over TCP. Every
 * ceiling and every route of a run use the same connection, so the ratios compare like with like.
 */
export function benchDatabaseUrl(): string {
  if (process.env.BENCH_DATABASE_URL) return process.env.BENCH_DATABASE_URL;
  const dir = '/var/run/postgresql';
  return existsSync(`${dir}/.s.PGSQL.5432`)
    ? `postgres://postgres@localhost/postgres?host=${dir}`
    : 'postgres://postgres@127.0.0.1:5432/postgres';
}

/** What every benchmark scenario gets: a running server on a fresh PostgreSQL database, seeded with the demo data. */
export interface BenchEnv {
  baseUrl: string;
  databaseUrl: string;
  /** A plain pool (no tenant transaction) for setting up data and for raw ceilings. */
  pool: pg.Pool;
  /** The service's own data layer (src/platform/db, same driver and settings) on the same database: the fair ceilings. */
  db: Database;
  /** Access token of a demo login (admin@demo.test, driver@demo.test, ...). */
  login(email: string, password?: string): Promise<string>;
  report(row: BenchRow): void;
  /** `--quick`: shorter runs (CI smoke). */
  quick: boolean;
  /** Seconds per load run. */
  duration: number;
  /** The API server process (for RSS readings from /proc/<pid>/status). */
  serverPid: number;
  /** The command that started the server (to start another instance, e.g. to time a start). */
  serverCommand: { command: string; args: string[]; env: NodeJS.ProcessEnv };
  /** Asks the server to run a full garbage collection (bench/gc-hook.mjs, SIGUSR2) and waits for it. */
  forceGc(): Promise<void>;
}

/** A scenario: a name, and a function that measures and reports rows. Add a line to SCENARIOS in bench/run.ts. */
export type Scenario = (env: BenchEnv) => Promise<void>;

export interface LoadResult {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
  total: number;
}

/** Closed loop: `connections` clients (20 by default), each sending its next request when the last one answered. */
export async function load(opts: autocannon.Options): Promise<LoadResult> {
  const r = await autocannon({ connections: 20, pipelining: 1, ...opts });
  return {
    rps: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    errors: r.errors + r.timeouts,
    non2xx: r.non2xx,
    total: r.requests.total,
  };
}

export interface OpenLoopResult {
  /** Requests sent per second as scheduled, and answered per second. */
  rate: number;
  achieved: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  errors: number;
  non2xx: number;
}

/**
 * Reads a server-sent event stream's text chunks and hands each complete frame (id, event type, the raw frame) to
 * `onFrame` with the time its chunk arrived.
 */
export function sseFrames(
  res: http.IncomingMessage,
  onFrame: (frame: { id: string | undefined; type: string | undefined; text: string }, at: number) => void,
): void {
  res.setEncoding('utf8');
  let buf = '';
  res.on('data', (chunk: string) => {
    const now = performance.now();
    buf += chunk;
    let i: number;
    while ((i = buf.indexOf('\n\n')) >= 0) {
      const text = buf.slice(0, i);
      buf = buf.slice(i + 2);
      onFrame({ id: /^id: (\d+)$/m.exec(text)?.[1], type: /^event: (.+)$/m.exec(text)?.[1], text }, now);
    }
  });
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))];
}

/**
 * Open loop: requests start at a fixed rate whatever the server's latency (as independent users
 * would), each timed from its scheduled start, so a stall shows up in the percentiles instead of
 * slowing the generator down (no coordinated omission). Every request is waited for (up to 5 min), so
 * a rate above what the server can serve leaves no backlog behind for the next measurement.
 */
export async function openLoop(o: {
  url: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string | (() => string);
  rate: number;
  seconds: number;
}): Promise<OpenLoopResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1024 });
  const u = new URL(o.url);
  const lat: number[] = [];
  let errors = 0;
  let non2xx = 0;
  const total = Math.max(1, Math.round(o.rate * o.seconds));
  const fire = (scheduled: number) =>
    new Promise<void>((resolve) => {
      const body = typeof o.body === 'function' ? o.body() : o.body;
      const req = http.request(
        {
          host: u.hostname,
          port: u.port,
          path: u.pathname + u.search,
          method: o.method ?? 'GET',
          agent,
          headers: { ...o.headers, ...(body ? { 'content-length': Buffer.byteLength(body) } : {}) },
          timeout: 300_000,
        },
        (res) => {
          res.resume();
          res.on('end', () => {
            lat.push(performance.now() - scheduled);
            if ((res.statusCode ?? 0) >= 300) non2xx++;
            resolve();
          });
        },
      );
      req.on('error', () => {
        errors++;
        resolve();
      });
      req.on('timeout', () => req.destroy(new Error('timeout')));
      req.end(body);
    });
  const start = performance.now();
  const pending: Promise<void>[] = [];
  let sent = 0;
  await new Promise<void>((resolve) => {
    const tick = () => {
      const due = Math.min(total, Math.floor(((performance.now() - start) / 1000) * o.rate) + 1);
      while (sent < due) pending.push(fire(start + (sent++ * 1000) / o.rate));
      if (sent >= total) resolve();
      else setTimeout(tick, 1);
    };
    tick();
  });
  await Promise.all(pending);
  const elapsed = (performance.now() - start) / 1000;
  agent.destroy();
  lat.sort((a, b) => a - b);
  return {
    rate: o.rate,
    achieved: lat.length / elapsed,
    p50: percentile(lat, 0.5),
    p90: percentile(lat, 0.9),
    p99: percentile(lat, 0.99),
    max: lat[lat.length - 1] ?? NaN,
    errors,
    non2xx,
  };
}

export interface CeilingResult {
  rps: number;
  p99: number;
  total: number;
}

/** `workers` concurrent loops of `work` for `seconds`: operations per second and p99 (ms). */
export async function closedLoop(work: () => Promise<unknown>, seconds: number, workers = 20): Promise<CeilingResult> {
  const lat: number[] = [];
  const until = performance.now() + seconds * 1000;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: workers }, async () => {
      while (performance.now() < until) {
        const t0 = performance.now();
        await work();
        lat.push(performance.now() - t0);
      }
    }),
  );
  const elapsed = (performance.now() - start) / 1000;
  lat.sort((a, b) => a - b);
  return { rps: lat.length / elapsed, p99: percentile(lat, 0.99), total: lat.length };
}

/**
 * The fair database ceiling of a tenant read: the same statement, through the service's own data layer
 * (same driver, same tenant context), by 20 concurrent workers, without HTTP. `read` = `db.tenantRead`, as the
 * routes read (one exchange: settings, role and read-only mode with the statement, no BEGIN/COMMIT); `tx` =
 * `db.withTenant` with the one statement (BEGIN and settings travel with it, COMMIT after: two round trips), the
 * exchange of a read before `readTenant`, for reference.
 */
export function tenantCeiling(
  env: BenchEnv,
  ctx: TenantContext,
  sql: string | Prepared,
  params: unknown[],
  via: 'read' | 'tx',
): Promise<CeilingResult> {
  const work = via === 'read' ? () => env.db.tenantRead(ctx, sql, params) : () => env.db.withTenant(ctx, (tx) => tx.query(sql, params));
  return closedLoop(work, env.duration);
}

/** The exchange as pgbench would script it: BEGIN, set_config, SET LOCAL ROLE, the statement, COMMIT, one after another (five round trips). */
export async function stepwiseCeiling(
  env: BenchEnv,
  ctx: TenantContext,
  sql: string | Prepared,
  params: unknown[],
): Promise<CeilingResult> {
  const text = typeof sql === 'string' ? sql : sql.text;
  return closedLoop(async () => {
    const c = await env.pool.connect();
    try {
      await c.query('BEGIN');
      await c.query("SELECT set_config('app.organization_id', $1, true), set_config('app.user_id', $2, true)", [
        ctx.organizationId,
        ctx.userId ?? '',
      ]);
      await c.query('SET LOCAL ROLE app_tenant');
      await c.query(text, params);
      await c.query('COMMIT');
    } finally {
      c.release();
    }
  }, env.duration);
}

/** Resident set size of a process (bytes), from /proc. */
export async function rssOf(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  const m = /VmRSS:\s+(\d+) kB/.exec(status);
  return m ? Number(m[1]) * 1024 : NaN;
}

export const MB = 1024 * 1024;

/** CPU time (ms) used so far by the server, by the PostgreSQL cluster and by this process (load generator and ceiling workers). */
export interface CpuSample {
  server: number;
  postgres: number;
  self: number;
}

const TICK_MS = 10; // USER_HZ = 100 on Linux

/** utime + stime (and, with `children`, the reaped children's) of a process from /proc/<pid>/stat, in ms; null when gone. */
async function cpuOfPid(pid: number | string, children = false): Promise<{ comm: string; ppid: number; ms: number } | null> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => null);
  if (!stat) return null;
  const close = stat.lastIndexOf(')');
  const comm = stat.slice(stat.indexOf('(') + 1, close);
  const f = stat.slice(close + 2).split(' '); // f[0] = state (field 3), so field n is f[n - 3]
  const ticks = Number(f[11]) + Number(f[12]) + (children ? Number(f[13]) + Number(f[14]) : 0);
  return { comm, ppid: Number(f[1]), ms: ticks * TICK_MS };
}

/**
 * A CPU sample: the server process, every PostgreSQL process (the postmaster with its reaped children, so backends
 * that ended count too) and this process. Differences of two samples divided by the requests served between them
 * give the CPU each side spent per request: where the time of a route goes, on this machine where all three share
 * the cores.
 */
export async function cpuSample(serverPid: number): Promise<CpuSample> {
  const server = (await cpuOfPid(serverPid))?.ms ?? NaN;
  const usage = process.cpuUsage();
  const self = (usage.user + usage.system) / 1000;
  let postgres = 0;
  for (const pid of await readdir('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    const p = await cpuOfPid(pid);
    if (!p || p.comm !== 'postgres') continue;
    const parent = await cpuOfPid(p.ppid);
    // The postmaster (its parent is not postgres) also carries the CPU of the backends it reaped.
    postgres += parent?.comm === 'postgres' ? p.ms : ((await cpuOfPid(pid, true))?.ms ?? p.ms);
  }
  return { server, postgres, self };
}

/** CPU per operation (ms) between two samples. */
export function cpuPerOp(before: CpuSample, after: CpuSample, ops: number): CpuSample {
  const per = (k: keyof CpuSample) => (after[k] - before[k]) / Math.max(ops, 1);
  return { server: per('server'), postgres: per('postgres'), self: per('self') };
}

/** "server 1.23 + PostgreSQL 0.45 + load generator 0.30 ms CPU per request". */
export function formatCpu(c: CpuSample, what = 'request'): string {
  return `CPU per ${what}: server ${c.server.toFixed(2)}, PostgreSQL ${c.postgres.toFixed(2)}, bench process ${c.self.toFixed(2)} ms`;
}

/** Runs a measurement and adds the CPU each side spent per operation (`total` operations) during it. */
export async function withCpu<T extends { total: number }>(serverPid: number, run: () => Promise<T>): Promise<T & { cpu: CpuSample }> {
  const before = await cpuSample(serverPid);
  const r = await run();
  return { ...r, cpu: cpuPerOp(before, await cpuSample(serverPid), r.total) };
}
