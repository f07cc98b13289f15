import net from 'node:net';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, waitFor, type Session, type TestApp } from '../helpers.js';
import { SseClient, json } from './sse.js';
import type { EventInput } from '../../src/platform/events.js';
import { DEMO_LOGINS } from '../../src/seed.js';

/**
 * Realtime recovers by itself: the LISTEN connection is killed while the database
 * refuses new connections for a moment; the listener retries with back-off (a failed attempt is not
 * cached), listens again, and every open stream receives the events committed meanwhile from the
 * event log, each exactly once and in order. Open streams also re-check their session periodically.
 */
let t: TestApp;
let base: string;
let admin: Session, dispatch: Session, driver: Session;
const open: SseClient[] = [];

beforeAll(async () => {
  t = await createTestApp({
    metricsToken: 'metrics-token-recovery',
    raw: {
      REALTIME_HEARTBEAT_MS: '500',
      REALTIME_SESSION_CHECK_MS: '300',
      REALTIME_MAX_STREAMS_PER_USER: '3',
      REALTIME_GAP_TIMEOUT_MS: '200',
    },
  });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(t.app.server.address() as net.AddressInfo).port}/api/v1`;
  [admin, dispatch, driver] = await Promise.all([t.as('admin'), t.as('dispatch'), t.as('driver')]);
});
afterAll(async () => {
  for (const c of open) c.close();
  await t?.close();
});

async function stream(path: string, s: Session) {
  const c = await SseClient.open(`${base}${path}`, { authorization: `Bearer ${s.token}` });
  open.push(c);
  return c;
}
const record = (input: EventInput) => t.db.withSystem((tx) => t.app.ctx.events.record(tx, t.demo.organizationId, input));
const ev = (n: number, phase: string): EventInput => ({
  type: 'trip.location_updated',
  entityType: 'trip',
  entityId: `trip-recovery-${n}`,
  actorUserId: t.demo.users.driver,
  audienceUserIds: [t.demo.users.driver],
  payload: { n, phase },
});
const until = (cond: () => boolean | Promise<boolean>, timeout: number, message: string) => waitFor(cond, { timeout, message });
async function metric(name: string): Promise<number> {
  const res = await t.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: 'Bearer metrics-token-recovery' } });
  const line = res.body.split('\n').find((l) => l.startsWith(`${name} `));
  return Number(line?.split(' ')[1]);
}
const sidOf = (s: Session) => JSON.parse(Buffer.from(s.token.split('.')[1], 'base64url').toString()).sid as string;

describe('realtime recovery after the LISTEN connection is lost', () => {
  it.skipIf(!process.env.TEST_DATABASE_URL)(
    'reconnects with back-off while the database refuses connections, then delivers every event of before, during and after exactly once',
    async () => {
      const dbName = new URL(t.url!).pathname.slice(1);
      const su = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
      await su.connect();
      try {
        // Warm the pool so the events "during" can commit while new connections are refused.
        // Four transactions open at once (each waits for the others), so the pool holds four connections.
        let opened = 0;
        let allOpen!: () => void;
        const together = new Promise<void>((r) => (allOpen = r));
        await Promise.all(
          Array.from({ length: 4 }, () =>
            t.db.withSystem(async (tx) => {
              await tx.query('SELECT 1');
              if (++opened === 4) allOpen();
              await together;
            }),
          ),
        );
        const clients = [
          await stream('/realtime/organization/stream', admin),
          await stream('/realtime/organization/stream', dispatch),
          await stream('/realtime/me/stream', driver),
        ];
        for (const c of clients) expect(c.status).toBe(200);

        const seqs: number[] = [];
        for (let i = 0; i < 5; i++) seqs.push((await record(ev(i, 'before'))).seq);
        for (const c of clients) await c.waitFor((f) => f.id === String(seqs[4]));

        // The database refuses new connections (like a restart or failover), and the listener is killed.
        await su.query(`ALTER DATABASE ${dbName} ALLOW_CONNECTIONS false`);
        const killed = await su.query(
          `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND application_name = 'delivery-listen'`,
          [dbName],
        );
        expect(killed.rowCount).toBe(1);
        await until(() => t.app.services.realtime.status().listener.state === 'reconnecting', 5_000, 'listener lost');
        for (let i = 5; i < 15; i++) seqs.push((await record(ev(i, 'during'))).seq);
        // Several reconnection attempts fail: each is a new attempt, not the first failure handed back.
        await until(() => t.app.services.realtime.status().listener.failed_attempts >= 2, 10_000, 'failed reconnection attempts');
        const during = await t.req(null, { method: 'GET', url: '/health/ready' });
        expect(during.statusCode).toBe(503);
        expect(during.headers['retry-after']).toBeDefined();
        expect(during.json().checks.realtime).toMatchObject({ ok: false, listener: { state: 'reconnecting' }, hub: { state: 'paused' } });
        const live = await t.req(null, { method: 'GET', url: '/health' });
        expect(live.statusCode).toBe(200);
        expect(live.json().realtime).toEqual({ listener: 'reconnecting', hub: 'paused' });
        expect(await metric('realtime_listener_up')).toBe(0);
        for (const c of clients) expect(c.ended).toBe(false);

        await su.query(`ALTER DATABASE ${dbName} ALLOW_CONNECTIONS true`);
        for (let i = 15; i < 20; i++) seqs.push((await record(ev(i, 'reopening'))).seq);
        await until(
          () => t.app.services.realtime.status().hub.state === 'live' && t.app.services.realtime.status().listener.state === 'connected',
          15_000,
          'hub live again',
        );
        for (let i = 20; i < 25; i++) seqs.push((await record(ev(i, 'after'))).seq);

        // A later marker: streams deliver in order, so once it is in, anything sent twice before it is in too.
        const marker = await record(ev(25, 'marker'));
        for (const c of clients) await c.waitFor((f) => f.id === String(marker.seq), 10_000);
        for (const c of clients) {
          const got = c.events.filter((f) => f.event === 'trip.location_updated' && Number(f.id) !== marker.seq).map((f) => Number(f.id));
          expect(got).toEqual(seqs);
          expect(c.events.filter((f) => f.event === 'trip.location_updated').map((f) => json(f).payload.n)).toEqual([
            ...seqs.map((_, i) => i),
            25,
          ]);
        }
        const st = t.app.services.realtime.status();
        expect(st.listener.losses).toBe(1);
        expect(st.hub.recoveries).toBe(1);
        expect(st.hub.recovered_events).toBeGreaterThanOrEqual(10);
        expect(await metric('realtime_listener_up')).toBe(1);
        expect(await metric('realtime_listener_losses')).toBe(1);
        expect(await metric('realtime_recovered_events')).toBe(st.hub.recovered_events);
        // The pool's gauges beside them: no request waits for a connection once the database is back.
        expect(await metric('db_pool_connections{state="waiting"}')).toBe(0);
        expect(await metric('db_pool_connections{state="in_use"}')).toBeGreaterThanOrEqual(0);
        const ready = await t.req(null, { method: 'GET', url: '/health/ready' });
        expect(ready.statusCode).toBe(200);
        expect(ready.json()).toMatchObject({
          status: 'ready',
          checks: { database: { ok: true }, migrations: { ok: true, missing: [] }, realtime: { ok: true, hub: { state: 'live' } } },
        });
      } finally {
        await su.query(`ALTER DATABASE ${dbName} ALLOW_CONNECTIONS true`).catch(() => undefined);
        await su.end();
      }
    },
    60_000,
  );
});

describe('caches fed by NOTIFY after a lost listener', () => {
  it.skipIf(!process.env.TEST_DATABASE_URL)(
    'forgets a cached session when the listener comes back, so a revocation announced meanwhile applies at once',
    async () => {
      const dbName = new URL(t.url!).pathname.slice(1);
      const s = await t.login(DEMO_LOGINS.merchant);
      expect((await t.req(s, { method: 'GET', url: '/me' })).statusCode).toBe(200); // cached as active (SESSION_RECHECK_MS)
      const su = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
      await su.connect();
      try {
        const losses = t.app.services.realtime.status().listener.losses;
        await su.query(`ALTER DATABASE ${dbName} ALLOW_CONNECTIONS false`);
        await su.query(
          `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND application_name = 'delivery-listen'`,
          [dbName],
        );
        await until(() => t.app.services.realtime.status().listener.losses > losses, 5_000, 'listener lost');
        // Revoked and announced while nothing listens: the NOTIFY is lost.
        await t.db.withSystem(async (tx) => {
          await tx.query('UPDATE auth_session SET revoked_at = now() WHERE id = $1', [sidOf(s)]);
          await tx.query("SELECT pg_notify('session_revoked', $1)", [sidOf(s)]);
        });
        await su.query(`ALTER DATABASE ${dbName} ALLOW_CONNECTIONS true`);
        await until(() => t.app.services.realtime.status().listener.state === 'connected', 10_000, 'listener back');
        // Well within the re-read interval: without forgetting it, the revoked token would still pass.
        expect((await t.req(s, { method: 'GET', url: '/me' })).statusCode).toBe(401);
      } finally {
        await su.query(`ALTER DATABASE ${dbName} ALLOW_CONNECTIONS true`).catch(() => undefined);
        await su.end();
      }
    },
  );
});

describe('open streams and their session', () => {
  it('closes a stream whose session was revoked even when the revocation NOTIFY never arrived', async () => {
    const s = await t.login(DEMO_LOGINS.dispatch);
    const c = await stream('/realtime/organization/stream', s);
    expect(c.status).toBe(200);
    // Revoked behind the service's back: no pg_notify('session_revoked') is sent.
    await t.db.withSystem((tx) => tx.query('UPDATE auth_session SET revoked_at = now() WHERE id = $1', [sidOf(s)]));
    // Only the periodic session check (every 300 ms here) can end it.
    await c.until(() => c.ended, 5_000, 'end of the revoked stream');
  });

  it('refuses a user more concurrent streams than the limit with a 429 problem, and accepts again once one closes', async () => {
    const s = await t.login(DEMO_LOGINS.customer);
    const a = await stream('/realtime/me/stream', s);
    const b = await stream('/realtime/me/stream', s);
    const c = await stream('/realtime/me/stream', s);
    for (const x of [a, b, c]) expect(x.status).toBe(200);
    const d = await stream('/realtime/me/stream', s);
    expect(d.status).toBe(429);
    expect(d.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(d.headers['retry-after']).toBe('5');
    expect(JSON.parse(await d.body())).toMatchObject({ status: 429, code: 'STREAM_LIMIT_PER_USER', limit: 3 });
    // Another user is not affected.
    const other = await stream('/realtime/me/stream', driver);
    expect(other.status).toBe(200);
    a.close();
    let e: SseClient | null = null;
    await until(
      async () => {
        e?.close();
        e = await stream('/realtime/me/stream', s);
        return e.status === 200;
      },
      3_000,
      'a stream accepted after one closed',
    );
  });
});
