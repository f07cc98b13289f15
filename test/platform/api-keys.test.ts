import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type Session, type TestApp } from '../helpers.js';
import { newTrip, pt } from '../logistics/fixtures.js';

let t: TestApp;
let admin: Session;
let merchant: Session;
let other: { organizationId: string; logins: Record<string, string> };

beforeAll(async () => {
  t = await createTestApp({ raw: { API_KEY_RATE_LIMIT_PER_MINUTE: '6' } });
  admin = await t.as('admin');
  merchant = await t.as('merchant');
  other = await t.newOrganization('Key Org B');
});
afterAll(async () => t?.close());

/** A request with an API key instead of a login. */
const withKey = (key: string, opts: { method?: string; url: string; payload?: unknown }) =>
  t.app.inject({
    method: (opts.method ?? 'GET') as 'GET',
    url: `/api/v1${opts.url}`,
    payload: opts.payload as object,
    headers: { authorization: `Bearer ${key}` },
  });

async function createKey(s: Session, scopes: string[], name = 'shop server') {
  const res = await t.req(s, { method: 'POST', url: '/api-keys', payload: { name, scopes } });
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as { id: string; key: string; scopes: string[]; key_hint: string; organization_id: string };
}

const keyRows = (organizationId: string) =>
  t.db.withSystem(
    async (tx) =>
      (await tx.query<{ n: number }>('SELECT count(*)::int AS n FROM api_key WHERE organization_id = $1', [organizationId])).rows[0].n,
  );

const auditOf = (id: string) =>
  t.db.withSystem(
    async (tx) =>
      (
        await tx.query<{ action: string; before: unknown; after: unknown }>(
          'SELECT action, before, after FROM audit_log WHERE entity_id = $1 ORDER BY id',
          [id],
        )
      ).rows,
  );

