import { AsyncLocalStorage } from 'node:async_hooks';
import http from 'node:http';
import os from 'node:os';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import zlib from 'node:zlib';
import pg from 'pg';
import { renderHtml } from './html.js';
import { maxOf } from './stats.js';
import { clusterPids, clusterTicks, cpuMeter, procStat, type ProcStat } from './procfs.js';

/**
 * A city's day against a running server, through the public HTTP API only (`npm run simulate -- --help`).
 * Builds the city as the demo administrator (merchants with a branch and a catalog, approved available drivers,
 * customers with addresses), then plays the day in compressed time: orders arriving on a rate curve with lunch
 * and dinner peaks, merchants confirming/preparing/marking ready, trips auto-assigned, drivers accepting (some
 * rejecting), driving a street grid and posting GPS every 5 simulated seconds in batches, PINs at pickup and
 * delivery, a share of failed deliveries returned to the merchant, dispatch trips with recipient tracking links
 * polled by their recipients, dispatchers and customers on the SSE streams. Writes report.json and report.html.
 * Exit 0 when there was no 5xx or network error, no lost or duplicated stream event and every order ended where
 * the simulator left it; 1 otherwise; 2 on bad options or a server that is not there.
 */

// ------------------------------------------------------------------ options
export interface SimOptions {
  baseUrl: string;
  scale: number;
  durationS: number;
  compression: number;
  seed: number;
  out: string;
  startHour: number;
  drainS: number;
  allowRemote: boolean;
  adminEmail: string;
  adminPassword: string;
  quiet: boolean;
  /** Dispatchers on the organization stream and customers on their own stream (default: from the scale). */
  dispatchers: number | null;
  customerStreams: number | null;
  /** Customers in the city (default 2 × scale). */
  customers: number | null;
  /** The day's mean of orders per simulated hour (the rate curve keeps its shape); null: from the scale, per driver. */
  ordersPerHour: number | null;
  /** The server's database, for its size over time and its slowest statements (null: not measured). */
  databaseUrl: string | null;
  /** The server processes whose CPU and RSS are read from /proc (the cluster run passes its instances'). */
  serverPids: () => number[];
  /** Called as the day begins, after the city is built (the cluster run times its kill from it). */
  onDayStart?: () => void;
  /** A dispatcher asks the optimizer for a plan of the territory every this many simulated minutes (0: never). */
  planEveryMin: number;
  /** The share of deliveries whose driver uploads a proof photo before verifying (0 to 1). */
  photoShare: number;
  /**
   * Aborted on SIGINT or SIGTERM (its reason names the signal): the play stops, the closing reads are skipped and the
   * report of what was gathered is written, marked interrupted.
   */
  interrupt?: AbortSignal;
}

/** A closing read that meets a 5xx, a 429 or a network error is sent again this many times in all, with backoff. */
export const CLOSING_READ_ATTEMPTS = 5;
/** After this many customers in a row whose closing read failed, the rest are not read (their orders are unverified). */
const CLOSING_READ_FAILURES_IN_A_ROW = 3;

const HELP = `npm run simulate -- [options]
  --base-url URL       server to play against (default http://127.0.0.1:3000; loopback only unless --allow-remote)
  --scale N            drivers; merchants = ceil(N/10), customers = 2N (default 10, at most 5000)
  --duration-s S       real seconds of the day (default 60)
  --compression C      simulated seconds per real second (default 30)
  --seed N             same seed: same city and same sequence of actions (default 1)
  --start-hour H       simulated hour the day starts at (default 11: the lunch peak comes first)
  --drain-s S          real seconds to let the last orders finish after the day (default 60; 0 cuts the day
                       at its end: orders under way are reported, each where the simulator left it)
  --out DIR            report directory (default sim-out/)
  --dispatchers N      dispatchers on the organization stream (default ceil(scale/20), at most 5)
  --customer-streams N customers on their own stream (default ceil(scale/5), 2 to 20; at most the customers)
  --customers N        customers in the city (default 2 × scale)
  --orders-per-hour N  the day's mean of orders per simulated hour, 10:00-23:00 (default: the curve per driver,
                       about 1.2 × scale); the lunch and dinner peaks stay about twice the mean
  --admin-email E / --admin-password P   the administrator (default the demo one)
  --database-url URL   the server's database: its size over time and the slowest statements (pg_stat_statements)
  --server-pid PID     the server process (comma-separated for several): its CPU and RSS over time from /proc
  --plan-every-min M   a dispatcher asks the optimizer for a plan of the territory every M simulated minutes,
                       reads it and does not commit it (default 15; 0: never)
  --photo-share F      share of deliveries with a proof photo uploaded before the PIN (default 0.3; 0 to 1)
  --allow-remote       allow a non-loopback --base-url or --database-url

The report is always written. A closing read (every order read back at the end) that meets a 5xx or a network error
is retried ${CLOSING_READ_ATTEMPTS} times in all with backoff (the server's Retry-After when it sends one); orders it could not read
are counted as unverified. SIGINT or SIGTERM stops the play, skips the closing reads and writes the report of what
was gathered, marked interrupted (exit 130 or 143); a second signal (a second or more later) exits at once
without a report.`;

export function parseOptions(argv: string[]): SimOptions {
  const o: SimOptions = {
    baseUrl: 'http://127.0.0.1:3000',
    scale: 10,
    durationS: 60,
    compression: 30,
    seed: 1,
    out: 'sim-out',
    startHour: 11,
    drainS: 60,
    allowRemote: false,
    adminEmail: 'admin@demo.test',
    adminPassword: 'Demo-pass-2026',
    quiet: false,
    dispatchers: null,
    customerStreams: null,
    customers: null,
    ordersPerHour: null,
    databaseUrl: null,
    serverPids: () => [],
    planEveryMin: 15,
    photoShare: 0.3,
  };
  const num = (name: string, v: string | undefined, min: number, max: number) => {
    const n = Number(v);
    if (v === undefined || !Number.isFinite(n) || n < min || n > max)
      throw new OptionError(`${name} must be a number from ${min} to ${max} (got ${v ?? 'nothing'})`);
    return n;
  };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].includes('=')
      ? [argv[i].slice(0, argv[i].indexOf('=')), argv[i].slice(argv[i].indexOf('=') + 1)]
      : [argv[i], undefined];
    const val = () => inline ?? argv[++i];
    switch (flag) {
      case '--base-url':
        o.baseUrl = String(val());
        break;
      case '--scale':
        o.scale = Math.round(num(flag, val(), 1, 5000));
        break;
      case '--duration-s':
        o.durationS = num(flag, val(), 1, 86_400);
        break;
      case '--compression':
        o.compression = num(flag, val(), 1, 3600);
        break;
      case '--seed':
        o.seed = Math.round(num(flag, val(), 0, 2 ** 31 - 1));
        break;
      case '--start-hour':
        o.startHour = num(flag, val(), 0, 23);
        break;
      case '--drain-s':
        o.drainS = num(flag, val(), 0, 3600);
        break;
      case '--out':
        o.out = String(val());
        break;
      case '--admin-email':
        o.adminEmail = String(val());
        break;
      case '--admin-password':
        o.adminPassword = String(val());
        break;
      case '--allow-remote':
        o.allowRemote = true;
        break;
      case '--database-url':
        o.databaseUrl = String(val());
        break;
      case '--server-pid': {
        const v = String(val());
        const pids = v.split(',').map(Number);
        if (!pids.every((n) => Number.isInteger(n) && n > 0))
          throw new OptionError(`--server-pid must be process ids separated by commas (got ${v})`);
        o.serverPids = () => pids;
        break;
      }
      case '--quiet':
        o.quiet = true;
        break;
      case '--dispatchers':
        o.dispatchers = Math.round(num(flag, val(), 0, 10_000));
        break;
      case '--customer-streams':
        o.customerStreams = Math.round(num(flag, val(), 0, 10_000));
        break;
      case '--plan-every-min':
        o.planEveryMin = num(flag, val(), 0, 1440);
        break;
      case '--photo-share':
        o.photoShare = num(flag, val(), 0, 1);
        break;
      case '--customers':
        o.customers = Math.round(num(flag, val(), 1, 20_000));
        break;
      case '--orders-per-hour':
        o.ordersPerHour = num(flag, val(), 1, 200_000);
        break;
      case '--help':
      case '-h':
        throw new OptionError(HELP, 0);
      default:
        throw new OptionError(`unknown option ${argv[i]} (--help lists them)`);
    }
  }
  let url: URL;
  try {
    url = new URL(o.baseUrl);
  } catch {
    throw new OptionError(`--base-url is not a URL: ${o.baseUrl}`);
  }
  if (url.protocol !== 'http:') throw new OptionError(`--base-url must be http:// (got ${url.protocol})`);
  const isLoopback = (u: URL) => {
    const host = u.hostname.replace(/^\[|\]$/g, '');
    return host === 'localhost' || host === '::1' || /^127\./.test(host);
  };
  if (!isLoopback(url) && !o.allowRemote)
    throw new OptionError(`--base-url ${o.baseUrl} is not a loopback address; pass --allow-remote to play against another machine`);
  if (o.databaseUrl !== null) {
    let db: URL;
    try {
      db = new URL(o.databaseUrl);
    } catch {
      throw new OptionError(`--database-url is not a URL: ${o.databaseUrl}`);
    }
    if (!/^postgres(ql)?:$/.test(db.protocol)) throw new OptionError(`--database-url must be postgres:// (got ${db.protocol})`);
    // A socket directory in ?host= is local by definition.
    if (!isLoopback(db) && !db.searchParams.get('host')?.startsWith('/') && !o.allowRemote)
      throw new OptionError(`--database-url ${db.host} is not a loopback address; pass --allow-remote`);
  }
  o.baseUrl = o.baseUrl.replace(/\/$/, '');
  return o;
}

/** Let a loop end quietly when the run closes under it. */
const untilOver = (p: Promise<unknown>): Promise<void> =>
  p.then(
    () => undefined,
    (e: unknown) => {
      if (!(e instanceof RunOver)) throw e;
    },
  );

/**
 * Trips waiting for a free driver, oldest first. A trip is dispatched again when a driver frees up (the oldest waiting
 * one is woken) and at the latest every REDISPATCH_S, not every minute whatever happened: with thousands of trips
 * waiting at a peak, asking the server to auto-assign each of them every minute is load no dispatcher makes.
 */
export class DriverQueue {
  private readonly waiting: (() => void)[] = [];
  constructor(private readonly timeoutMs: number) {}

  get length(): number {
    return this.waiting.length;
  }

  /** Resolves when this trip's turn comes (a driver freed up), after the timeout, or when the run closes. */
  wait(): Promise<void> {
    return new Promise<void>((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        const i = this.waiting.indexOf(wake);
        if (i >= 0) this.waiting.splice(i, 1);
        resolve();
      };
      const timer = setTimeout(wake, this.timeoutMs);
      this.waiting.push(wake);
    });
  }

  /** A driver freed up: the oldest waiting trip tries again. */
  wakeOne(): void {
    this.waiting[0]?.();
  }

  wakeAll(): void {
    for (const wake of [...this.waiting]) wake();
  }
}
/** How often, in simulated seconds, a trip still waiting for a driver is dispatched again without one freeing up. */
const REDISPATCH_S = 300;

/** A play stopped because the run is over (not a failure: the order is counted as under way). */
class RunOver extends Error {
  constructor() {
    super('the run is over');
  }
}

export class OptionError extends Error {
  constructor(
    message: string,
    readonly code = 2,
  ) {
    super(message);
  }
}

// ------------------------------------------------------------------ seeded randomness
/** mulberry32: a small seeded generator; one per entity, so interleavings of requests never change the choices. */
function rng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (n: number) => Math.floor(next() * n),
    range: (lo: number, hi: number) => lo + next() * (hi - lo),
    pick: <T>(a: T[]) => a[Math.floor(next() * a.length)],
  };
}
const sub = (seed: number, k: number) => rng(((seed * 2654435761) ^ (k * 40503 + 0x9e3779b9)) >>> 0);

