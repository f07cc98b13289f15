import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type Session, type TestApp } from '../helpers.js';
import { newDriver, tripDb, type TestDriver } from '../logistics/fixtures.js';
import { cart, newCustomer, newShop, ok, orderDb, orderIn, placeOrder, pt, rows, setStatus, type Shop } from './fixtures.js';

let t: TestApp;
let admin: Session;
let shop: Shop;
let customer: Awaited<ReturnType<typeof newCustomer>>;
let driver: TestDriver;

beforeAll(async () => {
  t = await createTestApp();
  admin = await t.as('admin');
  shop = await newShop(t);
  customer = await newCustomer(t);
  driver = await newDriver(t, { lon: -68.135, lat: -16.5 }, { capacity: 50 });
});
afterAll(() => t?.close());

/** Drives the order's trip through the logistics operations: assign, accept, verify pickup (→ in_delivery), and optionally deliver. */
async function driveTrip(orderId: string, until: 'in_delivery' | 'delivered') {
  const tripId = (await orderDb(t, orderId)).trip_id as string;
  ok(await t.req(admin, { method: 'POST', url: `/trips/${tripId}/assign`, payload: { driver_id: driver.id } }));
  ok(await t.req(driver.session, { method: 'POST', url: `/driver/trips/${tripId}/accept` }));
  const trip = await tripDb(t, tripId);
  ok(await t.req(driver.session, { method: 'POST', url: `/trips/${tripId}/verify-pickup`, payload: { pin: trip.pickup_pin } }));
  if (until === 'delivered') {
    ok(await t.req(driver.session, { method: 'POST', url: `/driver/trips/${tripId}/start-delivery` }));
    const cash = Number(trip.cash_to_collect) > 0 ? { cash_collected: trip.cash_to_collect } : {};
    ok(
      await t.req(driver.session, {
        method: 'POST',
        url: `/trips/${tripId}/verify-delivery`,
        payload: { pin: trip.delivery_pin, ...cash },
      }),
    );
  }
  return tripId;
}

async function orderInState(state: string, over: Record<string, unknown> = {}) {
  if (state === 'in_delivery' || state === 'delivered') {
    const id = await orderIn(t, shop, customer, 'ready', over);
    await driveTrip(id, state);
    return id;
  }
  return orderIn(t, shop, customer, state, over);
}

const STATES = ['pending_confirmation', 'confirmed', 'preparing', 'ready', 'in_delivery', 'delivered', 'cancelled'];
/** What the merchant may request by hand (in_delivery and delivered only follow the trip). */
const ALLOWED: Record<string, string[]> = {
  pending_confirmation: ['confirmed', 'cancelled'],
  confirmed: ['preparing', 'cancelled'],
  preparing: ['ready', 'cancelled'],
  ready: ['cancelled'],
  in_delivery: ['cancelled'],
  delivered: [],
  cancelled: [],
};

describe('merchant order status transitions (table)', () => {
  const cases = STATES.flatMap((from) => STATES.map((to) => ({ from, to, allowed: ALLOWED[from].includes(to) })));
  // A refused move changes nothing (asserted below), so refused cases share one order per state.
  const shared = new Map<string, Promise<string>>();
  const orderFor = (from: string, allowed: boolean) => {
    if (allowed) return orderInState(from);
    if (!shared.has(from)) shared.set(from, orderInState(from));
    return shared.get(from)!;
  };
  it.each(cases)('$from → $to allowed=$allowed', async ({ from, to, allowed }) => {
    const id = await orderFor(from, allowed);
    const res = await setStatus(t, shop.merchant, id, to);
    if (allowed) {
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().status).toBe(to);
      expect((await orderDb(t, id)).status).toBe(to);
    } else {
      expect(res.statusCode, res.body).toBe(409);
      expect(res.json()).toMatchObject({ code: 'INVALID_TRANSITION', current_status: from });
      expect((await orderDb(t, id)).status).toBe(from);
    }
  });
});

