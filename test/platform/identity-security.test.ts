import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SignJWT, decodeJwt } from 'jose';
import type { InjectOptions } from 'fastify';
import { createTestApp, freshDatabase, type TestApp } from '../helpers.js';
import { DEFAULT_LOGIN_THROTTLE, loadConfig, parseTrustProxy } from '../../src/config.js';
import { DEMO_PASSWORD, seedDemo } from '../../src/seed.js';
import { buildApp } from '../../src/app.js';
import { migrate } from '../../src/platform/db/migrate.js';
import { createPostgresDatabase } from '../../src/platform/db/index.js';

/** `t`: the real throttle figures. `limited`: small per-address limits, no proxy trusted. `proxied`: TRUST_PROXY=1. */
let t: TestApp;
let limited: TestApp;
let proxied: TestApp;
beforeAll(async () => {
  t = await createTestApp({ loginThrottle: DEFAULT_LOGIN_THROTTLE });
  limited = await createTestApp({ loginRateLimitPerIp: 3, onboardingRateLimitPerIp: 3, onboardingRateLimitPerEmail: 2 });
  proxied = await createTestApp({ loginRateLimitPerIp: 3, trustProxy: 1 });
}, 120_000);
afterAll(async () => {
  await t?.close();
  await limited?.close();
  await proxied?.close();
});

const login = (app: TestApp, payload: Record<string, unknown>, from = '127.0.0.1', headers: Record<string, string> = {}) =>
  app.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload, remoteAddress: from, headers } as InjectOptions);
const onboard = (app: TestApp, email: string, password: string, from = '127.0.0.1') =>
  app.app.inject({
    method: 'POST',
    url: '/api/v1/onboarding',
    payload: { organization_name: 'Intruder SRL', admin: { email, password, display_name: 'Intruder' } },
    remoteAddress: from,
  } as InjectOptions);
const pairKey = (email: string, from: string) => `pair:${email}|${from}`;
/** Lets the back-off of one account-and-address pair run out (instead of sleeping through it). */
const expireBlock = (app: TestApp, key: string) =>
  app.db.withSystem((tx) => tx.query('UPDATE login_throttle SET blocked_until = now() WHERE key = $1', [key]));

