import { readFile } from 'node:fs/promises';
import pg from 'pg';
import { inject } from 'vitest';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { DEFAULT_LOGIN_THROTTLE, loadConfig, type Config } from '../src/config.js';
import { createPgliteDatabase, createPostgresDatabase, type Database } from '../src/platform/db/index.js';
import { migrate } from '../src/platform/db/migrate.js';
import { buildApp } from '../src/app.js';
import { DEMO_LOGINS, DEMO_PASSWORD, seedDemo } from '../src/seed.js';
import type { DemoSeed } from '../src/platform/context.js';
import { newId } from '../src/platform/ids.js';
import { retry } from './support.js';

export { pt, retry, sleep, waitFor } from './support.js';

/**
 * The migrated PGlite data directory dumped once per run by test/global-setup.ts, or null (a file run
 * under a configuration without that setup, or the dump is gone): then the database is created empty.
 */
async function pgliteTemplate(): Promise<Blob | null> {
  const file = inject('pgliteTemplate');
  if (!file) return null;
  const bytes = await readFile(file).catch(() => null);
  return bytes ? new Blob([bytes]) : null;
}

/**
 * A fresh database per test file: in-memory PGlite (a copy of the run's migrated template when there
 * is one; `migrate()` on it then only re-applies db/tenancy.sql), or a new PostgreSQL database when
 * TEST_DATABASE_URL is set.
 */