describe('ready creates the trip', () => {
  it('creates exactly one trip when five status updates race, priced by the tariff, from the branch to the address', async () => {
    const id = await orderIn(t, shop, customer, 'preparing');
    const results = await Promise.all(Array.from({ length: 5 }, () => setStatus(t, shop.merchant, id, 'ready')));
    expect(results.filter((r) => r.statusCode === 200)).toHaveLength(1);
    for (const r of results.filter((x) => x.statusCode !== 200))
      expect(r.json()).toMatchObject({ code: 'INVALID_TRANSITION', current_status: 'ready' });
    const trips = await rows(
      t,
      'SELECT *, (pickup_location)[0] AS plon, (pickup_location)[1] AS plat, (dropoff_location)[0] AS dlon FROM trip WHERE order_id = $1',
      [id],
    );
    expect(trips).toHaveLength(1);
    const o = await orderDb(t, id);
    expect(trips[0]).toMatchObject({
      id: o.trip_id,
      status: 'pending',
      service_mode: 'marketplace',
      merchant_id: shop.merchantId,
      customer_user_id: customer.userId,
      delivery_fee: o.delivery_fee,
      driver_earning: o.driver_earning,
      territory_id: o.territory_id,
      plon: -68.135,
      plat: -16.5,
      dlon: -68.125,
    });
    expect(Number(o.driver_earning)).toBeGreaterThan(0);
  });

  it('the trip is created with the merchant as actor and the tariff prices; over HTTP a merchant still may not set fees (403, nothing written)', async () => {
    const id = await orderIn(t, shop, customer, 'ready');
    const o = await orderDb(t, id);
    const trip = await tripDb(t, o.trip_id);
    expect(trip).toMatchObject({
      created_by_user_id: shop.merchant.userId,
      source_channel: 'core',
      delivery_fee: o.delivery_fee,
      driver_earning: o.driver_earning,
    });
    const created = await rows(t, "SELECT actor_user_id FROM event WHERE type = 'trip.created' AND entity_id = $1", [o.trip_id]);
    expect(created).toEqual([{ actor_user_id: shop.merchant.userId }]);
    const [before] = await rows(t, 'SELECT count(*)::int AS n FROM trip');
    const base = { pickup_location: pt(-68.135, -16.5), pickup_address: 'a', dropoff_location: pt(-68.125, -16.51), dropoff_address: 'b' };
    for (const extra of [{ delivery_fee: '1.00' }, { driver_earning: '9.00' }]) {
      const res = await t.req(shop.merchant, { method: 'POST', url: '/trips', payload: { ...base, ...extra } });
      expect(res.statusCode, res.body).toBe(403);
      expect(res.json().code).toBe('FIELD_NOT_ALLOWED');
    }
    expect((await rows(t, 'SELECT count(*)::int AS n FROM trip'))[0]).toEqual(before);
  });

  it('follows the trip: pickup verified → in_delivery, completed → delivered; a cash order becomes paid, a platform one stays pending', async () => {
    const cash = await orderIn(t, shop, customer, 'ready', { payment_destination: 'cash' });
    await driveTrip(cash, 'in_delivery');
    expect((await orderDb(t, cash)).status).toBe('in_delivery');
    const tripId = (await orderDb(t, cash)).trip_id;
    const trip = await tripDb(t, tripId);
    ok(await t.req(driver.session, { method: 'POST', url: `/driver/trips/${tripId}/start-delivery` }));
    // The driver collects the cash at the door (cash orders are collected by the platform's driver by default).
    expect(trip.cash_to_collect).toBe((await orderDb(t, cash)).total);
    ok(
      await t.req(driver.session, {
        method: 'POST',
        url: `/trips/${tripId}/verify-delivery`,
        payload: { pin: trip.delivery_pin, cash_collected: trip.cash_to_collect },
      }),
    );
    expect(await orderDb(t, cash)).toMatchObject({ status: 'delivered', payment_status: 'paid', collected_by: 'driver' });
    const platform = await orderInState('delivered');
    expect(await orderDb(t, platform)).toMatchObject({ status: 'delivered', payment_status: 'pending' });
    const events = await rows(
      t,
      "SELECT payload->>'status' AS s FROM event WHERE entity_type = 'merchant_order' AND entity_id = $1 ORDER BY seq",
      [platform],
    );
    expect(events.map((e) => e.s)).toEqual(['pending_confirmation', 'confirmed', 'preparing', 'ready', 'in_delivery', 'delivered']);
  });

  it('cancelling a ready order cancels its trip; a trip cancelled by dispatch cancels its order', async () => {
    const a = await orderIn(t, shop, customer, 'ready');
    ok(await setStatus(t, shop.merchant, a, 'cancelled'));
    expect((await tripDb(t, (await orderDb(t, a)).trip_id)).status).toBe('cancelled');
    const b = await orderIn(t, shop, customer, 'ready');
    const tripId = (await orderDb(t, b)).trip_id;
    ok(await t.req(admin, { method: 'POST', url: `/trips/${tripId}/status`, payload: { status: 'cancelled', reason: 'no drivers' } }));
    expect(await orderDb(t, b)).toMatchObject({ status: 'cancelled', status_reason: 'trip cancelled: no drivers' });
  });
});