describe('onboarding never changes an existing login', () => {
  it("onboarding with an existing user's email: the user still logs in; the password decides the account", async () => {
    const res = await onboard(t, 'customer@demo.test', 'Intruder-chosen-77', '192.0.2.10');
    const fresh = await onboard(t, 'never-registered@demo.test', 'Intruder-chosen-77', '192.0.2.10');
    expect([res.statusCode, fresh.statusCode]).toEqual([201, 201]);
    expect(Object.keys(res.json()).sort()).toEqual(Object.keys(fresh.json()).sort()); // same shape: nothing tells the email is registered

    const owner = await login(t, { email: 'customer@demo.test', password: DEMO_PASSWORD });
    expect(owner.statusCode).toBe(200);
    expect(owner.json().user).toMatchObject({ id: t.demo.users.customer, organization_id: t.demo.organizationId });
    const intruder = await login(t, { email: 'customer@demo.test', password: 'Intruder-chosen-77' });
    expect(intruder.statusCode).toBe(200);
    expect(intruder.json().user.organization_id).toBe(res.json().organization_id);
    const wrong = await login(t, { email: 'customer@demo.test', password: 'not-the-password-1' });
    expect(wrong.statusCode).toBe(401);
    expect(wrong.json().code).toBe('INVALID_CREDENTIALS');
  });

  it('asks for the organization only when the password matches several accounts, and only after checking it', async () => {
    const other = await onboard(t, 'dispatch@demo.test', DEMO_PASSWORD, '192.0.2.11');
    expect(other.statusCode).toBe(201);
    // A wrong password reveals nothing about the two accounts.
    const wrong = await login(t, { email: 'dispatch@demo.test', password: 'not-the-password-2' });
    expect(wrong.statusCode).toBe(401);
    expect(wrong.json().code).toBe('INVALID_CREDENTIALS');
    const both = await login(t, { email: 'dispatch@demo.test', password: DEMO_PASSWORD });
    expect(both.statusCode).toBe(400);
    expect(both.json().code).toBe('ORGANIZATION_REQUIRED');
    expect(
      both
        .json()
        .organizations.map((o: { id: string }) => o.id)
        .sort(),
    ).toEqual([t.demo.organizationId, other.json().organization_id].sort());
    const chosen = await login(t, { email: 'dispatch@demo.test', password: DEMO_PASSWORD, organization_id: other.json().organization_id });
    expect(chosen.statusCode).toBe(200);
    expect(chosen.json().user.organization_id).toBe(other.json().organization_id);
  });

  it('onboarding is rate limited per client address and per email (429 problem+json with Retry-After)', async () => {
    const codes: number[] = [];
    for (let i = 0; i < 4; i++)
      codes.push((await onboard(limited, `owner${i}@ip-limit.test`, 'Fresh-operator-2026', '198.51.100.7')).statusCode);
    expect(codes).toEqual([201, 201, 201, 429]);
    const refused = await onboard(limited, 'owner9@ip-limit.test', 'Fresh-operator-2026', '198.51.100.7');
    expect(refused.headers['content-type']).toContain('application/problem+json');
    expect(refused.json().code).toBe('RATE_LIMITED');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    // Another address is not held back by the first one.
    expect((await onboard(limited, 'owner@other-ip.test', 'Fresh-operator-2026', '198.51.100.8')).statusCode).toBe(201);

    const perEmail: number[] = [];
    for (let i = 0; i < 3; i++)
      perEmail.push((await onboard(limited, 'admin@demo.test', 'Fresh-operator-2026', `198.51.100.${20 + i}`)).statusCode);
    expect(perEmail).toEqual([201, 201, 429]);
    // The same limit applies to an email nobody has: the answers do not tell registered emails apart.
    const unknown: number[] = [];
    for (let i = 0; i < 3; i++)
      unknown.push((await onboard(limited, 'nobody@nowhere.test', 'Fresh-operator-2026', `198.51.100.${30 + i}`)).statusCode);
    expect(unknown).toEqual([201, 201, 429]);
    // admin@demo.test still logs in to the demo organization.
    const admin = await login(limited, { email: 'admin@demo.test', password: DEMO_PASSWORD });
    expect(admin.json().user.id).toBe(limited.demo.users.admin);
  });
});

describe('X-Forwarded-For is not trusted by default', () => {
  it('a spoofed X-Forwarded-For does not change the client address of the per-address limit', async () => {
    const codes: number[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await login(limited, { email: `guess${i}@spoof.test`, password: 'wrong-password-1' }, '203.0.113.99', {
        'x-forwarded-for': `10.9.8.${i}`,
      });
      codes.push(res.statusCode);
    }
    expect(codes).toEqual([401, 401, 401, 429, 429]);
  });

  it('with TRUST_PROXY set, the address the proxy reports is the client address', async () => {
    const spread: number[] = [];
    for (let i = 0; i < 5; i++) {
      spread.push(
        (
          await login(proxied, { email: `guess${i}@proxy.test`, password: 'wrong-password-1' }, '127.0.0.1', {
            'x-forwarded-for': `10.9.7.${i}`,
          })
        ).statusCode,
      );
    }
    expect(spread).toEqual([401, 401, 401, 401, 401]);
    const same: number[] = [];
    for (let i = 0; i < 4; i++) {
      same.push(
        (
          await login(proxied, { email: `again${i}@proxy.test`, password: 'wrong-password-1' }, '127.0.0.1', {
            'x-forwarded-for': '10.9.7.200',
          })
        ).statusCode,
      );
    }
    expect(same).toEqual([401, 401, 401, 429]);
  });

  it('TRUST_PROXY takes a hop count or a list of addresses and CIDRs, and refuses anything else', () => {
    expect(parseTrustProxy(undefined)).toBe(false);
    expect(parseTrustProxy('')).toBe(false);
    expect(parseTrustProxy('false')).toBe(false);
    expect(parseTrustProxy('2')).toBe(2);
    expect(parseTrustProxy('10.0.0.0/8, 192.168.1.7,fd00::/8, loopback')).toEqual(['10.0.0.0/8', '192.168.1.7', 'fd00::/8', 'loopback']);
    for (const bad of ['true', 'banana', '10.0.0.0/33', '300.1.1.1']) expect(() => parseTrustProxy(bad)).toThrow(/TRUST_PROXY/);
    expect(loadConfig({ TRUST_PROXY: '1' }).trustProxy).toBe(1);
    expect(loadConfig({}).trustProxy).toBe(false);
  });
});

