import { DEFAULT_LOGIN_THROTTLE } from '../../src/config.js';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import S3rver from 's3rver';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, waitFor, type Session, type TestApp } from '../helpers.js';
import { SseClient, json } from '../realtime/sse.js';
import { buildApp } from '../../src/app.js';
import { createPostgresDatabase, type Database } from '../../src/platform/db/index.js';
import { startWorkers } from '../../src/platform/workers.js';
import { migrate } from '../../src/platform/db/migrate.js';
import { png, sha256 } from '../storage/fixtures.js';
import { DEMO_LOGINS } from '../../src/seed.js';

/**
 * Several instances on one PostgreSQL and one S3-compatible store: three app
 * instances (MULTI_INSTANCE=true, STORAGE_DRIVER=s3 against s3rver started here), each with its own
 * pool and listener. Events committed through one reach the SSE clients of the others, resume works
 * across instances, every instance's listener is killed mid-stream and each client still gets every
 * event exactly once, push outbox rows worked by all three instances at once are delivered once each,
 * and an object uploaded through one instance is downloaded through the others.
 */
const PG = process.env.TEST_DATABASE_URL;
let t: TestApp;
const instances: { app: FastifyInstance; db: Database; base: string; stopWorkers: () => Promise<void> }[] = [];
let customer: Session;
let sink: http.Server;
const deliveries = new Map<string, number>();
let s3: S3rver | null = null;
let s3Dir = '';

beforeAll(async () => {
  if (!PG) return;
  s3Dir = mkdtempSync(path.join(os.tmpdir(), 's3rver-'));
  s3 = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory: s3Dir,
    configureBuckets: [{ name: 'delivery-objects', configs: [] }],
  });
  const s3Addr = await s3.run();
  sink = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const id = String(req.headers['x-push-id']);
      deliveries.set(id, (deliveries.get(id) ?? 0) + 1);
      res.end('{}');
    });
  });
  await new Promise<void>((r) => sink.listen(0, '127.0.0.1', r));
  const raw = {
    PUSH_WEBHOOK_URL: `http://127.0.0.1:${(sink.address() as net.AddressInfo).port}/push`,
    PUSH_WEBHOOK_SECRET: 'cluster-test-secret-0123456789',
    PUSH_WORKER_INTERVAL_MS: '30',
    PUSH_BATCH_SIZE: '3',
    REALTIME_GAP_TIMEOUT_MS: '200',
    MULTI_INSTANCE: 'true',
    STORAGE_DRIVER: 's3',
    S3_BUCKET: 'delivery-objects',
    S3_ENDPOINT: `http://127.0.0.1:${s3Addr.port}`,
    S3_FORCE_PATH_STYLE: 'true',
    S3_ACCESS_KEY_ID: 'S3RVER',
    S3_SECRET_ACCESS_KEY: 'S3RVER',
  };
  // Six free attempts per account and address, then a long back-off: the throttle's counters live in the database.
  t = await createTestApp({ raw, loginThrottle: { ...DEFAULT_LOGIN_THROTTLE, freeAttempts: 6, baseDelaySeconds: 60 } });
  customer = await t.as('customer');
  for (let i = 0; i < 3; i++) {
    const db = createPostgresDatabase(t.url!, { max: 8 });
    const app = await buildApp({ config: t.config, db });
    await app.listen({ port: 0, host: '127.0.0.1' });
    instances.push({
      app,
      db,
      base: `http://127.0.0.1:${(app.server.address() as net.AddressInfo).port}/api/v1`,
      stopWorkers: startWorkers(app.ctx.workers, app.log),
    });
  }
}, 120_000);

afterAll(async () => {
  for (const i of instances) {
    await i.stopWorkers();
    await i.app.close();
    await i.db.close();
  }
  await t?.close();
  await new Promise((r) => (sink ? sink.close(r) : r(null)));
  await s3?.close();
  if (s3Dir) rmSync(s3Dir, { recursive: true, force: true });
});

const notify = (n: number) =>
  instances[n % 3].app.inject({
    method: 'POST',
    url: '/api/v1/notifications/test',
    headers: { authorization: `Bearer ${customer.token}` },
    payload: { title: `n${n}` },
  });
const openStream = (i: number, headers: Record<string, string> = {}) =>
  SseClient.open(`${instances[i].base}/realtime/me/stream`, { authorization: `Bearer ${customer.token}`, ...headers });
const titles = (c: SseClient) =>
  c.events.filter((f) => f.event === 'notification.created').map((f) => json(f).payload.notification.title as string);