describe('prices come from the catalog', () => {
  it('refuses client-sent prices, subtotals and totals (400) and writes nothing', async () => {
    const [before] = await rows(t, 'SELECT count(*)::int AS n FROM merchant_order');
    const base = cart(shop, customer.addressId);
    for (const payload of [
      { ...base, total: '1.00' },
      { ...base, subtotal: '1.00' },
      { ...base, delivery_fee: '0.00' },
      { ...base, discount_total: '99.00' },
      { ...base, items: [{ catalog_item_id: shop.items[0].id, quantity: 1, price: '0.01' }] },
      { ...base, items: [{ catalog_item_id: shop.items[0].id, quantity: 1, unit_price: '0.01' }] },
    ]) {
      for (const url of ['/customer/orders', '/customer/checkout/preflight']) {
        const res = await t.req(customer.session, { method: 'POST', url, payload });
        expect(res.statusCode, `${url} ${JSON.stringify(payload)}`).toBe(400);
        expect(res.json().code).toBe('VALIDATION_FAILED');
      }
    }
    const [after] = await rows(t, 'SELECT count(*)::int AS n FROM merchant_order');
    expect(after.n).toBe(before.n);
  });

  it('prices lines from the current catalog and totals them in decimals', async () => {
    const s = await newShop(t, ['0.10', '0.20', '19.99']);
    const o = await placeOrder(t, customer.session, {
      ...cart(s, customer.addressId),
      items: s.items.map((i, k) => ({ catalog_item_id: i.id, quantity: k + 1 })),
    });
    expect(o.items.map((i: { unit_price: string; line_total: string }) => [i.unit_price, i.line_total])).toEqual([
      ['0.10', '0.10'],
      ['0.20', '0.40'],
      ['19.99', '59.97'],
    ]);
    expect(o.subtotal).toBe('60.47');
    const cents = (v: string) => Math.round(Number(v) * 100);
    expect(cents(o.total)).toBe(6047 + cents(o.delivery_fee));
    ok(await t.req(s.merchant, { method: 'PATCH', url: `/merchant/catalog/${s.items[0].id}`, payload: { price: '1.00' } }));
    const again = await placeOrder(t, customer.session, {
      ...cart(s, customer.addressId),
      items: [{ catalog_item_id: s.items[0].id, quantity: 3 }],
    });
    expect(again.subtotal).toBe('3.00');
    expect((await rows(t, 'SELECT unit_price FROM merchant_order_item WHERE order_id = $1', [o.id]))[0].unit_price).toBe('0.10');
  });
});