export async function freshDatabase(
  replica?: TestAppOptions['replica'],
): Promise<{ db: Database; url: string | null; drop: () => Promise<void> }> {
  const base = process.env.TEST_DATABASE_URL;
  if (!base) {
    const template = await pgliteTemplate();
    const db = await createPgliteDatabase(null, template ? { loadDataDir: template } : {});
    return { db, url: null, drop: async () => undefined };
  }
  const name = `t_${newId().replace(/-/g, '').slice(-20)}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  // Parallel test files create databases at once; PostgreSQL may refuse while template1 is busy.
  await retry(() => admin.query(`CREATE DATABASE ${name}`), { backoffMs: 100 });
  await admin.end();
  const url = new URL(base);
  url.pathname = `/${name}`;
  const db = createPostgresDatabase(url.toString(), {
    max: 30,
    ...(replica ? { replicaUrl: replica.url(name), replicaMaxLagMs: replica.maxLagMs, replicaCheckMs: replica.checkMs } : {}),
  });
  return {
    db,
    url: url.toString(),
    drop: async () => {
      const c = new pg.Client({ connectionString: base });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => undefined);
      await c.end();
    },
  };
}

export interface Session {
  token: string;
  refresh: string;
  userId: string;
  organizationId: string;
}

export interface TestApp {
  app: FastifyInstance;
  db: Database;
  url: string | null;
  config: Config;
  demo: DemoSeed;
  login(email: string, password?: string, organizationId?: string): Promise<Session>;
  /** Logs in the demo user of a role: admin, dispatch, merchant, customer, driver, platform. */
  as(role: keyof typeof DEMO_LOGINS): Promise<Session>;
  req(session: Session | null, opts: InjectOptions): Promise<LightMyRequestResponse>;
  /** A second approved organization with one user per role, for isolation tests. */
  newOrganization(name?: string): Promise<{ organizationId: string; logins: Record<string, string> }>;
  close(): Promise<void>;
}

export interface TestAppOptions {
  /** Wraps the app's database (e.g. to count round trips); the test's `t.db` stays the bare one. */
  wrapDb?: (db: Database) => Database;
  /** PostgreSQL only: a streaming replica of TEST_DATABASE_URL's cluster, the URL of the same database there. */
  replica?: { url: (database: string) => string; maxLagMs?: number; checkMs?: number };
}

/** The tests' SECRETS_KEY (a test may give another in `raw`, or '' for none). */
export const TEST_SECRETS_KEY = '5ec7e75ec7e75ec7e75ec7e75ec7e75ec7e75ec7e75ec7e75ec7e75ec7e75ec7';

/** `raw`: environment variables for this app (settings are read and checked from them as at start). */
export async function createTestApp(
  { raw, ...overrides }: Partial<Config> & { raw?: Record<string, string | undefined> } = {},
  options: TestAppOptions = {},
): Promise<TestApp> {
  const { db, url, drop } = await freshDatabase(options.replica);
  await migrate(db);
  // Tests act as a few demo users: per-user limits of expensive routes off unless a test sets them in `raw`.
  const source = {
    NODE_ENV: 'test',
    JWT_SECRET: 'test-secret-test-secret-test-secret-0123',
    // The key of the secrets at rest (chat tokens, webhook secrets): 32 bytes, hex.
    SECRETS_KEY: TEST_SECRETS_KEY,
    RATE_LIMIT_ORDERS_PER_MINUTE: '0',
    RATE_LIMIT_PLANS_PER_MINUTE: '0',
    RATE_LIMIT_REPORTS_PER_MINUTE: '0',
    // Cheap password hashes (1 MiB, 1 pass): every file seeds a dozen users and logs in many times. The
    // production parameters are the defaults (test/platform/auth.test.ts checks both).
    PASSWORD_HASH_MEMORY_KIB: '1024',
    PASSWORD_HASH_ITERATIONS: '1',
  };
  const config = loadConfig(
    { ...source, ...raw },
    {
      loginRateLimitPerIp: 100_000,
      // Suites log in and onboard many times from one address; the throttle's own tests set real figures.
      loginThrottle: { ...DEFAULT_LOGIN_THROTTLE, freeAttempts: 1000, accountCeiling: 100_000 },
      onboardingRateLimitPerIp: 100_000,
      onboardingRateLimitPerEmail: 100_000,
      dataDir: `/tmp/delivery-test-${newId()}`,
      ...overrides,
    },
  );
  const app = await buildApp({ config, db: options.wrapDb ? options.wrapDb(db) : db });
  await app.ready();
  const demo = (await seedDemo(app))!;
  const cache = new Map<string, Session>();

  async function login(email: string, password = DEMO_PASSWORD, organizationId?: string): Promise<Session> {
    const res = await app.inject({
      method: 'POST',
      url: '/api/v1/auth/login',
      payload: { email, password, ...(organizationId ? { organization_id: organizationId } : {}) },
    });
    if (res.statusCode !== 200) throw new Error(`login ${email} failed: ${res.statusCode} ${res.body}`);
    const b = res.json();
    return { token: b.access_token, refresh: b.refresh_token, userId: b.user.id, organizationId: b.user.organization_id };
  }

  return {
    app,
    db,
    url,
    config,
    demo,
    login,
    async as(role) {
      const hit = cache.get(role);
      if (hit) return hit;
      const s = await login(DEMO_LOGINS[role]);
      cache.set(role, s);
      return s;
    },
    req(session, opts) {
      const headers = { ...(opts.headers ?? {}) } as Record<string, string>;
      if (session) headers.authorization = `Bearer ${session.token}`;
      const u = String(opts.url);
      return app.inject({
        ...opts,
        url: u.startsWith('/api/') || u.startsWith('/docs') || u.startsWith('/metrics') ? u : `/api/v1${u}`,
        headers,
      });
    },
    async newOrganization(name = 'Other Org') {
      const suffix = newId().slice(-8);
      const logins = {
        admin: `admin-${suffix}@other.test`,
        dispatch: `dispatch-${suffix}@other.test`,
        merchant: `merchant-${suffix}@other.test`,
        customer: `customer-${suffix}@other.test`,
        driver: `driver-${suffix}@other.test`,
      };
      const org = await db.withSystem(async (tx) => {
        const o = await app.services.organizations.createOrganization(
          tx,
          { organization_name: name, admin: { email: logins.admin, password: DEMO_PASSWORD, display_name: 'Other admin' } },
          'approved',
        );
        const id = app.services.identity;
        await id.insertUser(tx, o.organization_id, {
          email: logins.dispatch,
          password: DEMO_PASSWORD,
          display_name: 'd',
          role: 'administrator',
          dispatch: true,
        });
        await id.insertUser(tx, o.organization_id, {
          email: logins.merchant,
          password: DEMO_PASSWORD,
          display_name: 'm',
          role: 'comercio',
        });
        await id.insertUser(tx, o.organization_id, {
          email: logins.customer,
          password: DEMO_PASSWORD,
          display_name: 'c',
          role: 'delivery',
        });
        await id.insertUser(tx, o.organization_id, {
          email: logins.driver,
          password: DEMO_PASSWORD,
          display_name: 'r',
          role: 'repartidor',
        });
        return o;
      });
      return { organizationId: org.organization_id, logins };
    },
    async close() {
      await app.close();
      await db.close();
      await drop();
    },
  };
}

/**
 * Another app instance on the test's database, with its own caches and listener: its own pool on PostgreSQL, the
 * same PGlite otherwise. `req` as `t.req`, through this instance.
 */
export async function secondInstance(t: TestApp) {
  const db = t.url ? createPostgresDatabase(t.url, { max: 5 }) : t.db;
  const app = await buildApp({ config: t.config, db });
  await app.ready();
  return {
    app,
    req(session: Session | null, opts: InjectOptions): Promise<LightMyRequestResponse> {
      const headers = { ...(opts.headers ?? {}) } as Record<string, string>;
      if (session) headers.authorization = `Bearer ${session.token}`;
      const u = String(opts.url);
      return app.inject({ ...opts, url: u.startsWith('/api/') ? u : `/api/v1${u}`, headers });
    },
    async close() {
      await app.close();
      if (db !== t.db) await db.close();
    },
  };
}