/** Orders per simulated hour per driver at simulated hour h: a base with a lunch (12:30) and a dinner (20:00) peak, peaks about twice the mean. */
export function ratePerDriverHour(h: number): number {
  const bump = (mu: number, sigma: number) => Math.exp(-((h - mu) ** 2) / (2 * sigma * sigma));
  return 0.5 + 1.6 * bump(12.5, 1) + 1.8 * bump(20, 1.2);
}

/** The curve's mean over the day it describes (10:00-23:00): --orders-per-hour is this mean. */
export const DAY_MEAN_RATE = (() => {
  let sum = 0;
  const steps = 13 * 60;
  for (let m = 0; m < steps; m++) sum += ratePerDriverHour(10 + (m + 0.5) / 60);
  return sum / steps;
})();

/** Orders per simulated hour at hour h (null: the factor the per-driver curve is multiplied by). */
export function ordersPerHourAt(opts: Pick<SimOptions, 'scale'> & Partial<Pick<SimOptions, 'ordersPerHour'>>, h: number | null): number {
  const factor = opts.ordersPerHour ? opts.ordersPerHour / DAY_MEAN_RATE : opts.scale;
  return h === null ? factor : ratePerDriverHour(h) * factor;
}

// ------------------------------------------------------------------ the report
interface LagStats {
  count: number;
  p50_ms: number;
  p99_ms: number;
  max_ms: number;
}
export const lagStats = (a: number[]): LagStats => ({
  count: a.length,
  p50_ms: round(pct(a, 0.5)),
  p99_ms: round(pct(a, 0.99)),
  max_ms: round(maxOf(a)),
});

interface RouteStats {
  count: number;
  c4xx: number;
  c5xx: number;
  network: number;
  p50_ms: number;
  p99_ms: number;
}
export interface SimReport {
  config: { base_url: string; scale: number; duration_s: number; compression: number; seed: number; start_hour: number; drain_s: number };
  run: { base_url: string; started_at: string; real_seconds: number; load_average: number[]; cpus: number };
  city: { territory: string; drivers: number; merchants: number; customers: number; plan_orders: number; plan_digest: string };
  /** Building the city (not in routes or the timeline). */
  setup: { seconds: number; requests: number; server_errors: number };
  totals: { requests: number; server_errors: number; c4xx: number };
  routes: Record<string, RouteStats>;
  timeline: {
    t: number;
    seconds: number;
    requests: number;
    c4xx: number;
    errors: number;
    gps_points: number;
    orders: number;
    planned_rate_per_hour: number;
    routes: Record<string, { count: number; p50_ms: number; p99_ms: number }>;
    /** A point recorded → its trip.location_updated on the first dispatcher's stream, for the events of this bucket. */
    gps_ingest_lag: LagStats;
    /** An event's occurred_at → its webhook delivery at the simulator's receiver. */
    webhook_lag: LagStats;
    /** A trip event the simulator caused: recorded (its created_at) → on the first dispatcher's stream. */
    stream_event_lag: LagStats;
  }[];
  gps: {
    points_accepted: number;
    batches: number;
    /**
     * Ingest lag: from the newest point of a batch being recorded (the batch is sent at once) to its
     * trip.location_updated arriving on the first dispatcher's stream; only batches of drivers on a trip make one.
     */
    ingest_lag: LagStats;
  };
  webhooks: {
    /** False when the server refused the receiver's subscription (plain http to a loopback address: see reason). */
    available: boolean;
    reason: string | null;
    received: number;
    duplicates: number;
    /** The trip events the simulator caused (as for the streams) that must reach the receiver. */
    expected: number;
    lost: number;
    lag: LagStats;
  };
  database: {
    available: boolean;
    reason: string | null;
    samples: { t: number; bytes: number }[];
    growth_bytes: number;
    largest_relations: { name: string; bytes: number }[];
    statements: {
      available: boolean;
      reason: string | null;
      /** Since the day began, by total execution time. */
      top: { query: string; calls: number; total_ms: number; mean_ms: number; max_ms: number; rows: number }[];
    };
  };
  orders: {
    created: number;
    by_status: Record<string, number>;
    unexpected: number;
    unfinished: number;
    failed_deliveries: number;
    rejections: number;
    mismatches: { id: string; expected: string; actual: string }[];
    /**
     * Orders not read back at the end: their customer's closing read still failed after its retries (5xx or network
     * error), or the reads were skipped (interrupted, or too many failures in a row). Up to 10 ids, 3 reasons.
     */
    unverified: { count: number; sample: string[]; reasons: string[] };
  };
  tracking: { links: number; polls: number };
  /** The branches' opening hours: declared at creation in the organization's time zone, judged by the server's clock. */
  opening_hours: { time_zone: string; hours: string; branches: number; open_at_start: number; orders_refused_closed: number };
  /** The drivers' vehicles as the server stored them: drivers and units of load by vehicle type. */
  vehicles: { by_type: Record<string, { drivers: number; capacity_units: number }> };
  /** Proof photos uploaded by drivers before verifying a delivery (slot, PUT of the bytes, evidence on the proof). */
  proofs: { share: number; photos_uploaded: number; bytes: number; failed: number };
  /** A dispatcher's periodic optimizer plans of the territory's pending trips (read, never committed). */
  plans: {
    every_min: number;
    requested: number;
    computed: number;
    /** 503 OPTIMIZER_BUSY or 429: the optimizer or the plan rate limit said later. */
    busy: number;
    failed: number;
    trips_planned: number;
    trips_unassigned: number;
    /** The request's round trip, and the solver's own elapsed_ms. */
    latency: LagStats;
    solve: LagStats;
  };
  /** The trip events the simulator caused: recorded (created_at) → on the first dispatcher's stream. */
  stream_event_lag: LagStats;
  streams: {
    name: string;
    kind: string;
    received: number;
    expected: number;
    lost: number;
    /** Up to three of the lost events, as "trip-id event-type". */
    lost_sample?: string[];
    /** The highest event id (sequence) the stream received. */
    last_id: number | null;
    duplicates: number;
    reconnects: number;
    resets: number;
  }[];
  server: {
    /** From GET /admin/mobile-health (it waits for a connection like any request): memory, streams, and the database pool as it answered. */
    samples: {
      t: number;
      rss_bytes: number;
      heap_used_bytes: number;
      sse_connections: number;
      pool_in_use: number | null;
      pool_waiting: number | null;
    }[];
    /** From /proc of --server-pid (summed over the processes): CPU in % of one core since the previous sample; the machine's 1-minute load. */
    processes: {
      t: number;
      cpu_percent: number | null;
      rss_bytes: number | null;
      load1: number;
      /** The PostgreSQL cluster's processes (postmaster and its children), when --database-url is on this machine and readable. */
      database_cpu_percent: number | null;
      /** The simulator's own process, and how late its event loop ran (p99 and max in the window): late means its latencies include its own queueing. */
      simulator_cpu_percent: number | null;
      simulator_loop_delay_p99_ms: number | null;
      simulator_loop_delay_max_ms: number | null;
      /** Requests the simulator had sent and not yet had answered, and those waiting in it for one of its sockets. */
      simulator_in_flight: number;
      simulator_queued: number;
    }[];
    pids: number[];
  };
  unexpected_4xx: { route: string; status: number; body: string }[];
  verdict: { ok: boolean; problems: string[] };
  /** SIGINT or SIGTERM stopped the run: the figures are those gathered until then; interrupted_by names the signal. */
  interrupted: boolean;
  interrupted_by: string | null;
}

export interface Planned {
  k: number;
  at: number;
  kind: 'order' | 'dispatch';
  customer: number;
  merchant: number;
  prepS: number;
  reject: boolean;
  fail: boolean;
  items: number[];
}

/** Every order of the day, from the seed alone: when it arrives (a Poisson process thinned by the rate curve), who orders from whom, and what will happen to it. */
export function planDay(
  opts: Pick<SimOptions, 'seed' | 'scale' | 'durationS' | 'compression' | 'startHour'> &
    Partial<Pick<SimOptions, 'customers' | 'ordersPerHour'>>,
): {
  plan: Planned[];
  digest: string;
} {
  const R = rng(opts.seed);
  const nDrivers = opts.scale;
  const nCustomers = opts.customers ?? nDrivers * 2;
  const simDay = opts.durationS * opts.compression;
  const plan: Planned[] = [];
  const peak = 2.7; // above the curve's maximum
  // The curve is per driver; --orders-per-hour rescales it so that its mean over the day is that figure.
  const perHour = ordersPerHourAt(opts, null);
  let t = 0;
  for (let k = 0; ; k++) {
    t += -Math.log(1 - R.next()) / ((peak * perHour) / 3600);
    if (t >= simDay) break;
    if (R.next() >= ratePerDriverHour(opts.startHour + t / 3600) / peak) continue;
    const r = sub(opts.seed, 100_000 + k);
    plan.push({
      k,
      at: t,
      kind: r.next() < 0.1 ? 'dispatch' : 'order',
      customer: r.int(nCustomers),
      merchant: r.int(Math.ceil(nDrivers / 10)),
      prepS: r.range(300, 1200),
      reject: r.next() < 0.05,
      fail: r.next() < 0.05,
      items: [r.int(3), r.int(3)],
    });
  }
  let h = 0;
  for (const p of plan)
    for (const ch of `${p.kind[0]}${Math.round(p.at)}c${p.customer}m${p.merchant}${p.fail ? 'F' : ''}${p.reject ? 'R' : ''},`)
      h = (Math.imul(h, 31) + ch.charCodeAt(0)) >>> 0;
  return { plan, digest: h.toString(16).padStart(8, '0') };
}

const pct = (a: number[], p: number) => {
  if (a.length === 0) return NaN;
  const s = [...a].sort((x, y) => x - y);
  return s[Math.min(s.length - 1, Math.floor(s.length * p))];
};

/**
 * The drivers' vehicles: a seeded mix, each with its units of load. Every vehicle drives the grid at the same
 * 18–32 km/h, so the day's timings stay comparable with runs before vehicles.
 */
const VEHICLES = [
  { type: 'motorcycle', share: 0.6, capacity_units: 3 },
  { type: 'bicycle', share: 0.25, capacity_units: 2 },
  { type: 'car', share: 0.15, capacity_units: 6 },
] as const;

/**
 * A proof photo as a driver's camera would give it, made in memory: a valid RGB PNG of 48 × 48 pixels (a
 * gradient with seeded noise, a few KB once compressed), so the server's signature check sees real image bytes.
 */
