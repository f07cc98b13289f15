import fc from 'fast-check';
import { Decimal } from 'decimal.js';
import { describe, expect, it } from 'vitest';
import {
  couponDiscount,
  deliveryFee,
  distanceKm,
  evaluateCoupon,
  orderTotals,
  priceLines,
  type CouponRule,
  type PricedLine,
} from '../../src/modules/commerce/service/pricing.js';
import { haversineMeters } from '../../src/platform/geo.js';

/** Pricing without HTTP or a database: cart lines, coupons, the delivery fee and the order totals. */

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

describe('cart lines', () => {
  it('take the catalog price and name, and multiply exactly in cents', () => {
    const catalog = new Map([
      ['a', { id: 'a', name: 'Salteña', price: '4.5' }],
      ['b', { id: 'b', name: 'Api', price: '0.10' }],
    ]);
    expect(
      priceLines(
        [
          { catalog_item_id: 'a', quantity: 3 },
          { catalog_item_id: 'b', quantity: 3 },
        ],
        catalog,
      ),
    ).toEqual([
      { catalog_item_id: 'a', name: 'Salteña', unit_price: '4.50', quantity: 3, line_total: '13.50' },
      { catalog_item_id: 'b', name: 'Api', unit_price: '0.10', quantity: 3, line_total: '0.30' },
    ]);
  });
});

describe('coupon checks, in order', () => {
  const line = (id: string, total: string): PricedLine => ({
    catalog_item_id: id,
    name: id,
    unit_price: total,
    quantity: 1,
    line_total: total,
  });
  const now = new Date('2026-03-10T12:00:00Z');
  const cartIn = { branch_id: 'b1', lines: [line('x', '30.00'), line('y', '20.00')], subtotal: '50.00', customer_uses: 0, now };
  const coupon = (over: Partial<CouponRule> = {}): CouponRule => ({
    id: 'c',
    code: 'HOLA',
    active: true,
    discount_type: 'percent',
    discount_value: '10',
    max_discount: null,
    minimum_order: '0',
    product_ids: [],
    branch_ids: [],
    valid_from: null,
    valid_until: null,
    usage_limit: null,
    per_customer_limit: 1,
    usage_count: 0,
    ...over,
  });

  it('applies to the whole subtotal, or to the listed products only', () => {
    expect(evaluateCoupon(coupon(), cartIn)).toEqual({ ok: true, discount: '5.00', eligible_subtotal: '50.00' });
    expect(evaluateCoupon(coupon({ product_ids: ['y'] }), cartIn)).toEqual({ ok: true, discount: '2.00', eligible_subtotal: '20.00' });
    expect(evaluateCoupon(coupon({ discount_type: 'fixed', discount_value: '7.25' }), cartIn)).toMatchObject({ discount: '7.25' });
    expect(evaluateCoupon(coupon({ max_discount: '3.00' }), cartIn)).toMatchObject({ discount: '3.00' });
  });

  it('the window: valid from its start (inclusive) until its end (exclusive)', () => {
    expect(evaluateCoupon(coupon({ valid_from: now }), cartIn).ok).toBe(true);
    expect(evaluateCoupon(coupon({ valid_from: new Date(now.getTime() + 1) }), cartIn)).toEqual({
      ok: false,
      code: 'COUPON_NOT_YET_VALID',
    });
    expect(evaluateCoupon(coupon({ valid_until: now }), cartIn)).toEqual({ ok: false, code: 'COUPON_EXPIRED' });
    expect(evaluateCoupon(coupon({ valid_until: new Date(now.getTime() + 1) }), cartIn).ok).toBe(true);
  });

  it('refuses for the first reason in the documented order: inactive, window, usage, per customer, branch, products, minimum', () => {
    const failing: [Partial<CouponRule>, Partial<typeof cartIn>, string][] = [
      [{ active: false }, {}, 'COUPON_INACTIVE'],
      [{ valid_until: new Date(now.getTime() - 1) }, {}, 'COUPON_EXPIRED'],
      [{ usage_limit: 5, usage_count: 5 }, {}, 'COUPON_USAGE_LIMIT_REACHED'],
      [{ per_customer_limit: 2 }, { customer_uses: 2 }, 'COUPON_CUSTOMER_LIMIT_REACHED'],
      [{ branch_ids: ['b2'] }, {}, 'COUPON_NOT_APPLICABLE'],
      [{ product_ids: ['z'] }, {}, 'COUPON_NOT_APPLICABLE'],
      [{ minimum_order: '50.01' }, {}, 'COUPON_MINIMUM_NOT_MET'],
    ];
    // Each rule alone gives its reason; with every later rule broken as well, still the first one.
    failing.forEach(([rule, cart, code], i) => {
      expect(evaluateCoupon(coupon(rule), { ...cartIn, ...cart }), code).toEqual({ ok: false, code });
      const later = failing.slice(i + 1);
      const allRules = Object.assign({}, rule, ...later.map(([r]) => r)) as Partial<CouponRule>;
      const allCarts = Object.assign({}, cart, ...later.map(([, c]) => c)) as Partial<typeof cartIn>;
      expect(evaluateCoupon(coupon(allRules), { ...cartIn, ...allCarts }), `${code} first`).toEqual({ ok: false, code });
    });
    // The minimum is on the whole subtotal, not the eligible part.
    expect(evaluateCoupon(coupon({ minimum_order: '50.00', product_ids: ['y'] }), cartIn).ok).toBe(true);
  });
});

describe('distance and totals', () => {
  it('distance is whole metres as km with three decimals, so the fee never depends on float noise', () => {
    const a = { lon: -68.135, lat: -16.5 };
    const b = { lon: -68.1, lat: -16.52 };
    expect(distanceKm(a, b)).toBe((Math.round(haversineMeters(a, b)) / 1000).toFixed(3));
    expect(distanceKm(a, a)).toBe('0.000');
  });

  it('a discount above the subtotal is clamped: the customer never pays less than the delivery fee', () => {
    expect(orderTotals('20.00', '35.00', '8.00')).toEqual({
      subtotal: '20.00',
      discount_total: '20.00',
      delivery_fee: '8.00',
      total: '8.00',
    });
    expect(orderTotals('20.00', '-5.00', '8.00')).toMatchObject({ discount_total: '0.00', total: '28.00' });
  });
});
