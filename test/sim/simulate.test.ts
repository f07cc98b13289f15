import { execFile, spawn } from 'node:child_process';
import http from 'node:http';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase } from '../helpers.js';
import { startServer, stopServer, type ServerProcess } from '../hardening/server-process.js';
import {
  CLOSING_READ_ATTEMPTS,
  DAY_MEAN_RATE,
  DriverQueue,
  lagStats,
  OptionError,
  ordersPerHourAt,
  parseOptions,
  planDay,
  simulate,
  type SimReport,
} from '../../sim/simulate.js';

/**
 * The city simulator at a tiny scale, against the real server as a child process (PostgreSQL with
 * TEST_DATABASE_URL, else the embedded database): it builds its city through the API, plays a short
 * compressed day, and everything it did is accounted for. Figures belong to docs/CAPACITY.md, not here.
 */
const ROOT = path.resolve(import.meta.dirname, '../..');

describe('npm run simulate', () => {
  let server: ServerProcess;
  let drop: () => Promise<void> = async () => undefined;
  let dir: string;
  let dbUrl = '';

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'sim-test-'));
    let databaseUrl = '';
    if (process.env.TEST_DATABASE_URL) {
      const fresh = await freshDatabase();
      await fresh.db.close();
      databaseUrl = fresh.url!;
      drop = fresh.drop;
    }
    // The simulator's webhook receiver is a plain-http loopback address.
    server = await startServer({
      databaseUrl,
      env: { DATA_DIR: path.join(dir, 'data'), WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' },
    });
    dbUrl = databaseUrl;
  }, 300_000);

  afterAll(async () => {
    if (server) await stopServer(server);
    await drop();
    await rm(dir, { recursive: true, force: true });
  });

  /** A tiny, compressed day against baseUrl (seed, output and the rest are the caller's). */
  const tinyDay = (baseUrl: string) => [
    '--base-url',
    baseUrl,
    '--scale',
    '3',
    '--duration-s',
    '4',
    '--compression',
    '600',
    '--drain-s',
    '60',
    '--dispatchers',
    '2',
    '--customer-streams',
    '4',
  ];

  it('plays a tiny day with no server error, every order where expected and no stream event lost or doubled', async () => {
    const out = path.join(dir, 'out');
    const lines: string[] = [];
    const opts = parseOptions([
      ...tinyDay(server.baseUrl),
      '--seed',
      '5',
      '--photo-share',
      '1',
      '--plan-every-min',
      '5',
      '--out',
      out,
      '--server-pid',
      String(server.child.pid),
      ...(dbUrl ? ['--database-url', dbUrl] : []),
    ]);
    const report = await simulate(opts, (l) => lines.push(l));
    expect(report.verdict.problems, `${lines.join('\n')}\n${server.output()}`).toEqual([]);
    expect(report.totals.server_errors).toBe(0);
    expect(report.orders.created).toBeGreaterThan(0);
    expect(report.orders.unexpected).toBe(0);
    expect(report.orders.unfinished).toBe(0);
    for (const status of Object.keys(report.orders.by_status)) expect(['delivered', 'returned']).toContain(status);
    expect(report.gps.points_accepted).toBeGreaterThan(0);
    expect(report.streams.map((s) => s.kind).sort()).toEqual(['me', 'me', 'me', 'me', 'organization', 'organization']);
    for (const s of report.streams)
      expect({ stream: s.name, lost: s.lost, duplicates: s.duplicates }).toEqual({ stream: s.name, lost: 0, duplicates: 0 });
    expect(report.streams.find((s) => s.kind === 'organization')!.expected).toBeGreaterThan(0);
    expect(report.server.samples.length).toBeGreaterThan(0);
    // Every trip event the simulator caused also reached its webhook receiver; lags are measured.
    expect(report.webhooks).toMatchObject({ available: true, lost: 0 });
    expect(report.webhooks.expected).toBeGreaterThan(0);
    expect(report.webhooks.lag.count).toBeGreaterThan(0);
    expect(report.server.processes.some((p) => p.cpu_percent !== null && p.rss_bytes! > 0)).toBe(true);
    // The simulator's own CPU and event-loop delay are sampled beside the server's (it shares the machine).
    expect(report.server.processes.some((p) => p.simulator_cpu_percent !== null && p.simulator_loop_delay_p99_ms !== null)).toBe(true);
    if (dbUrl) expect(report.server.samples.some((x) => x.pool_in_use !== null && x.pool_waiting !== null)).toBe(true);
    // Branches declare hours and took every order inside them; drivers have vehicles; proofs carry photos; plans are read.
    expect(report.opening_hours).toMatchObject({
      branches: report.city.merchants,
      open_at_start: report.city.merchants,
      orders_refused_closed: 0,
    });
    expect(Object.values(report.vehicles.by_type).reduce((a, v) => a + v.drivers, 0)).toBe(report.city.drivers);
    expect(report.proofs).toMatchObject({ share: 1, failed: 0 });
    expect(report.proofs.photos_uploaded).toBe(report.orders.by_status.delivered ?? 0);
    expect(report.plans).toMatchObject({ failed: 0 });
    expect(report.plans.computed).toBeGreaterThan(0);
    expect(report.plans.latency.count).toBe(report.plans.computed);
    if (dbUrl) {
      expect(report.database.available).toBe(true);
      expect(report.database.samples.length).toBeGreaterThan(1);
      expect(report.database.largest_relations.length).toBeGreaterThan(0);
      // Available or not, the report says which (this machine's PostgreSQL may lack the preloaded library).
      if (!report.database.statements.available) expect(report.database.statements.reason).toMatch(/not available/);
      else expect(report.database.statements.top.length).toBeGreaterThan(0);
    } else expect(report.database.reason).toMatch(/--database-url/);

    const json = JSON.parse(await readFile(path.join(out, 'report.json'), 'utf8')) as SimReport;
    expect(json.city.plan_digest).toBe(report.city.plan_digest);
    const html = await readFile(path.join(out, 'report.html'), 'utf8');
    expect(html).toMatch(/^<!doctype html>/);
    expect(html).toContain('<svg');
    expect(html).not.toMatch(/<script|src="http/);
  }, 120_000);

  it('writes its report when the closing reads meet 503s: retried, then counted as unverified', async () => {
    // A proxy in front of the server that answers every closing read (the customers' order lists, read only at the
    // end) with 503 DATABASE_UNAVAILABLE, as the server did late in a long run, and passes everything else through.
    let refused = 0;
    const target = new URL(server.baseUrl);
    const proxy = http.createServer((req, res) => {
      if (req.method === 'GET' && req.url?.startsWith('/api/v1/customer/orders?')) {
        refused++;
        res.writeHead(503, { 'content-type': 'application/json', 'retry-after': '0' });
        res.end(JSON.stringify({ code: 'DATABASE_UNAVAILABLE', message: 'the database is not available' }));
        return;
      }
      const up = http.request(
        { host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers },
        (r) => {
          res.writeHead(r.statusCode ?? 502, r.headers);
          r.pipe(res);
        },
      );
      up.on('error', () => res.destroy());
      res.on('close', () => up.destroy());
      req.pipe(up);
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    const out = path.join(dir, 'out-503');
    try {
      const report = await simulate(
        parseOptions([
          ...tinyDay(`http://127.0.0.1:${(proxy.address() as { port: number }).port}`),
          '--seed',
          '7',
          '--photo-share',
          '0',
          '--plan-every-min',
          '0',
          '--out',
          out,
        ]),
        () => undefined,
      );
      const json = JSON.parse(await readFile(path.join(out, 'report.json'), 'utf8')) as SimReport;
      expect(json.interrupted).toBe(false);
      expect(json.orders.created).toBeGreaterThan(0);
      expect(json.orders.unverified.count).toBe(report.orders.created - report.tracking.links);
      expect(json.orders.unverified.sample.length).toBe(Math.min(10, json.orders.unverified.count));
      expect(json.orders.unverified.reasons[0]).toMatch(
        new RegExp(`answered 503: .*DATABASE_UNAVAILABLE.*after ${CLOSING_READ_ATTEMPTS} attempts`),
      );
      // Each read was retried, and a few customers in a row failing stopped the reads; the 503s are the route's errors.
      expect(refused).toBeGreaterThanOrEqual(CLOSING_READ_ATTEMPTS);
      expect(refused % CLOSING_READ_ATTEMPTS).toBe(0);
      expect(json.routes['GET /customer/orders']).toMatchObject({ count: refused, c5xx: refused });
      expect(json.verdict.ok).toBe(false);
      expect(json.verdict.problems.join('\n')).toMatch(/orders unverified/);
      const html = await readFile(path.join(out, 'report.html'), 'utf8');
      expect(html).toContain(`${json.orders.unverified.count} orders unverified`);
    } finally {
      proxy.closeAllConnections();
      await new Promise((r) => proxy.close(r));
    }
  }, 120_000);

  it('on SIGINT stops playing and writes the report of what it gathered, marked interrupted', async () => {
    const out = path.join(dir, 'out-sigint');
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'sim/simulate.ts', ...tinyDay(server.baseUrl), '--duration-s', '600', '--seed', '9', '--out', out],
      { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    // Playing: its first progress line ("11:00 simulated: 1 orders, ...").
    await new Promise<void>((resolve, reject) => {
      child.stdout.setEncoding('utf8').on('data', (c: string) => {
        output += c;
        if (/simulated: \d+ orders/.test(output)) resolve();
      });
      child.stderr.setEncoding('utf8').on('data', (c: string) => (output += c));
      void exited.then((code) => reject(new Error(`the simulator exited (${code}) before playing:\n${output}`)));
    });
    const signalled = performance.now();
    child.kill('SIGINT');
    expect(await exited, output).toBe(130);
    expect(performance.now() - signalled).toBeLessThan(60_000);
    const json = JSON.parse(await readFile(path.join(out, 'report.json'), 'utf8')) as SimReport;
    expect(json).toMatchObject({ interrupted: true, interrupted_by: 'SIGINT' });
    expect(json.totals.requests).toBeGreaterThan(0);
    expect(json.verdict.problems.join('\n')).toMatch(/interrupted by SIGINT/);
    // The closing reads were skipped: every order the customers placed is unverified.
    expect(json.orders.unverified.count).toBe(json.orders.created - json.tracking.links);
    const html = await readFile(path.join(out, 'report.html'), 'utf8');
    expect(html).toContain('INTERRUPTED by SIGINT');
  }, 120_000);

  it('stops with one clear error when the database to measure is not there', async () => {
    const opts = parseOptions(['--base-url', server.baseUrl, '--database-url', 'postgres://postgres@127.0.0.1:9/nothing', '--quiet']);
    await expect(simulate(opts, () => undefined)).rejects.toThrow(/^cannot read the database at --database-url \(.+\)$/);
  });

  it('plans the same day for the same seed, another day for another', () => {
    const o = { scale: 20, durationS: 60, compression: 60, startHour: 11 };
    const a = planDay({ ...o, seed: 11 });
    expect(a.plan.length).toBeGreaterThan(10);
    expect(planDay({ ...o, seed: 11 })).toEqual(a);
    expect(planDay({ ...o, seed: 12 }).digest).not.toBe(a.digest);
  });

  it('plays the mean rate it is given over the day, with the peaks about twice that mean', () => {
    // A whole day, 10:00-23:00, at 600 orders an hour: 7,800 orders, give or take the Poisson noise (3 sigma ≈ 265).
    const day = planDay({ scale: 5, durationS: 13 * 3600, compression: 1, startHour: 10, seed: 3, ordersPerHour: 600, customers: 50 });
    expect(Math.abs(day.plan.length - 13 * 600)).toBeLessThan(300);
    expect(day.plan.every((p) => p.customer >= 0 && p.customer < 50)).toBe(true);
    // The busiest hour (the lunch peak) and the quietest one of the day, against the mean.
    const perHour = Array.from({ length: 13 }, (_, h) => day.plan.filter((p) => Math.floor(p.at / 3600) === h).length);
    expect(Math.max(...perHour) / 600).toBeGreaterThan(1.6);
    expect(Math.max(...perHour) / 600).toBeLessThan(2.2);
    expect(Math.min(...perHour) / 600).toBeLessThan(0.6);
    expect(ordersPerHourAt({ scale: 5, ordersPerHour: 600 }, 12.5) / 600).toBeCloseTo(2.1 / DAY_MEAN_RATE, 1);
    expect(() => parseOptions(['--orders-per-hour', '0'])).toThrow(/--orders-per-hour must be a number from 1/);
  });

  it('refuses a non-loopback address and impossible options with one clear line', async () => {
    expect(() => parseOptions(['--base-url', 'http://10.1.2.3:3000'])).toThrow(/not a loopback address.*--allow-remote/);
    expect(parseOptions(['--base-url', 'http://10.1.2.3:3000', '--allow-remote']).baseUrl).toBe('http://10.1.2.3:3000');
    expect(() => parseOptions(['--scale', '0'])).toThrow(OptionError);
    expect(() => parseOptions(['--frobnicate'])).toThrow(/unknown option/);
    const run = promisify(execFile);
    const err = await run(
      process.execPath,
      ['--import', 'tsx', 'sim/simulate.ts', '--base-url', 'http://127.0.0.1:9', '--duration-s', '1'],
      { cwd: ROOT },
    ).then(
      () => null,
      (e: { code: number; stderr: string; stdout: string }) => e,
    );
    expect(err?.code).toBe(2);
    expect(err!.stderr.trim().split('\n')).toHaveLength(1);
    expect(err!.stderr).toMatch(/^simulate: no server at http:\/\/127\.0\.0\.1:9/);
    expect(() => parseOptions(['--database-url', 'postgres://10.1.2.3/x'])).toThrow(/--database-url .*not a loopback address/);
    expect(() => parseOptions(['--server-pid', 'abc'])).toThrow(/--server-pid must be process ids/);
  }, 60_000);

  it('a trip waiting for a driver tries again when one frees up (oldest first), after the timeout, or at the close', async () => {
    const q = new DriverQueue(60_000);
    const woken: string[] = [];
    const waits = ['a', 'b', 'c'].map((name) => q.wait().then(() => woken.push(name)));
    expect(q.length).toBe(3);
    q.wakeOne();
    await waits[0];
    expect(woken).toEqual(['a']);
    expect(q.length).toBe(2);
    q.wakeAll();
    await Promise.all(waits);
    expect(woken).toEqual(['a', 'b', 'c']);
    expect(q.length).toBe(0);
    q.wakeOne(); // nobody waits: nothing happens
    const quick = new DriverQueue(5);
    const alone = quick.wait();
    expect(quick.length).toBe(1);
    await alone; // the timeout
    expect(quick.length).toBe(0);
  });

  it("summarizes an hour's lags (millions of values) without overflowing the call stack", () => {
    const lags = Array.from({ length: 2_000_000 }, (_, i) => i % 1000);
    expect(lagStats(lags)).toEqual({ count: 2_000_000, p50_ms: 500, p99_ms: 990, max_ms: 999 });
    expect(lagStats([])).toMatchObject({ count: 0 });
  });
});