export function proofPhotoPng(seed: number): Buffer {
  const W = 48;
  const H = 48;
  const r = rng(seed);
  const raw = Buffer.alloc(H * (1 + W * 3));
  for (let y = 0; y < H; y++) {
    const row = y * (1 + W * 3);
    raw[row] = 0; // filter: none
    for (let x = 0; x < W; x++) {
      const o = row + 1 + x * 3;
      raw[o] = (x * 5 + r.int(24)) & 255;
      raw[o + 1] = (y * 5 + r.int(24)) & 255;
      raw[o + 2] = (128 + r.int(48)) & 255;
    }
  }
  const chunk = (type: string, data: Buffer) => {
    const head = Buffer.alloc(8);
    head.writeUInt32BE(data.length, 0);
    head.write(type, 4, 'ascii');
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(zlib.crc32(Buffer.concat([head.subarray(4), data])), 0);
    return Buffer.concat([head, data, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(W, 0);
  ihdr.writeUInt32BE(H, 4);
  ihdr.set([8, 2, 0, 0, 0], 8); // 8 bits, RGB, deflate, no filter method beyond the default, not interlaced
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', zlib.deflateSync(raw)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

type Pt = { lon: number; lat: number };
const geo = (p: Pt) => ({ type: 'Point', coordinates: [p.lon, p.lat] });
const M_PER_DEG_LAT = 111_320;

// ------------------------------------------------------------------ the simulation
export async function simulate(opts: SimOptions, log: (line: string) => void = console.log): Promise<SimReport> {
  const t0 = performance.now();
  const realT = () => (performance.now() - t0) / 1000;
  const sleepReal = (ms: number) => new Promise((r) => setTimeout(r, ms));
  const simNow = () => ((performance.now() - dayStart) / 1000) * opts.compression; // simulated seconds since the day began
  const sleepSim = (simS: number) => sleepReal((simS / opts.compression) * 1000);
  let dayStart = performance.now();
  let stopping = false;
  let closed = false; // after the drain: an order still playing stops at its next request
  // Once the plays' last requests are answered, only the run's own closing reads go out: a play that wakes up
  // later (it was waiting for a driver, a preparation) is refused, whatever the time.
  const closingReads = new AsyncLocalStorage<boolean>();
  let pending = 0; // requests sent and not yet answered
  const interrupted = () => opts.interrupt?.aborted === true;
  /** Resolves when the run is interrupted (never without opts.interrupt): raced with the waits of the play. */
  const onInterrupt = new Promise<void>((resolve) => {
    if (interrupted()) resolve();
    else opts.interrupt?.addEventListener('abort', () => resolve(), { once: true });
  });
  const orInterrupt = (p: Promise<unknown>) => Promise.race([p, onInterrupt]);
  let tBase = 0; // the timeline's zero: the start of the day

  // ---------------------------------------------------------------- HTTP with per-route figures
  // An idle socket is closed here before the server closes it (its keep-alive timeout, 72 s by default, is what it
  // advertises): without a timeout of its own the agent keeps idle sockets forever and may send a request on one at
  // the moment the server closes it (socket hang up), as a load balancer with a longer idle timeout would.
  const agent = new http.Agent({ keepAlive: true, maxSockets: 256, timeout: 60_000 });
  const base = new URL(opts.baseUrl);
  const BUCKET_S = Math.max(2, Math.min(15, opts.durationS / 30));
  type Bucket = SimReport['timeline'][number] & {
    lat: Map<string, number[]>;
    ingestLags: number[];
    webhookLags: number[];
    eventLags: number[];
  };
  const buckets: Bucket[] = [];
  const bucket = () => {
    const i = Math.floor((realT() - tBase) / BUCKET_S);
    while (buckets.length <= i)
      buckets.push({
        t: (buckets.length + 1) * BUCKET_S,
        seconds: BUCKET_S,
        requests: 0,
        c4xx: 0,
        errors: 0,
        gps_points: 0,
        orders: 0,
        planned_rate_per_hour: NaN,
        routes: {},
        gps_ingest_lag: lagStats([]),
        stream_event_lag: lagStats([]),
        webhook_lag: lagStats([]),
        lat: new Map(),
        ingestLags: [],
        eventLags: [],
        webhookLags: [],
      });
    return buckets[i];
  };
  const routeLat = new Map<string, number[]>();
  const routeCounts = new Map<string, { count: number; c4xx: number; c5xx: number; network: number }>();
  const unexpected4xx: SimReport['unexpected_4xx'] = [];
  interface Res {
    status: number;
    body: any;
    /** The Retry-After header in seconds, when the server sent one. */
    retryAfter: number | null;
  }
  /** A Buffer body is sent as it is, with `headers` naming its type; anything else as JSON. */
  function request(
    route: string,
    token: string | null,
    method: string,
    p: string,
    body?: unknown,
    expect4xx: number[] = [],
    headers: Record<string, string> = {},
  ): Promise<Res> {
    if (closed && !closingReads.getStore()) return Promise.reject(new RunOver());
    pending++;
    return bearer(token).then(send);
    function send(bearerToken: string | null) {
      return new Promise<Res>((resolve) => {
        const payload = body === undefined ? undefined : Buffer.isBuffer(body) ? body : JSON.stringify(body);
        const started = performance.now();
        const rc = routeCounts.get(route) ?? { count: 0, c4xx: 0, c5xx: 0, network: 0 };
        routeCounts.set(route, rc);
        const done = (status: number, text: string, retryAfter: string | undefined = undefined) => {
          pending--;
          const ms = performance.now() - started;
          const b = bucket();
          rc.count++;
          b.requests++;
          if (status === 0) {
            rc.network++;
            b.errors++;
          } else if (status >= 500) {
            rc.c5xx++;
            b.errors++;
          } else if (status >= 400) {
            rc.c4xx++;
            b.c4xx++;
            if (!expect4xx.includes(status) && unexpected4xx.length < 50) unexpected4xx.push({ route, status, body: text.slice(0, 300) });
          }
          if (status !== 0) {
            (routeLat.get(route) ?? routeLat.set(route, []).get(route)!).push(ms);
            (b.lat.get(route) ?? b.lat.set(route, []).get(route)!).push(ms);
          }
          let parsed: unknown;
          try {
            parsed = text ? JSON.parse(text) : null;
          } catch {
            parsed = text;
          }
          if (status >= 500 || status === 0) log(`  server error ${status || 'network'} on ${method} ${p}: ${text.slice(0, 200)}`);
          const after = retryAfter === undefined || retryAfter.trim() === '' ? NaN : Number(retryAfter);
          resolve({ status, body: parsed, retryAfter: Number.isFinite(after) && after >= 0 ? after : null });
        };
        const req = http.request(
          {
            host: base.hostname,
            port: base.port || 80,
            path: `/api/v1${p}`,
            method,
            agent,
            timeout: 60_000,
            headers: {
              ...(bearerToken ? { authorization: `Bearer ${bearerToken}` } : {}),
              ...(payload ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } : {}),
              ...headers,
            },
          },
          (res) => {
            let text = '';
            res.setEncoding('utf8');
            res.on('data', (c: string) => (text += c));
            const retryAfter = res.headers['retry-after'];
            res.on('end', () => done(res.statusCode ?? 0, text, retryAfter));
            res.on('error', (e) => done(0, String(e)));
          },
        );
        req.on('timeout', () => req.destroy(new Error('timeout after 60 s')));
        req.on('error', (e) => done(0, String(e)));
        req.end(payload);
      });
    }
  }
  /** A call that must succeed (2xx); a 429 is waited out and retried. */
  async function must(route: string, token: string | null, method: string, p: string, body?: unknown): Promise<any> {
    for (let attempt = 0; ; attempt++) {
      const r = await request(route, token, method, p, body, [429]);
      if (r.status >= 200 && r.status < 300) return r.body;
      if (r.status === 429 && attempt < 20) {
        await sleepReal(1000 * Math.min(30, Number(r.body?.retry_after ?? 1) || 1));
        continue;
      }
      throw new Error(`${method} ${p} answered ${r.status}: ${JSON.stringify(r.body).slice(0, 300)}`);
    }
  }
  /**
   * A user's session as an app keeps it: the first access token is the simulator's handle of the user; requests send
   * the current one, refreshed (`POST /auth/refresh`, which rotates the refresh token) a few minutes before it expires,
   * each session at its own moment so that a city logged in within a minute does not refresh all at once.
   */
  interface Session {
    access: string;
    refresh: string;
    expiresAt: number;
    margin: number;
    refreshing: Promise<void> | null;
  }
  const sessions = new Map<string, Session>();
  const login = async (email: string, password: string): Promise<string> => {
    const r = await must('POST /auth/login', null, 'POST', '/auth/login', { email, password });
    sessions.set(r.access_token, {
      access: r.access_token,
      refresh: r.refresh_token,
      expiresAt: Date.now() + Number(r.expires_in) * 1000,
      margin: Math.min(Number(r.expires_in) / 3, 60 + Math.random() * 240) * 1000,
      refreshing: null,
    });
    return r.access_token as string;
  };
  async function bearer(handle: string | null): Promise<string | null> {
    const s = handle === null ? undefined : sessions.get(handle);
    if (!s) return handle;
    if (s.expiresAt - Date.now() < s.margin) {
      s.refreshing ??= (async () => {
        const r = await request('POST /auth/refresh', null, 'POST', '/auth/refresh', { refresh_token: s.refresh });
        if (r.status === 200) {
          s.access = r.body.access_token;
          s.refresh = r.body.refresh_token ?? s.refresh;
          s.expiresAt = Date.now() + Number(r.body.expires_in) * 1000;
        }
      })().finally(() => (s.refreshing = null));
      await s.refreshing;
    }
    return s.access;
  }

  // ---------------------------------------------------------------- is the server there?
  try {
    const r = await fetch(`${opts.baseUrl}/api/v1/health`, { signal: AbortSignal.timeout(5000) });
    if (!r.ok) throw new Error(`answered ${r.status}`);
  } catch (e) {
    throw new OptionError(
      `no server at ${opts.baseUrl} (${e instanceof Error ? e.message : e}); start one (npm start, with SEED_DEMO=true) or pass --base-url`,
    );
  }

  // ---------------------------------------------------------------- the database, when given: size and slowest statements
  const database: SimReport['database'] = {
    available: false,
    reason: 'not measured: pass --database-url',
    samples: [],
    growth_bytes: NaN,
    largest_relations: [],
    statements: { available: false, reason: 'not measured: pass --database-url', top: [] },
  };
  let dbClient: pg.Client | null = null;
  if (opts.databaseUrl) {
    const c = new pg.Client({ connectionString: opts.databaseUrl, connectionTimeoutMillis: 5000 });
    try {
      await c.connect();
      await c.query('SELECT pg_database_size(current_database())');
    } catch (e) {
      await c.end().catch(() => undefined);
      throw new OptionError(`cannot read the database at --database-url (${e instanceof Error ? e.message || e.name : e})`);
    }
    c.on('error', () => undefined); // a dropped measuring connection ends the samples, not the run
    dbClient = c;
    database.available = true;
    database.reason = null;
  }
  /** pg_stat_statements needs its library loaded at the server's start; the simulator never restarts a server, it says so. */
  const prepareStatements = async (c: pg.Client) => {
    const preload = (await c.query<{ v: string }>(`SELECT current_setting('shared_preload_libraries') AS v`)).rows[0]!.v;
    if (!/\bpg_stat_statements\b/.test(preload))
      return `not available: this PostgreSQL was started without pg_stat_statements in shared_preload_libraries (${preload ? `it has: ${preload}` : 'it is empty'}); see docs/CAPACITY.md`;
    try {
      await c.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
      await c.query('SELECT pg_stat_statements_reset()');
      return null;
    } catch (e) {
      return `not available: ${e instanceof Error ? e.message : e}`;
    }
  };

  // ---------------------------------------------------------------- opening hours, vehicles, proof photos, optimizer plans
  /**
   * Every branch declares the same hours on every weekday, in the organization's time zone. The server judges them
   * by its own clock, not the simulated one, so they are the real hours of the run: from an hour before it to three
   * hours after its day and drain (24 hours when that is longer), and every order lands while the branch is open.
   */
  const declareOpeningHours = async () => {
    const timeZone = String((await must('GET /settings', admin, 'GET', '/settings')).timezone ?? 'UTC');
    const hhmm = new Intl.DateTimeFormat('en-GB', { timeZone, hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
    const from = Date.now() - 3_600_000;
    const spanMin = 60 + Math.ceil((opts.durationS + opts.drainS) / 60) + 180;
    const open = hhmm.format(from);
    const close = spanMin >= 23 * 60 ? open : hhmm.format(from + spanMin * 60_000);
    return {
      timeZone,
      open,
      close,
      intervals: Array.from({ length: 7 }, (_, day) => ({ day, open, close })),
      openAtStart: 0,
      refusedClosed: 0,
    };
  };
  const vehicles: SimReport['vehicles'] = { by_type: {} };
  const vehicleOf = (i: number) => {
    let u = sub(opts.seed, 7000 + i).next();
    const v = VEHICLES.find((x) => (u -= x.share) < 0) ?? VEHICLES[0];
    return { vehicle_type: v.type, capacity_units: v.capacity_units };
  };
  /** Counted from what the server stored and answered, not from what was asked. */
  const countVehicle = (d: { vehicle_type?: string; capacity_units?: number }) => {
    const v = (vehicles.by_type[d.vehicle_type ?? 'none'] ??= { drivers: 0, capacity_units: 0 });
    v.drivers++;
    v.capacity_units += d.capacity_units ?? 0;
  };

  const proofs: SimReport['proofs'] = { share: opts.photoShare, photos_uploaded: 0, bytes: 0, failed: 0 };
  /**
   * As the driver app does for a delivery with a photo: an evidence slot, the bytes PUT to it with its token, and the
   * stored object named as the proof's evidence. A seeded share of deliveries has one; a refusal is counted and the
   * delivery is verified without it.
   */
  const uploadProofPhoto = async (d: { token: string }, tripId: string, k: number) => {
    if (sub(opts.seed, 600_000 + k).next() >= opts.photoShare) return null;
    const bytes = proofPhotoPng(opts.seed * 1_000_003 + k);
    const slot = await request('POST /storage/evidence/uploads', d.token, 'POST', '/storage/evidence/uploads', {
      trip_id: tripId,
      stage: 'delivery',
      proof_type: 'photo',
      mime_type: 'image/png',
      size_bytes: bytes.length,
      filename: 'delivery.png',
    });
    if (slot.status !== 201) {
      proofs.failed++;
      return null;
    }
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(slot.body.required_headers as Record<string, string>))
      if (name.toLowerCase() !== 'content-length') headers[name.toLowerCase()] = value;
    headers['content-type'] = slot.body.mime_type;
    headers['x-upload-token'] = slot.body.upload_token;
    const put = await request(
      'PUT /storage/uploads/:upload_id',
      d.token,
      'PUT',
      String(slot.body.upload_url).replace(/^\/api\/v1/, ''),
      bytes,
      [],
      headers,
    );
    if (put.status !== 201) {
      proofs.failed++;
      return null;
    }
    proofs.photos_uploaded++;
    proofs.bytes += bytes.length;
    return { type: 'photo', storage_key: String(slot.body.object_id) };
  };

  const plans = {
    requested: 0,
    computed: 0,
    busy: 0,
    failed: 0,
    trips_planned: 0,
    trips_unassigned: 0,
    latency: [] as number[],
    solve: [] as number[],
  };
  /**
   * A dispatcher at the console: every --plan-every-min simulated minutes of the day, the optimizer's plan of the
   * territory's pending trips, as the console's "optimize" asks it. The plan is read, never committed: committing would
   * reassign trips the simulator's drivers are playing.
   */
  const planLoop = async () => {
    if (opts.planEveryMin <= 0) return;
    const every = opts.planEveryMin * 60;
    for (let n = 1; n * every < opts.durationS * opts.compression; n++) {
      const wait = n * every - simNow();
      if (wait > 0) await sleepSim(wait);
      if (stopping) return;
      plans.requested++;
      const started = performance.now();
      const r = await request(
        'POST /admin/dispatch-batches/optimize',
        admin,
        'POST',
        '/admin/dispatch-batches/optimize',
        { territory_id: territory.id, seed: opts.seed, time_budget_ms: 1000 },
        [429, 503],
      );
      if (r.status === 201) {
        plans.computed++;
        plans.latency.push(performance.now() - started);
        plans.solve.push(Number(r.body.solver?.elapsed_ms ?? NaN));
        plans.trips_planned += r.body.totals?.assigned ?? 0;
        plans.trips_unassigned += r.body.totals?.unassigned ?? 0;
      } else if (r.status === 429 || r.status === 503) plans.busy++;
      else plans.failed++;
    }
  };

  // ---------------------------------------------------------------- the city
  const tag = `${opts.seed}-${Date.now().toString(36)}`; // emails must be new on every run; everything else follows the seed
  const PASSWORD = 'Sim-pass-2026-city';
  let admin: string;
  try {
    admin = await login(opts.adminEmail, opts.adminPassword);
  } catch (e) {
    throw new OptionError(
      `cannot log in as ${opts.adminEmail} (${e instanceof Error ? e.message : e}); start the server with SEED_DEMO=true or pass --admin-email/--admin-password`,
    );
  }
  const nDrivers = opts.scale;
  const nMerchants = Math.ceil(opts.scale / 10);
  const nCustomers = opts.customers ?? opts.scale * 2; // planDay picks customers and merchants by these counts
  log(
    `simulate: ${opts.baseUrl}, seed ${opts.seed}: ${nDrivers} drivers, ${nMerchants} merchants, ${nCustomers} customers; ${opts.durationS} s real × ${opts.compression} from ${opts.startHour}:00`,
  );

  const territories = (await must('GET /territories', admin, 'GET', '/territories?limit=100')).data as {
    id: string;
    name: string;
    active: boolean;
    geometry: { type: string; coordinates: number[][][] | number[][][][] };
  }[];
  const territory = territories.find((t) => t.active) ?? territories[0];
  if (!territory) throw new OptionError('the organization has no territory; seed the demo data (SEED_DEMO=true)');
  const ring =
    territory.geometry.type === 'MultiPolygon'
      ? (territory.geometry.coordinates as number[][][][])[0][0]
      : (territory.geometry.coordinates as number[][][])[0];
  const lons = ring.map((c) => c[0]);
  const lats = ring.map((c) => c[1]);
  const center = { lon: (Math.min(...lons) + Math.max(...lons)) / 2, lat: (Math.min(...lats) + Math.max(...lats)) / 2 };
  // A street grid of 100 m blocks inside the middle half of the territory's bounding box.
  const halfLon = (Math.max(...lons) - Math.min(...lons)) / 4;
  const halfLat = (Math.max(...lats) - Math.min(...lats)) / 4;
  const mPerDegLon = M_PER_DEG_LAT * Math.cos((center.lat * Math.PI) / 180);
  const BLOCK = 100;
  const snap = (p: Pt): Pt => ({
    lon: center.lon + (Math.round(((p.lon - center.lon) * mPerDegLon) / BLOCK) * BLOCK) / mPerDegLon,
    lat: center.lat + (Math.round(((p.lat - center.lat) * M_PER_DEG_LAT) / BLOCK) * BLOCK) / M_PER_DEG_LAT,
  });
  const randomCorner = (r: ReturnType<typeof rng>): Pt =>
    snap({ lon: center.lon + r.range(-halfLon, halfLon), lat: center.lat + r.range(-halfLat, halfLat) });
  /** A corner within about a kilometre of `at`, inside the grid. */
  const nearby = (at: Pt, r: ReturnType<typeof rng>): Pt => {
    const clamp = (v: number, c: number, half: number) => Math.min(c + half, Math.max(c - half, v));
    return snap({
      lon: clamp(at.lon + r.range(-1000, 1000) / mPerDegLon, center.lon, halfLon),
      lat: clamp(at.lat + r.range(-1000, 1000) / M_PER_DEG_LAT, center.lat, halfLat),
    });
  };
  log(
    `  territory ${territory.name}: a ${Math.round(halfLon * 2 * mPerDegLon)} m × ${Math.round(halfLat * 2 * M_PER_DEG_LAT)} m street grid around ${center.lat.toFixed(4)}, ${center.lon.toFixed(4)}`,
  );

  const newUser = async (role: string, i: number, name: string) =>
    (await must('POST /app-users', admin, 'POST', '/app-users', {
      email: `sim-${tag}-${role}-${i}@sim.test`,
      password: PASSWORD,
      display_name: name,
      role,
    })) as { id: string; email: string };
  const inBatches = async <T>(n: number, size: number, f: (i: number) => Promise<T>, what = ''): Promise<T[]> => {
    const out: T[] = [];
    for (let i = 0; i < n; i += size) {
      out.push(...(await Promise.all(Array.from({ length: Math.min(size, n - i) }, (_, k) => f(i + k)))));
      if (what && n >= 500 && Math.floor((i + size) / 250) > Math.floor(i / 250)) log(`  … ${out.length} of ${n} ${what}`);
    }
    return out;
  };

  const openingHours = await declareOpeningHours();
  // Merchants: owner user, merchant, approval, a branch on the grid (open all day) and a catalog of three items.
  const merchants = await inBatches(nMerchants, 4, async (i) => {
    const r = sub(opts.seed, 1000 + i);
    const u = await newUser('comercio', i, `Sim merchant ${i}`);
    const m = await must('POST /merchants', admin, 'POST', '/merchants', { owner_user_id: u.id, name: `Sim kitchen ${opts.seed}-${i}` });
    await must('POST /merchants/:id/approve', admin, 'POST', `/merchants/${m.id}/approve`, {});
    const token = await login(u.email, PASSWORD);
    const at = randomCorner(r);
    const branch = await must('POST /merchant/branches', token, 'POST', '/merchant/branches', {
      name: 'Centro',
      address: `Calle ${i + 1}`,
      location: geo(at),
      opening_hours: openingHours.intervals,
    });
    if (branch.open_now) openingHours.openAtStart++;
    const items: string[] = [];
    for (let k = 0; k < 3; k++)
      items.push(
        (await must('POST /merchant/catalog', token, 'POST', '/merchant/catalog', { name: `Dish ${k}`, price: `${10 + r.int(40)}.50` })).id,
      );
    return { id: m.id as string, token, branchId: branch.id as string, at, items };
  });
  log(`  ${merchants.length} merchants with a branch and a catalog`);

  // Drivers: user, driver profile, approval, available, logged in, first fix on the grid.
  interface Driver {
    i: number;
    id: string;
    userId: string;
    token: string;
    pos: Pt;
    speed: number;
    busy: boolean;
    route: Pt[];
    arrived: (() => void) | null;
    /** Fixes not yet accepted, each with its client_point_id (a batch that failed is sent again with the same ids). */
    buffer: { p: Pt; at: number; id: string }[];
    n: number;
  }
  const drivers: Driver[] = await inBatches(
    nDrivers,
    8,
    async (i) => {
      const r = sub(opts.seed, 2000 + i);
      const u = await newUser('repartidor', i, `Sim driver ${i}`);
      const d = await must('POST /drivers', admin, 'POST', '/drivers', { user_id: u.id, capacity: 1, ...vehicleOf(i) });
      countVehicle(d);
      await must('POST /drivers/:id/approve', admin, 'POST', `/drivers/${d.id}/approve`, {});
      await must('POST /drivers/:id/availability', admin, 'POST', `/drivers/${d.id}/availability`, { available: true });
      const token = await login(u.email, PASSWORD);
      const pos = randomCorner(r);
      await must('POST /driver/location', token, 'POST', '/driver/location', { location: geo(pos) });
      return {
        i,
        id: d.id,
        userId: u.id,
        token,
        pos,
        speed: r.range(18, 32) / 3.6,
        busy: false,
        route: [],
        arrived: null,
        buffer: [],
        n: 0,
      };
    },
    'drivers',
  );
  log(`  ${drivers.length} drivers approved and available`);

  // Customers: user, login, an address on the grid.
  const customers = await inBatches(
    nCustomers,
    8,
    async (i) => {
      const r = sub(opts.seed, 3000 + i);
      const u = await newUser('delivery', i, `Sim customer ${i}`);
      const token = await login(u.email, PASSWORD);
      const at = randomCorner(r);
      const a = await must('POST /customer/addresses', token, 'POST', '/customer/addresses', {
        address: `Av. ${i + 1}`,
        location: geo(at),
      });
      return { i, userId: u.id, token, addressId: a.id as string, at };
    },
    'customers',
  );
  log(`  ${customers.length} customers with an address`);
  /** Each customer orders from one of the merchants nearest home (a delivery radius, as a real marketplace has). */
  const NEARBY = 3;
  const dist2 = (a: Pt, b: Pt) => ((a.lon - b.lon) * mPerDegLon) ** 2 + ((a.lat - b.lat) * M_PER_DEG_LAT) ** 2;
  const nearbyMerchants = customers.map((c) =>
    merchants
      .map((m, k) => ({ k, d: dist2(c.at, m.at) }))
      .sort((a, b) => a.d - b.d)
      .slice(0, NEARBY)
      .map((x) => x.k),
  );

  // Dispatchers: staff users of the console (the dispatch flag), each on the organization stream with his own session.
  const nDispatchers = opts.dispatchers ?? Math.min(5, Math.max(1, Math.ceil(opts.scale / 20)));
  const dispatcherTokens = await inBatches(nDispatchers, 8, async (i) => {
    const u = (await must('POST /app-users', admin, 'POST', '/app-users', {
      email: `sim-${tag}-dispatch-${i}@sim.test`,
      password: PASSWORD,
      display_name: `Sim dispatcher ${i}`,
      role: 'administrator',
      dispatch: true,
    })) as { email: string };
    return login(u.email, PASSWORD);
  });

  // ---------------------------------------------------------------- the plan: every order of the day, from the seed
  const { plan, digest: planDigest } = planDay(opts);
  log(
    `  the day's plan: ${plan.length} orders (${plan.filter((p) => p.kind === 'dispatch').length} dispatch trips with a recipient link), plan digest ${planDigest}`,
  );

  // ---------------------------------------------------------------- streams
  interface Stream {
    name: string;
    kind: string;
    /** Event ids seen lately on this stream (bounded: ids far below the newest are forgotten). */
    ids: Set<number>;
    received: number;
    duplicates: number;
    reconnects: number;
    resets: number;
    /** A customer's stream: the trip events it received. Dispatchers' streams share `orgSeen` instead. */
    byTrip: Map<string, Set<string>>;
    /** Index among the organization streams (a bit in `orgSeen`), -1 for a customer's stream. */
    orgIndex: number;
    req: http.ClientRequest | null;
    lastId: number | null;
  }
  const streams: Stream[] = [];
  const ingestLags: number[] = [];
  const eventLags: number[] = [];
  // "trip type" → one bit per organization stream that received it: hundreds of dispatchers over thousands of trips.
  const orgSeen = new Map<string, Uint32Array>();
  let orgStreams = 0;
  const TRACKED = new Set([
    'trip.created',
    'trip.rejected',
    'trip.accepted',
    'trip.pickup_verified',
    'trip.completed',
    'trip.delivery_failed',
    'trip.returned',
  ]);
  const markSeen = (s: Stream, trip: string, type: string) => {
    if (s.orgIndex < 0) {
      (s.byTrip.get(trip) ?? s.byTrip.set(trip, new Set()).get(trip)!).add(type);
      return;
    }
    const key = `${trip} ${type}`;
    let bits = orgSeen.get(key);
    if (!bits) orgSeen.set(key, (bits = new Uint32Array(Math.ceil(orgStreams / 32) || 1)));
    bits[s.orgIndex >> 5] |= 1 << (s.orgIndex & 31);
  };
  const hasSeen = (s: Stream, trip: string, type: string) => {
    if (s.orgIndex < 0) return s.byTrip.get(trip)?.has(type) ?? false;
    const bits = orgSeen.get(`${trip} ${type}`);
    return !!bits && (bits[s.orgIndex >> 5] & (1 << (s.orgIndex & 31))) !== 0;
  };
  const ID_WINDOW = 50_000;
  /** Per stream (in `streams` order): the events the simulator caused that it has not received. */
  /** A few of the events each stream lost ("trip type"), for the report. */
  const lostSamples = new Map<Stream, string[]>();
  const lostPerStream = () => {
    const lost = streams.map(() => 0);
    lostSamples.clear();
    const sample = (s: Stream, key: string) => {
      const l = lostSamples.get(s) ?? lostSamples.set(s, []).get(s)!;
      if (l.length < 3) l.push(key);
    };
    const orgIdx = streams.flatMap((s, si) => (s.orgIndex >= 0 ? [si] : []));
    const meIdx = new Map(streams.map((s, si) => [s, si]));
    for (const ev of expectedEvents.values()) {
      const mine = ev.customer === null ? undefined : watched.get(ev.customer);
      for (const t of ev.types) {
        const bits = orgSeen.get(`${ev.trip} ${t}`);
        for (const si of orgIdx) {
          const o = streams[si].orgIndex;
          if (!bits || (bits[o >> 5] & (1 << (o & 31))) === 0) {
            lost[si]++;
            sample(streams[si], `${ev.trip} ${t}`);
          }
        }
        if (mine && !hasSeen(mine, ev.trip, t)) {
          lost[meIdx.get(mine)!]++;
          sample(mine, `${ev.trip} ${t}`);
        }
      }
    }
    return lost;
  };
  const openStream = (s: Stream, token: string, p: string) => {
    const connect = () => void bearer(token).then(connectWith, () => undefined);
    const connectWith = (bearerToken: string | null) => {
      if (stopping && s.lastId !== null && s.req === null) return;
      const req = http.get(
        `${opts.baseUrl}/api/v1${p}`,
        {
          agent: false,
          headers: {
            authorization: `Bearer ${bearerToken}`,
            accept: 'text/event-stream',
            ...(s.lastId !== null ? { 'last-event-id': String(s.lastId) } : {}),
          },
        },
        (res) => {
          if (res.statusCode !== 200) {
            res.resume();
            log(`  stream ${s.name} answered ${res.statusCode}`);
            return;
          }
          let buf = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => {
            buf += chunk;
            let cut: number;
            while ((cut = buf.indexOf('\n\n')) >= 0) {
              const frame = buf.slice(0, cut);
              buf = buf.slice(cut + 2);
              let id: number | null = null;
              let type = '';
              let data = '';
              for (const line of frame.split('\n')) {
                if (line.startsWith('id: ')) id = Number(line.slice(4));
                else if (line.startsWith('event: ')) type = line.slice(7);
                else if (line.startsWith('data: ')) data += line.slice(6);
              }
              if (!type) continue; // heartbeat comment
              if (type === 'stream.reset') {
                s.resets++;
                continue;
              }
              if (id === null) continue;
              s.received++;
              if (s.ids.has(id)) {
                s.duplicates++;
                continue;
              }
              s.ids.add(id);
              s.lastId = Math.max(s.lastId ?? 0, id);
              if (s.ids.size > 2 * ID_WINDOW) for (const old of s.ids) if (old < s.lastId - ID_WINDOW) s.ids.delete(old);
              // Only the events the run checks are parsed: location updates on the first dispatcher's stream (the
              // ingest lag) and the trip events the simulator caused.
              const lagProbe = s === streams[0] && s.kind === 'organization' && type === 'trip.location_updated';
              if (!lagProbe && !TRACKED.has(type)) continue;
              try {
                const ev = JSON.parse(data) as {
                  entity_type: string;
                  entity_id: string;
                  created_at?: string;
                  payload?: { recorded_at?: string };
                };
                if (ev.entity_type === 'trip' && TRACKED.has(type)) {
                  markSeen(s, ev.entity_id, type);
                  if (s === streams[0] && s.kind === 'organization' && ev.created_at) {
                    const lag = Date.now() - Date.parse(ev.created_at);
                    if (Number.isFinite(lag)) {
                      eventLags.push(lag);
                      bucket().eventLags.push(lag);
                    }
                  }
                }
                // The batch is sent as its newest point is recorded: recorded → seen by a dispatcher is the ingest lag.
                if (lagProbe && ev.payload?.recorded_at) {
                  const lag = Date.now() - Date.parse(ev.payload.recorded_at);
                  if (Number.isFinite(lag) && !stopping) {
                    ingestLags.push(lag);
                    bucket().ingestLags.push(lag);
                  }
                }
              } catch {
                /* not JSON */
              }
            }
          });
          res.on('close', () => {
            if (stopping) return;
            s.reconnects++;
            setTimeout(connect, 200);
          });
        },
      );
      req.on('error', () => undefined);
      s.req = req;
    };
    connect();
  };
  const newStream = (name: string, kind: string): Stream => {
    const s: Stream = {
      name,
      kind,
      ids: new Set(),
      received: 0,
      duplicates: 0,
      reconnects: 0,
      resets: 0,
      byTrip: new Map(),
      orgIndex: kind === 'organization' ? orgStreams++ : -1,
      req: null,
      lastId: null,
    };
    streams.push(s);
    return s;
  };
  for (let d = 0; d < nDispatchers; d++)
    openStream(
      newStream(`dispatcher ${d + 1} (organization stream)`, 'organization'),
      dispatcherTokens[d],
      '/realtime/organization/stream',
    );
  const watched = new Map<number, Stream>(); // customer index → their /realtime/me stream
  for (let c = 0; c < Math.min(nCustomers, opts.customerStreams ?? Math.min(20, Math.max(2, Math.ceil(opts.scale / 5)))); c++) {
    const s = newStream(`customer ${c} (me stream)`, 'me');
    watched.set(c, s);
    openStream(s, customers[c].token, '/realtime/me/stream');
  }
  // Wait until every stream is open (the server counts them), so that no expected event precedes a subscription.
  for (const deadline = Date.now() + 30_000; ;) {
    const hb = await request('GET /admin/mobile-health', admin, 'GET', '/admin/mobile-health');
    if ((hb.body?.realtime?.sse_connections ?? 0) >= streams.length || Date.now() > deadline) break;
    await sleepReal(200);
  }
  log(`  ${nDispatchers} dispatchers and ${watched.size} customers on the streams`);

  // ---------------------------------------------------------------- drivers: move along the grid, GPS every 5 simulated s, a batch every 30
  let gpsPoints = 0;
  let gpsBatches = 0;
  const GPS_EVERY = 5;
  const BATCH_EVERY = 30;
  /** A Manhattan route on the grid: along the street first, then the avenue. */
  const routeTo = (from: Pt, to: Pt): Pt[] => [snap({ lon: to.lon, lat: from.lat }), snap(to)];
  const driveTo = (d: Driver, to: Pt) =>
    new Promise<void>((resolve) => {
      d.route = routeTo(d.pos, to);
      d.arrived = resolve;
    });
  const step = (d: Driver, seconds: number) => {
    let left = d.speed * seconds;
    while (left > 0 && d.route.length) {
      const to = d.route[0];
      const dx = (to.lon - d.pos.lon) * mPerDegLon;
      const dy = (to.lat - d.pos.lat) * M_PER_DEG_LAT;
      const dist = Math.hypot(dx, dy);
      if (dist <= left) {
        d.pos = to;
        d.route.shift();
        left -= dist;
      } else {
        d.pos = { lon: d.pos.lon + (dx / dist) * (left / mPerDegLon), lat: d.pos.lat + (dy / dist) * (left / M_PER_DEG_LAT) };
        left = 0;
      }
    }
    if (!d.route.length && d.arrived) {
      const a = d.arrived;
      d.arrived = null;
      a();
    }
  };
  const driverLoop = async (d: Driver) => {
    await sleepSim(sub(opts.seed, 4000 + d.i).range(0, BATCH_EVERY)); // spread the batches
    while (!stopping) {
      for (let k = 0; k < BATCH_EVERY / GPS_EVERY; k++) {
        step(d, GPS_EVERY);
        d.buffer.push({ p: d.pos, at: Date.now(), id: `sim-${tag}-${d.i}-${d.n++}` });
        if (k < BATCH_EVERY / GPS_EVERY - 1) await sleepSim(GPS_EVERY);
      }
      const pts = d.buffer.splice(0);
      const r = await request('POST /driver/locations/batch', d.token, 'POST', '/driver/locations/batch', {
        points: pts.map((x) => ({
          client_point_id: x.id,
          location: geo(x.p),
          recorded_at: new Date(Math.min(x.at, Date.now() - 1)).toISOString(),
        })),
      });
      // As the driver app does: a batch the server did not answer goes again with the next one (the ids make it once).
      if (r.status === 0 || r.status >= 500) d.buffer.unshift(...pts);
      if (r.status === 200) {
        gpsPoints += r.body.accepted ?? pts.length;
        gpsBatches++;
        bucket().gps_points += r.body.accepted ?? pts.length;
      }
      await sleepSim(GPS_EVERY);
    }
  };

  // ---------------------------------------------------------------- orders
  const expectedOrder = new Map<string, { status: string; customer: number }>();
  const expectedEvents = new Map<string, { trip: string; types: string[]; customer: number | null }>();
  let failedDeliveries = 0;
  let rejections = 0;
  let trackingPolls = 0;
  let trackingLinks = 0;
  /** Trips waiting for a free driver: as a dispatcher does, dispatched again when a driver frees up. */
  const waitingTrips = new DriverQueue((REDISPATCH_S / opts.compression) * 1000);
  const freeDriver = (d: Driver) => {
    d.busy = false;
    waitingTrips.wakeOne();
  };
  /**
   * Assign a pending trip: auto-assignment first, then the nearest idle driver the simulator knows; while everyone is
   * busy it waits its turn for a driver to free up.
   */
  const assign = async (tripId: string, p: Planned, pickup: Pt, exclude: Set<string>, ev: { types: string[] }): Promise<Driver> => {
    for (;;) {
      const r = await request('POST /trips/:id/auto-assign', admin, 'POST', `/trips/${tripId}/auto-assign`, {}, [409, 422, 404]);
      if (r.status === 200 && r.body?.driver_id) {
        const d = drivers.find((x) => x.id === r.body.driver_id);
        if (d && !d.busy) {
          d.busy = true;
          return d;
        }
        // Offered to a driver still busy with another trip here (the server frees him as a delivery fails, the
        // simulator only once the goods are back): he turns it down and dispatch goes on.
        if (d) {
          const no = await request(
            'POST /driver/trips/:id/reject',
            d.token,
            'POST',
            `/driver/trips/${tripId}/reject`,
            { reason: 'busy' },
            [409],
          );
          if (no.status === 200) {
            rejections++;
            ev.types.push('trip.rejected');
          }
        }
      }
      // As a dispatcher would: the idle driver nearest the pickup.
      let d: Driver | null = null;
      let best = Infinity;
      for (const x of drivers)
        if (!x.busy && !exclude.has(x.id)) {
          const dd = dist2(x.pos, pickup);
          if (dd < best) [d, best] = [x, dd];
        }
      if (d) {
        d.busy = true;
        const a = await request('POST /trips/:id/assign', admin, 'POST', `/trips/${tripId}/assign`, { driver_id: d.id }, [409, 422]);
        if (a.status === 200) return d;
        d.busy = false;
      }
      // The idle drivers are ones this trip cannot take (they rejected it): the next trip in line may.
      if (!d && drivers.some((x) => !x.busy)) waitingTrips.wakeOne();
      await waitingTrips.wait();
      if (closed) throw new RunOver();
      void p;
    }
  };

  const playOrder = async (p: Planned) => {
    const c = customers[p.customer];
    // A customer orders from one of the merchants near home; a merchant's own trip goes to a door nearby.
    const m = merchants[p.kind === 'order' ? nearbyMerchants[p.customer][p.merchant % nearbyMerchants[p.customer].length] : p.merchant];
    let tripId: string;
    let orderId: string | null = null;
    let deliveryPin: () => Promise<string>;
    let trackingToken: string | null = null;
    const dropoff = nearby(m.at, sub(opts.seed, 500_000 + p.k));
    if (p.kind === 'order') {
      const o = await request('POST /customer/orders', c.token, 'POST', '/customer/orders', {
        branch_id: m.branchId,
        address_id: c.addressId,
        payment_destination: 'cash',
        items: [...new Set(p.items)].map((i) => ({ catalog_item_id: m.items[i], quantity: 1 })),
      });
      if (o.status !== 201) {
        if (o.body?.code === 'BRANCH_CLOSED') openingHours.refusedClosed++;
        return;
      }
      orderId = o.body.id as string;
      bucket().orders++;
      const id = orderId;
      expectedOrder.set(id, { status: o.body.status, customer: p.customer });
      await sleepSim(sub(opts.seed, 200_000 + p.k).range(30, 120));
      let trip: string | null = null;
      for (const status of ['confirmed', 'preparing', 'ready']) {
        const r = await must('PATCH /merchant/orders/:id/status', m.token, 'PATCH', `/merchant/orders/${id}/status`, { status });
        expectedOrder.get(id)!.status = r.status;
        trip = r.trip_id ?? trip;
        if (status === 'preparing') await sleepSim(p.prepS);
      }
      if (!trip) throw new Error(`order ${id} is ready without a trip`);
      tripId = trip;
      deliveryPin = async () => (await must('GET /customer/trips/:id', c.token, 'GET', `/customer/trips/${tripId}`)).delivery_pin;
    } else {
      const t = await must('POST /trips', admin, 'POST', '/trips', {
        pickup_location: geo(m.at),
        pickup_address: 'Sim branch',
        dropoff_location: geo(dropoff),
        dropoff_address: 'Sim door',
        merchant_id: m.id,
        recipient_phone: '+59170000000',
      });
      tripId = t.id;
      bucket().orders++;
      const link = await request('POST /trips/:id/recipient-link', admin, 'POST', `/trips/${tripId}/recipient-link`, {
        recipient_phone: '+59170000000',
      });
      if (link.status === 200 || link.status === 201) {
        trackingToken = String(link.body.url).split('/').pop()!;
        trackingLinks++;
      }
      deliveryPin = async () =>
        trackingToken
          ? (await must('GET /public/tracking/:token', null, 'GET', `/public/tracking/${trackingToken}`)).delivery_pin
          : (await must('GET /trips/:id', admin, 'GET', `/trips/${tripId}`)).delivery_pin;
    }
    const ev = { trip: tripId, types: ['trip.created'], customer: p.kind === 'order' ? p.customer : null };
    expectedEvents.set(tripId, ev);
    // The recipient opens the tracking link now and then (the public route allows 120 a minute per address: all recipients share one here).
    let tracking = true;
    const poller = trackingToken
      ? untilOver(
          (async () => {
            while (tracking && !stopping) {
              await sleepSim(120);
              if (!tracking) break;
              if (trackingPolls / Math.max(1, realT()) < 1.5) {
                await request('GET /public/tracking/:token', null, 'GET', `/public/tracking/${trackingToken}`, undefined, [429]);
                trackingPolls++;
              }
            }
          })(),
        )
      : Promise.resolve();
    const pickupPin = async () => (await must('GET /trips/:id', m.token, 'GET', `/trips/${tripId}`)).pickup_pin as string;

    // Dispatch and the driver's answer.
    const tried = new Set<string>();
    let cash: string | null;
    let d: Driver;
    for (;;) {
      d = await assign(tripId, p, m.at, tried, ev);
      tried.add(d.id);
      await sleepSim(sub(opts.seed, 300_000 + p.k).range(5, 30));
      if (p.reject && tried.size === 1) {
        const r = await request(
          'POST /driver/trips/:id/reject',
          d.token,
          'POST',
          `/driver/trips/${tripId}/reject`,
          { reason: 'too far' },
          [409],
        );
        freeDriver(d);
        if (r.status === 200) {
          rejections++;
          ev.types.push('trip.rejected');
          continue;
        }
      }
      const a = await request('POST /driver/trips/:id/accept', d.token, 'POST', `/driver/trips/${tripId}/accept`, undefined, [409]);
      if (a.status === 200) {
        cash = a.body?.cash_to_collect ?? null;
        break;
      }
      freeDriver(d); // the offer expired or was taken back: dispatch again
    }
    ev.types.push('trip.accepted');
    await driveTo(d, m.at);
    await must('POST /trips/:id/verify-pickup', d.token, 'POST', `/trips/${tripId}/verify-pickup`, { pin: await pickupPin() });
    ev.types.push('trip.pickup_verified');
    // The order follows its trip: on its way, delivered, failed, returned to the merchant.
    const follow = (status: string) => orderId && (expectedOrder.get(orderId)!.status = status);
    follow('in_delivery');
    await must('POST /driver/trips/:id/start-delivery', d.token, 'POST', `/driver/trips/${tripId}/start-delivery`);
    await driveTo(d, p.kind === 'order' ? c.at : dropoff);
    if (p.fail) {
      await must('POST /driver/trips/:id/fail-delivery', d.token, 'POST', `/driver/trips/${tripId}/fail-delivery`, {
        reason: 'recipient_absent',
      });
      failedDeliveries++;
      ev.types.push('trip.delivery_failed');
      follow('delivery_failed');
      await driveTo(d, m.at);
      await must('POST /driver/trips/:id/return', d.token, 'POST', `/driver/trips/${tripId}/return`, { pin: await pickupPin() });
      ev.types.push('trip.returned');
      follow('returned');
    } else {
      const evidence = await uploadProofPhoto(d, tripId, p.k);
      await must('POST /trips/:id/verify-delivery', d.token, 'POST', `/trips/${tripId}/verify-delivery`, {
        pin: await deliveryPin(),
        ...(evidence ? { evidence } : {}),
        ...(cash && Number(cash) > 0 ? { cash_collected: cash } : {}),
      });
      ev.types.push('trip.completed');
      follow('delivered');
    }
    tracking = false;
    freeDriver(d);
    await poller;
  };

  // ---------------------------------------------------------------- server memory
  const samples: SimReport['server']['samples'] = [];
  const sampleHealth = async () => {
    const r = await request('GET /admin/mobile-health', admin, 'GET', '/admin/mobile-health');
    if (r.status === 200 && r.body?.instance)
      samples.push({
        t: Math.round((realT() - tBase) * 10) / 10,
        rss_bytes: r.body.instance.rss_bytes,
        heap_used_bytes: r.body.instance.heap_used_bytes,
        sse_connections: r.body.realtime?.sse_connections ?? 0,
        pool_in_use: r.body.instance.database_pool?.in_use ?? null,
        pool_waiting: r.body.instance.database_pool?.waiting ?? null,
      });
  };

  // ---------------------------------------------------------------- a webhook receiver: every event of the organization
  const hooks = {
    subscription: null as string | null,
    reason: null as string | null,
    received: 0,
    duplicates: 0,
    ids: new Set<string>(),
    lags: [] as number[],
    byTrip: new Map<string, Set<string>>(),
  };
  const receiver = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      const now = Date.now();
      res.writeHead(204).end();
      try {
        const ev = JSON.parse(body) as { id: string; type: string; occurred_at: string; resource_type: string; resource_id: string };
        hooks.received++;
        if (hooks.ids.has(ev.id)) {
          hooks.duplicates++;
          return;
        }
        hooks.ids.add(ev.id);
        const lag = now - Date.parse(ev.occurred_at);
        if (Number.isFinite(lag)) {
          hooks.lags.push(lag);
          bucket().webhookLags.push(lag);
        }
        if (ev.resource_type === 'trip')
          (hooks.byTrip.get(ev.resource_id) ?? hooks.byTrip.set(ev.resource_id, new Set()).get(ev.resource_id)!).add(ev.type);
      } catch {
        /* not an event */
      }
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const hookUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/sim-hook`;
  const subscribed = await request(
    'POST /webhooks/subscriptions',
    admin,
    'POST',
    '/webhooks/subscriptions',
    { url: hookUrl, event_types: ['*'] },
    [400, 403, 409, 422],
  );
  if (subscribed.status === 201) hooks.subscription = subscribed.body.id;
  else
    hooks.reason = `the server refused the receiver's subscription (${subscribed.status}: ${String(subscribed.body?.detail ?? subscribed.body?.title ?? '').slice(0, 200)}); a plain-http loopback receiver needs WEBHOOK_ALLOW_HTTP=true and WEBHOOK_ALLOW_PRIVATE_TARGETS=true`;
  log(hooks.subscription ? `  webhook receiver on ${hookUrl}, subscribed to every event` : `  webhooks not measured: ${hooks.reason}`);

  // ---------------------------------------------------------------- the server's processes and database over time
  const procSamples: SimReport['server']['processes'] = [];
  const serverCpu = cpuMeter();
  const databaseCpu = cpuMeter();
  const simulatorCpu = cpuMeter();
  // The simulator shares the machine: its own CPU and how late its event loop runs say when the figures are its own.
  const loopDelay = monitorEventLoopDelay({ resolution: 20 });
  loopDelay.enable();
  let databaseDir: string | null = null;
  if (dbClient) {
    try {
      const dir = (await dbClient.query<{ d: string }>(`SELECT current_setting('data_directory') AS d`)).rows[0]!.d;
      if ((await clusterPids(dir)).length) databaseDir = dir;
    } catch {
      /* not a superuser, or not on this machine: the database's CPU is not sampled */
    }
  }
  const sumStats = async (pids: number[]) => {
    const stats = (await Promise.all(pids.map(procStat))).filter((s): s is ProcStat => s !== null);
    return { seen: stats.length, ticks: stats.reduce((a, s) => a + s.ticks, 0), rss: stats.reduce((a, s) => a + s.rssBytes, 0) };
  };
  const sampleProcesses = async () => {
    const server = await sumStats(opts.serverPids());
    const dbTicks = databaseDir ? await clusterTicks(databaseDir) : null;
    const own = process.cpuUsage();
    const cpu = server.seen ? serverCpu(server.ticks) : null;
    const dbCpu = dbTicks === null ? null : databaseCpu(dbTicks);
    const simCpu = simulatorCpu((own.user + own.system) / 10_000);
    const loopP99 = loopDelay.count ? loopDelay.percentile(99) / 1e6 : null;
    const loopMax = loopDelay.count ? loopDelay.max / 1e6 : null;
    loopDelay.reset();
    procSamples.push({
      t: Math.round((realT() - tBase) * 10) / 10,
      cpu_percent: cpu === null ? null : round(cpu),
      rss_bytes: server.seen ? server.rss : null,
      load1: round(os.loadavg()[0]! * 100) / 100,
      database_cpu_percent: dbCpu === null ? null : round(dbCpu),
      simulator_cpu_percent: simCpu === null ? null : round(simCpu),
      simulator_loop_delay_p99_ms: loopP99 === null ? null : round(loopP99),
      simulator_loop_delay_max_ms: loopMax === null ? null : round(loopMax),
      simulator_in_flight: Object.values(agent.sockets).reduce((a, l) => a + (l?.length ?? 0), 0),
      simulator_queued: Object.values(agent.requests).reduce((a, l) => a + (l?.length ?? 0), 0),
    });
  };
  const sampleDatabase = async () => {
    if (!dbClient) return;
    try {
      const { rows } = await dbClient.query<{ b: string }>('SELECT pg_database_size(current_database()) AS b');
      database.samples.push({ t: Math.round((realT() - tBase) * 10) / 10, bytes: Number(rows[0]!.b) });
    } catch {
      /* the sample is missing */
    }
  };
  if (dbClient) {
    const why = await prepareStatements(dbClient);
    database.statements = { available: why === null, reason: why, top: [] };
    log(why ? `  slowest statements: ${why}` : '  slowest statements: pg_stat_statements reset for the day');
  }

  // ---------------------------------------------------------------- play the day
  const setupSeconds = realT();
  log(`  city built in ${setupSeconds.toFixed(1)} s; the day begins`);
  buckets.length = 0;
  // Building the city is counted apart: the routes and the timeline are the day's.
  const setup = { seconds: round(setupSeconds), requests: 0, server_errors: 0 };
  for (const rc of routeCounts.values()) {
    setup.requests += rc.count;
    setup.server_errors += rc.c5xx + rc.network;
  }
  routeCounts.clear();
  routeLat.clear();
  const tDay = realT();
  dayStart = performance.now();
  tBase = tDay;
  opts.onDayStart?.();
  const sampleAll = () => Promise.all([sampleHealth(), sampleProcesses(), sampleDatabase()]);
  await sampleAll();
  const monitor = untilOver(
    (async () => {
      while (!stopping) {
        await sleepReal(Math.max(1000, (BUCKET_S * 1000) / 2));
        await sampleAll();
      }
    })(),
  );
  const loops = drivers.map((d) => untilOver(driverLoop(d)));
  const planner = untilOver(planLoop());
  const failures: string[] = [];
  const inFlight: Promise<void>[] = [];
  let lastPrint = 0;
  for (const p of plan) {
    const wait = p.at - simNow();
    if (wait > 0) await orInterrupt(sleepSim(wait));
    if (interrupted()) break;
    inFlight.push(
      playOrder(p).catch((e) => {
        // An order the end of the run stopped is counted as under way, not as a failure.
        if (!(e instanceof RunOver) && failures.length < 20) failures.push(String(e instanceof Error ? e.message : e));
      }),
    );
    if (realT() - lastPrint > 10) {
      lastPrint = realT();
      const hour = opts.startHour + simNow() / 3600;
      log(
        `  ${String(Math.floor(hour)).padStart(2, '0')}:${String(Math.floor((hour % 1) * 60)).padStart(2, '0')} simulated: ${inFlight.length} orders, ${gpsPoints} GPS points, ${[...routeCounts.values()].reduce((a, r) => a + r.c5xx + r.network, 0)} server errors`,
      );
    }
  }
  const remaining = opts.durationS - (realT() - tDay);
  if (remaining > 0 && !interrupted()) await orInterrupt(sleepReal(remaining * 1000));
  if (!interrupted()) log(`  the day is over (${inFlight.length} orders); letting the last ones finish (at most ${opts.drainS} s)`);
  const drained = interrupted()
    ? false
    : await Promise.race([
        Promise.all(inFlight).then(() => true),
        sleepReal(opts.drainS * 1000).then(() => false),
        onInterrupt.then(() => false),
      ]);
  if (interrupted()) log(`  interrupted (${String(opts.interrupt!.reason)}): the play stops; writing the report of what was gathered`);
  stopping = true;
  // Orders still playing stop at their next request; what was sent is answered (each request has a 60 s deadline)
  // before anything is read back, so every order is compared with the last step the simulator saw answered.
  closed = true;
  waitingTrips.wakeAll(); // trips waiting for a driver stop now
  for (const deadline = Date.now() + (interrupted() ? 5000 : 65_000); pending > 0 && Date.now() < deadline;) await sleepReal(100);
  closingReads.enterWith(true); // this function's own requests from here on, not the plays'
  await Promise.all(loops.map((l) => Promise.race([l, sleepReal(5000)])));
  await (interrupted() ? Promise.race([planner, sleepReal(5000)]) : planner);
  // Let the streams catch up with the last events: wait until every expected event arrived, or 10 s.
  const missing = () => lostPerStream().reduce((a, b) => a + b, 0);
  for (const deadline = Date.now() + 10_000; missing() > 0 && Date.now() < deadline && !interrupted();) await sleepReal(200);
  for (const s of streams) s.req?.destroy();
  // The webhooks of the same events: delivered by the server's worker after commit, so they may trail the streams.
  const hooksMissing = () => {
    let expected = 0;
    let lost = 0;
    for (const ev of expectedEvents.values())
      for (const t of ev.types) {
        expected++;
        if (!hooks.byTrip.get(ev.trip)?.has(t)) lost++;
      }
    return { expected, lost };
  };
  if (hooks.subscription)
    for (const deadline = Date.now() + 15_000; hooksMissing().lost > 0 && Date.now() < deadline && !interrupted();) await sleepReal(200);
  await monitor;
  await sampleAll();
  if (hooks.subscription)
    await request('DELETE /webhooks/subscriptions/:id', admin, 'DELETE', `/webhooks/subscriptions/${hooks.subscription}`, undefined, [404]);
  receiver.close();
  receiver.closeAllConnections();
  if (dbClient) {
    try {
      if (database.statements.available) {
        const { rows } = await dbClient.query<{ query: string; calls: string; total: number; mean: number; max: number; rows: string }>(
          `SELECT query, calls, total_exec_time AS total, mean_exec_time AS mean, max_exec_time AS max, rows
             FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
            ORDER BY total_exec_time DESC LIMIT 15`,
        );
        database.statements.top = rows.map((r) => ({
          query: r.query.replace(/\s+/g, ' ').slice(0, 400),
          calls: Number(r.calls),
          total_ms: round(r.total),
          mean_ms: Math.round(r.mean * 1000) / 1000,
          max_ms: round(r.max),
          rows: Number(r.rows),
        }));
      }
      const { rows } = await dbClient.query<{ name: string; bytes: string }>(
        `SELECT c.relname AS name, pg_total_relation_size(c.oid) AS bytes FROM pg_class c
          WHERE c.relkind = 'r' AND c.relnamespace = 'public'::regnamespace ORDER BY 2 DESC LIMIT 10`,
      );
      database.largest_relations = rows.map((r) => ({ name: r.name, bytes: Number(r.bytes) }));
    } catch (e) {
      database.statements.reason ??= `read failed: ${e instanceof Error ? e.message : e}`;
    }
    await dbClient.end().catch(() => undefined);
    if (database.samples.length > 1) database.growth_bytes = database.samples.at(-1)!.bytes - database.samples[0]!.bytes;
  }

  // ---------------------------------------------------------------- where did every order end?
  /**
   * A closing read: a 5xx, a 429 or a network error is sent again, up to CLOSING_READ_ATTEMPTS in all, after the
   * server's Retry-After (at most 30 s) or a doubling backoff from half a second; then it throws.
   */
  const closingRead = async (route: string, token: string, p: string): Promise<any> => {
    for (let attempt = 1; ; attempt++) {
      const r = await request(route, token, 'GET', p, undefined, [429]);
      if (r.status >= 200 && r.status < 300) return r.body;
      const why = `GET ${p} answered ${r.status || 'a network error'}${r.status ? `: ${JSON.stringify(r.body).slice(0, 200)}` : ''}`;
      if (!(r.status === 0 || r.status === 429 || r.status >= 500) || attempt >= CLOSING_READ_ATTEMPTS || interrupted())
        throw new Error(attempt > 1 ? `${why} (after ${attempt} attempts)` : why);
      await orInterrupt(sleepReal(r.retryAfter !== null ? Math.min(30, r.retryAfter) * 1000 : Math.min(8000, 500 * 2 ** (attempt - 1))));
    }
  };
  const mismatches: SimReport['orders']['mismatches'] = [];
  const byStatus: Record<string, number> = {};
  // Orders that could not be read back (the reads failed, or were skipped after an interruption): not compared.
  const unverified = { count: 0, sample: [] as string[], reasons: [] as string[] };
  let failedInARow = 0;
  for (const [c, ids] of groupBy([...expectedOrder], ([, v]) => v.customer)) {
    const seen = new Map<string, string>();
    let why: string | null = interrupted()
      ? `not read: the run was interrupted (${String(opts.interrupt!.reason)})`
      : failedInARow >= CLOSING_READ_FAILURES_IN_A_ROW
        ? `not read: the reads of ${CLOSING_READ_FAILURES_IN_A_ROW} customers in a row had failed`
        : null;
    try {
      for (let cursor: string | null = null, first = true; !why && (first || cursor); first = false) {
        const page: { data: { id: string; status: string }[]; next_cursor?: string | null } = await closingRead(
          'GET /customer/orders',
          customers[c].token,
          `/customer/orders?limit=100${cursor ? `&cursor=${cursor}` : ''}`,
        );
        for (const o of page.data) seen.set(o.id, o.status);
        cursor = page.next_cursor ?? null;
      }
      if (!why) failedInARow = 0;
    } catch (e) {
      why = e instanceof Error ? e.message : String(e);
      failedInARow++;
    }
    if (why) {
      unverified.count += ids.length;
      for (const [id] of ids) if (unverified.sample.length < 10) unverified.sample.push(id);
      if (unverified.reasons.length < 3 && !unverified.reasons.includes(why)) unverified.reasons.push(why);
      continue;
    }
    for (const [id, v] of ids) {
      const actual = seen.get(id) ?? 'missing';
      byStatus[actual] = (byStatus[actual] ?? 0) + 1;
      if (actual !== v.status) mismatches.push({ id, expected: v.status, actual });
    }
  }
  const FINAL = new Set(['delivered', 'cancelled', 'returned', 'failed', 'completed']);
  const unfinished = Object.entries(byStatus)
    .filter(([s]) => !FINAL.has(s))
    .reduce((a, [, n]) => a + n, 0);
  agent.destroy();

  // ---------------------------------------------------------------- the report
  const routes: Record<string, RouteStats> = {};
  for (const [name, rc] of [...routeCounts].sort())
    routes[name] = { ...rc, p50_ms: round(pct(routeLat.get(name) ?? [], 0.5)), p99_ms: round(pct(routeLat.get(name) ?? [], 0.99)) };
  const timeline = buckets.map((b) => {
    const out: SimReport['timeline'][number] = { ...b, lat: undefined } as never;
    delete (out as { lat?: unknown }).lat;
    delete (out as { ingestLags?: unknown }).ingestLags;
    delete (out as { eventLags?: unknown }).eventLags;
    out.stream_event_lag = lagStats(b.eventLags);
    delete (out as { webhookLags?: unknown }).webhookLags;
    out.gps_ingest_lag = lagStats(b.ingestLags);
    out.webhook_lag = lagStats(b.webhookLags);
    out.routes = Object.fromEntries(
      [...b.lat].map(([n, l]) => [n, { count: l.length, p50_ms: round(pct(l, 0.5)), p99_ms: round(pct(l, 0.99)) }]),
    );
    const simH = opts.startHour + ((b.t - BUCKET_S / 2) * opts.compression) / 3600;
    out.planned_rate_per_hour = b.t <= opts.durationS + BUCKET_S ? round(ordersPerHourAt(opts, simH)) : NaN;
    return out;
  });
  const lostAtEnd = lostPerStream();
  let expectedAll = 0;
  const expectedOf = new Map<Stream, number>();
  for (const ev of expectedEvents.values()) {
    expectedAll += ev.types.length;
    const mine = ev.customer === null ? undefined : watched.get(ev.customer);
    if (mine) expectedOf.set(mine, (expectedOf.get(mine) ?? 0) + ev.types.length);
  }
  const streamReport = streams.map((s, si) => {
    const lost = lostAtEnd[si];
    const expected = s.kind === 'me' ? (expectedOf.get(s) ?? 0) : expectedAll;
    return {
      name: s.name,
      kind: s.kind,
      received: s.received,
      expected,
      lost,
      ...(lost ? { lost_sample: lostSamples.get(s) ?? [] } : {}),
      last_id: s.lastId,
      duplicates: s.duplicates,
      reconnects: s.reconnects,
      resets: s.resets,
    };
  });
  const serverErrors = Object.values(routes).reduce((a, r) => a + r.c5xx + r.network, 0);
  const problems: string[] = [];
  if (serverErrors) problems.push(`${serverErrors} server errors (5xx or network)`);
  if (setup.server_errors) problems.push(`${setup.server_errors} server errors while building the city`);
  const lostTotal = streamReport.reduce((a, s) => a + s.lost, 0);
  const dupTotal = streamReport.reduce((a, s) => a + s.duplicates, 0);
  if (lostTotal) problems.push(`${lostTotal} stream events lost`);
  const hookCount = hooksMissing();
  if (hooks.subscription && hookCount.lost) problems.push(`${hookCount.lost} webhook deliveries not received`);
  if (dupTotal) problems.push(`${dupTotal} stream events duplicated`);
  if (mismatches.length) problems.push(`${mismatches.length} orders not in the state the simulator left them in`);
  // With --drain-s 0 the day is cut at its end: orders under way are reported, each where the simulator left it.
  if (!drained && opts.drainS > 0 && !interrupted())
    problems.push(`orders still running after the ${opts.drainS} s drain (${unfinished} unfinished)`);
  for (const f of failures) problems.push(`an order's play stopped: ${f}`);
  if (openingHours.openAtStart < merchants.length)
    problems.push(`${merchants.length - openingHours.openAtStart} branches closed when created, inside the hours they declared`);
  if (openingHours.refusedClosed) problems.push(`${openingHours.refusedClosed} orders refused as outside the branch's hours`);
  if (proofs.failed) problems.push(`${proofs.failed} proof photos not uploaded`);
  if (plans.failed) problems.push(`${plans.failed} optimizer plans refused`);
  if (unverified.count) problems.push(`${unverified.count} orders unverified (${unverified.reasons[0]})`);
  if (interrupted()) problems.push(`interrupted by ${String(opts.interrupt!.reason)}: the report holds what was gathered until then`);
  const report: SimReport = {
    config: {
      base_url: opts.baseUrl,
      scale: opts.scale,
      duration_s: opts.durationS,
      compression: opts.compression,
      seed: opts.seed,
      start_hour: opts.startHour,
      drain_s: opts.drainS,
    },
    run: {
      base_url: opts.baseUrl,
      started_at: new Date(Date.now() - realT() * 1000).toISOString(),
      real_seconds: round(realT() - tDay),
      load_average: os.loadavg(),
      cpus: os.cpus().length,
    },
    city: {
      territory: territory.name,
      drivers: drivers.length,
      merchants: merchants.length,
      customers: customers.length,
      plan_orders: plan.length,
      plan_digest: planDigest,
    },
    setup,
    totals: {
      requests: Object.values(routes).reduce((a, r) => a + r.count, 0),
      server_errors: serverErrors,
      c4xx: Object.values(routes).reduce((a, r) => a + r.c4xx, 0),
    },
    routes,
    timeline,
    gps: { points_accepted: gpsPoints, batches: gpsBatches, ingest_lag: lagStats(ingestLags) },
    webhooks: {
      available: hooks.subscription !== null,
      reason: hooks.reason,
      received: hooks.received,
      duplicates: hooks.duplicates,
      expected: hooks.subscription ? hookCount.expected : 0,
      lost: hooks.subscription ? hookCount.lost : 0,
      lag: lagStats(hooks.lags),
    },
    database,
    orders: {
      created: expectedOrder.size + trackingLinks,
      by_status: byStatus,
      unexpected: mismatches.length,
      unfinished,
      failed_deliveries: failedDeliveries,
      rejections,
      mismatches: mismatches.slice(0, 50),
      unverified,
    },
    tracking: { links: trackingLinks, polls: trackingPolls },
    opening_hours: {
      time_zone: openingHours.timeZone,
      hours: `${openingHours.open}–${openingHours.close} every day`,
      branches: merchants.length,
      open_at_start: openingHours.openAtStart,
      orders_refused_closed: openingHours.refusedClosed,
    },
    vehicles,
    proofs,
    plans: {
      every_min: opts.planEveryMin,
      requested: plans.requested,
      computed: plans.computed,
      busy: plans.busy,
      failed: plans.failed,
      trips_planned: plans.trips_planned,
      trips_unassigned: plans.trips_unassigned,
      latency: lagStats(plans.latency),
      solve: lagStats(plans.solve.filter(Number.isFinite)),
    },
    stream_event_lag: lagStats(eventLags),
    streams: streamReport,
    server: { samples, processes: procSamples, pids: opts.serverPids() },
    unexpected_4xx: unexpected4xx,
    verdict: { ok: problems.length === 0, problems },
    interrupted: interrupted(),
    interrupted_by: interrupted() ? String(opts.interrupt!.reason) : null,
  };
  await mkdir(opts.out, { recursive: true });
  await writeFile(path.join(opts.out, 'report.json'), JSON.stringify(report, null, 2));
  await writeFile(path.join(opts.out, 'report.html'), renderHtml(report));
  const lagLine = (l: LagStats) => (l.count ? `p50 ${l.p50_ms} ms, p99 ${l.p99_ms} ms (${l.count})` : 'none measured');
  log(
    `simulate: ${report.totals.requests} requests (${(report.totals.requests / report.run.real_seconds).toFixed(1)}/s), ${serverErrors} server errors, ${report.totals.c4xx} 4xx; ${report.orders.created} orders (${failedDeliveries} failed deliveries, ${rejections} rejections), ${gpsPoints} GPS points; streams: ${streamReport.reduce((a, s) => a + s.received, 0)} events received, ${lostTotal} lost, ${dupTotal} duplicated; trip event → dispatcher ${lagLine(report.stream_event_lag)}`,
  );
  const series = (pick: (p: (typeof procSamples)[number]) => number | null) => procSamples.map(pick).filter((v): v is number => v !== null);
  const cpuLine = (v: number[], why: string) =>
    v.length ? `mean ${round(v.reduce((a, b) => a + b, 0) / v.length)} %, peak ${maxOf(v)} %` : why;
  const loopP99s = series((p) => p.simulator_loop_delay_p99_ms);
  log(
    `simulate: CPU (% of one core) server ${cpuLine(
      series((p) => p.cpu_percent),
      'not sampled (--server-pid)',
    )}; PostgreSQL ${cpuLine(
      series((p) => p.database_cpu_percent),
      'not sampled (its data directory is not readable here)',
    )}; simulator ${cpuLine(
      series((p) => p.simulator_cpu_percent),
      'not sampled',
    )}, its event loop late by up to ${loopP99s.length ? maxOf(loopP99s) : NaN} ms (p99 of a window)`,
  );
  const poolWaiting = samples.map((x) => x.pool_waiting).filter((v): v is number => v !== null);
  log(
    `simulate: waiting at most ${maxOf(procSamples.map((p) => p.simulator_queued))} requests for a simulator socket (${maxOf(procSamples.map((p) => p.simulator_in_flight))} in flight), ${poolWaiting.length ? maxOf(poolWaiting) : 'not sampled:'} for a server database connection`,
  );
  log(
    `simulate: GPS ingest lag ${lagLine(report.gps.ingest_lag)}; webhook lag ${hooks.subscription ? lagLine(report.webhooks.lag) : 'not measured'}; database ${database.available ? `grew ${round(database.growth_bytes / 2 ** 20)} MiB` : 'not measured (--database-url)'}; load average ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
  log(
    `simulate: ${proofs.photos_uploaded} proof photos uploaded (${round(proofs.bytes / 1024)} KiB, ${proofs.failed} failed); optimizer plans ${plans.computed} of ${plans.requested} (${plans.busy} busy), latency ${lagLine(report.plans.latency)}, ${plans.trips_planned} trips planned; vehicles ${Object.entries(
      vehicles.by_type,
    )
      .map(([t, v]) => `${v.drivers} ${t}`)
      .join(
        ', ',
      )}; branches open ${openingHours.open}–${openingHours.close} ${openingHours.timeZone}, ${openingHours.refusedClosed} orders refused closed`,
  );
  log(`simulate: ${report.verdict.ok ? 'PASS' : `FAIL: ${problems.join('; ')}`}; report in ${path.join(opts.out, 'report.html')}`);
  return report;
}

const round = (v: number) => (Number.isFinite(v) ? Math.round(v * 10) / 10 : NaN);
function groupBy<T, K>(xs: T[], key: (x: T) => K): Map<K, T[]> {
  const m = new Map<K, T[]>();
  for (const x of xs) (m.get(key(x)) ?? m.set(key(x), []).get(key(x))!).push(x);
  return m;
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(import.meta.filename)) {
  // The first signal stops the play and lets the report of what was gathered be written; a second one exits at once.
  // Ctrl-C reaches this process more than once (from the terminal to its process group, and relayed by npm and tsx):
  // a repeat within a second is the same interruption.
  const interrupt = new AbortController();
  let firstSignalAt = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    if (interrupt.signal.aborted) {
      if (performance.now() - firstSignalAt < 1000) return;
      console.error(`simulate: ${signal} again: exiting without a report`);
      process.exit(signal === 'SIGTERM' ? 143 : 130);
    }
    console.error(`simulate: ${signal}: stopping the play and writing the report (${signal} again exits at once)`);
    firstSignalAt = performance.now();
    interrupt.abort(signal);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    const report = await simulate({ ...parseOptions(process.argv.slice(2)), interrupt: interrupt.signal });
    process.exit(report.interrupted ? (report.interrupted_by === 'SIGTERM' ? 143 : 130) : report.verdict.ok ? 0 : 1);
  } catch (e) {
    if (e instanceof OptionError) {
      (e.code === 0 ? console.log : console.error)(e.code === 0 ? e.message : `simulate: ${e.message}`);
      process.exit(e.code);
    }
    console.error(`simulate: ${e instanceof Error ? e.message : e}`);
    process.exit(2);
  }
}
