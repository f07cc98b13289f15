import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type Session, type TestApp } from '../helpers.js';
import { newCustomer, newMerchant, ok, orderKit, orderRow, type MoneyCustomer, type MoneyShop } from '../money/fixtures.js';
import { newId } from '../../src/platform/ids.js';
import { tripDb } from '../logistics/fixtures.js';

/** The delivery promise at checkout: returned by the preflight, kept by the quote, the order and its trip; windows validated. */
let t: TestApp;
let admin: Session;
let shop: MoneyShop;
let customer: MoneyCustomer;
let itemId: string;

beforeAll(async () => {
  t = await createTestApp();
  admin = await t.as('admin');
  await orderKit(t);
  shop = await newMerchant(t, admin);
  customer = await newCustomer(t);
  itemId = ok(
    await t.req(shop.session, { method: 'POST', url: '/merchant/catalog', payload: { name: `Item ${newId().slice(-6)}`, price: '20.00' } }),
    201,
  ).id;
}, 60_000);
afterAll(() => t?.close());

const cart = (extra: Record<string, unknown> = {}) => ({
  branch_id: shop.branchId,
  address_id: customer.addressId,
  items: [{ catalog_item_id: itemId, quantity: 1 }],
  payment_destination: 'cash',
  ...extra,
});
const quotes = async () =>
  Number((await t.db.withSystem((tx) => tx.query<{ n: number }>('SELECT count(*)::int AS n FROM checkout_quote'))).rows[0]!.n);

describe('promise at checkout', () => {
  it('the preflight promises now + preparation + travel + buffer; the order and its trip keep it', async () => {
    const before = Date.now();
    const q = ok(await t.req(customer.session, { method: 'POST', url: '/customer/checkout/preflight', payload: cart() }), 201);
    const promised = new Date(q.promised_at).getTime();
    // At least the preparation (15 min default) and the buffer (10 min); travel adds a little.
    expect(promised).toBeGreaterThan(before + 25 * 60_000);
    expect(promised).toBeLessThan(Date.now() + 25 * 60_000 + 30 * 60_000);
    expect(q).toMatchObject({ deliver_after: null, deliver_before: null });
    const o = ok(await t.req(customer.session, { method: 'POST', url: '/customer/orders', payload: { quote_id: q.id } }), 201);
    expect(new Date((await orderRow(t, o.id)).promised_at).getTime()).toBeGreaterThanOrEqual(promised - 5_000);
    for (const status of ['confirmed', 'preparing', 'ready'])
      ok(await t.req(shop.session, { method: 'PATCH', url: `/merchant/orders/${o.id}/status`, payload: { status } }));
    const tripId = (await orderRow(t, o.id)).trip_id as string;
    const trip = ok(await t.req(admin, { method: 'GET', url: `/trips/${tripId}` }));
    expect(trip.promised_at).toBe(new Date((await orderRow(t, o.id)).promised_at).toISOString());
  });

  it('a scheduled window is the promise and reaches the trip', async () => {
    const after = new Date(Date.now() + 3 * 3600_000).toISOString();
    const before = new Date(Date.now() + 4 * 3600_000).toISOString();
    const q = ok(
      await t.req(customer.session, {
        method: 'POST',
        url: '/customer/checkout/preflight',
        payload: cart({ deliver_after: after, deliver_before: before }),
      }),
      201,
    );
    expect(q).toMatchObject({ promised_at: before, deliver_after: after, deliver_before: before });
    const o = ok(await t.req(customer.session, { method: 'POST', url: '/customer/orders', payload: { quote_id: q.id } }), 201);
    for (const status of ['confirmed', 'preparing', 'ready'])
      ok(await t.req(shop.session, { method: 'PATCH', url: `/merchant/orders/${o.id}/status`, payload: { status } }));
    const trip = await tripDb(t, (await orderRow(t, o.id)).trip_id);
    expect(new Date(trip.promised_at).toISOString()).toBe(before);
    expect(new Date(trip.deliver_after).toISOString()).toBe(after);
  });

  it('a window that ends before it starts, or in the past, is 422 and no quote is written', async () => {
    const n = await quotes();
    const inverted = await t.req(customer.session, {
      method: 'POST',
      url: '/customer/checkout/preflight',
      payload: cart({
        deliver_after: new Date(Date.now() + 7200_000).toISOString(),
        deliver_before: new Date(Date.now() + 3600_000).toISOString(),
      }),
    });
    expect(inverted.statusCode).toBe(422);
    expect(inverted.json().code).toBe('WINDOW_INVALID');
    const past = await t.req(customer.session, {
      method: 'POST',
      url: '/customer/checkout/preflight',
      payload: cart({ deliver_before: new Date(Date.now() - 60_000).toISOString() }),
    });
    expect(past.statusCode).toBe(422);
    expect(past.json().code).toBe('PROMISE_IN_PAST');
    expect(await quotes()).toBe(n);
  });
});