describe('quotes', () => {
  it('an order from a quote has the quoted totals; the quote makes one order only', async () => {
    const q = ok(
      await t.req(customer.session, { method: 'POST', url: '/customer/checkout/preflight', payload: cart(shop, customer.addressId) }),
      201,
    );
    expect((await rows(t, 'SELECT total FROM checkout_quote WHERE id = $1', [q.id]))[0].total).toBe(q.total);
    const o = await placeOrder(t, customer.session, { quote_id: q.id });
    expect(o).toMatchObject({ quote_id: q.id, subtotal: q.subtotal, delivery_fee: q.delivery_fee, total: q.total });
    const again = await t.req(customer.session, { method: 'POST', url: '/customer/orders', payload: { quote_id: q.id } });
    expect(again.statusCode).toBe(409);
    expect(again.json().code).toBe('QUOTE_ALREADY_USED');
  });

  it('refuses a quote whose prices changed (409), an expired one (422) and another customer’s (404), writing nothing', async () => {
    const s = await newShop(t, ['10.00']);
    const quote = async () =>
      ok(await t.req(customer.session, { method: 'POST', url: '/customer/checkout/preflight', payload: cart(s, customer.addressId) }), 201);
    const changed = await quote();
    ok(await t.req(s.merchant, { method: 'PATCH', url: `/merchant/catalog/${s.items[0].id}`, payload: { price: '11.00' } }));
    const r1 = await t.req(customer.session, { method: 'POST', url: '/customer/orders', payload: { quote_id: changed.id } });
    expect(r1.statusCode).toBe(409);
    expect(r1.json()).toMatchObject({ code: 'QUOTE_PRICE_CHANGED', quoted_total: changed.total });
    const expired = await quote();
    await t.db.withSystem((tx) =>
      tx.query("UPDATE checkout_quote SET expires_at = now() - interval '1 second' WHERE id = $1", [expired.id]),
    );
    const r2 = await t.req(customer.session, { method: 'POST', url: '/customer/orders', payload: { quote_id: expired.id } });
    expect(r2.statusCode).toBe(422);
    expect(r2.json().code).toBe('QUOTE_EXPIRED');
    const other = await newCustomer(t);
    const r3 = await t.req(other.session, { method: 'POST', url: '/customer/orders', payload: { quote_id: (await quote()).id } });
    expect(r3.statusCode).toBe(404);
    expect(await rows(t, 'SELECT 1 FROM merchant_order WHERE merchant_id = $1', [s.merchantId])).toHaveLength(0);
  });
});