describe('wrong passwords throttle the guesser, they never lock the owner out', () => {
  const attacker = '203.0.113.7';

  it('per account and address: 5 free attempts, then a doubling back-off answered 429 LOGIN_THROTTLED with Retry-After', async () => {
    const email = 'driver@demo.test';
    const codes: number[] = [];
    for (let i = 0; i < 5; i++) codes.push((await login(t, { email, password: 'wrong-password-1' }, attacker)).statusCode);
    expect(codes).toEqual([401, 401, 401, 401, 401]);
    const held = await login(t, { email, password: DEMO_PASSWORD }, attacker); // not even the right password is checked while held back
    expect(held.statusCode).toBe(429);
    expect(held.headers['content-type']).toContain('application/problem+json');
    expect(held.json().code).toBe('LOGIN_THROTTLED');
    expect(held.headers['retry-after']).toBe('1');
    const waits: number[] = [];
    for (let i = 0; i < 6; i++) {
      await expireBlock(t, pairKey(email, attacker));
      expect((await login(t, { email, password: 'wrong-password-1' }, attacker)).statusCode).toBe(401);
      waits.push(Number((await login(t, { email, password: 'wrong-password-1' }, attacker)).headers['retry-after']));
    }
    expect(waits).toEqual([2, 4, 8, 16, 32, 64]);
    // Eleven failures later the owner, from his own address, logs in at once.
    const owner = await login(t, { email, password: DEMO_PASSWORD }, '198.51.100.50');
    expect(owner.statusCode).toBe(200);
    expect(owner.json().user.id).toBe(t.demo.users.driver);
  });

  it('the same answers for a login that does not exist', async () => {
    const codes: number[] = [];
    for (let i = 0; i < 6; i++)
      codes.push((await login(t, { email: 'ghost@nowhere.test', password: 'wrong-password-1' }, attacker)).statusCode);
    expect(codes).toEqual([401, 401, 401, 401, 401, 429]);
  });

  it('the counters are shared by every instance (kept in the database)', async () => {
    const second = await buildApp({ config: t.config, db: t.db });
    await second.ready();
    try {
      const email = 'shared-counter@nowhere.test';
      for (let i = 0; i < 5; i++) {
        const app = i % 2 ? second : t.app;
        expect(
          (
            await app.inject({
              method: 'POST',
              url: '/api/v1/auth/login',
              payload: { email, password: 'wrong-password-1' },
              remoteAddress: attacker,
            } as InjectOptions)
          ).statusCode,
        ).toBe(401);
      }
      const res = await second.inject({
        method: 'POST',
        url: '/api/v1/auth/login',
        payload: { email, password: 'wrong-password-1' },
        remoteAddress: attacker,
      } as InjectOptions);
      expect(res.statusCode).toBe(429);
    } finally {
      await second.close();
    }
  });

  it('per account: after 20 failures from many addresses, unknown addresses share one attempt per 30 s; known addresses still get in', async () => {
    const email = 'merchant@demo.test';
    const home = '198.51.100.60';
    expect((await login(t, { email, password: DEMO_PASSWORD }, home)).statusCode).toBe(200); // a known-good address
    for (let i = 0; i < 20; i++) {
      expect((await login(t, { email, password: `wrong-password-${i}` }, `203.0.113.${100 + i}`)).statusCode).toBe(401);
    }
    expect((await login(t, { email, password: 'wrong-password-x' }, '203.0.113.200')).statusCode).toBe(401); // takes the shared slot
    const slowed = await login(t, { email, password: 'wrong-password-y' }, '203.0.113.201');
    expect(slowed.statusCode).toBe(429);
    expect(slowed.json().code).toBe('LOGIN_THROTTLED');
    const wait = Number(slowed.headers['retry-after']);
    expect(wait).toBeGreaterThan(0);
    expect(wait).toBeLessThanOrEqual(30);
    // The owner at home is not held back by the ceiling.
    const owner = await login(t, { email, password: DEMO_PASSWORD }, home);
    expect(owner.statusCode).toBe(200);
    expect(owner.json().user.id).toBe(t.demo.users.merchant);
  });
});

