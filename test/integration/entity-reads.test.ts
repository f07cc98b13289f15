import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countingDb } from '../counting-db.js';
import { createTestApp, type Session, type TestApp } from '../helpers.js';
import { newDriver, newTrip, newUser, tripDb, type TestDriver } from '../logistics/fixtures.js';
import { newTerritory } from '../subadmin/fixtures.js';
import { tenantOf } from '../../src/platform/auth.js';
import { cart, newCustomer, newShop, ok, placeOrder, pt, rows, type Shop } from '../commerce/fixtures.js';
import { TRIP_SELECT } from '../../src/modules/logistics/repo/trips.js';
import { MERCHANT_SELECT } from '../../src/modules/logistics/repo/merchants.js';
import { ORDER_SELECT } from '../../src/modules/commerce/repo/orders.js';

/**
 * Entities a request already holds are not read again. A state change's event carries the entity as its transaction
 * left it (EventInput.current): the outbound webhook's resource is rendered from it, so a subscription adds no read of
 * the trip or the order, and the resource is what the GET answers right after the change. A merchant user's merchant
 * and an order event's merchant owner are read once per instance (a suspension reaches the cache at its commit).
 */

const counting = new Map<string, string[]>(); // the statements of the counted requests, by request id (test/counting-db.ts)
let t: TestApp;
let admin: Session;
let seq = 0;
beforeAll(async () => {
  const webhooksToLocalhost = { WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' };
  t = await createTestApp({ raw: webhooksToLocalhost }, { wrapDb: countingDb(counting) });
  [admin] = await Promise.all([t.as('admin'), rows(t, 'DELETE FROM webhook_subscription')]);
});
afterAll(() => t?.close());

const prefix = (select: string) => select.replace(/\s+/g, ' ').trim().slice(0, 60);
const reads = (statements: string[], select: string) => statements.filter((s) => s.startsWith(prefix(select))).length;

/** One request whose statements are noted; fails unless it answers 200. */
async function counted(s: Session, method: 'POST' | 'PATCH', url: string, payload: Record<string, unknown> = {}, status = 200) {
  const requestId = `resource-reads-${++seq}`;
  const statements: string[] = [];
  counting.set(requestId, statements);
  try {
    const res = await t.req(s, { method, url, payload, headers: { 'x-request-id': requestId } });
    expect(res.statusCode, res.body).toBe(status);
    return statements;
  } finally {
    counting.delete(requestId);
  }
}

const expressBody = (shop: Shop) => ({
  branch_id: shop.branchId,
  customer_name: 'Ana',
  customer_phone: '+59170000001',
  dropoff_address: 'Calle 2',
  dropoff_location: pt(-68.12, -16.51),
});

/** The bodies queued for a resource, in event order. */
const bodiesOf = async (resourceKey: string) =>
  (await rows(t, 'SELECT body FROM webhook_delivery WHERE resource_key = $1 ORDER BY event_seq', [resourceKey])).map((r) => r.body);

/** Runs `body` with the administrator subscribed to every event, then deletes the subscription (and its deliveries). */
async function subscribed<T>(body: () => Promise<T>): Promise<T> {
  const res = await t.req(admin, {
    method: 'POST',
    url: '/webhooks/subscriptions',
    payload: { url: `http://127.0.0.1:9/resource-reads-${++seq}`, event_types: ['*'] },
  });
  expect(res.statusCode, res.body).toBe(201);
  try {
    return await body();
  } finally {
    expect((await t.req(admin, { method: 'DELETE', url: `/webhooks/subscriptions/${res.json().id}` })).statusCode).toBe(204);
  }
}

/** A trip from assignment to delivery: per step, the events it records and the trip reads of its request. */
async function lifecycle(driver: TestDriver) {
  const trip = await newTrip(t, admin);
  const pins = await tripDb(t, trip.id);
  const steps: [Session, string, Record<string, unknown>, string[]][] = [
    [admin, `/trips/${trip.id}/assign`, { driver_id: driver.id }, ['trip.assigned']],
    [driver.session, `/driver/trips/${trip.id}/accept`, {}, ['trip.accepted']],
    [driver.session, `/trips/${trip.id}/verify-pickup`, { pin: pins.pickup_pin }, ['trip.pickup_verified']],
    [driver.session, `/driver/trips/${trip.id}/start-delivery`, {}, ['trip.on_the_way']],
    [driver.session, `/trips/${trip.id}/verify-delivery`, { pin: pins.delivery_pin }, ['trip.delivery_verified', 'trip.completed']],
  ];
  const out: { types: string[]; tripReads: number; after: unknown }[] = [];
  for (const [session, url, payload, types] of steps) {
    const statements = await counted(session, 'POST', url, payload);
    out.push({
      types,
      tripReads: reads(statements, TRIP_SELECT),
      after: ok(await t.req(admin, { method: 'GET', url: `/trips/${trip.id}` })),
    });
  }
  return { id: trip.id, steps: out };
}

describe('the resource of a state change comes with its event', () => {
  it("a trip's state changes: the update returns the trip, the subscription adds no read, each resource is the GET right after", async () => {
    const before = await lifecycle(await newDriver(t, { lon: -68.13, lat: -16.5 }));
    expect(await bodiesOf(`trip:${before.id}`)).toEqual([]);
    const { after, bodies } = await subscribed(async () => {
      const run = await lifecycle(await newDriver(t, { lon: -68.13, lat: -16.5 }));
      return { after: run, bodies: await bodiesOf(`trip:${run.id}`) };
    });
    for (const [i, step] of after.steps.entries()) {
      expect(step.tripReads, step.types.join()).toBe(before.steps[i]!.tripReads);
      expect(step.tripReads, step.types.join()).toBeGreaterThan(0);
      // The driver's own moves read the trip once, locked for the change; the update returns it as it stands after.
      if (step.types[0] === 'trip.accepted' || step.types[0] === 'trip.on_the_way') expect(step.tripReads, step.types.join()).toBe(1);
      for (const type of step.types) {
        const queued = bodies.filter((b) => b.type === type);
        expect(queued, type).toHaveLength(1);
        expect(queued[0].resource, type).toEqual(step.after);
      }
    }
  });

  it("an order's status change reads the order once, none more for the subscription; the merchant's owner read once", async () => {
    const shop: Shop = await newShop(t);
    const customer = await newCustomer(t);
    const walk = async () => {
      const order = await placeOrder(t, customer.session, cart(shop, customer.addressId));
      const steps: { orderReads: number; merchantReads: number; after: unknown }[] = [];
      for (const status of ['confirmed', 'preparing']) {
        const statements = await counted(shop.merchant, 'PATCH', `/merchant/orders/${order.id}/status`, { status });
        const listed = ok(await t.req(shop.merchant, { method: 'GET', url: '/merchant/orders?limit=50' })).data.find(
          (o: { id: string }) => o.id === order.id,
        );
        steps.push({ orderReads: reads(statements, ORDER_SELECT), merchantReads: reads(statements, MERCHANT_SELECT), after: listed });
      }
      return { id: order.id as string, steps };
    };
    const before = await walk();
    expect(await bodiesOf(`merchant_order:${before.id}`)).toEqual([]);
    const { after, changed } = await subscribed(async () => {
      const run = await walk();
      return { after: run, changed: (await bodiesOf(`merchant_order:${run.id}`)).filter((b) => b.type === 'order.status_changed') };
    });
    expect(changed).toHaveLength(2);
    for (const [i, step] of after.steps.entries()) {
      expect(step.orderReads).toBe(before.steps[i]!.orderReads);
      // The order read once, locked for the change; the update returns it as it stands after.
      expect(step.orderReads).toBe(1);
      // Neither the caller's own merchant nor the owner the event is addressed to: both were read once, below.
      expect(step.merchantReads).toBe(0);
      expect(changed[i].resource).toEqual(step.after);
    }
    // The caller's merchant was read by the shop's setup; the first status change read the owner of the order's
    // merchant for its event, the next one nothing.
    expect(before.steps.map((x) => x.merchantReads)).toEqual([1, 0]);
  });
});

describe("a merchant user's merchant", () => {
  it('is read once per instance by his requests; his suspension reaches it at once', async () => {
    const shop: Shop = await newShop(t);
    const express = async () =>
      reads(await counted(shop.merchant, 'POST', '/merchant/delivery-express', expressBody(shop), 201), MERCHANT_SELECT);
    // Requests until two in a row read as many merchants: the announcements of the shop's setup have arrived.
    const settled = async () => {
      let [last, now] = [await express(), await express()];
      for (let i = 0; i < 10 && now !== last; i++) [last, now] = [now, await express()];
      expect(now).toBe(last);
      return now;
    };
    const warm = await settled();
    ok(await t.req(admin, { method: 'POST', url: `/merchants/${shop.merchantId}/suspend`, payload: { reason: 'unpaid fees' } }));
    const refused = await t.req(shop.merchant, { method: 'POST', url: '/merchant/delivery-express', payload: expressBody(shop) });
    expect(refused.statusCode, refused.body).toBe(422);
    expect(refused.json().code).toBe('MERCHANT_NOT_APPROVED');
    ok(await t.req(admin, { method: 'POST', url: `/merchants/${shop.merchantId}/reactivate`, payload: {} }));
    // Read again after the change (once more, or twice when the change's announcement arrives within the request),
    // then from the cache again.
    expect(await express()).toBeGreaterThan(warm);
    expect(await settled()).toBe(warm);
  });

  it('is read again once a new territory covers it (the backfill announces the change)', async () => {
    const u = await newUser(t, 'comercio');
    const at = { lon: -55.5, lat: -12.5 };
    const m = ok(
      await t.req(admin, {
        method: 'POST',
        url: '/merchants',
        payload: { owner_user_id: u.userId, name: 'Far shop', location: pt(at.lon, at.lat) },
      }),
      201,
    );
    const own = () => t.db.withTenant(tenantOf(admin), (tx) => t.app.services.logistics.merchants.merchantOfUser(tx, u.userId));
    expect(await own()).toMatchObject({ id: m.id, territory_id: null });
    const territory = await newTerritory(t, admin, `Far-${seq++}`, at.lon, at.lat);
    expect(await own()).toMatchObject({ id: m.id, territory_id: territory });
  });
});
