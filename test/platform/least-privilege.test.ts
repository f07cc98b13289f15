import { createHmac } from 'node:crypto';
import net from 'node:net';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { loadConfig } from '../../src/config.js';
import { createPgliteDatabase, createPostgresDatabase, type Database } from '../../src/platform/db/index.js';
import { migrate } from '../../src/platform/db/migrate.js';
import { buildApp } from '../../src/app.js';
import { DEMO_LOGINS, DEMO_PASSWORD, seedDemo } from '../../src/seed.js';
import { newId } from '../../src/platform/ids.js';
import { createPushWorker } from '../../src/modules/notifications/worker.js';
import type { PushMessage } from '../../src/modules/notifications/service/gateway.js';
import type { DemoSeed } from '../../src/platform/context.js';
import { SseClient } from '../realtime/sse.js';
import type { WebhookWorker } from '../../src/modules/webhooks/worker.js';
import { retry, TEST_SECRETS_KEY } from '../helpers.js';

/**
 * Least privilege in the database: the schema owner migrates; the service runs as a login role
 * that is neither superuser nor BYPASSRLS, and reaches other tenants only in explicit system transactions
 * (`SET LOCAL ROLE app_worker`). The roles are created as the README tells a DBA to. PostgreSQL only:
 * the embedded default has one superuser and needs no setup (checked at the end).
 */
const BASE = process.env.TEST_DATABASE_URL;

const ROLE_SQL = [
  // Exactly the statements of README "PostgreSQL" (without passwords: the test server trusts 127.0.0.1).
  `CREATE ROLE app_owner LOGIN NOSUPERUSER NOBYPASSRLS NOCREATEROLE NOCREATEDB`,
  `CREATE ROLE app_tenant NOLOGIN NOSUPERUSER NOBYPASSRLS`,
  `CREATE ROLE app_worker NOLOGIN NOSUPERUSER BYPASSRLS`,
  `CREATE ROLE app_runtime LOGIN NOSUPERUSER NOBYPASSRLS NOINHERIT`,
  // The stricter variant: tenant requests and system transactions on two logins (DATABASE_SYSTEM_URL).
  `CREATE ROLE app_runtime_tenant LOGIN NOSUPERUSER NOBYPASSRLS NOINHERIT`,
  `CREATE ROLE app_system LOGIN NOSUPERUSER NOBYPASSRLS NOINHERIT`,
];
const GRANTS = [
  'GRANT app_tenant, app_worker TO app_runtime',
  'GRANT app_tenant TO app_runtime_tenant',
  'GRANT app_tenant, app_worker TO app_system',
];

/** Roles are cluster-wide and test files run at once: create idempotently, retry a lost catalog race. */
async function ensureRoles(admin: pg.Client) {
  for (const stmt of [
    ...ROLE_SQL.map((s) => `DO $$ BEGIN ${s}; EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END $$`),
    ...GRANTS,
  ]) {
    await retry(() => admin.query(stmt));
  }
}

const urlAs = (user: string, dbName: string) => {
  const u = new URL(BASE!);
  u.username = user;
  u.password = '';
  u.pathname = `/${dbName}`;
  return u.toString();
};

const MODES = {
  /** DATABASE_URL only: system transactions SET LOCAL ROLE app_worker on the same login. */
  'one login': { login: 'app_runtime', system: null },
  /** DATABASE_URL for tenant requests, DATABASE_SYSTEM_URL for system transactions. */
  'two logins': { login: 'app_runtime_tenant', system: 'app_system' },
} as const;

