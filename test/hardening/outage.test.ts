import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, waitFor, type Session, type TestApp } from '../helpers.js';
import { SseClient } from '../realtime/sse.js';

/**
 * A database restart: a PRIVATE PostgreSQL cluster started by this test (initdb +
 * pg_ctl into a temp dir on an ephemeral port; as the `postgres` user when the test runs as root) is
 * stopped and started again. During the outage the API answers 503 problem+json with Retry-After
 * (liveness stays 200, readiness 503); afterwards it serves again within seconds, and an SSE stream
 * opened before the outage receives events committed after it without reconnecting.
 */
const BIN = process.env.PG_BIN ?? '/usr/lib/postgresql/15/bin';
const available = existsSync(path.join(BIN, 'initdb')) && existsSync(path.join(BIN, 'pg_ctl'));

let dir = '';
let port = 0;
let t: TestApp;
let admin: Session;
let base = '';
const asRoot = process.getuid?.() === 0;

function pgCtl(...args: string[]) {
  const cmd = path.join(BIN, 'pg_ctl');
  const full = ['-D', path.join(dir, 'data'), '-l', path.join(dir, 'log'), ...args];
  // initdb and postgres refuse to run as root.
  if (asRoot) execFileSync('runuser', ['-u', 'postgres', '--', cmd, ...full], { stdio: 'ignore' });
  else execFileSync(cmd, full, { stdio: 'ignore' });
}
const startCluster = () =>
  pgCtl('-w', '-t', '30', '-o', `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off`, 'start');
const stopCluster = () => pgCtl('-w', '-m', 'fast', 'stop');

async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const p = (s.address() as net.AddressInfo).port;
  await new Promise((r) => s.close(r));
  return p;
}

beforeAll(async () => {
  if (!available) return;
  dir = mkdtempSync(path.join(os.tmpdir(), 'pg-private-'));
  if (asRoot) {
    chmodSync(dir, 0o755);
    chownSync(dir, Number(execFileSync('id', ['-u', 'postgres']).toString()), Number(execFileSync('id', ['-g', 'postgres']).toString()));
  }
  const initdb = [path.join(BIN, 'initdb'), '-D', path.join(dir, 'data'), '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync'];
  if (asRoot) execFileSync('runuser', ['-u', 'postgres', '--', ...initdb], { stdio: 'ignore' });
  else execFileSync(initdb[0], initdb.slice(1), { stdio: 'ignore' });
  port = await freePort();
  startCluster();
  // createTestApp makes its database on TEST_DATABASE_URL: point it at the private cluster for this file.
  const saved = process.env.TEST_DATABASE_URL;
  process.env.TEST_DATABASE_URL = `postgres://postgres@127.0.0.1:${port}/postgres`;
  try {
    t = await createTestApp({ raw: { REALTIME_HEARTBEAT_MS: '500' } });
  } finally {
    if (saved === undefined) delete process.env.TEST_DATABASE_URL;
    else process.env.TEST_DATABASE_URL = saved;
  }
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(t.app.server.address() as net.AddressInfo).port}/api/v1`;
  admin = await t.as('admin');
}, 120_000);

afterAll(async () => {
  if (!available) return;
  await t?.app.close().catch(() => undefined);
  await t?.db.close().catch(() => undefined);
  try {
    stopCluster();
  } catch {
    /* already stopped */
  }
  rmSync(dir, { recursive: true, force: true });
});

describe('a database restart', () => {
  it.skipIf(!available)(
    'answers 503 problem+json with Retry-After while the database is down, and serves again within seconds after it is back',
    async () => {
      expect((await t.req(admin, { method: 'GET', url: '/me' })).statusCode).toBe(200);
      const sse = await SseClient.open(`${base}/realtime/organization/stream`, { authorization: `Bearer ${admin.token}` });
      expect(sse.status).toBe(200);

      stopCluster();

      for (const [session, opts] of [
        [admin, { method: 'GET', url: '/me' }],
        [null, { method: 'POST', url: '/auth/login', payload: { email: 'admin@nowhere.test', password: 'x' } }],
      ] as const) {
        const res = await t.req(session, opts);
        expect(res.statusCode).toBe(503);
        expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
        expect(res.headers['retry-after']).toBe('5');
        expect(res.json()).toMatchObject({ status: 503, code: 'DATABASE_UNAVAILABLE', retry_after: 5 });
      }
      const live = await t.req(null, { method: 'GET', url: '/health' });
      expect(live.statusCode).toBe(200);
      expect(live.json()).toMatchObject({ status: 'ok', database: 'unavailable' });
      const notReady = await t.req(null, { method: 'GET', url: '/health/ready' });
      expect(notReady.statusCode).toBe(503);
      expect(notReady.headers['retry-after']).toBe('5');
      expect(notReady.json()).toMatchObject({ status: 'not_ready', checks: { database: { ok: false }, realtime: { ok: false } } });
      expect(sse.ended).toBe(false);

      startCluster();
      // Until it serves again every answer is 503, never a hang or another error.
      await waitFor(
        async () => {
          const res = await t.req(admin, { method: 'GET', url: '/me' });
          if (res.statusCode !== 200) expect(res.statusCode).toBe(503);
          return res.statusCode === 200;
        },
        { timeout: 20_000, interval: 100, message: 'serving again after the database came back' },
      );

      // The stream opened before the outage carries an event committed after it.
      const ev = await t.db.withSystem((tx) =>
        t.app.ctx.events.record(tx, t.demo.organizationId, {
          type: 'trip.created',
          entityType: 'trip',
          entityId: 'trip-after-restart',
          payload: {},
        }),
      );
      await sse.waitFor((f) => f.id === String(ev.seq), 15_000);
      await waitFor(async () => (await t.req(null, { method: 'GET', url: '/health/ready' })).statusCode === 200, {
        timeout: 15_000,
        interval: 100,
        message: 'ready after the database came back',
      });
      sse.close();
    },
    90_000,
  );
});
