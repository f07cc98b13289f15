import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, waitFor, type Session, type TestApp } from '../helpers.js';
import { newDriver, newTrip, tripIn, type TestDriver } from '../logistics/fixtures.js';
import { demoShop, ok, orderKit, type MoneyShop, type OrderKit } from '../money/fixtures.js';
import { newSubadmin, newTerritory } from '../subadmin/fixtures.js';
import { WEBHOOK_EVENT_TYPES } from '../../src/modules/webhooks/index.js';
import { resourceOf } from '../../src/modules/webhooks/service/webhooks.js';

/**
 * Outbound webhooks in production: every event family carries its resource as the API returns it, dispatchers and
 * sub-administrators subscribe within their scope, old deliveries are pruned, and /metrics shows the backlog and the
 * delivery latency.
 */

let t: TestApp;
let admin: Session;
let kit: OrderKit;
let shop: MoneyShop & { territoryId: string | null };
let received: { path: string; body: any }[] = [];
let server: http.Server;
let base: string;
const METRICS_TOKEN = 'metrics-token-for-webhook-tests';

beforeAll(async () => {
  server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      received.push({ path: req.url ?? '', body: JSON.parse(raw) });
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  t = await createTestApp({ metricsToken: METRICS_TOKEN, raw: { WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' } });
  admin = await t.as('admin');
  kit = await orderKit(t);
  shop = await demoShop(t);
});
afterAll(async () => {
  await t?.close();
  await new Promise((r) => server?.close(r));
});
beforeEach(async () => {
  received = [];
  await t.db.withSystem((tx) => tx.query('DELETE FROM webhook_subscription'));
});

const sys = async (text: string, params: unknown[] = []) => (await t.db.withSystem((tx) => tx.query(text, params))).rows;
let seq = 0;
async function subscribe(s: Session, eventTypes: string[]) {
  const path = `/scope-${++seq}`;
  const res = await t.req(s, {
    method: 'POST',
    url: '/webhooks/subscriptions',
    payload: { url: `${base}${path}`, event_types: eventTypes },
  });
  expect(res.statusCode, res.body).toBe(201);
  return { ...(res.json() as { id: string; scope: string }), path };
}
/** The bodies queued for a subscription, in event order. */
const bodies = async (subscriptionId: string) =>
  (await sys('SELECT body FROM webhook_delivery WHERE subscription_id = $1 ORDER BY event_seq, created_at', [subscriptionId])).map(
    (r) => r.body,
  );
const byType = async (subscriptionId: string, type: string) => (await bodies(subscriptionId)).filter((b) => b.type === type);

describe('the resource of every event family', () => {
  it('every event family has a renderer (the module refuses to start without one)', () => {
    const families = new Set(WEBHOOK_EVENT_TYPES.map(resourceOf));
    expect([...families].sort()).toEqual(['driver_settlement', 'order', 'payment_review', 'trip']);
  });

  it('orders, payment reviews and settlements carry the resource as their GET returns it at the event', async () => {
    const sub = await subscribe(admin, ['*']);
    // An order (order.created, then order.status_changed by the merchant).
    const order = await kit.place(shop, { destination: 'merchant_direct', subtotal: '100.00', fee: '15.00' });
    ok(await t.req(shop.session, { method: 'PATCH', url: `/merchant/orders/${order.id}/status`, payload: { status: 'confirmed' } }));
    const listed = ok(await t.req(shop.session, { method: 'GET', url: '/merchant/orders?limit=50' })).data.find(
      (o: { id: string }) => o.id === order.id,
    );
    const [created] = await byType(sub.id, 'order.created');
    const [changed] = await byType(sub.id, 'order.status_changed');
    expect(created.resource_id).toBe(order.id);
    // order.created shows the order as it was created, order.status_changed as it is now (the GET's view).
    expect(created.resource).toEqual({ ...listed, status: 'pending_confirmation', updated_at: created.resource.updated_at });
    expect(changed.resource).toEqual(listed);

    // A payment review (submitted, then approved by the merchant).
    const submitted = ok(
      await t.req(kit.customer.session, {
        method: 'POST',
        url: `/customer/orders/${order.id}/payment-proof`,
        payload: { amount: '115.00', customer_reference: 'TRX-9' },
      }),
      201,
    );
    const approved = ok(
      await t.req(shop.session, { method: 'POST', url: `/merchant/payment-reviews/${submitted.id}/approve`, payload: {} }),
    );
    const reviewListed = ok(await t.req(admin, { method: 'GET', url: `/admin/payment-reviews?order_id=${order.id}` })).data[0];
    expect(reviewListed).toEqual(approved);
    expect((await byType(sub.id, 'payment_review.submitted'))[0].resource).toEqual(submitted);
    expect((await byType(sub.id, 'payment_review.approved'))[0].resource).toEqual(reviewListed);

    // A driver settlement (created, then paid).
    const driver: TestDriver = await newDriver(t, { lon: -68.13, lat: -16.5 });
    await tripIn(t, admin, driver, 'completed');
    const settlement = ok(await t.req(admin, { method: 'POST', url: `/admin/drivers/${driver.id}/settlements`, payload: {} }), 201);
    const paid = ok(await t.req(admin, { method: 'POST', url: `/admin/settlements/${settlement.id}/paid`, payload: {} }));
    const driverView = ok(await t.req(driver.session, { method: 'GET', url: '/driver/settlements' })).data.find(
      (s: { id: string }) => s.id === settlement.id,
    );
    expect(driverView).toEqual(paid);
    expect((await byType(sub.id, 'driver_settlement.created'))[0].resource).toEqual(settlement);
    expect((await byType(sub.id, 'driver_settlement.paid'))[0].resource).toEqual(paid);

    // No event of a known family goes out without its resource.
    for (const b of await bodies(sub.id)) expect(b.resource, b.type).not.toBeNull();
  });
});

describe('subscriptions within the caller scope', () => {
  it("a dispatcher's subscription gets the trip events only; other families are refused with 422", async () => {
    const dispatch = await t.as('dispatch');
    const refused = await t.req(dispatch, {
      method: 'POST',
      url: '/webhooks/subscriptions',
      payload: { url: `${base}/d`, event_types: ['trip.created', 'driver_settlement.paid'] },
    });
    expect(refused.statusCode).toBe(422);
    expect(refused.json()).toMatchObject({ code: 'WEBHOOK_EVENT_TYPE_OUT_OF_SCOPE' });
    expect(await sys('SELECT id FROM webhook_subscription')).toEqual([]);

    const sub = await subscribe(dispatch, ['*']);
    expect(sub.scope).toBe('dispatch');
    const trip = await newTrip(t, admin);
    await kit.place(shop, { destination: 'cash', subtotal: '10.00', fee: '15.00' });
    const types = (await bodies(sub.id)).map((b) => b.type);
    expect(types).toEqual(['trip.created']);
    const [b] = await bodies(sub.id);
    expect(b.resource).toEqual(ok(await t.req(dispatch, { method: 'GET', url: `/trips/${trip.id}` })));
    // His own subscriptions only; the administrator sees them all.
    const adminSub = await subscribe(admin, ['trip.created']);
    expect((await t.req(dispatch, { method: 'GET', url: `/webhooks/subscriptions/${adminSub.id}` })).statusCode).toBe(404);
    expect(ok(await t.req(dispatch, { method: 'GET', url: '/webhooks/subscriptions' })).data.map((s: { id: string }) => s.id)).toEqual([
      sub.id,
    ]);
    expect(ok(await t.req(admin, { method: 'GET', url: `/webhooks/subscriptions/${sub.id}` })).scope).toBe('dispatch');
  });

  it("a sub-administrator's subscription gets the events of the territories he holds now, with the GET's permission", async () => {
    const inside = await newTerritory(t, admin, `W-${Date.now()}`, -60.0, -20.0);
    const elsewhere = await newTerritory(t, admin, `X-${Date.now()}`, -61.0, -21.0);
    const sub = await newSubadmin(t, admin, { territory_ids: [inside], permissions: { orders_status: false } });
    const refused = await t.req(sub.session, {
      method: 'POST',
      url: '/webhooks/subscriptions',
      payload: { url: `${base}/s`, event_types: ['order.created'] },
    });
    expect(refused.statusCode).toBe(422);
    expect(refused.json().code).toBe('WEBHOOK_EVENT_TYPE_OUT_OF_SCOPE');
    const s = await subscribe(sub.session, ['*']);
    expect(s.scope).toBe('territories');
    const ours = await newTrip(t, admin, {}, { lon: -60.0, lat: -20.0 });
    await newTrip(t, admin, {}, { lon: -61.0, lat: -21.0 }); // another territory
    await newTrip(t, admin); // the demo territory
    expect((await bodies(s.id)).map((b) => b.resource_id)).toEqual([ours.id]);
    const [b] = await bodies(s.id);
    expect(b.resource).toEqual(ok(await t.req(sub.session, { method: 'GET', url: `/trips/${ours.id}` })));
    // The territory taken away: nothing more from it; given another: its events flow.
    ok(await t.req(admin, { method: 'PATCH', url: `/admin/subadmins/${sub.userId}`, payload: { territory_ids: [elsewhere] } }));
    await newTrip(t, admin, {}, { lon: -60.0, lat: -20.0 });
    const now = await newTrip(t, admin, {}, { lon: -61.0, lat: -21.0 });
    expect((await bodies(s.id)).map((x) => x.resource_id)).toEqual([ours.id, now.id]);
    // A driver settlement (no territory, administrators only) never reaches him.
    expect((await bodies(s.id)).filter((x) => resourceOf(x.type) === 'driver_settlement')).toEqual([]);
  });
});

describe('retention and metrics', () => {
  it('the pruner deletes finished deliveries older than the retention with their attempts, never pending ones; two pruners at once share the work', async () => {
    const sub = await subscribe(admin, ['trip.created']);
    for (let i = 0; i < 5; i++) await newTrip(t, admin);
    const worker = t.app.services.webhooks.newWorker({ now: () => new Date(Date.now() + 60_000), perSubscription: 10 });
    expect(await worker.runOnce()).toBe(5);
    await newTrip(t, admin); // still pending
    const all = await sys('SELECT id, status FROM webhook_delivery WHERE subscription_id = $1 ORDER BY id', [sub.id]);
    expect(all.map((r) => r.status).sort()).toEqual(['delivered', 'delivered', 'delivered', 'delivered', 'delivered', 'pending']);
    // Four finished long ago, one recently; the pending one is old too but never a candidate.
    const old = all
      .filter((r) => r.status === 'delivered')
      .slice(0, 4)
      .map((r) => r.id);
    await sys("UPDATE webhook_delivery SET updated_at = now() - interval '40 days' WHERE id = ANY($1::text[]) OR status = 'pending'", [
      old,
    ]);
    expect((await sys('SELECT count(*)::int AS n FROM webhook_attempt WHERE delivery_id = ANY($1::text[])', [old]))[0].n).toBe(4);

    const pruner = () => t.app.services.webhooks.newPruner({ retentionMs: 30 * 86_400_000, batch: 1, maxBatches: 10 });
    const counts = await Promise.all([pruner().runOnce(), pruner().runOnce()]);
    expect(counts[0] + counts[1]).toBe(4);
    const left = await sys('SELECT id, status FROM webhook_delivery WHERE subscription_id = $1', [sub.id]);
    expect(left.map((r) => r.status).sort()).toEqual(['delivered', 'pending']);
    expect((await sys('SELECT count(*)::int AS n FROM webhook_attempt WHERE delivery_id = ANY($1::text[])', [old]))[0].n).toBe(0);
    expect(await pruner().runOnce()).toBe(0);
  });

  it('/metrics shows the backlog by status, its oldest age, and the delivery latency histogram', async () => {
    await subscribe(admin, ['trip.created']);
    await newTrip(t, admin);
    await newTrip(t, admin);
    const scrape = async () => {
      const res = await t.req(null, { method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
      expect(res.statusCode).toBe(200);
      return res.body;
    };
    const metric = (text: string, name: string) =>
      Number(
        text
          .split('\n')
          .find((l) => l.startsWith(name))
          ?.split(' ')
          .pop(),
      );
    const before = await scrape();
    expect(metric(before, 'webhook_backlog{status="pending"}')).toBe(2);
    expect(metric(before, 'webhook_backlog_oldest_seconds')).toBeGreaterThanOrEqual(0);
    const deliveredBefore = metric(before, 'webhook_delivery_latency_seconds_count') || 0;
    const worker = t.app.services.webhooks.newWorker({ now: () => new Date(Date.now() + 60_000), perSubscription: 10 });
    expect(await worker.runOnce()).toBe(2);
    const after = await scrape();
    expect(metric(after, 'webhook_backlog{status="pending"}')).toBe(0);
    expect(metric(after, 'webhook_backlog_oldest_seconds')).toBe(0);
    expect(metric(after, 'webhook_delivery_latency_seconds_count')).toBe(deliveredBefore + 2);
    expect(metric(after, 'webhook_attempt_duration_seconds_count{outcome="delivered"}')).toBeGreaterThanOrEqual(2);
  });
});

describe('a subscription deleted while an event is written', () => {
  it.skipIf(!process.env.TEST_DATABASE_URL)(
    'the write that raised the event waits for the deletion and succeeds, with no delivery for the deleted subscription',
    async () => {
      const sub = await subscribe(admin, ['trip.created']);
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      let deleted!: () => void;
      const isDeleted = new Promise<void>((r) => (deleted = r));
      // The admin's deletion in flight: its row is deleted, not yet committed, until the test lets it go.
      const deletion = t.db.withSystem(async (tx) => {
        await tx.query('DELETE FROM webhook_subscription WHERE id = $1', [sub.id]);
        deleted();
        await gate;
      });
      await isDeleted;
      const write = newTrip(t, admin);
      // The write reaches the subscription's row and waits for the deletion.
      await waitFor(
        async () =>
          (await sys("SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'")).length > 0,
        { timeout: 20_000, interval: 20, message: 'the write waiting for the deletion' },
      );
      release();
      await deletion;
      // newTrip expects its 201 (without the lock, the deliveries' insert failed: 422 REFERENCE_NOT_FOUND).
      expect((await write).status).toBe('pending');
      expect(await sys('SELECT 1 FROM webhook_delivery WHERE subscription_id = $1', [sub.id])).toEqual([]);
    },
  );
});