describe('three instances on one PostgreSQL', () => {
  it.skipIf(!PG)(
    'events through any instance reach the streams of all, resume moves between instances, and a killed listener on every instance loses and doubles nothing',
    async () => {
      const a = await openStream(1);
      const b = await openStream(2);
      const expected: string[] = [];
      for (let n = 0; n < 6; n++) {
        expect((await notify(n)).statusCode).toBe(201);
        expected.push(`n${n}`);
      }
      await a.until(() => titles(a).length >= 6, 5_000, 'six events on instance 1');
      // Resume on another instance: leave instance 1, miss two events, come back on instance 0.
      const lastId = a.events[a.events.length - 1].id!;
      a.close();
      for (let n = 6; n < 8; n++) {
        await notify(n);
        expected.push(`n${n}`);
      }
      const resumed = await openStream(0, { 'last-event-id': lastId });
      expect(resumed.status).toBe(200);

      // Every instance's listener is killed at once while events keep being committed.
      const su = new pg.Client({ connectionString: PG });
      await su.connect();
      try {
        const killed = await su.query(
          `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND application_name = 'delivery-listen'`,
          [new URL(t.url!).pathname.slice(1)],
        );
        expect(killed.rowCount).toBeGreaterThanOrEqual(3);
      } finally {
        await su.end();
      }
      for (let n = 8; n < 20; n++) {
        expect((await notify(n)).statusCode).toBe(201);
        expected.push(`n${n}`);
        // Half of them before every listener is back, half after.
        if (n === 12)
          await waitFor(() => instances.every((i) => i.app.services.realtime.status().listener.state === 'connected'), {
            timeout: 10_000,
            message: 'every listener back',
          });
      }
      // A last event: streams deliver in order, so once it is in, anything delivered twice before it is in too.
      expect((await notify(20)).statusCode).toBe(201);
      expected.push('n20');
      await b.until(() => titles(b).includes('n20'), 10_000, 'the last event on instance 2');
      await resumed.until(() => titles(resumed).includes('n20'), 10_000, 'the last event on instance 0');
      expect(titles(b)).toEqual(expected);
      expect(titles(resumed)).toEqual(expected.slice(6));
      for (const i of instances) expect(i.app.services.realtime.status().listener.losses).toBe(1);
      b.close();
      resumed.close();
    },
    60_000,
  );

  it.skipIf(!PG)(
    'delivers each push outbox row once while three instances run the workers together',
    async () => {
      await instances[0].app.inject({
        method: 'POST',
        url: '/api/v1/mobile/devices',
        headers: { authorization: `Bearer ${customer.token}` },
        payload: { platform: 'android', push_token: `cluster-token-${Date.now()}`, app_version: '0.7.2', build_number: 702 },
      });
      const before = await t.db.withSystem((tx) => tx.query<{ id: string }>('SELECT id FROM push_outbox'));
      for (let n = 0; n < 30; n++) await notify(100 + n);
      const rows = (await t.db.withSystem((tx) => tx.query<{ id: string }>('SELECT id FROM push_outbox'))).rows.filter(
        (r) => !before.rows.some((b) => b.id === r.id),
      );
      expect(rows.length).toBeGreaterThanOrEqual(30);
      await waitFor(() => rows.every((r) => deliveries.has(r.id)), {
        timeout: 20_000,
        interval: 50,
        message: 'every row delivered',
      });
      // Every row sent, on its first claim: a second claim would count an attempt, whenever its send lands. The gateway
      // sees a send before its worker writes the outcome: wait for every outcome to be written, then judge them.
      const readOutcome = () =>
        t.db.withSystem((tx) =>
          tx.query<{ status: string; attempts: number }>('SELECT status, attempts FROM push_outbox WHERE id = ANY($1)', [
            rows.map((r) => r.id),
          ]),
        );
      const outcome = await waitFor(
        async () => {
          const o = await readOutcome();
          return o.rows.some((r) => r.status === 'pending' || r.status === 'sending') ? null : o;
        },
        { timeout: 20_000, interval: 50, message: 'every outcome written' },
      );
      expect(outcome.rows).toHaveLength(rows.length);
      expect(outcome.rows.filter((r) => r.status !== 'sent' || r.attempts !== 1)).toEqual([]);
      for (const r of rows) expect(deliveries.get(r.id), r.id).toBe(1);
    },
    60_000,
  );

  it.skipIf(!PG)(
    'stores objects in the shared S3-compatible store: uploaded through one instance, downloaded through the others',
    async () => {
      const bytes = png(30);
      const auth = { authorization: `Bearer ${customer.token}` };
      const slot = await instances[0].app.inject({
        method: 'POST',
        url: '/api/v1/storage/generic/uploads',
        headers: auth,
        payload: { purpose: 'avatar', mime_type: 'image/png', filename: 'me.png', size_bytes: bytes.length },
      });
      expect(slot.statusCode, slot.body).toBe(201);
      const { upload_id, upload_token, object_id } = slot.json();
      const put = await instances[1].app.inject({
        method: 'PUT',
        url: `/api/v1/storage/uploads/${upload_id}`,
        headers: { ...auth, 'content-type': 'image/png', 'x-upload-token': upload_token },
        payload: bytes,
      });
      expect(put.statusCode, put.body).toBe(201);
      expect(put.json()).toMatchObject({ sha256: sha256(bytes) });
      const row = await t.db.withSystem((tx) => tx.query('SELECT driver FROM private_storage_object WHERE id = $1', [object_id]));
      expect(row.rows[0].driver).toBe('s3');
      for (const i of instances) {
        const res = await i.app.inject({ method: 'GET', url: `/api/v1/storage/objects/${object_id}`, headers: auth });
        expect(res.statusCode).toBe(200);
        expect(res.rawPayload.equals(bytes)).toBe(true);
        const part = await i.app.inject({
          method: 'GET',
          url: `/api/v1/storage/objects/${object_id}`,
          headers: { ...auth, range: 'bytes=0-7' },
        });
        expect(part.statusCode).toBe(206);
        expect(part.rawPayload.equals(bytes.subarray(0, 8))).toBe(true);
      }
    },
  );

  it.skipIf(!PG)(
    'a logout through one instance is refused by the others before their cached session expires, and login throttling counts across instances',
    async () => {
      const s = await t.login(DEMO_LOGINS.merchant);
      const me = (i: number) =>
        instances[i].app.inject({ method: 'GET', url: '/api/v1/me', headers: { authorization: `Bearer ${s.token}` } });
      for (let i = 0; i < 3; i++) expect((await me(i)).statusCode).toBe(200); // cached as active on every instance
      expect(
        (await instances[0].app.inject({ method: 'POST', url: '/api/v1/auth/logout', headers: { authorization: `Bearer ${s.token}` } }))
          .statusCode,
      ).toBeLessThan(300);
      // Refused on every instance before the 5 s of its cached session could run out: the announcement did it.
      for (let i = 0; i < 3; i++)
        await waitFor(async () => (await me(i)).statusCode === 401, { timeout: 4_000, message: `logout seen by instance ${i}` });

      // Failed logins spread over the instances share one counter (6 free attempts, then back-off).
      const codes: number[] = [];
      for (let n = 0; n < 9; n++) {
        const res = await instances[n % 3].app.inject({
          method: 'POST',
          url: '/api/v1/auth/login',
          payload: { email: DEMO_LOGINS.dispatch, password: 'wrong-password' },
        });
        codes.push(res.statusCode);
      }
      expect(codes.slice(0, 6).every((c) => c === 401)).toBe(true);
      expect(codes.slice(6)).toEqual([429, 429, 429]);
    },
  );

  it.skipIf(!PG)('three instances starting at the same moment on an empty database migrate it once, without failing', async () => {
    const name = `t_mig_${Date.now().toString(36)}`;
    const su = new pg.Client({ connectionString: PG });
    await su.connect();
    await su.query(`CREATE DATABASE ${name}`);
    const url = new URL(PG!);
    url.pathname = `/${name}`;
    const dbs = [0, 1, 2].map(() => createPostgresDatabase(url.toString(), { max: 2 }));
    try {
      const applied = await Promise.all(dbs.map((db) => migrate(db)));
      // Each migration was applied by exactly one of them.
      const all = applied.flat();
      expect(all.length).toBeGreaterThan(0);
      expect(new Set(all).size).toBe(all.length);
      const rows = await dbs[0].withSystem((tx) =>
        tx.query<{ name: string; n: number }>('SELECT name, count(*)::int AS n FROM _migrations GROUP BY name'),
      );
      expect(rows.rows.length).toBe(all.length);
      expect(rows.rows.every((r) => r.n === 1)).toBe(true);
    } finally {
      for (const db of dbs) await db.close();
      await su.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await su.end();
    }
  });
});
