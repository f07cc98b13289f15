import autocannon from 'autocannon';
import pg from 'pg';

export interface BenchRow {
  scenario: string;
  metric: string;
  value: number;
  unit?: string;
  note?: string;
}

/** What every benchmark scenario gets: a running server on a fresh PostgreSQL database, seeded with the demo data. */
export interface BenchEnv {
  baseUrl: string;
  databaseUrl: string;
  pool: pg.Pool;
  /** Access token of a demo login (admin@demo.test, driver@demo.test, ...). */
  login(email: string, password?: string): Promise<string>;
  report(row: BenchRow): void;
  /** `--quick`: shorter runs (CI smoke). */
  quick: boolean;
  /** Seconds per autocannon run. */
  duration: number;
  /** The API server process (for RSS readings from /proc/<pid>/status). */
  serverPid: number;
}

export interface LoadResult {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
  total: number;
}

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

export type Scenario = (env: BenchEnv) => Promise<void>;
