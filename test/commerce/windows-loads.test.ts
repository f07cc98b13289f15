import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type Session, type TestApp } from '../helpers.js';
import { newCustomer, newMerchant, ok, orderKit, orderRow, type MoneyCustomer, type MoneyShop } from '../money/fixtures.js';
import { newId } from '../../src/platform/ids.js';
import { pt, tripDb } from '../logistics/fixtures.js';

/** Orders and express requests carry a pickup window, a delivery window and a load to their trips, validated as a trip's. */
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

const inH = (h: number) => new Date(Date.now() + h * 3600_000).toISOString();
const cart = (extra: Record<string, unknown> = {}) => ({
  branch_id: shop.branchId,
  address_id: customer.addressId,
  items: [{ catalog_item_id: itemId, quantity: 1 }],
  payment_destination: 'cash',
  ...extra,
});
const count = async (table: string) =>
  Number((await t.db.withSystem((tx) => tx.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`))).rows[0]!.n);
const iso = (v: unknown) => (v === null ? null : new Date(v as string).toISOString());
const tripWindows = (trip: Record<string, unknown>) => ({
  pickup_after: iso(trip.pickup_after),
  pickup_before: iso(trip.pickup_before),
  deliver_after: iso(trip.deliver_after),
  deliver_before: iso(trip.deliver_before),
  units: trip.units,
  weight_kg: trip.weight_kg,
  volume_l: trip.volume_l,
});
async function toReady(orderId: string) {
  for (const status of ['confirmed', 'preparing', 'ready'])
    ok(await t.req(shop.session, { method: 'PATCH', url: `/merchant/orders/${orderId}/status`, payload: { status } }));
  return (await orderRow(t, orderId)).trip_id as string;
}

/** Bad windows and loads, each with the code and the field the 422 names. */
const BAD: [Record<string, unknown>, string, string][] = [
  [{ pickup_after: inH(2), pickup_before: inH(1) }, 'WINDOW_INVALID', 'pickup_before'],
  [{ pickup_before: inH(-1) }, 'WINDOW_INVALID', 'pickup_before'],
  [{ pickup_before: inH(5), deliver_after: inH(1), deliver_before: inH(4) }, 'WINDOW_INVALID', 'pickup_before'],
  [{ deliver_after: inH(3), deliver_before: inH(2) }, 'WINDOW_INVALID', 'deliver_before'],
  [{ units: 0 }, 'LOAD_INVALID', 'units'],
  [{ weight_kg: -1 }, 'LOAD_INVALID', 'weight_kg'],
  [{ volume_l: 1e9 }, 'LOAD_INVALID', 'volume_l'],
];

describe('orders', () => {
  it('the preflight, the quote, the order and its trip keep the windows and the load', async () => {
    const given = {
      pickup_after: inH(1),
      pickup_before: inH(2),
      deliver_after: inH(2),
      deliver_before: inH(3),
      units: 4,
      weight_kg: 12.5,
      volume_l: 30,
    };
    const q = ok(await t.req(customer.session, { method: 'POST', url: '/customer/checkout/preflight', payload: cart(given) }), 201);
    expect(q).toMatchObject(given);
    const o = ok(await t.req(customer.session, { method: 'POST', url: '/customer/orders', payload: { quote_id: q.id } }), 201);
    expect(o).toMatchObject(given);
    const mine = ok(await t.req(shop.session, { method: 'GET', url: '/merchant/orders' })).data.find((x: { id: string }) => x.id === o.id);
    expect(mine).toMatchObject(given);
    const trip = ok(await t.req(admin, { method: 'GET', url: `/trips/${await toReady(o.id)}` }));
    expect(tripWindows(trip)).toEqual(given);
  });

  it('an order from a cart takes them too; without them the order and trip carry one unit and open windows', async () => {
    const given = { pickup_before: inH(2), units: 2, weight_kg: 3 };
    const o = ok(await t.req(customer.session, { method: 'POST', url: '/customer/orders', payload: cart(given) }), 201);
    expect(o).toMatchObject({ ...given, pickup_after: null, volume_l: null });
    expect(tripWindows(await tripDb(t, await toReady(o.id)))).toMatchObject({ ...given, volume_l: null, pickup_after: null });

    // a pickup window that passed while the merchant prepared the order: the order still gets its trip, late
    const late = ok(
      await t.req(customer.session, { method: 'POST', url: '/customer/orders', payload: cart({ pickup_before: inH(1) }) }),
      201,
    );
    await t.db.withSystem((tx) =>
      tx.query("UPDATE merchant_order SET pickup_before = now() - interval '1 minute' WHERE id = $1", [late.id]),
    );
    expect(iso((await tripDb(t, await toReady(late.id))).pickup_before)).toBe(iso((await orderRow(t, late.id)).pickup_before));

    const plain = ok(await t.req(customer.session, { method: 'POST', url: '/customer/orders', payload: cart() }), 201);
    expect(plain).toMatchObject({ pickup_after: null, pickup_before: null, units: 1, weight_kg: null, volume_l: null });
    expect(tripWindows(await tripDb(t, await toReady(plain.id)))).toMatchObject({ units: 1, pickup_before: null, weight_kg: null });
  });

  it('bad windows or loads are 422 naming the field; no quote and no order is written', async () => {
    const quotes = await count('checkout_quote');
    const orders = await count('merchant_order');
    for (const [extra, code, field] of BAD) {
      for (const url of ['/customer/checkout/preflight', '/customer/orders']) {
        const res = await t.req(customer.session, { method: 'POST', url, payload: cart(extra) });
        expect(res.statusCode, `${url} ${JSON.stringify(extra)}: ${res.body}`).toBe(422);
        expect(res.json()).toMatchObject({ code, errors: [{ field }] });
      }
    }
    expect(await count('checkout_quote')).toBe(quotes);
    expect(await count('merchant_order')).toBe(orders);
    // quote_id fixes the windows: sending them beside it is 400
    const q = ok(await t.req(customer.session, { method: 'POST', url: '/customer/checkout/preflight', payload: cart() }), 201);
    const both = await t.req(customer.session, { method: 'POST', url: '/customer/orders', payload: { quote_id: q.id, units: 2 } });
    expect(both.statusCode, both.body).toBe(400);
  });
});

describe('express requests', () => {
  const express = (extra: Record<string, unknown> = {}) =>
    t.req(shop.session, {
      method: 'POST',
      url: '/merchant/delivery-express',
      payload: {
        branch_id: shop.branchId,
        customer_name: 'Ana',
        dropoff_address: 'Calle 2',
        dropoff_location: pt(-68.12, -16.51),
        ...extra,
      },
    });

  it('the request and its trip keep the windows and the load; the delivery window is the promise', async () => {
    const given = {
      pickup_after: inH(1),
      pickup_before: inH(2),
      deliver_after: inH(2),
      deliver_before: inH(3),
      units: 6,
      weight_kg: 40,
      volume_l: 120,
    };
    const r = ok(await express(given), 201);
    expect(r).toMatchObject(given);
    const listed = ok(await t.req(shop.session, { method: 'GET', url: '/merchant/delivery-express' })).data.find(
      (x: { id: string }) => x.id === r.id,
    );
    expect(listed).toMatchObject(given);
    const trip = ok(await t.req(admin, { method: 'GET', url: `/trips/${r.trip_id}` }));
    expect(tripWindows(trip)).toEqual(given);
    expect(trip.promised_at).toBe(given.deliver_before);
  });

  it('bad windows or loads are 422 naming the field; no request and no trip is written', async () => {
    const requests = await count('delivery_express_request');
    const trips = await count('trip');
    for (const [extra, code, field] of BAD) {
      const res = await express(extra);
      expect(res.statusCode, `${JSON.stringify(extra)}: ${res.body}`).toBe(422);
      expect(res.json()).toMatchObject({ code, errors: [{ field }] });
    }
    expect(await count('delivery_express_request')).toBe(requests);
    expect(await count('trip')).toBe(trips);
  });
});
