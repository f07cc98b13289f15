import { AsyncLocalStorage } from 'node:async_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database, Tx } from '../../src/platform/db/index.js';
import { createTestApp, type TestApp } from '../helpers.js';
import { cart, newCustomer, newShop, ok, orderDb, rows, type Shop } from './fixtures.js';

/**
 * Issue 21: an order takes at most 8 database round trips. The app's Database is wrapped so that every
 * exchange with the server is counted while counting is on: a transaction's opening (BEGIN with the tenant
 * settings, one exchange) and its COMMIT, every `tx.query` / `tx.exec`, and every one-exchange `tenantRead`.
 */
const MAX_ROUND_TRIPS = 8;

/** Set only in the async context of the counted request: the realtime hub's own reads (a NOTIFY) are not the order's. */
const counted = new AsyncLocalStorage<string[]>();
const note = (what: string) => counted.getStore()?.push(what);

function countingTx(tx: Tx): Tx {
  return {
    kind: tx.kind,
    get orm() {
      // Drizzle bypasses the counter: the order path must not use it unseen.
      note('orm');
      return tx.orm;
    },
    query(text, params) {
      note((typeof text === 'string' ? text : text.text).replace(/\s+/g, ' ').trim().slice(0, 90));
      return tx.query(text, params);
    },
    exec(text) {
      note(`exec ${text.slice(0, 60)}`);
      return tx.exec(text);
    },
  };
}

function countingDb(db: Database): Database {
  const wrap = <T>(open: string, run: (fn: (tx: Tx) => Promise<T>) => Promise<T>, fn: (tx: Tx) => Promise<T>) => {
    note(open);
    return run(async (tx) => {
      const result = await fn(countingTx(tx));
      note('COMMIT');
      return result;
    });
  };
  return {
    kind: db.kind,
    withTenant: (ctx, fn) => wrap('BEGIN (tenant)', (f) => db.withTenant(ctx, f), fn),
    withSystem: (fn) => wrap('BEGIN (system)', (f) => db.withSystem(f), fn),
    withOwner: (fn) => wrap('BEGIN (owner)', (f) => db.withOwner(f), fn),
    connectionRole: () => db.connectionRole(),
    // Every statement of a read is one round trip of its own (no BEGIN, no COMMIT).
    readTenant: (ctx, fn) => db.readTenant(ctx, (tx) => fn(countingTx(tx))),
    tenantRead: (ctx, text, params) => {
      note(`tenantRead ${(typeof text === 'string' ? text : text.text).slice(0, 60)}`);
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

async function countedOrder(payload: Record<string, unknown>) {
  const trips: string[] = [];
  const res = await counted.run(trips, () => t.req(customer.session, { method: 'POST', url: '/customer/orders', payload }));
  return { order: ok(res, 201), trips };
}

describe('POST /customer/orders round trips (issue 21)', () => {
  it(`places an order without a coupon in at most ${MAX_ROUND_TRIPS} round trips`, async () => {
    await countedOrder(cart(shop, customer.addressId)); // warm-up: caches filled as on a running server
    const { order, trips } = await countedOrder(cart(shop, customer.addressId));
    expect(trips.length, trips.join('\n')).toBeLessThanOrEqual(MAX_ROUND_TRIPS);
    expect(trips).not.toContain('orm');
    expect(order.total).toBe((await orderDb(t, order.id)).total);
  });

  it(`places an order with a coupon (checked and redeemed) in at most ${MAX_ROUND_TRIPS} round trips`, async () => {
    const c = ok(
      await t.req(shop.merchant, { method: 'POST', url: '/merchant/coupons', payload: { code: 'TRIPS10', name: 'c', discount_type: 'percent', discount_value: '10', per_customer_limit: 5 } }),
      201,
    );
    const { order, trips } = await countedOrder(cart(shop, customer.addressId, { coupon_code: 'trips10' }));
    expect(trips.length, trips.join('\n')).toBeLessThanOrEqual(MAX_ROUND_TRIPS);
    expect(order).toMatchObject({ coupon_id: c.id, coupon_code: 'TRIPS10', discount_total: '3.55' });
    const [counted] = await rows(t, 'SELECT usage_count FROM merchant_coupon WHERE id = $1', [c.id]);
    expect(counted.usage_count).toBe(1);
    const [uses] = await rows(t, 'SELECT uses FROM merchant_coupon_customer_usage WHERE coupon_id = $1', [c.id]);
    expect(uses.uses).toBe(1);
    expect(await rows(t, 'SELECT order_id, discount_amount FROM merchant_coupon_redemption WHERE coupon_id = $1', [c.id])).toEqual([{ order_id: order.id, discount_amount: '3.55' }]);
  });
});
