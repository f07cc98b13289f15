import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type Session, type TestApp } from '../helpers.js';
import { namedSchemas } from '../../src/modules/components.js';
import { newTrip } from '../logistics/fixtures.js';

let t: TestApp;
let admin: Session, merchant: Session, customer: Session, driver: Session;
beforeAll(async () => {
  t = await createTestApp();
  [admin, merchant, customer, driver] = await Promise.all([t.as('admin'), t.as('merchant'), t.as('customer'), t.as('driver')]);
});
afterAll(() => t?.close());

const GEOMETRY = ['Position', 'GeoPoint', 'GeoArea'];

describe('organization_id on every resource', () => {
  it('every resource component of the document has organization_id', async () => {
    const doc = (await t.req(null, { method: 'GET', url: '/docs/json' })).json();
    const missing = Object.keys(namedSchemas)
      .filter((n) => !GEOMETRY.includes(n))
      .filter((n) => !doc.components.schemas[n]?.properties?.organization_id);
    expect(missing).toEqual([]);
  });

  it('every operation returning a record with an id documents organization_id, but for the named exceptions', async () => {
    const doc = (await t.req(null, { method: 'GET', url: '/api/v1/openapi.json' })).json();
    const resolve = (s: any): any => (s?.$ref ? doc.components.schemas[s.$ref.split('/').pop()] : s);
    const missing: string[] = [];
    for (const [path, item] of Object.entries<any>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(item)) {
        const ok = op?.responses?.['200'] ?? op?.responses?.['201'];
        let s = resolve(ok?.content?.['application/json']?.schema);
        if (s?.properties?.data?.items) s = resolve(s.properties.data.items);
        if (s?.properties?.id && !s.properties.organization_id) missing.push(`${method.toUpperCase()} ${path}`);
      }
    }
    // The organization itself (its id is the organization), reserved 501 payment intents, and signed partner webhooks
    // (public; the acknowledged event names its organization in the payload).
    expect(missing.sort()).toEqual(
      [
        'PATCH /api/v1/organizations/{id}/branding',
        'POST /api/v1/customer/checkout/payment-intent',
        'GET /api/v1/customer/checkout/payment-intents/{id}',
        'POST /api/v1/integrations/partner-pay/webhook',
        'POST /api/v1/integrations/partner-chef-pay/webhook',
      ].sort(),
    );
  });

  it("resources in responses carry the caller's organization: trips, orders, drivers, merchants, branches, catalog items, users, territories, addresses...", async () => {
    const org = t.demo.organizationId;
    const trip = await newTrip(t, admin);
    expect(trip.organization_id).toBe(org);
    const lists: [Session, string][] = [
      [admin, '/trips'],
      [admin, '/drivers'],
      [admin, '/merchants'],
      [admin, '/app-users'],
      [admin, '/territories'],
      [admin, '/admin/territory-tariffs'],
      [merchant, '/merchant/branches'],
      [merchant, '/merchant/catalog'],
      [merchant, '/merchant/orders'],
      [customer, '/customer/orders'],
      [customer, '/customer/addresses'],
      [driver, '/driver/trips'],
      [driver, '/notifications'],
    ];
    const wrong: string[] = [];
    let seen = 0;
    for (const [s, url] of lists) {
      const res = await t.req(s, { method: 'GET', url });
      expect(res.statusCode, `${url}: ${res.body.slice(0, 200)}`).toBe(200);
      const data = res.json().data as Record<string, unknown>[];
      expect(Array.isArray(data), url).toBe(true);
      for (const row of data) {
        seen++;
        if (row.organization_id !== org) wrong.push(`${url}: ${JSON.stringify(row).slice(0, 120)}`);
      }
    }
    expect(wrong).toEqual([]);
    expect(seen).toBeGreaterThan(10);
    const one = await t.req(admin, { method: 'GET', url: `/trips/${trip.id}` });
    expect(one.json().organization_id).toBe(org);
    const driverMe = await t.req(driver, { method: 'GET', url: '/driver/me' });
    expect(driverMe.json().organization_id).toBe(org);
  });

  it('another organization sees its own id, never the first one', async () => {
    const other = await t.newOrganization('Org Id Check');
    const s = await t.login(other.logins.admin);
    const users = (await t.req(s, { method: 'GET', url: '/app-users' })).json().data as { organization_id: string }[];
    expect(users.length).toBeGreaterThan(0);
    expect(new Set(users.map((u) => u.organization_id))).toEqual(new Set([other.organizationId]));
  });
});
