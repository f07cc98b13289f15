import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database, Tx } from '../../src/platform/db/index.js';
import { createTestApp, type TestApp } from '../helpers.js';
import { cart, newCustomer, newShop, ok, orderDb, rows, type Shop } from './fixtures.js';

/**
 * An order takes at most 9 database round trips. The app's Database is wrapped so that every
 * exchange of the counted request with the server is noted: every `tx.query` / `tx.exec` (the first one carries
 * BEGIN and the tenant settings), the COMMIT, and every statement of a read.
 */
// The cart, the organization's settings, the merchant's payment profile, the logistics settings (the delivery
// promise: learned speeds and dispatch buffer), the order with its lines, promise and coupon in one statement, the
// event, the webhook subscriptions, the merchant's chat channel, the COMMIT.
const MAX_ROUND_TRIPS = 9;

/**
 * The exchanges of the counted request, told apart by its request id (`X-Request-Id`, carried by the actor that
 * every tenant transaction and read receives). Fastify's inject does not keep the caller's async context, so an
 * AsyncLocalStorage saw nothing here and the check passed with zero exchanges; the order path opens no system
 * transaction, and the realtime hub's reads of the order's events carry no request id.
 */
const counting = new Map<string, string[]>();
const storeOf = (ctx: unknown): string[] | undefined => counting.get((ctx as { requestId?: string }).requestId ?? '');
const textOf = (text: string | { text: string }) => (typeof text === 'string' ? text : text.text);

function countingTx(tx: Tx, store: string[] | undefined): Tx {
  const note = (what: string) => store?.push(what);
  return {
    kind: tx.kind,
    get orm() {
      // Drizzle bypasses the counter: the order path must not use it unseen.
      note('orm');
      return tx.orm;
    },
    query(text, params) {
      note(textOf(text).replace(/\s+/g, ' ').trim().slice(0, 90));
      return tx.query(text, params);
    },
    exec(text) {
      note(`exec ${text.slice(0, 60)}`);
      return tx.exec(text);
    },
  };
}

function countingDb(db: Database): Database {
  // BEGIN and the tenant settings are not an exchange of their own: they travel with the transaction's first
  // statement (test/platform/round-trips.test.ts counts that on the wire), so the opening is not counted.
  const wrap = <T>(store: string[] | undefined, run: (fn: (tx: Tx) => Promise<T>) => Promise<T>, fn: (tx: Tx) => Promise<T>) => {
    return run(async (tx) => {
      const result = await fn(countingTx(tx, store));
      store?.push('COMMIT');
      return result;
    });
  };
  return {
    kind: db.kind,
    withTenant: (ctx, fn) => wrap(storeOf(ctx), (f) => db.withTenant(ctx, f), fn),
    withSystem: (fn) => db.withSystem(fn),
    withOwner: (fn) => db.withOwner(fn),
    connectionRole: () => db.connectionRole(),
    // Every statement of a read is one round trip of its own (no BEGIN, no COMMIT).
    readTenant: (ctx, fn) => db.readTenant(ctx, (tx) => fn(countingTx(tx, storeOf(ctx)))),
    tenantRead: (ctx, text, params) => {
      storeOf(ctx)?.push(`tenantRead ${textOf(text).slice(0, 60)}`);
      return db.tenantRead(ctx, text, params);
    },
    listen: (channel, cb) => db.listen(channel, cb),
    onListenerChange: (cb) => db.onListenerChange(cb),
    listenerStatus: () => db.listenerStatus(),
    close: () => db.close(),
  };
}

let t: TestApp;
let shop: Shop;
let customer: Awaited<ReturnType<typeof newCustomer>>;

beforeAll(async () => {
  t = await createTestApp({}, { wrapDb: countingDb });
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
