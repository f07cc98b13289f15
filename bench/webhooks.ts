/**
 * npm run bench:webhooks : outbound webhooks on a fresh PostgreSQL database (BENCH_DATABASE_URL), in one process.
 *
 * (a) outbox insert rate: events recorded through ctx.events.record, each in its own tenant transaction
 *     (8 writers), first with no subscription (the hook's cost when nobody listens), then with one matching
 *     subscription (event row + its delivery row in the same transaction);
 * (b) delivery rate: one worker instance (WEBHOOK_CONCURRENCY in flight) drains that backlog to a local HTTP
 *     receiver: events POSTed, signed and recorded (attempt row, status) per second; then two instances at once.
 * (c) one busy subscription through the worker loop the server runs: first a backlog of as many events drained,
 *     then, live: events recorded at a steady BENCH_WEBHOOK_RATE (150/s) for BENCH_WEBHOOK_SECONDS (20)
 *     while the worker runs as the server runs it (its loop, WEBHOOK_WORKER_INTERVAL_MS, the default concurrencies):
 *     deliveries/s of that one subscription, the lag (event row to delivered) p50/p99 and the backlog left when the
 *     events stop.
 * Events are spread over 200 trips, so per-resource ordering allows parallel sends (as with real traffic).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { loadConfig } from '../src/config.js';
import { buildApp } from '../src/app.js';
import { createPostgresDatabase } from '../src/platform/db/index.js';
import { migrate } from '../src/platform/db/migrate.js';
import { seedDemo } from '../src/seed.js';
import { newId } from '../src/platform/ids.js';
import { startWorkers } from '../src/platform/workers.js';
import { benchDatabaseUrl, type BenchRow } from './lib.js';

export async function benchWebhooks(
  databaseUrl: string,
  report: (row: BenchRow) => void,
  opts: { events?: number; rate?: number; seconds?: number } = {},
): Promise<void> {
  const EVENTS = opts.events ?? 2_000;
  const RATE = opts.rate ?? 150;
  const SECONDS = opts.seconds ?? 20;
  const WRITERS = 8;
  let received = 0;
  const receiver = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received++;
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  const db = createPostgresDatabase(databaseUrl, { max: 30 });
  await migrate(db);
  const raw = {
    NODE_ENV: 'test',
    JWT_SECRET: 'bench-secret-bench-secret-bench-secret-42',
    SECRETS_KEY: 'be'.repeat(32),
    WEBHOOK_ALLOW_HTTP: 'true',
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    // The defaults unless the run names others.
    ...(process.env.BENCH_WEBHOOK_CONCURRENCY ? { WEBHOOK_CONCURRENCY: process.env.BENCH_WEBHOOK_CONCURRENCY } : {}),
    ...(process.env.BENCH_WEBHOOK_PER_SUBSCRIPTION
      ? { WEBHOOK_PER_SUBSCRIPTION_CONCURRENCY: process.env.BENCH_WEBHOOK_PER_SUBSCRIPTION }
      : {}),
  };
  const config = loadConfig(raw, { dataDir: `/tmp/bench-webhooks-${newId()}` });
  const app = await buildApp({ config, db });
  await app.ready();
  const demo = (await seedDemo(app))!;
  const org = demo.organizationId;
  const trips = Array.from({ length: 200 }, () => newId());

  async function record(n: number): Promise<number> {
    let next = 0;
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: WRITERS }, async () => {
        while (next < n) {
          const i = next++;
          await db.withTenant({ organizationId: org, userId: null }, (tx) =>
            app.ctx.events.record(tx, org, { type: 'trip.updated', entityType: 'trip', entityId: trips[i % trips.length], payload: { i } }),
          );
        }
      }),
    );
    return n / ((performance.now() - t0) / 1000);
  }

  /** Records `rate` events a second for `seconds` (at most WRITERS transactions at once); returns the events recorded. */
  async function produce(rate: number, seconds: number): Promise<number> {
    const t0 = performance.now();
    let sent = 0;
    let active = 0;
    while (performance.now() - t0 < seconds * 1000) {
      const due = Math.floor(((performance.now() - t0) / 1000) * rate);
      while (sent < due && active < WRITERS) {
        const i = sent++;
        active++;
        void db
          .withTenant({ organizationId: org, userId: null }, (tx) =>
            app.ctx.events.record(tx, org, { type: 'trip.updated', entityType: 'trip', entityId: trips[i % trips.length], payload: { i } }),
          )
          .finally(() => active--);
      }
      await new Promise((r) => setTimeout(r, 5));
    }
    while (active > 0) await new Promise((r) => setTimeout(r, 5));
    return sent;
  }

  const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;

  /** (c): the server's own worker loop against a steady stream of events for one subscription. */
  async function live(): Promise<void> {
    // First a backlog, drained by that loop: what one subscription can take when events come faster than it sends.
    await record(EVENTS);
    const queued = received;
    const loop = app.services.webhooks.newWorker();
    const stopLoop = startWorkers([loop], app.log);
    const tq = performance.now();
    while (received - queued < EVENTS && performance.now() - tq < 60_000) await new Promise((r) => setTimeout(r, 5));
    const loopRate = (received - queued) / ((performance.now() - tq) / 1000);
    await stopLoop();
    await loop.idle();
    report({
      scenario: 'webhooks',
      metric: 'one subscription, worker loop: backlog delivered/s',
      value: loopRate,
      unit: 'ev/s',
      note: `${received - queued} of ${EVENTS} queued, the server's loop (WEBHOOK_WORKER_INTERVAL_MS between empty ticks)`,
    });
    const before = received;
    const worker = app.services.webhooks.newWorker();
    const stop = startWorkers([worker], app.log);
    const startedAt = new Date();
    const t0 = performance.now();
    const produced = await produce(RATE, SECONDS);
    const atStop = received - before;
    const elapsed = (performance.now() - t0) / 1000;
    const backlog = async () =>
      (await db.withSystem((tx) => tx.query<{ n: number }>("SELECT count(*)::int AS n FROM webhook_delivery WHERE status <> 'delivered'")))
        .rows[0].n;
    const left = await backlog();
    const t1 = performance.now();
    while ((await backlog()) > 0 && performance.now() - t1 < 60_000) await new Promise((r) => setTimeout(r, 50));
    const drainS = (performance.now() - t1) / 1000;
    await stop();
    await worker.idle();
    const { rows } = await db.withSystem((tx) =>
      tx.query<{ ms: number }>(
        `SELECT extract(epoch FROM delivered_at - created_at)::float8 * 1000 AS ms FROM webhook_delivery
          WHERE status = 'delivered' AND created_at >= $1::timestamptz ORDER BY 1`,
        [startedAt.toISOString()],
      ),
    );
    const lags = rows.map((r) => Number(r.ms));
    report({
      scenario: 'webhooks',
      metric: `one subscription, live: delivered/s (${RATE}/s offered)`,
      value: atStop / elapsed,
      unit: 'ev/s',
      note: `${produced} events in ${elapsed.toFixed(1)} s; ${left} not delivered when they stopped, ${(await backlog()) === 0 ? `drained in ${drainS.toFixed(1)} s` : `${await backlog()} still not after ${drainS.toFixed(0)} s (lag of the delivered only)`}`,
    });
    report({
      scenario: 'webhooks',
      metric: 'one subscription, live: lag p50',
      value: pct(lags, 50),
      unit: 'ms',
      note: `${lags.length} deliveries`,
    });
    report({
      scenario: 'webhooks',
      metric: 'one subscription, live: lag p99',
      value: pct(lags, 99),
      unit: 'ms',
      note: 'event row to delivered',
    });
  }

  async function drain(instances: number): Promise<number> {
    const before = received;
    const workers = Array.from({ length: instances }, () => app.services.webhooks.newWorker());
    const t0 = performance.now();
    await Promise.all(
      workers.map(async (w) => {
        while (received - before < EVENTS) {
          if ((await w.tick()) === 0) await new Promise((r) => setTimeout(r, 1));
        }
        await w.idle();
      }),
    );
    return (received - before) / ((performance.now() - t0) / 1000);
  }

  try {
    const bare = await record(EVENTS);
    report({
      scenario: 'webhooks',
      metric: 'events recorded/s, no subscription',
      value: bare,
      unit: 'ev/s',
      note: `${WRITERS} writers, one transaction per event`,
    });
    const admin = await app.inject({
      method: 'POST',
      url: '/api/v1/auth/login',
      payload: { email: 'admin@demo.test', password: 'Demo-pass-2026' },
    });
    const token = admin.json().access_token as string;
    const sub = await app.inject({
      method: 'POST',
      url: '/api/v1/webhooks/subscriptions',
      headers: { authorization: `Bearer ${token}` },
      payload: { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`, event_types: ['trip.updated'] },
    });
    if (sub.statusCode !== 201) throw new Error(`subscription: ${sub.statusCode} ${sub.body}`);
    const withSub = await record(EVENTS);
    report({
      scenario: 'webhooks',
      metric: 'outbox insert rate (event + delivery)/s',
      value: withSub,
      unit: 'ev/s',
      note: `${WRITERS} writers; ${((1 - withSub / bare) * 100).toFixed(0)}% below no subscription`,
    });
    const one = await drain(1);
    report({
      scenario: 'webhooks',
      metric: 'delivered/s, one worker instance',
      value: one,
      unit: 'ev/s',
      note: `${(one / withSub).toFixed(2)}x the insert rate; signed POST + attempt log`,
    });
    await record(EVENTS);
    const two = await drain(2);
    report({ scenario: 'webhooks', metric: 'delivered/s, two worker instances', value: two, unit: 'ev/s', note: 'SKIP LOCKED claims' });
    await live();
    const { rows } = await db.withSystem((tx) =>
      tx.query<{ n: number }>("SELECT count(*)::int AS n FROM webhook_delivery WHERE status <> 'delivered'"),
    );
    if (rows[0].n !== 0) throw new Error(`${rows[0].n} deliveries not delivered`);
  } finally {
    await app.close();
    await db.close();
    await new Promise((r) => receiver.close(r));
  }
}

// Run directly (npm run bench:webhooks): a database of its own, dropped at the end.
if (import.meta.url === `file://${process.argv[1]}`) {
  const base = benchDatabaseUrl();
  const dbName = `bench_webhooks_${Date.now()}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${dbName}`);
  const url = new URL(base);
  url.pathname = `/${dbName}`;
  try {
    await benchWebhooks(
      url.toString(),
      (r) =>
        console.log(
          `  ${r.scenario.padEnd(10)} ${r.metric.padEnd(42)} ${Math.round(r.value).toString().padStart(8)} ${r.unit ?? ''}  (${r.note ?? ''})`,
        ),
      {
        events: Number(process.env.BENCH_WEBHOOK_EVENTS) || 2_000,
        rate: Number(process.env.BENCH_WEBHOOK_RATE) || 150,
        seconds: Number(process.env.BENCH_WEBHOOK_SECONDS) || 20,
      },
    );
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
    await admin.end();
  }
  process.exit(0);
}
