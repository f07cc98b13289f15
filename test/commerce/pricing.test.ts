import fc from 'fast-check';
import { Decimal } from 'decimal.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type Session, type TestApp } from '../helpers.js';
import {
  couponDiscount,
  deliveryFee,
  evaluateCoupon,
  orderTotals,
  priceLines,
  type CouponRule,
} from '../../src/modules/commerce/pricing.js';
import { haversineMeters } from '../../src/platform/geo.js';
import { cart, newCustomer, newShop, ok, pt, rows } from './fixtures.js';

const cents = (n: number) => (n / 100).toFixed(2);
const D = (s: string) => new Decimal(s);

const lineArb = fc.record({ price: fc.integer({ min: 0, max: 5_000_000 }), quantity: fc.integer({ min: 1, max: 999 }) });
const couponArb = fc.record({
  discount_type: fc.constantFrom('percent' as const, 'fixed' as const),
  percent: fc.integer({ min: 1, max: 10_000 }), // hundredths of a percent: 0.01% .. 100%
  fixed: fc.integer({ min: 1, max: 100_000_000 }),
  max_discount: fc.option(fc.integer({ min: 0, max: 1_000_000 }), { nil: null }),
  minimum_order: fc.integer({ min: 0, max: 100_000 }),
  restrict: fc.boolean(),
});

describe('pricing invariants (property)', () => {
  it('total = subtotal − discount + fee, each ≥ 0, discount ≤ eligible subtotal, recomputation stable', () => {
    fc.assert(
      fc.property(
        fc.array(lineArb, { minLength: 1, maxLength: 20 }),
        couponArb,
        fc.integer({ min: 0, max: 1_000_000 }),
        fc.array(fc.boolean(), { minLength: 20, maxLength: 20 }),
        (ls, c, feeCents, pick) => {
          const catalog = new Map(ls.map((l, i) => [`i${i}`, { id: `i${i}`, name: `n${i}`, price: cents(l.price) }]));
          const items = ls.map((l, i) => ({ catalog_item_id: `i${i}`, quantity: l.quantity }));
          const lines = priceLines(items, catalog);
          const subtotal = lines.reduce((a, l) => a.plus(l.line_total), D('0'));
          const rule: CouponRule = {
            id: 'c',
            code: 'C',
            active: true,
            discount_type: c.discount_type,
            discount_value: c.discount_type === 'percent' ? (c.percent / 100).toFixed(2) : cents(c.fixed),
            max_discount: c.max_discount === null ? null : cents(c.max_discount),
            minimum_order: cents(c.minimum_order),
            product_ids: c.restrict ? items.filter((_, i) => pick[i]).map((i) => i.catalog_item_id) : [],
            branch_ids: [],
            valid_from: null,
            valid_until: null,
            usage_limit: null,
            per_customer_limit: 1,
            usage_count: 0,
          };
          const cartIn = { branch_id: 'b', lines, subtotal: subtotal.toFixed(2), customer_uses: 0, now: new Date() };
          const outcome = evaluateCoupon(rule, cartIn);
          const eligible = (rule.product_ids.length ? lines.filter((l) => rule.product_ids.includes(l.catalog_item_id)) : lines).reduce(
            (a, l) => a.plus(l.line_total),
            D('0'),
          );
          const discount = outcome.ok ? outcome.discount : '0';
          if (outcome.ok) {
            expect(D(discount).lte(eligible)).toBe(true);
            expect(D(discount).gte(0)).toBe(true);
            if (rule.discount_type === 'percent' && rule.max_discount !== null) expect(D(discount).lte(rule.max_discount)).toBe(true);
          } else {
            expect(eligible.lte(0) || subtotal.lt(rule.minimum_order)).toBe(true);
          }
          const totals = orderTotals(subtotal.toFixed(2), discount, cents(feeCents));
          for (const v of Object.values(totals)) {
            expect(v).toMatch(/^\d+\.\d{2}$/);
            expect(D(v).gte(0)).toBe(true);
          }
          expect(D(totals.total).equals(D(totals.subtotal).minus(totals.discount_total).plus(totals.delivery_fee))).toBe(true);
          // Recomputing from the same inputs (and from the rendered strings) gives the same result.
          expect(evaluateCoupon(rule, { ...cartIn, lines: priceLines(items, catalog) })).toEqual(outcome);
          expect(orderTotals(totals.subtotal, totals.discount_total, totals.delivery_fee)).toEqual(totals);
        },
      ),
      { numRuns: Number(process.env.FUZZ_RUNS ?? 500) },
    );
  });

  it('percent discounts round half-up to cents and never exceed the eligible subtotal', () => {
    const r = { discount_type: 'percent' as const, discount_value: '12.50', max_discount: null };
    expect(couponDiscount(r, D('0.04')).toFixed(2)).toBe('0.01'); // 0.005 → 0.01
    expect(couponDiscount(r, D('0.03')).toFixed(2)).toBe('0.00'); // 0.00375 → 0.00
    expect(couponDiscount({ discount_type: 'fixed', discount_value: '9.99', max_discount: null }, D('5.00')).toFixed(2)).toBe('5.00');
  });
});

describe('delivery fee', () => {
  const tariff = {
    base_fee: '5.00',
    per_km_fee: '2.35',
    minimum_fee: '8.00',
    driver_share_type: 'percent' as const,
    driver_share_value: '70',
  };
  const a = { lon: -68.135, lat: -16.5 };
  const b = { lon: -68.1, lat: -16.52 };

  it('is base + per-km × great-circle km, at least the minimum, rounded to cents; the driver share follows', () => {
    const km = D(String(Math.round(haversineMeters(a, b)))).dividedBy(1000);
    const expected = D('5.00').plus(km.times('2.35')).toDecimalPlaces(2, Decimal.ROUND_HALF_UP);
    const p = deliveryFee(tariff, a, b);
    expect(p.fee).toBe(expected.toFixed(2));
    expect(p.driver_earning).toBe(expected.times('0.7').toDecimalPlaces(2, Decimal.ROUND_HALF_UP).toFixed(2));
    expect(deliveryFee(tariff, a, a)).toMatchObject({ fee: '8.00', driver_earning: '5.60', distance_km: '0.000' });
    expect(deliveryFee({ ...tariff, driver_share_type: 'fixed', driver_share_value: '50.00' }, a, a).driver_earning).toBe('8.00');
    expect(deliveryFee({ ...tariff, driver_share_type: 'fixed', driver_share_value: '3.00' }, a, a).driver_earning).toBe('3.00');
  });
});

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