describe('refresh grace, token claims, common passwords, logged query strings', () => {
  it('two concurrent refreshes with the same token both get the same new pair; after the grace window reuse revokes', async () => {
    const s = await t.login('customer@demo.test');
    const refresh = () => t.req(null, { method: 'POST', url: '/auth/refresh', payload: { refresh_token: s.refresh } });
    const [a, b] = await Promise.all([refresh(), refresh()]);
    expect([a.statusCode, b.statusCode]).toEqual([200, 200]);
    expect(b.json().refresh_token).toBe(a.json().refresh_token);
    expect(b.json().access_token).toBe(a.json().access_token);
    const me = await t.req({ ...s, token: a.json().access_token }, { method: 'GET', url: '/me' });
    expect(me.statusCode).toBe(200);
    // The session lives on: the new refresh token rotates normally.
    const next = await t.req(null, { method: 'POST', url: '/auth/refresh', payload: { refresh_token: a.json().refresh_token } });
    expect(next.statusCode).toBe(200);
    // The first token again after its successor was used: theft, the session is revoked.
    const late = await refresh();
    expect(late.statusCode).toBe(401);
    expect(late.json().code).toBe('REFRESH_TOKEN_REUSED');
    expect((await t.req({ ...s, token: next.json().access_token }, { method: 'GET', url: '/me' })).statusCode).toBe(401);
  });

  it('a token presented again after the grace window revokes the family', async () => {
    const s = await t.login('customer@demo.test');
    const first = await t.req(null, { method: 'POST', url: '/auth/refresh', payload: { refresh_token: s.refresh } });
    expect(first.statusCode).toBe(200);
    await t.db.withSystem((tx) =>
      tx.query('UPDATE refresh_token SET used_at = used_at - make_interval(secs => $1) WHERE used_at IS NOT NULL', [
        t.config.refreshReuseGraceSeconds + 1,
      ]),
    );
    const again = await t.req(null, { method: 'POST', url: '/auth/refresh', payload: { refresh_token: s.refresh } });
    expect(again.statusCode).toBe(401);
    expect(again.json().code).toBe('REFRESH_TOKEN_REUSED');
  });

  it('access tokens carry iat and exp; a well-signed token without them is refused', async () => {
    const s = await t.login('admin@demo.test');
    const claims = decodeJwt(s.token);
    expect(typeof claims.iat).toBe('number');
    expect(claims.exp! - claims.iat!).toBe(t.config.accessTokenTtlSeconds);
    const base = () =>
      new SignJWT({ org: claims.org, role: claims.role, kind: claims.kind, sid: claims.sid, typ: 'access' })
        .setProtectedHeader({ alg: 'HS256' })
        .setSubject(claims.sub!)
        .setIssuer('delivery-api')
        .setAudience('delivery-api');
    const withBoth = await base().setIssuedAt().setExpirationTime('10m').sign(t.config.keys.accessToken);
    const noExp = await base().setIssuedAt().sign(t.config.keys.accessToken);
    const noIat = await base().setExpirationTime('10m').sign(t.config.keys.accessToken);
    expect((await t.req(null, { method: 'GET', url: '/me', headers: { authorization: `Bearer ${withBoth}` } })).statusCode).toBe(200);
    for (const token of [noExp, noIat]) {
      const res = await t.req(null, { method: 'GET', url: '/me', headers: { authorization: `Bearer ${token}` } });
      expect(res.statusCode).toBe(401);
      expect(res.json().code).toBe('INVALID_TOKEN');
    }
  });

  it('common passwords are refused wherever a password is set, and nothing is written', async () => {
    const admin = await t.as('admin');
    const users = async () => t.db.withSystem(async (tx) => (await tx.query('SELECT count(*)::int AS n FROM users')).rows[0].n);
    const before = await users();
    for (const password of ['qwerty1234', 'password12', '1q2w3e4r5t', 'Basketball!']) {
      const created = await t.req(admin, {
        method: 'POST',
        url: '/app-users',
        payload: { email: `weak-${before}@demo.test`, password, display_name: 'W', role: 'delivery' },
      });
      expect(created.statusCode).toBe(400);
      expect(created.json().code).toBe('WEAK_PASSWORD');
      const onboarded = await onboard(t, 'weak-owner@demo.test', password, '192.0.2.40');
      expect(onboarded.statusCode).toBe(400);
      expect(onboarded.json().code).toBe('WEAK_PASSWORD');
    }
    expect(await users()).toBe(before);
    const ok = await t.req(admin, {
      method: 'POST',
      url: '/app-users',
      payload: { email: 'strong@demo.test', password: 'correct horse battery', display_name: 'S', role: 'delivery' },
    });
    expect(ok.statusCode).toBe(201);
  });

  it('query strings (stream tokens, upload tokens) are redacted in the request log', async () => {
    const lines: string[] = [];
    const logged = await buildApp({
      config: { ...t.config, logLevel: 'info' },
      db: t.db,
      logStream: { write: (l: string) => void lines.push(l) },
    });
    await logged.ready();
    try {
      await logged.inject({ method: 'GET', url: '/api/v1/realtime/me/stream?stream_token=s3cret-stream-token&last_event_id=5' });
      await logged.inject({ method: 'GET', url: '/api/v1/health?upload_token=s3cret-upload-token' });
    } finally {
      await logged.close();
    }
    const text = lines.join('');
    expect(text).toContain('/api/v1/realtime/me/stream?stream_token=[redacted]&last_event_id=[redacted]');
    expect(text).not.toContain('s3cret');
  });
});