for (const [mode, { login: LOGIN, system: SYSTEM }] of Object.entries(MODES))
  describe.skipIf(!BASE)(`least privilege on PostgreSQL, ${mode}`, () => {
    const dbName = `lp_${newId().replace(/-/g, '').slice(-20)}`;
    let runtime: Database;
    let app: FastifyInstance;
    let demo: DemoSeed;
    let base: string;
    /** Fixtures and checks, as the test server's superuser (the owner is subject to the forced RLS too). */
    let su: pg.Client;
    /** The schema owner (not superuser either). */
    let owner: pg.Client;
    /** A raw connection as the run-time login role, for what the service must not be able to do. */
    let raw: pg.Client;

    beforeAll(async () => {
      const admin = new pg.Client({ connectionString: BASE });
      await admin.connect();
      await ensureRoles(admin);
      await retry(() => admin.query(`CREATE DATABASE ${dbName} OWNER app_owner`), { backoffMs: 100 });
      await admin.end();

      const migrator = createPostgresDatabase(urlAs('app_owner', dbName), { max: 1 });
      await migrate(migrator);
      await migrator.close();

      runtime = createPostgresDatabase(urlAs(LOGIN, dbName), { max: 10, systemUrl: SYSTEM && urlAs(SYSTEM, dbName) });
      const config = loadConfig(
        { NODE_ENV: 'test', JWT_SECRET: 'test-secret-test-secret-test-secret-0123', SECRETS_KEY: TEST_SECRETS_KEY },
        { dataDir: `/tmp/delivery-test-${newId()}` },
      );
      app = await buildApp({ config, db: runtime });
      await app.ready();
      demo = (await seedDemo(app))!;
      await app.listen({ port: 0, host: '127.0.0.1' });
      base = `http://127.0.0.1:${(app.server.address() as net.AddressInfo).port}/api/v1`;

      owner = new pg.Client({ connectionString: urlAs('app_owner', dbName) });
      await owner.connect();
      su = new pg.Client({ connectionString: urlAs(new URL(BASE!).username || 'postgres', dbName) });
      await su.connect();
      raw = new pg.Client({ connectionString: urlAs(LOGIN, dbName) });
      await raw.connect();
    });

    afterAll(async () => {
      await raw?.end().catch(() => undefined);
      await owner?.end().catch(() => undefined);
      await su?.end().catch(() => undefined);
      await app?.close();
      await runtime?.close();
      const admin = new pg.Client({ connectionString: BASE });
      await admin.connect();
      await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`).catch(() => undefined);
      await admin.end();
    });

    const inject = (token: string | null, opts: { method: 'GET' | 'POST' | 'PATCH'; url: string; payload?: unknown }) =>
      app.inject({ ...opts, url: `/api/v1${opts.url}`, headers: token ? { authorization: `Bearer ${token}` } : {} } as any);
    const login = async (email: string, password = DEMO_PASSWORD) => {
      const res = await inject(null, { method: 'POST', url: '/auth/login', payload: { email, password } });
      expect(res.statusCode, res.body).toBe(200);
      return res.json() as { access_token: string; refresh_token: string; user: { id: string; organization_id: string } };
    };

    it('the service connects as a role that is neither superuser nor BYPASSRLS', async () => {
      const { rows } = await raw.query('SELECT current_user AS u, rolsuper, rolbypassrls FROM pg_roles WHERE rolname = current_user');
      expect(rows).toEqual([{ u: LOGIN, rolsuper: false, rolbypassrls: false }]);
      expect(await runtime.connectionRole()).toMatchObject({
        user: LOGIN,
        superuser: false,
        bypassrls: false,
        tenantMember: true,
        workerMember: SYSTEM === null,
      });
      const sys = await runtime.withSystem(async (tx) => (await tx.query('SELECT session_user AS s, current_user AS c')).rows[0]);
      expect(sys).toEqual({ s: SYSTEM ?? LOGIN, c: 'app_worker' });
      // The owner is not privileged either: migrations did not need a superuser.
      const o = await owner.query('SELECT rolsuper, rolbypassrls FROM pg_roles WHERE rolname = current_user');
      expect(o.rows).toEqual([{ rolsuper: false, rolbypassrls: false }]);
      expect((await owner.query('SELECT count(*)::int AS n FROM _migrations')).rows[0].n).toBeGreaterThan(0);
    });

    it('login, refresh, a tenant request and onboarding work', async () => {
      const admin = await login(DEMO_LOGINS.admin);
      expect(admin.user.organization_id).toBe(demo.organizationId);
      const refreshed = await inject(null, { method: 'POST', url: '/auth/refresh', payload: { refresh_token: admin.refresh_token } });
      expect(refreshed.statusCode, refreshed.body).toBe(200);
      const users = await inject(refreshed.json().access_token, { method: 'GET', url: '/app-users' });
      expect(users.statusCode, users.body).toBe(200);
      expect(users.json().data.length).toBeGreaterThanOrEqual(5);
      expect(
        users
          .json()
          .data.every((u: { organization_id?: string }) => u.organization_id === undefined || u.organization_id === demo.organizationId),
      ).toBe(true);

      const email = `owner-${newId().slice(-8)}@least.test`;
      const onboarded = await inject(null, {
        method: 'POST',
        url: '/onboarding',
        payload: {
          organization_name: 'Least SRL',
          country: 'BO',
          admin: { email, password: 'Fresh-operator-2026', display_name: 'Owner' },
        },
      });
      expect(onboarded.statusCode, onboarded.body).toBe(201);
      const newcomer = await login(email, 'Fresh-operator-2026');
      expect((await inject(newcomer.access_token, { method: 'GET', url: '/me' })).statusCode).toBe(200);
      // The platform operator lists operators across organizations (a system transaction).
      const platform = await login(DEMO_LOGINS.platform);
      const ops = await inject(platform.access_token, { method: 'GET', url: '/operators' });
      expect(ops.statusCode, ops.body).toBe(200);
      expect(JSON.stringify(ops.json())).toContain(onboarded.json().operator_id);
    });

    it('the workers run: push outbox, chat outbox, settlements, the upload janitor', async () => {
      // Push: a device and a test notification queue one push; the worker claims and records it.
      const customer = await login(DEMO_LOGINS.customer);
      expect(
        (
          await inject(customer.access_token, {
            method: 'POST',
            url: '/mobile/devices',
            payload: { platform: 'android', push_token: `tok-${newId()}`, app_version: '0.7.2', build_number: 702 },
          })
        ).statusCode,
      ).toBeLessThan(300);
      const n = await inject(customer.access_token, { method: 'POST', url: '/notifications/test', payload: { title: 'least privilege' } });
      expect(n.statusCode, n.body).toBeLessThan(300);
      const sent: PushMessage[] = [];
      const push = createPushWorker(runtime, { gateway: { name: 'memory', send: async (m) => (sent.push(m), { ok: true }) } });
      expect(await push.tick()).toBeGreaterThanOrEqual(1);
      expect(sent.some((m) => m.organization_id === demo.organizationId)).toBe(true);
      const pushed = await su.query('SELECT status FROM push_outbox WHERE notification_id = $1', [n.json().id]);
      expect(pushed.rows).toEqual([{ status: 'sent' }]);

      // Chat: a click-to-chat channel and one queued message of the demo merchant.
      const { rows: shops } = await su.query('SELECT id FROM merchant WHERE organization_id = $1 AND owner_user_id = $2', [
        demo.organizationId,
        demo.users.merchant,
      ]);
      const merchantId = shops[0].id as string;
      await su.query(
        `INSERT INTO merchant_channel_settings (organization_id, merchant_id, chat_enabled, chat_mode, chat_phone) VALUES ($1, $2, true, 'link', '+59170000000')
       ON CONFLICT (organization_id, merchant_id) DO UPDATE SET chat_enabled = true, chat_mode = 'link'`,
        [demo.organizationId, merchantId],
      );
      const chatId = newId();
      await su.query(
        `INSERT INTO chat_order_outbox (organization_id, id, merchant_id, destination_phone, payload) VALUES ($1, $2, $3, '+59171111111', '{"summary":"order 1"}')`,
        [demo.organizationId, chatId, merchantId],
      );
      const chat = app.ctx.workers.find((w) => w.name === 'chat-outbox')!;
      expect(await chat.tick()).toBeGreaterThanOrEqual(1);
      expect((await su.query('SELECT status FROM chat_order_outbox WHERE id = $1', [chatId])).rows).toEqual([{ status: 'sent' }]);

      // Settlement: the merchant enables a daily rule; tomorrow's run settles (or skips) today's period.
      const merchant = await login(DEMO_LOGINS.merchant);
      const rule = await inject(merchant.access_token, {
        method: 'PATCH',
        url: '/merchant/settlement-rule',
        payload: { enabled: true, frequency: 'daily' },
      });
      expect(rule.statusCode, rule.body).toBe(200);
      expect(await app.services.settlements(new Date(Date.now() + 86_400_000))).toBeGreaterThanOrEqual(1);
      expect((await su.query('SELECT count(*)::int AS n FROM merchant_settlement WHERE merchant_id = $1', [merchantId])).rows[0].n).toBe(1);
      expect((await su.query("SELECT count(*)::int AS n FROM audit_log WHERE entity_type = 'merchant_settlement'")).rows[0].n).toBe(1);

      const janitor = app.ctx.workers.find((w) => w.name === 'storage-slot-janitor')!;
      await expect(janitor.tick()).resolves.toBeGreaterThanOrEqual(0);
    });

    it('the webhook worker delivers an event of a tenant transaction to a local receiver', async () => {
      const got: string[] = [];
      const receiver = (await import('node:http')).createServer((req, res) => {
        req.on('data', (c: Buffer) => got.push(c.toString('utf8')));
        req.on('end', () => res.writeHead(204).end());
      });
      await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
      Object.assign(app.ctx.config.settings, { WEBHOOK_ALLOW_HTTP: true, WEBHOOK_ALLOW_PRIVATE_TARGETS: true });
      try {
        const admin = await login(DEMO_LOGINS.admin);
        const url = `http://127.0.0.1:${(receiver.address() as net.AddressInfo).port}/hook`;
        const sub = await inject(admin.access_token, {
          method: 'POST',
          url: '/webhooks/subscriptions',
          payload: { url, event_types: ['trip.created'] },
        });
        expect(sub.statusCode, sub.body).toBe(201);
        const point = { type: 'Point', coordinates: [-68.13, -16.5] };
        const trip = await inject(admin.access_token, {
          method: 'POST',
          url: '/trips',
          payload: { pickup_location: point, pickup_address: 'a', dropoff_location: point, dropoff_address: 'b' },
        });
        expect(trip.statusCode, trip.body).toBe(201);
        const worker = app.ctx.workers.find((w) => w.name === 'webhooks') as WebhookWorker;
        expect(await worker.runOnce()).toBeGreaterThanOrEqual(1);
        expect(got.join('')).toContain(trip.json().id);
        expect((await su.query('SELECT status FROM webhook_delivery WHERE subscription_id = $1', [sub.json().id])).rows).toEqual([
          { status: 'delivered' },
        ]);
        // The retention pruner deletes finished deliveries and their attempts across organizations (app_worker).
        await su.query("UPDATE webhook_delivery SET updated_at = now() - interval '400 days' WHERE subscription_id = $1", [sub.json().id]);
        const pruner = app.ctx.workers.find((w) => w.name === 'webhooks-pruner')!;
        expect(await pruner.tick()).toBe(1);
        expect(
          (await su.query('SELECT count(*)::int AS n FROM webhook_delivery WHERE subscription_id = $1', [sub.json().id])).rows,
        ).toEqual([{ n: 0 }]);
      } finally {
        await new Promise((r) => receiver.close(r));
      }
    });

    it('a shop webhook finds its connection across organizations (app_worker) and becomes an express request', async () => {
      const merchant = await login(DEMO_LOGINS.merchant);
      const secret = 'least-shop-secret';
      const c = await inject(merchant.access_token, {
        method: 'POST',
        url: '/shops/connections',
        payload: { platform: 'shopify', shop_url: 'least.myshopify.com', secret },
      });
      expect(c.statusCode, c.body).toBe(201);
      const body = JSON.stringify({
        id: 77,
        updated_at: new Date().toISOString(),
        shipping_address: { name: 'Ana', address1: 'Av. Arce 2500', city: 'La Paz', latitude: -16.51, longitude: -68.125 },
      });
      const res = await app.inject({
        method: 'POST',
        url: `/api/v1/shops/shopify/${c.json().id}`,
        payload: body,
        headers: {
          'content-type': 'application/json',
          'x-shopify-topic': 'orders/create',
          'x-shopify-hmac-sha256': createHmac('sha256', secret).update(body).digest('base64'),
        },
      });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().outcome).toBe('created');
    });

    it('SSE: an event committed in a tenant transaction reaches the stream through the hub', async () => {
      const driver = await login(DEMO_LOGINS.driver);
      const c = await SseClient.open(`${base}/realtime/me/stream`, { authorization: `Bearer ${driver.access_token}` });
      try {
        expect(c.status).toBe(200);
        const n = await inject(driver.access_token, { method: 'POST', url: '/notifications/test', payload: { title: 'over the hub' } });
        expect(n.statusCode, n.body).toBeLessThan(300);
        const frame = await c.waitFor((f) => f.event === 'notification.created' && (f.data ?? '').includes('over the hub'), 10_000);
        expect(Number(frame.id)).toBeGreaterThan(0);
      } finally {
        c.close();
      }
    });

    it('outside a tenant transaction the run-time role reads no tenant rows; a tenant transaction sees only its tenant', async () => {
      const other = await su.query<{ n: number }>('SELECT count(DISTINCT organization_id)::int AS n FROM users');
      expect(other.rows[0].n).toBeGreaterThanOrEqual(3); // platform, demo, onboarded
      // Its own privileges: none (NOINHERIT); every statement of the service runs after a role switch.
      for (const table of ['users', 'organization', 'auth_session', 'refresh_token', 'event', 'rate_limit_bucket']) {
        await expect(raw.query(`SELECT count(*) FROM ${table}`), table).rejects.toMatchObject({ code: '42501' });
      }
      // As the tenant role with no tenant set, and with a tenant set: never another organization's rows.
      await raw.query('BEGIN');
      try {
        await raw.query(`SET LOCAL ROLE app_tenant`);
        expect((await raw.query('SELECT count(*)::int AS n FROM users')).rows[0].n).toBe(0);
        expect((await raw.query('SELECT count(*)::int AS n FROM organization')).rows[0].n).toBe(0);
        await raw.query(`SELECT set_config('app.organization_id', $1, true)`, [demo.organizationId]);
        const seen = await raw.query<{ organization_id: string }>('SELECT DISTINCT organization_id FROM users');
        expect(seen.rows).toEqual([{ organization_id: demo.organizationId }]);
        await expect(raw.query('SELECT count(*) FROM rate_limit_bucket')).rejects.toMatchObject({ code: '42501' });
      } finally {
        await raw.query('ROLLBACK');
      }
      // The service's tenant path agrees.
      const viaService = await runtime.withTenant(
        { organizationId: demo.organizationId, userId: null },
        async (tx) => (await tx.query('SELECT DISTINCT organization_id FROM users')).rows,
      );
      expect(viaService).toEqual([{ organization_id: demo.organizationId }]);
    });

    it.runIf(SYSTEM !== null)('with two logins, the login of tenant requests cannot become the worker role at all', async () => {
      await expect(raw.query('SET ROLE app_worker')).rejects.toMatchObject({ code: '42501' });
      await raw.query('BEGIN');
      try {
        await raw.query('SET LOCAL ROLE app_tenant');
        await expect(raw.query('SET LOCAL ROLE app_worker')).rejects.toMatchObject({ code: '42501' });
      } finally {
        await raw.query('ROLLBACK');
      }
    });

    it.runIf(SYSTEM === null)(
      'a run-time role created without NOINHERIT still sees no tenant rows outside a tenant transaction (BYPASSRLS is not inherited)',
      async () => {
        const admin = new pg.Client({ connectionString: BASE });
        await admin.connect();
        try {
          for (const stmt of [
            `DO $$ BEGIN CREATE ROLE app_runtime_inherit LOGIN NOSUPERUSER NOBYPASSRLS INHERIT; EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END $$`,
            'GRANT app_tenant, app_worker TO app_runtime_inherit',
          ]) {
            await retry(() => admin.query(stmt));
          }
        } finally {
          await admin.end();
        }
        const c = new pg.Client({ connectionString: urlAs('app_runtime_inherit', dbName) });
        await c.connect();
        const db = createPostgresDatabase(urlAs('app_runtime_inherit', dbName), { max: 1 });
        try {
          // It holds app_worker's table privileges, but not its BYPASSRLS: the tenant policy gives nothing.
          for (const table of ['users', 'organization', 'auth_session', 'refresh_token', 'event', 'push_outbox']) {
            expect((await c.query(`SELECT count(*)::int AS n FROM ${table}`)).rows[0].n, table).toBe(0);
          }
          // Only the explicit switch reads across tenants.
          const all = await db.withSystem(
            async (tx) => (await tx.query('SELECT count(DISTINCT organization_id)::int AS n FROM users')).rows[0].n,
          );
          expect(all).toBeGreaterThanOrEqual(3);
        } finally {
          await c.end();
          await db.close();
        }
      },
    );

    it.runIf(SYSTEM === null)(
      'the worker role has table privileges only: no DDL, no policy changes, no history rewrite, no migrations table, no owner',
      async () => {
        const asWorker = async (sql: string) => {
          await raw.query('BEGIN');
          try {
            await raw.query('SET LOCAL ROLE app_worker');
            return await raw.query(sql);
          } finally {
            await raw.query('ROLLBACK');
          }
        };
        await expect(asWorker('SELECT * FROM _migrations')).rejects.toMatchObject({ code: '42501' });
        await expect(asWorker('ALTER TABLE users DISABLE ROW LEVEL SECURITY')).rejects.toMatchObject({ code: '42501' });
        await expect(asWorker('DROP POLICY tenant_isolation ON users')).rejects.toMatchObject({ code: '42501' });
        await expect(asWorker('CREATE TABLE stolen (x text)')).rejects.toMatchObject({ code: '42501' });
        await expect(asWorker("UPDATE event SET payload = '{}'")).rejects.toMatchObject({ code: '42501' });
        await expect(asWorker('DELETE FROM audit_log')).rejects.toMatchObject({ code: '42501' });
        await expect(asWorker('DELETE FROM merchant_wallet_entry')).rejects.toMatchObject({ code: '42501' });
        // Nor can the login role become the owner or a superuser.
        await expect(raw.query('SET ROLE app_owner')).rejects.toMatchObject({ code: '42501' });
        await expect(raw.query('SET ROLE postgres')).rejects.toMatchObject({ code: '42501' });
        // The run-time role cannot migrate: it owns nothing and may not create in the schema.
        await expect(raw.query('ALTER TABLE users ADD COLUMN x text')).rejects.toMatchObject({ code: '42501' });
      },
    );

    it.runIf(SYSTEM === null)(
      'a least-privilege role without the worker role is refused clearly at the first system transaction',
      async () => {
        const notGranted = createPostgresDatabase(urlAs('app_owner', dbName), { max: 1 });
        try {
          await expect(notGranted.withSystem(async () => 1)).rejects.toThrow(
            /neither superuser nor BYPASSRLS.*GRANT app_tenant, app_worker TO "app_owner"/,
          );
          // Its own transactions (migrations) still run as itself.
          await expect(notGranted.withOwner(async (tx) => (await tx.query('SELECT current_user AS u')).rows[0].u)).resolves.toBe(
            'app_owner',
          );
        } finally {
          await notGranted.close();
        }
      },
    );
  });

describe('embedded default', () => {
  it('needs no setup: PGlite connects as its superuser and system transactions keep that role', async () => {
    const db = await createPgliteDatabase(null);
    try {
      await migrate(db);
      expect(await db.connectionRole()).toMatchObject({ superuser: true });
      const who = await db.withSystem(
        async (tx) => (await tx.query<{ u: string; s: string }>('SELECT current_user AS u, session_user AS s')).rows[0],
      );
      expect(who.u).toBe(who.s);
    } finally {
      await db.close();
    }
  });
});
