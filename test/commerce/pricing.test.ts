import fc from 'fast-check';
import { Decimal } from 'decimal.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type Session, type TestApp } from '../helpers.js';
import { haversineMeters } from '../../src/platform/geo.js';
import { cart, newCustomer, newShop, ok, pt, rows } from './fixtures.js';

/** Pricing through HTTP: territory tariffs and preflight quotes (the pure rules: test/unit/pricing.test.ts). */
const D = (s: string) => new Decimal(s);

describe('territory tariffs (HTTP)', () => {
  let t: TestApp;
  let admin: Session;
  let territoryId: string;

  beforeAll(async () => {
    t = await createTestApp();
    admin = await t.as('admin');
    territoryId = (await rows(t, "SELECT id FROM territory WHERE name = 'La Paz Centro'"))[0].id;
  });
  afterAll(() => t?.close());

  it('prices a quote with the marketplace tariff of the branch territory; without one, the organization default', async () => {
    const shop = await newShop(t, ['10.00']);
    const c = await newCustomer(t);
    const list = ok(
      await t.req(admin, { method: 'GET', url: `/admin/territory-tariffs?territory_id=${territoryId}&service_mode=marketplace` }),
    );
    expect(list.data).toHaveLength(1); // the seed's
    const id = list.data[0].id;
    const up = ok(
      await t.req(admin, {
        method: 'PATCH',
        url: `/admin/territory-tariffs/${id}`,
        payload: { base_fee: '3.00', per_km_fee: '1.00', minimum_fee: '0.00', driver_share_type: 'fixed', driver_share_value: '2.50' },
      }),
    );
    expect(up).toMatchObject({ base_fee: '3.00', driver_share_type: 'fixed' });
    const q = ok(await t.req(c.session, { method: 'POST', url: '/customer/checkout/preflight', payload: cart(shop, c.addressId) }), 201);
    const meters = Math.round(haversineMeters({ lon: -68.135, lat: -16.5 }, { lon: -68.125, lat: -16.51 }));
    expect(q.delivery_fee).toBe(
      D('3.00')
        .plus(D(String(meters)).dividedBy(1000))
        .toDecimalPlaces(2, Decimal.ROUND_HALF_UP)
        .toFixed(2),
    );
    ok(await t.req(admin, { method: 'PATCH', url: `/admin/territory-tariffs/${id}`, payload: { active: false } }));
    const q2 = ok(await t.req(c.session, { method: 'POST', url: '/customer/checkout/preflight', payload: cart(shop, c.addressId) }), 201);
    const settings = ok(await t.req(admin, { method: 'GET', url: '/logistics/settings' }));
    expect(q2.delivery_fee).toBe(settings.default_delivery_fee);
    expect(
      (await rows(t, "SELECT count(*)::int AS n FROM audit_log WHERE entity_id = $1 AND action = 'territory_tariff.updated'", [id]))[0].n,
    ).toBe(2);
  });

  it('refuses bad tariffs and non-administrators, writing nothing', async () => {
    const other = ok(
      await t.req(admin, {
        method: 'POST',
        url: '/territories',
        payload: {
          name: 'Elsewhere',
          geometry: {
            type: 'Polygon',
            coordinates: [
              [
                [-60, -10],
                [-59, -10],
                [-59, -9],
                [-60, -10],
              ],
            ],
          },
        },
      }),
      201,
    );
    const [before] = await rows(t, 'SELECT count(*)::int AS n FROM territory_tariff');
    const base = { territory_id: other.id, service_mode: 'marketplace', base_fee: '1.00', per_km_fee: '1.00', driver_share_value: '50' };
    const cases: [Session, Record<string, unknown>, number][] = [
      [admin, { ...base, driver_share_value: '101' }, 400],
      [admin, { ...base, base_fee: '-1.00' }, 400],
      [admin, { ...base, service_mode: 'air' }, 400],
      [admin, { ...base, territory_id: 'missing' }, 404],
      [admin, { ...base, territory_id: territoryId }, 409],
      [await t.as('merchant'), base, 403],
      [await t.as('dispatch'), base, 403],
    ];
    for (const [who, payload, status] of cases) {
      const res = await t.req(who, { method: 'POST', url: '/admin/territory-tariffs', payload });
      expect(res.statusCode, JSON.stringify(payload)).toBe(status);
    }
    expect((await rows(t, 'SELECT count(*)::int AS n FROM territory_tariff'))[0]).toEqual(before);
    const created = ok(await t.req(admin, { method: 'POST', url: '/admin/territory-tariffs', payload: base }), 201);
    expect(created).toMatchObject({ minimum_fee: '0.00', driver_share_type: 'percent', active: true });
    const bad = await t.req(admin, {
      method: 'PATCH',
      url: `/admin/territory-tariffs/${created.id}`,
      payload: { driver_share_value: '150' },
    });
    expect(bad.statusCode).toBe(400);
    expect((await t.req(admin, { method: 'PATCH', url: '/admin/territory-tariffs/missing', payload: { active: false } })).statusCode).toBe(
      404,
    );
  });

  it('a random cart priced twice through preflight gives the same, consistent totals', async () => {
    const shop = await newShop(t, ['0.99', '12.34', '7.00', '100.00', '0.00']);
    const c = await newCustomer(t, undefined, { lon: -68.11, lat: -16.52 });
    const coupon = ok(
      await t.req(shop.merchant, {
        method: 'POST',
        url: '/merchant/coupons',
        payload: {
          code: 'PROP1',
          name: 'p',
          discount_type: 'percent',
          discount_value: '17.5',
          max_discount: '25.00',
          per_customer_limit: 99,
        },
      }),
      201,
    );
    await fc.assert(
      fc.asyncProperty(fc.array(fc.integer({ min: 0, max: 20 }), { minLength: 5, maxLength: 5 }), fc.boolean(), async (qty, useCoupon) => {
        const items = shop.items.map((i, k) => ({ catalog_item_id: i.id, quantity: qty[k] })).filter((i) => i.quantity > 0);
        fc.pre(items.length > 0);
        const payload = { ...cart(shop, c.addressId), items, ...(useCoupon ? { coupon_code: coupon.code } : {}) };
        const [a, b] = [
          ok(await t.req(c.session, { method: 'POST', url: '/customer/checkout/preflight', payload }), 201),
          ok(await t.req(c.session, { method: 'POST', url: '/customer/checkout/preflight', payload }), 201),
        ];
        for (const k of ['subtotal', 'discount_total', 'delivery_fee', 'total']) expect(a[k]).toBe(b[k]);
        expect(D(a.total).equals(D(a.subtotal).minus(a.discount_total).plus(a.delivery_fee))).toBe(true);
        const expectedSubtotal = items.reduce(
          (s, i) => s.plus(D(shop.items.find((x) => x.id === i.catalog_item_id)!.price).times(i.quantity)),
          D('0'),
        );
        expect(a.subtotal).toBe(expectedSubtotal.toFixed(2));
        expect(D(a.discount_total).lte(a.subtotal)).toBe(true);
      }),
      { numRuns: 15 },
    );
  });

  it('GeoJSON and money bodies are validated (400)', async () => {
    const c = await newCustomer(t);
    expect(
      (await t.req(c.session, { method: 'POST', url: '/customer/addresses', payload: { address: 'x', location: pt(-200, 0) } })).statusCode,
    ).toBe(400);
  });
});