describe('bad input', () => {
  it('answers 4xx and writes nothing', async () => {
    const other = await newCustomer(t);
    const off = await newShop(t, ['3.00']);
    ok(await t.req(off.merchant, { method: 'PATCH', url: `/merchant/branches/${off.branchId}`, payload: { active: false } }));
    const unavailable = await newShop(t, ['3.00']);
    ok(
      await t.req(unavailable.merchant, {
        method: 'PATCH',
        url: `/merchant/catalog/${unavailable.items[0].id}`,
        payload: { available: false },
      }),
    );
    const base = cart(shop, customer.addressId);
    const [before] = await rows(
      t,
      'SELECT (SELECT count(*)::int FROM merchant_order) AS o, (SELECT count(*)::int FROM checkout_quote) AS q, (SELECT count(*)::int FROM trip) AS t',
    );
    const cases: [Record<string, unknown>, number, string][] = [
      [{}, 400, 'VALIDATION_FAILED'],
      [{ branch_id: shop.branchId, items: base.items }, 400, 'VALIDATION_FAILED'],
      [{ ...base, quote_id: 'abc' }, 400, 'VALIDATION_FAILED'],
      [{ ...base, items: [] }, 400, 'VALIDATION_FAILED'],
      [{ ...base, items: [{ catalog_item_id: shop.items[0].id, quantity: 0 }] }, 400, 'VALIDATION_FAILED'],
      [
        {
          ...base,
          items: [
            { catalog_item_id: shop.items[0].id, quantity: 1 },
            { catalog_item_id: shop.items[0].id, quantity: 2 },
          ],
        },
        400,
        'VALIDATION_FAILED',
      ],
      [{ ...base, payment_destination: 'card' }, 400, 'VALIDATION_FAILED'],
      [{ ...base, items: [{ catalog_item_id: 'nope', quantity: 1 }] }, 404, 'NOT_FOUND'],
      [{ ...base, items: [{ catalog_item_id: off.items[0].id, quantity: 1 }] }, 404, 'NOT_FOUND'],
      [{ ...base, branch_id: 'missing' }, 404, 'NOT_FOUND'],
      [{ ...base, address_id: other.addressId }, 404, 'NOT_FOUND'],
      [cart(off, customer.addressId), 422, 'BRANCH_INACTIVE'],
      [cart(unavailable, customer.addressId), 422, 'ITEM_NOT_AVAILABLE'],
    ];
    for (const [payload, status, code] of cases) {
      for (const url of ['/customer/orders', '/customer/checkout/preflight']) {
        if (url.endsWith('preflight') && 'quote_id' in payload) continue;
        const res = await t.req(customer.session, { method: 'POST', url, payload });
        expect(res.statusCode, `${url} ${JSON.stringify(payload)} ${res.body}`).toBe(status);
        expect(res.json().code).toBe(code);
      }
    }
    const [after] = await rows(
      t,
      'SELECT (SELECT count(*)::int FROM merchant_order) AS o, (SELECT count(*)::int FROM checkout_quote) AS q, (SELECT count(*)::int FROM trip) AS t',
    );
    expect(after).toEqual(before);
  });

  it('refuses a merchant status body with unknown fields or states (400)', async () => {
    const id = await orderIn(t, shop, customer, 'pending_confirmation');
    for (const payload of [{ status: 'shipped' }, { status: 'confirmed', total: '1.00' }, {}]) {
      const res = await t.req(shop.merchant, { method: 'PATCH', url: `/merchant/orders/${id}/status`, payload });
      expect(res.statusCode).toBe(400);
    }
    expect((await orderDb(t, id)).status).toBe('pending_confirmation');
  });
});

describe('lists and reserved routes', () => {
  it('lists orders for the customer and the merchant, filtered by status', async () => {
    const c = await newCustomer(t);
    const s = await newShop(t, ['4.00']);
    const a = await placeOrder(t, c.session, cart(s, c.addressId));
    await placeOrder(t, c.session, cart(s, c.addressId));
    ok(await setStatus(t, s.merchant, a.id, 'confirmed'));
    const mine = ok(await t.req(c.session, { method: 'GET', url: '/customer/orders?limit=1' }));
    expect(mine.data).toHaveLength(1);
    expect(mine.next_cursor).toBeTruthy();
    const page2 = ok(await t.req(c.session, { method: 'GET', url: `/customer/orders?limit=1&cursor=${mine.next_cursor}` }));
    expect(page2.data[0].id).toBe(a.id);
    const confirmed = ok(await t.req(s.merchant, { method: 'GET', url: '/merchant/orders?status=confirmed' }));
    expect(confirmed.data.map((o: { id: string }) => o.id)).toEqual([a.id]);
    expect(ok(await t.req(s.merchant, { method: 'GET', url: '/merchant/orders' })).data).toHaveLength(2);
  });

  it('payment-intent routes answer 501 FUTURE_INTEGRATION_NOT_RELEASED', async () => {
    const a = await t.req(customer.session, { method: 'POST', url: '/customer/checkout/payment-intent', payload: { amount: '10.00' } });
    const b = await t.req(customer.session, { method: 'GET', url: '/customer/checkout/payment-intents/pi_123' });
    for (const r of [a, b]) {
      expect(r.statusCode).toBe(501);
      expect(r.json().code).toBe('FUTURE_INTEGRATION_NOT_RELEASED');
    }
  });

  it('counts orders by status on the dashboard', async () => {
    const d = ok(await t.req(admin, { method: 'GET', url: '/dashboard' }));
    const [db] = await rows(t, "SELECT count(*)::int AS n FROM merchant_order WHERE organization_id = $1 AND status = 'delivered'", [
      admin.organizationId,
    ]);
    expect(d.sections.commerce.orders.delivered).toBe(db.n);
  });
});
