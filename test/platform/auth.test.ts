import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { SESSION_RECHECK_MS } from '../../src/modules/identity/service/accounts.js';
import { SignJWT } from 'jose';
import { createTestApp, type TestApp } from '../helpers.js';
import type { Database, TenantContext, Tx } from '../../src/platform/db/index.js';
import { DEMO_PASSWORD } from '../../src/seed.js';
import { loadConfig } from '../../src/config.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t?.close());

describe('login', () => {
  it('accepts email or phone with the password and returns tokens', async () => {
    const res = await t.req(null, { method: 'POST', url: '/auth/login', payload: { email: 'ADMIN@demo.test', password: DEMO_PASSWORD } });
    expect(res.statusCode).toBe(200);
    const b = res.json();
    expect(b).toMatchObject({
      token_type: 'Bearer',
      expires_in: 900,
      user: { email: 'admin@demo.test', role: 'administrator', kind: 'administrator' },
    });
    expect(b.refresh_token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const stored = await t.db.withSystem(async (tx) =>
      (await tx.query('SELECT token_hash FROM refresh_token')).rows.map((r) => r.token_hash),
    );
    expect(stored).not.toContain(b.refresh_token); // only hashes are stored
  });

  it('refuses a wrong password and an unknown account alike', async () => {
    const a = await t.req(null, {
      method: 'POST',
      url: '/auth/login',
      payload: { email: 'admin@demo.test', password: 'wrong-password-1' },
    });
    const b = await t.req(null, {
      method: 'POST',
      url: '/auth/login',
      payload: { email: 'nobody@demo.test', password: 'wrong-password-1' },
    });
    expect([a.statusCode, b.statusCode]).toEqual([401, 401]);
    expect(a.json().code).toBe('INVALID_CREDENTIALS');
    expect(b.json().code).toBe('INVALID_CREDENTIALS');
  });

  it('stores passwords as argon2id', async () => {
    const h = await t.db.withSystem(
      async (tx) => (await tx.query("SELECT password_hash FROM users WHERE email = 'admin@demo.test'")).rows[0].password_hash,
    );
    expect(h).toMatch(/^\$argon2id\$/);
    // The suite's cheap parameters (test/helpers.ts) are honoured; production defaults are OWASP's 19 MiB, 2 passes.
    expect(h).toMatch(/^\$argon2id\$v=19\$m=1024,t=1,p=1\$/);
    const defaults = loadConfig({ NODE_ENV: 'production', JWT_SECRET: 'x'.repeat(32) }).settings;
    expect([defaults.PASSWORD_HASH_MEMORY_KIB, defaults.PASSWORD_HASH_ITERATIONS]).toEqual([19456, 2]);
  });
});

describe('tokens', () => {
  it('refresh rotates; a reused refresh token revokes the whole family', async () => {
    const s = await t.login('customer@demo.test');
    const r1 = await t.req(null, { method: 'POST', url: '/auth/refresh', payload: { refresh_token: s.refresh } });
    expect(r1.statusCode).toBe(200);
    const rotated = r1.json();
    expect(rotated.refresh_token).not.toBe(s.refresh);
    // The old one again after the grace window: theft detected.
    await t.db.withSystem((tx) => tx.query("UPDATE refresh_token SET used_at = used_at - interval '1 minute' WHERE used_at IS NOT NULL"));
    const reuse = await t.req(null, { method: 'POST', url: '/auth/refresh', payload: { refresh_token: s.refresh } });
    expect(reuse.statusCode).toBe(401);
    expect(reuse.json().code).toBe('REFRESH_TOKEN_REUSED');
    // The family is dead: the rotated refresh token and the access tokens of the session stop working.
    const r2 = await t.req(null, { method: 'POST', url: '/auth/refresh', payload: { refresh_token: rotated.refresh_token } });
    expect(r2.statusCode).toBe(401);
    const me = await t.req({ ...s, token: rotated.access_token }, { method: 'GET', url: '/me' });
    expect(me.statusCode).toBe(401);
    const revoked = await t.db.withSystem(
      async (tx) => (await tx.query('SELECT revoked_reason FROM auth_session WHERE revoked_at IS NOT NULL')).rows,
    );
    expect(revoked.map((r) => r.revoked_reason)).toContain('refresh_token_reuse');
  });

  it('logout ends the session; the access token is refused afterwards', async () => {
    const s = await t.login('merchant@demo.test');
    expect((await t.req(s, { method: 'GET', url: '/me' })).statusCode).toBe(200);
    expect((await t.req(s, { method: 'POST', url: '/auth/logout' })).statusCode).toBe(204);
    const res = await t.req(s, { method: 'GET', url: '/me' });
    expect(res.statusCode).toBe(401);
    expect(res.json().code).toBe('SESSION_REVOKED');
    expect((await t.req(null, { method: 'POST', url: '/auth/refresh', payload: { refresh_token: s.refresh } })).statusCode).toBe(401);
  });

  it('re-reads a live session once a minute, not on every request of a driver posting GPS every 30 s', async () => {
    const s = await t.login('driver@demo.test');
    const sid = JSON.parse(Buffer.from(s.token.split('.')[1]!, 'base64url').toString()).sid as string;
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(Date.now());
      expect((await t.req(s, { method: 'GET', url: '/me' })).statusCode).toBe(200); // read once, taken as live
      // Revoked behind the service's back (no announcement): only the re-read can see it.
      await t.db.withSystem((tx) => tx.query('UPDATE auth_session SET revoked_at = now() WHERE id = $1', [sid]));
      vi.setSystemTime(Date.now() + 30_000);
      expect((await t.req(s, { method: 'GET', url: '/me' })).statusCode).toBe(200);
      vi.setSystemTime(Date.now() + SESSION_RECHECK_MS - 30_000 + 1);
      const res = await t.req(s, { method: 'GET', url: '/me' });
      expect(res.statusCode).toBe(401);
      expect(res.json().code).toBe('SESSION_REVOKED');
    } finally {
      vi.useRealTimers();
    }
  });

  it('re-reads a session in one statement of its own on the primary, not in a transaction', async () => {
    const reads: { how: 'read' | 'transaction'; userId: string | null; reader?: string }[] = [];
    const noting =
      (how: 'read' | 'transaction', ctx: TenantContext) =>
      (tx: Tx): Tx => ({
        kind: tx.kind,
        orm: tx.orm,
        exec: (text) => tx.exec(text),
        queryAndCommit: (text, params, then) => tx.queryAndCommit(text, params, then),
        queue: (text, params) => tx.queue(text, params),
        query(text, params) {
          if (/FROM auth_session s JOIN users u/.test(typeof text === 'string' ? text : text.text))
            reads.push({ how, userId: ctx.userId, ...(ctx.reader ? { reader: ctx.reader } : {}) });
          return tx.query(text, params);
        },
      });
    const notingSessionReads = (db: Database): Database => ({
      ...db,
      withTenant: (ctx, fn) => db.withTenant(ctx, (tx) => fn(noting('transaction', ctx)(tx))),
      readTenant: (ctx, fn) => db.readTenant(ctx, (tx) => fn(noting('read', ctx)(tx))),
    });
    const app = await createTestApp({}, { wrapDb: notingSessionReads });
    try {
      const s = await app.login('driver@demo.test');
      expect((await app.req(s, { method: 'GET', url: '/me' })).statusCode).toBe(200);
      // No user and no reader: a read that stays on the primary (a replica could still show a revoked session live).
      expect(reads).toEqual([{ how: 'read', userId: null }]);
    } finally {
      await app.close();
    }
  });

  it('mobile revoke kills the given refresh token', async () => {
    const s = await t.login('driver@demo.test');
    const other = await t.login('driver@demo.test');
    expect((await t.req(other, { method: 'POST', url: '/auth/mobile/revoke', payload: { refresh_token: s.refresh } })).statusCode).toBe(
      204,
    );
    expect((await t.req(null, { method: 'POST', url: '/auth/refresh', payload: { refresh_token: s.refresh } })).statusCode).toBe(401);
    expect((await t.req(other, { method: 'GET', url: '/me' })).statusCode).toBe(200);
    const stranger = await t.login('customer@demo.test');
    expect(
      (await t.req(stranger, { method: 'POST', url: '/auth/mobile/revoke', payload: { refresh_token: other.refresh } })).statusCode,
    ).toBe(404);
  });

  it('forged, expired and malformed tokens are 401', async () => {
    const forged = await new SignJWT({ org: t.demo.organizationId, role: 'administrator', kind: 'administrator', sid: 'x', typ: 'access' })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(t.demo.users.admin)
      .setIssuer('delivery-api')
      .setAudience('delivery-api')
      .setExpirationTime('10m')
      .sign(new TextEncoder().encode('another-secret-another-secret-12345'));
    const expired = await new SignJWT({ org: t.demo.organizationId, role: 'administrator', kind: 'administrator', sid: 'x', typ: 'access' })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(t.demo.users.admin)
      .setIssuer('delivery-api')
      .setAudience('delivery-api')
      .setExpirationTime(Math.floor(Date.now() / 1000) - 60)
      .sign(t.config.keys.accessToken);
    for (const token of [forged, expired, 'not-a-jwt']) {
      const res = await t.req(null, { method: 'GET', url: '/me', headers: { authorization: `Bearer ${token}` } });
      expect(res.statusCode).toBe(401);
      expect(res.json().code).toBe('INVALID_TOKEN');
    }
  });

  it('/me answers the caller with organization', async () => {
    const s = await t.as('dispatch');
    const res = await t.req(s, { method: 'GET', url: '/me' });
    expect(res.json()).toMatchObject({
      email: 'dispatch@demo.test',
      kind: 'dispatch',
      organization: { id: t.demo.organizationId, name: 'Demo Logistics' },
    });
  });

  it('roles are enforced by the route declaration', async () => {
    const driver = await t.as('driver');
    const res = await t.req(driver, { method: 'GET', url: '/app-users' });
    expect(res.statusCode).toBe(403);
    expect(res.json().code).toBe('FORBIDDEN');
    const dispatch = await t.as('dispatch');
    expect((await t.req(dispatch, { method: 'GET', url: '/audit' })).statusCode).toBe(403);
  });
});