describe('safe defaults', () => {
  it('the demo organization is seeded by default only on the embedded database; DATABASE_URL needs JWT_SECRET', () => {
    const secret = 'x'.repeat(32);
    expect(loadConfig({}).seedDemo).toBe(true);
    expect(loadConfig({ DATABASE_URL: 'postgres://db/app', JWT_SECRET: secret }).seedDemo).toBe(false);
    expect(loadConfig({ DATABASE_URL: 'postgres://db/app', JWT_SECRET: secret, SEED_DEMO: 'true' }).seedDemo).toBe(true);
    expect(loadConfig({ SEED_DEMO: 'false' }).seedDemo).toBe(false);
    expect(() => loadConfig({ DATABASE_URL: 'postgres://db/app' })).toThrow(/JWT_SECRET/);
    expect(() => loadConfig({ DATABASE_URL: 'postgres://db/app', JWT_SECRET: 'short-secret' })).toThrow(/JWT_SECRET/);
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(/JWT_SECRET/);
  });

  it('three instances migrating and seeding one fresh database at once: all succeed, one demo organization', async () => {
    const fresh = await freshDatabase();
    const extra = fresh.url ? [createPostgresDatabase(fresh.url), createPostgresDatabase(fresh.url)] : [];
    const dbs = [fresh.db, ...extra];
    const apps: Awaited<ReturnType<typeof buildApp>>[] = [];
    try {
      // On PostgreSQL three pools (instances); on PGlite one database seeded three times at once.
      const instances = fresh.url ? dbs : [fresh.db, fresh.db, fresh.db];
      await Promise.all(instances.map((db) => migrate(db)));
      const built = fresh.url
        ? await Promise.all(dbs.map((db) => buildApp({ config: t.config, db })))
        : [await buildApp({ config: t.config, db: fresh.db })];
      apps.push(...built);
      await Promise.all(apps.map((a) => a.ready()));
      const results = await Promise.all([0, 1, 2].map((i) => seedDemo(apps[i % apps.length])));
      expect(results.filter(Boolean)).toHaveLength(1);
      const orgs = await fresh.db.withSystem(async (tx) =>
        (await tx.query('SELECT slug FROM organization ORDER BY slug')).rows.map((r) => r.slug),
      );
      expect(orgs).toEqual(['demo', 'platform']);
    } finally {
      for (const a of apps) await a.close();
      for (const db of extra) await db.close();
      await fresh.db.close();
      await fresh.drop();
    }
  }, 120_000);
});