describe('API keys', () => {
  it('is shown once, stored hashed, listed without its secret, and audited without it', async () => {
    const k = await createKey(admin, ['trips:read']);
    expect(k.key).toMatch(/^dlk_[0-9a-f-]{36}_[A-Za-z0-9_-]{43}$/);
    expect(k.key.startsWith(`dlk_${k.id}_`)).toBe(true);
    const secret = k.key.slice(`dlk_${k.id}_`.length);
    const stored = await t.db.withSystem(
      async (tx) => (await tx.query<Record<string, unknown>>('SELECT * FROM api_key WHERE id = $1', [k.id])).rows[0],
    );
    expect(JSON.stringify(stored)).not.toContain(secret);
    const list = await t.req(admin, { method: 'GET', url: '/api-keys' });
    expect(list.statusCode).toBe(200);
    expect(list.body).not.toContain(secret);
    const row = list.json().data.find((x: { id: string }) => x.id === k.id);
    expect(row).toMatchObject({
      name: 'shop server',
      scopes: ['trips:read'],
      last_used_at: null,
      revoked_at: null,
      organization_id: t.demo.organizationId,
    });
    expect('key' in row).toBe(false);
    const audit = await auditOf(k.id);
    expect(audit.map((a) => a.action)).toEqual(['api_key.created']);
    expect(JSON.stringify(audit)).not.toContain(secret);
  });

  it('acts as its owner with exactly its scope: a route outside it or not open to keys is 403 API_KEY_SCOPE', async () => {
    const trip = await newTrip(t, admin);
    const k = await createKey(admin, ['trips:read']);
    const one = await withKey(k.key, { url: `/trips/${trip.id}` });
    expect(one.statusCode, one.body).toBe(200);
    expect(one.json().id).toBe(trip.id);
    expect((await withKey(k.key, { url: '/trips' })).statusCode).toBe(200);
    // trips:write is not in the key
    const write = await withKey(k.key, {
      method: 'POST',
      url: '/trips',
      payload: { pickup_location: pt(-68.13, -16.5), pickup_address: 'a', dropoff_location: pt(-68.12, -16.5), dropoff_address: 'b' },
    });
    expect(write.statusCode).toBe(403);
    expect(write.headers['content-type']).toContain('application/problem+json');
    expect(write.json().code).toBe('API_KEY_SCOPE');
    // a route that declares no key scope (the audit log, the keys themselves)
    for (const url of ['/audit', '/api-keys', '/me']) {
      const r = await withKey(k.key, { url });
      expect(r.statusCode, url).toBe(403);
      expect(r.json().code).toBe('API_KEY_SCOPE');
    }
    // last use is recorded
    const list = (await t.req(admin, { method: 'GET', url: '/api-keys' })).json().data;
    expect(list.find((x: { id: string }) => x.id === k.id).last_used_at).not.toBeNull();
  });

  it('writes with trips:write, and a merchant key sees only what the merchant sees', async () => {
    const k = await createKey(admin, ['trips:write']);
    const before = (await t.req(admin, { method: 'GET', url: '/trips?limit=200' })).json().data.length;
    const made = await withKey(k.key, {
      method: 'POST',
      url: '/trips',
      payload: { pickup_location: pt(-68.13, -16.5), pickup_address: 'a', dropoff_location: pt(-68.12, -16.5), dropoff_address: 'b' },
    });
    expect(made.statusCode, made.body).toBe(201);
    expect((await t.req(admin, { method: 'GET', url: '/trips?limit=200' })).json().data.length).toBe(before + 1);

    const adminTrip = await newTrip(t, admin);
    const mk = await createKey(merchant, ['trips:read', 'orders:read']);
    // the merchant may not read an administrator's trip that is not his: neither may his key
    const asMerchant = await t.req(merchant, { method: 'GET', url: `/trips/${adminTrip.id}` });
    const asKey = await withKey(mk.key, { url: `/trips/${adminTrip.id}` });
    expect(asKey.statusCode).toBe(asMerchant.statusCode);
    expect((await withKey(mk.key, { url: '/merchant/orders' })).statusCode).toBe(200);
  });

  it('refuses a scope the owner may not grant, and bad input, writing nothing', async () => {
    const n = await keyRows(t.demo.organizationId);
    const cases: [Session, unknown, number, string | undefined][] = [
      [merchant, { name: 'x', scopes: ['trips:read', 'nope:write'] }, 400, undefined],
      [admin, { name: 'x', scopes: ['express:write'] }, 422, 'API_KEY_SCOPE_NOT_ALLOWED'],
      [admin, { name: 'x', scopes: [] }, 400, undefined],
      [admin, { name: '  ', scopes: ['trips:read'] }, 400, undefined],
      [admin, { name: 'x', scopes: ['trips:read'], owner_user_id: merchant.userId }, 400, undefined],
    ];
    for (const [s, payload, status, code] of cases) {
      const r = await t.req(s, { method: 'POST', url: '/api-keys', payload: payload as object });
      expect(r.statusCode, JSON.stringify(payload)).toBe(status);
      expect(r.headers['content-type']).toContain('application/problem+json');
      if (code) expect(r.json().code).toBe(code);
    }
    // drivers and customers may not hold keys
    expect(
      (await t.req(await t.as('driver'), { method: 'POST', url: '/api-keys', payload: { name: 'x', scopes: ['trips:read'] } })).statusCode,
    ).toBe(403);
    expect((await t.req(await t.as('customer'), { method: 'GET', url: '/api-keys' })).statusCode).toBe(403);
    expect(await keyRows(t.demo.organizationId)).toBe(n);
  });

  it("a revoked, unknown or forged key is 401; revocation is audited; another owner's key is 404 to a merchant", async () => {
    const k = await createKey(merchant, ['trips:read']);
    expect((await withKey(k.key, { url: '/trips' })).statusCode).toBe(200);
    // another merchant user cannot see or revoke it; an administrator can
    expect((await t.req(admin, { method: 'GET', url: '/api-keys' })).json().data.some((x: { id: string }) => x.id === k.id)).toBe(true);
    const otherAdmin = await t.login(other.logins.admin);
    expect((await t.req(otherAdmin, { method: 'DELETE', url: `/api-keys/${k.id}` })).statusCode).toBe(404);
    const del = await t.req(merchant, { method: 'DELETE', url: `/api-keys/${k.id}` });
    expect(del.statusCode).toBe(204);
    const revoked = await withKey(k.key, { url: '/trips' });
    expect(revoked.statusCode).toBe(401);
    expect(revoked.json().code).toBe('INVALID_API_KEY');
    expect((await auditOf(k.id)).map((a) => a.action)).toEqual(['api_key.created', 'api_key.revoked']);
    const forged = k.key.slice(0, -4) + (k.key.endsWith('AAAA') ? 'BBBB' : 'AAAA');
    for (const bad of [forged, 'dlk_nothing', `dlk_${'0'.repeat(8)}-0000-7000-8000-${'0'.repeat(12)}_${'A'.repeat(43)}`]) {
      const r = await withKey(bad, { url: '/trips' });
      expect(r.statusCode, bad).toBe(401);
      expect(r.json().code).toBe('INVALID_API_KEY');
    }
    expect((await t.req(admin, { method: 'DELETE', url: '/api-keys/00000000-0000-7000-8000-000000000000' })).statusCode).toBe(404);
  });

  it('a key of another organization reaches only that organization: our trip is 404 to it', async () => {
    const ours = await newTrip(t, admin);
    const otherAdmin = await t.login(other.logins.admin);
    const k = await createKey(otherAdmin, ['trips:read']);
    expect(k.organization_id).toBe(other.organizationId);
    expect((await withKey(k.key, { url: `/trips/${ours.id}` })).statusCode).toBe(404);
    expect((await withKey(k.key, { url: '/trips' })).json().data.some((x: { id: string }) => x.id === ours.id)).toBe(false);
    // and it cannot be revoked from here
    expect((await t.req(admin, { method: 'DELETE', url: `/api-keys/${k.id}` })).statusCode).toBe(404);
  });

  it("never does more than its owner: a deactivated owner's key is refused", async () => {
    const email = `keyowner-${Date.now()}@demo.test`;
    const made = await t.req(admin, {
      method: 'POST',
      url: '/app-users',
      payload: { email, password: 'Kx9!long-enough-pass', display_name: 'Key owner', role: 'administrator' },
    });
    expect(made.statusCode, made.body).toBe(201);
    const owner = await t.login(email, 'Kx9!long-enough-pass');
    const k = await createKey(owner, ['trips:read']);
    expect((await withKey(k.key, { url: '/trips' })).statusCode).toBe(200);
    expect((await t.req(admin, { method: 'POST', url: `/app-users/${made.json().id}/deactivate`, payload: {} })).statusCode).toBe(200);
    const r = await withKey(k.key, { url: '/trips' });
    expect(r.statusCode).toBe(401);
    expect(r.json().code).toBe('INVALID_API_KEY');
  });

  it('is rate limited per key, not per owner', async () => {
    const a = await createKey(admin, ['trips:read']);
    const b = await createKey(admin, ['trips:read']);
    let limited: Awaited<ReturnType<typeof withKey>> | null = null;
    for (let i = 0; i < 20 && !limited; i++) {
      const r = await withKey(a.key, { url: '/trips?limit=1' });
      if (r.statusCode === 429) limited = r;
      else expect(r.statusCode).toBe(200);
    }
    expect(limited?.json().code).toBe('RATE_LIMITED');
    expect((await withKey(b.key, { url: '/trips?limit=1' })).statusCode).toBe(200);
    expect((await t.req(admin, { method: 'GET', url: '/trips?limit=1' })).statusCode).toBe(200);
  });

  it('is in the OpenAPI document as a second security scheme on the operations keys may call', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/docs/json' })).json();
    expect(doc.components.securitySchemes.apiKey).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.paths['/api/v1/trips/{id}'].get.security).toEqual([{ bearerAuth: [] }, { apiKey: ['trips:read'] }]);
    expect(doc.paths['/api/v1/trips/{id}'].get['x-api-key-scope']).toBe('trips:read');
    expect(doc.paths['/api/v1/audit'].get.security).toEqual([{ bearerAuth: [] }]);
    expect(doc.info.description).toContain('API_KEY_SCOPE');
  });
});
