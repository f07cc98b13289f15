import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countingDb } from '../counting-db.js';
import { createTestApp, type TestApp } from '../helpers.js';
import { cart, newCustomer, newShop, ok, orderDb, rows, type Shop } from './fixtures.js';

/**
 * An order takes at most 8 database round trips. The app's Database is wrapped so that every
 * exchange of the counted request with the server is noted: every `tx.query` / `tx.exec` (the first one carries
 * BEGIN and the tenant settings), the COMMIT, and every statement of a read.
 */
// The cart, the organization's settings, the merchant's payment profile, the logistics settings (the delivery
// promise: learned speeds and dispatch buffer), the order with its lines, promise and coupon in one statement, the
// event (the organization's webhook subscriptions are cached, and it has none), the merchant's chat channel, the COMMIT.
const MAX_ROUND_TRIPS = 8;

/** The exchanges of the counted request, told apart by its request id (test/counting-db.ts). */
const counting = new Map<string, string[]>();

let t: TestApp;
let shop: Shop;
let customer: Awaited<ReturnType<typeof newCustomer>>;

beforeAll(async () => {
  t = await createTestApp({}, { wrapDb: countingDb(counting) });
  shop = await newShop(t, ['10.00', '20.00', '5.50']);
  customer = await newCustomer(t);
});
afterAll(() => t?.close());

let seq = 0;
async function countedOrder(payload: Record<string, unknown>) {
  const trips: string[] = [];
  const requestId = `counted-order-${++seq}`;
  counting.set(requestId, trips);
  try {
    const res = await t.req(customer.session, { method: 'POST', url: '/customer/orders', payload, headers: { 'x-request-id': requestId } });
    if (process.env.SHOW_ROUND_TRIPS) process.stderr.write(`${requestId}:\n  ${trips.join('\n  ')}\n`);
    return { order: ok(res, 201), trips };
  } finally {
    counting.delete(requestId);
  }
}

describe('POST /customer/orders round trips', () => {
  it(`places an order without a coupon in at most ${MAX_ROUND_TRIPS} round trips`, async () => {
    await countedOrder(cart(shop, customer.addressId)); // warm-up: caches filled as on a running server
    const { order, trips } = await countedOrder(cart(shop, customer.addressId));
    expect(trips.length, trips.join('\n')).toBeLessThanOrEqual(MAX_ROUND_TRIPS);
    // The order's own exchanges were seen (the count is not vacuous): a transaction opened and committed.
    expect(trips.length, trips.join('\n')).toBeGreaterThanOrEqual(3);
    expect(trips[0]).toMatch(/^SELECT b\.id AS b__id/); // the cart read
    expect(trips[trips.length - 1]).toBe('COMMIT');
    expect(trips).not.toContain('orm');
    expect(order.total).toBe((await orderDb(t, order.id)).total);
  });

  it(`places an order with a coupon (checked and redeemed) in at most ${MAX_ROUND_TRIPS} round trips`, async () => {
    const c = ok(
      await t.req(shop.merchant, {
        method: 'POST',
        url: '/merchant/coupons',
        payload: { code: 'TRIPS10', name: 'c', discount_type: 'percent', discount_value: '10', per_customer_limit: 5 },
      }),
      201,
    );
    const { order, trips } = await countedOrder(cart(shop, customer.addressId, { coupon_code: 'trips10' }));
    expect(trips.length, trips.join('\n')).toBeLessThanOrEqual(MAX_ROUND_TRIPS);
    expect(trips.length, trips.join('\n')).toBeGreaterThanOrEqual(3);
    expect(trips).toContain('COMMIT');
    expect(order).toMatchObject({ coupon_id: c.id, coupon_code: 'TRIPS10', discount_total: '3.55' });
    const [counted] = await rows(t, 'SELECT usage_count FROM merchant_coupon WHERE id = $1', [c.id]);
    expect(counted.usage_count).toBe(1);
    const [uses] = await rows(t, 'SELECT uses FROM merchant_coupon_customer_usage WHERE coupon_id = $1', [c.id]);
    expect(uses.uses).toBe(1);
    expect(await rows(t, 'SELECT order_id, discount_amount FROM merchant_coupon_redemption WHERE coupon_id = $1', [c.id])).toEqual([
      { order_id: order.id, discount_amount: '3.55' },
    ]);
  });
});
