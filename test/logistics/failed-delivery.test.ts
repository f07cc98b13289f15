import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type Session, type TestApp } from '../helpers.js';
import { driverDb, eventTypes, newDriver, pt, setFailedDeliveryPolicy, tripDb, type TestDriver } from './fixtures.js';
import { newMerchant, ok, orderKit, orderRow, walletEntries, adminActor, type MoneyShop, type OrderKit } from '../money/fixtures.js';
import { JPEG } from '../storage/fixtures.js';

/**
 * A delivery that could not be completed. The driver reports it with a reason (and optional evidence);
 * the organization's failed_delivery_policy sends the trip back to the merchant (returning → returned, pickup PIN) or
 * closes it (failed). Orders and express requests follow, the merchant is charged the attempt's delivery fee (once),
 * the driver earns his driver_earning, events reach the streams, and the driver app can report it offline.
 */
let t: TestApp;
let kit: OrderKit;
let admin: Session;
let shop: MoneyShop;

beforeAll(async () => {
  t = await createTestApp();
  kit = await orderKit(t);
  admin = kit.admin;
  shop = await newMerchant(t, admin);
}, 60_000);
afterAll(() => t?.close());

/** An order of `shop` whose trip `d` has picked up and is carrying to the customer (order in_delivery). */
async function orderInTransit(
  d: TestDriver,
  spec: Parameters<OrderKit['place']>[1] = { destination: 'platform', subtotal: '100.00', fee: '12.50' },
) {
  const o = await kit.place(shop, spec);
  const tripId = await kit.ready(shop, o.id);
  ok(await t.req(admin, { method: 'POST', url: `/trips/${tripId}/assign`, payload: { driver_id: d.id } }));
  ok(await t.req(d.session, { method: 'POST', url: `/driver/trips/${tripId}/accept` }));
  ok(
    await t.req(d.session, {
      method: 'POST',
      url: `/trips/${tripId}/verify-pickup`,
      payload: { pin: (await tripDb(t, tripId)).pickup_pin },
    }),
  );
  ok(await t.req(d.session, { method: 'POST', url: `/driver/trips/${tripId}/start-delivery` }));
  expect((await orderRow(t, o.id)).status).toBe('in_delivery');
  return { orderId: o.id, tripId };
}

/** A delivery_express request of `shop` whose trip `d` is carrying. */
async function expressInTransit(d: TestDriver) {
  const r = ok(
    await t.req(shop.session, {
      method: 'POST',
      url: '/merchant/delivery-express',
      payload: { branch_id: shop.branchId, customer_name: 'P', dropoff_address: 'Calle 9', dropoff_location: pt(-68.121, -16.512) },
    }),
    201,
  );
  const tripId = r.trip_id as string;
  ok(await t.req(admin, { method: 'POST', url: `/trips/${tripId}/assign`, payload: { driver_id: d.id } }));
  ok(await t.req(d.session, { method: 'POST', url: `/driver/trips/${tripId}/accept` }));
  ok(
    await t.req(d.session, {
      method: 'POST',
      url: `/trips/${tripId}/verify-pickup`,
      payload: { pin: (await tripDb(t, tripId)).pickup_pin },
    }),
  );
  ok(await t.req(d.session, { method: 'POST', url: `/driver/trips/${tripId}/start-delivery` }));
  return { expressId: r.id as string, tripId };
}

async function uploadEvidence(
  d: TestDriver,
  tripId: string,
  stage: 'pickup' | 'delivery' = 'delivery',
  proofType = 'photo',
): Promise<string> {
  const slot = ok(
    await t.req(d.session, {
      method: 'POST',
      url: '/storage/evidence/uploads',
      payload: { trip_id: tripId, stage, proof_type: proofType, mime_type: 'image/jpeg', filename: 'door.jpg', size_bytes: JPEG.length },
    }),
    201,
  );
  const put = await t.req(d.session, {
    method: 'PUT',
    url: `/storage/uploads/${slot.upload_id}`,
    payload: JPEG,
    headers: { 'content-type': 'image/jpeg', 'x-upload-token': slot.upload_token },
  });
  return ok(put, 201).id;
}

const fail = (d: TestDriver, tripId: string, body: Record<string, unknown> = { reason: 'recipient_absent' }) =>
  t.req(d.session, { method: 'POST', url: `/driver/trips/${tripId}/fail-delivery`, payload: body });

async function tripEntries(tripId: string) {
  const { rows } = await t.db.withSystem((tx) =>
    tx.query(
      'SELECT entry_type, amount::text AS amount, order_id, payment_destination FROM merchant_wallet_entry WHERE trip_id = $1 ORDER BY id',
      [tripId],
    ),
  );
  return rows as { entry_type: string; amount: string; order_id: string | null; payment_destination: string | null }[];
}

const event = async (tripId: string, type: string) =>
  (await t.db.withSystem((tx) => tx.query('SELECT * FROM event WHERE entity_id = $1 AND type = $2 ORDER BY seq', [tripId, type]))).rows;

describe('failed delivery, policy return_to_merchant (default)', () => {
  it('goes to returning with reason and evidence, the order and money follow; the pickup PIN closes it as returned', async () => {
    const d = await newDriver(t, { lon: -68.135, lat: -16.5 }, { capacity: 1, admin });
    const { orderId, tripId } = await orderInTransit(d);
    await kit.receive(orderId);
    expect((await orderRow(t, orderId)).payment_status).toBe('paid');
    const evidence = await uploadEvidence(d, tripId);

    const res = await fail(d, tripId, {
      reason: 'recipient_absent',
      note: 'nobody at the door, called twice',
      evidence: { type: 'photo', storage_key: evidence },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({
      status: 'returning',
      failure_reason: 'recipient_absent',
      failure_note: 'nobody at the door, called twice',
      returned_at: null,
    });
    expect(res.json().failed_at).toBeTruthy();
    // Still carrying the goods: the trip keeps its unit of the driver's capacity.
    expect((await driverDb(t, d.id)).active_trips).toBe(1);

    // The order follows; a received platform payment is refunded in full; the merchant pays the attempt: one delivery_fee_debit, no sale credit.
    expect(await orderRow(t, orderId)).toMatchObject({
      status: 'delivery_failed',
      payment_status: 'refunded',
      status_reason: 'delivery failed: recipient_absent',
    });
    expect(await walletEntries(t, { orderId })).toEqual([{ entry_type: 'delivery_fee_debit', amount: '-12.50' }]);
    expect(await tripEntries(tripId)).toEqual([
      { entry_type: 'delivery_fee_debit', amount: '-12.50', order_id: orderId, payment_destination: null },
    ]);
    const { wallet } = ok(await t.req(shop.session, { method: 'GET', url: '/merchant/settlement-rule' }));
    expect(wallet).toMatchObject({ balance: '-12.50', pending: '0.00', available: '0.00', debt: '12.50' });

    const [ev] = await event(tripId, 'trip.delivery_failed');
    expect(ev.payload).toMatchObject({
      trip_id: tripId,
      status: 'returning',
      failure_reason: 'recipient_absent',
      policy: 'return_to_merchant',
      evidence: { type: 'photo', storage_key: evidence },
    });
    expect(ev.audience_user_ids).toEqual(expect.arrayContaining([d.userId, kit.customer.userId, shop.session.userId]));
    const proofs = ok(await t.req(shop.session, { method: 'GET', url: `/trips/${tripId}/proofs` })).data;
    expect(proofs.map((p: { stage: string; pin_verified: boolean }) => [p.stage, p.pin_verified])).toEqual([
      ['pickup', true],
      ['delivery', false],
    ]);
    // The customer's inbox says so.
    const inbox = ok(await t.req(kit.customer.session, { method: 'GET', url: '/notifications' })).data as { type: string; body: string }[];
    expect(inbox.find((n) => n.type === 'trip.delivery_failed')?.body).toMatch(/recipient absent/);

    // Double submission: the trip is no longer in transit.
    const again = await fail(d, tripId, { reason: 'refused' });
    expect(again.statusCode).toBe(409);
    expect(again.json()).toMatchObject({ code: 'INVALID_TRANSITION' });
    expect(await tripEntries(tripId)).toHaveLength(1);

    // The merchant gets the goods back: the driver proves it with the pickup PIN.
    const pin = (await tripDb(t, tripId)).pickup_pin as string;
    const wrong = await t.req(d.session, {
      method: 'POST',
      url: `/driver/trips/${tripId}/return`,
      payload: { pin: pin === '0000' ? '0001' : '0000' },
    });
    expect(wrong.statusCode).toBe(422);
    expect(wrong.json()).toMatchObject({ code: 'INVALID_PIN', attempts_remaining: 4 });
    expect((await tripDb(t, tripId)).status).toBe('returning');
    const back = await t.req(d.session, { method: 'POST', url: `/driver/trips/${tripId}/return`, payload: { pin } });
    expect(back.statusCode, back.body).toBe(200);
    expect(back.json()).toMatchObject({ status: 'returned', failure_reason: 'recipient_absent' });
    expect(back.json().returned_at).toBeTruthy();
    expect((await driverDb(t, d.id)).active_trips).toBe(0);
    expect((await orderRow(t, orderId)).status).toBe('returned');
    // The return leg costs nothing more.
    expect(await tripEntries(tripId)).toHaveLength(1);
    expect(await eventTypes(t, tripId)).toEqual(expect.arrayContaining(['trip.on_the_way', 'trip.delivery_failed', 'trip.returned']));
    expect((await eventTypes(t, tripId)).slice(-2)).toEqual(['trip.delivery_failed', 'trip.returned']);

    // The driver earns the attempt once it ended.
    const earn = ok(await t.req(d.session, { method: 'GET', url: '/driver/earnings' }));
    expect(earn).toMatchObject({ completed_trips: 1, total_earnings: (await tripDb(t, tripId)).driver_earning });
    expect(earn.data[0]).toMatchObject({ trip_id: tripId, status: 'returned' });
    // The driver app's sync shows the returned trip.
    const pull = ok(await t.req(d.session, { method: 'GET', url: '/mobile/sync/pull' }));
    const synced = JSON.stringify(pull);
    expect(synced).toContain(tripId);
    expect(synced).toContain('"returned"');
  });

  it('a cash order: nothing was collected (payment stays pending) and the merchant owes the fee; a repeat of the money hook writes nothing', async () => {
    const d = await newDriver(t, { lon: -68.135, lat: -16.5 }, { capacity: 1, admin });
    const { orderId, tripId } = await orderInTransit(d, { destination: 'cash', subtotal: '40.00', fee: '5.00' });
    ok(await fail(d, tripId, { reason: 'wrong_address' }));
    expect(await orderRow(t, orderId)).toMatchObject({ status: 'delivery_failed', payment_status: 'pending' });
    expect(await walletEntries(t, { orderId })).toEqual([{ entry_type: 'delivery_fee_debit', amount: '-5.00' }]);
    const actor = adminActor(t);
    await t.db.withTenant({ organizationId: actor.organizationId, userId: actor.userId }, async (tx) => {
      const facts = (await t.app.services.orders!.getOrderFacts(tx, orderId))!;
      await t.app.services.money!.deliveryFailed(tx, actor, { order: facts });
    });
    expect(await walletEntries(t, { orderId })).toHaveLength(1);
  });
});

describe('failed delivery, policy close', () => {
  it('an express request: the trip ends as failed, capacity released, the request follows and is charged like a completed one', async () => {
    await setFailedDeliveryPolicy(t, 'close');
    try {
      const d = await newDriver(t, { lon: -68.135, lat: -16.5 }, { capacity: 1, admin });
      const { expressId, tripId } = await expressInTransit(d);
      const res = await fail(d, tripId, { reason: 'refused' });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject({ status: 'failed', failure_reason: 'refused', failure_note: null });
      expect((await driverDb(t, d.id)).active_trips).toBe(0);
      const req = (await t.db.withSystem((tx) => tx.query('SELECT status FROM delivery_express_request WHERE id = $1', [expressId])))
        .rows[0];
      expect(req.status).toBe('delivery_failed');
      const trip = await tripDb(t, tripId);
      const entries = await tripEntries(tripId);
      expect(entries.map((e) => e.entry_type)).toEqual(['delivery_fee_debit']);
      const sum = entries.reduce((s, e) => s + Math.round(Number(e.amount) * 100), 0);
      expect(sum).toBe(-Math.round(Number(trip.delivery_fee) * 100));
      expect((await event(tripId, 'trip.delivery_failed'))[0].payload).toMatchObject({
        status: 'failed',
        policy: 'close',
        failure_reason: 'refused',
      });
      // failed is terminal: no return leg, no second report, no cancellation.
      expect(
        (await t.req(d.session, { method: 'POST', url: `/driver/trips/${tripId}/return`, payload: { pin: trip.pickup_pin } })).statusCode,
      ).toBe(409);
      expect((await fail(d, tripId)).statusCode).toBe(409);
      expect(
        (await t.req(admin, { method: 'POST', url: `/trips/${tripId}/status`, payload: { status: 'cancelled', reason: 'x' } })).statusCode,
      ).toBe(409);
      expect(ok(await t.req(d.session, { method: 'GET', url: '/driver/earnings' })).data[0]).toMatchObject({
        trip_id: tripId,
        status: 'failed',
      });
      // The recipient's link: the delivery ended, so no PIN and no driver position, and the link now expires.
      const link = ok(await t.req(shop.session, { method: 'GET', url: `/trips/${tripId}/recipient-link` }));
      expect(link.expires_at).toBeTruthy();
      const view = await t.app.inject({ method: 'GET', url: link.url.replace(/^https?:\/\/[^/]+/, '') });
      expect(view.statusCode, view.body).toBe(200);
      expect(view.json()).toMatchObject({ status: 'failed', delivery_pin: null, driver_location: null });
    } finally {
      await setFailedDeliveryPolicy(t, 'return_to_merchant');
    }
  });
});

describe('refusals (nothing written)', () => {
  let d: TestDriver;
  let tripId: string;
  let orderId: string;
  beforeAll(async () => {
    d = await newDriver(t, { lon: -68.135, lat: -16.5 }, { capacity: 5, admin });
    ({ tripId, orderId } = await orderInTransit(d));
  }, 60_000);

  const unchanged = async () => {
    expect(await tripDb(t, tripId)).toMatchObject({ status: 'in_transit', failure_reason: null, failed_at: null });
    expect((await orderRow(t, orderId)).status).toBe('in_delivery');
    expect(await tripEntries(tripId)).toEqual([]);
    expect(await eventTypes(t, tripId)).not.toContain('trip.delivery_failed');
  };

  it('an unknown reason is 400 on the field reason (the document lists the allowed reasons); a missing reason or an unknown field too', async () => {
    const res = await fail(d, tripId, { reason: 'dog_bit_me' });
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe('VALIDATION_FAILED');
    expect(res.json().errors.map((e: { field: string }) => e.field)).toContain('reason');
    const doc = ok(await t.req(null, { method: 'GET', url: '/openapi.json' }));
    const body = doc.paths['/api/v1/driver/trips/{id}/fail-delivery'].post.requestBody.content['application/json'].schema;
    const reason = JSON.stringify(body.properties?.reason ?? doc.components.schemas);
    for (const r of ['recipient_absent', 'refused', 'wrong_address', 'unsafe_location', 'damaged', 'other']) expect(reason).toContain(r);
    expect((await fail(d, tripId, {})).statusCode).toBe(400);
    expect((await fail(d, tripId, { reason: 'refused', extra: 1 })).statusCode).toBe(400);
    await unchanged();
  });

  it('evidence of another trip, or of the pickup stage, is 422', async () => {
    const other = await orderInTransit(d);
    const foreign = await uploadEvidence(d, other.tripId);
    const res = await fail(d, tripId, { reason: 'refused', evidence: { type: 'photo', storage_key: foreign } });
    expect(res.statusCode, res.body).toBe(422);
    expect(res.json().code).toBe('STORAGE_OBJECT_WRONG_TRIP');
    const pickup = await uploadEvidence(d, tripId, 'pickup');
    const stage = await fail(d, tripId, { reason: 'refused', evidence: { type: 'photo', storage_key: pickup } });
    expect(stage.statusCode, stage.body).toBe(422);
    await unchanged();
  });

  it('only the assigned driver: another driver gets 409 TRIP_NOT_ASSIGNED_TO_YOU; customers, merchants and dispatch 403', async () => {
    const other = await newDriver(t, { lon: -68.135, lat: -16.5 }, { admin });
    const res = await fail(other, tripId);
    expect(res.statusCode).toBe(409);
    expect(res.json().code).toBe('TRIP_NOT_ASSIGNED_TO_YOU');
    for (const s of [kit.customer.session, shop.session, admin]) {
      expect(
        (await t.req(s, { method: 'POST', url: `/driver/trips/${tripId}/fail-delivery`, payload: { reason: 'refused' } })).statusCode,
      ).toBe(403);
    }
    await unchanged();
  });

  it('before the trip is in transit: 409 INVALID_TRANSITION', async () => {
    const o = await kit.place(shop, { destination: 'cash', subtotal: '10.00', fee: '5.00' });
    const early = await kit.ready(shop, o.id);
    ok(await t.req(admin, { method: 'POST', url: `/trips/${early}/assign`, payload: { driver_id: d.id } }));
    ok(await t.req(d.session, { method: 'POST', url: `/driver/trips/${early}/accept` }));
    const res = await fail(d, early);
    expect(res.statusCode).toBe(409);
    expect(res.json()).toMatchObject({ code: 'INVALID_TRANSITION' });
    expect((await tripDb(t, early)).status).toBe('accepted');
  });
});

describe('dispatch (POST /trips/:id/status)', () => {
  it('records a failed delivery reported by phone (failure_reason required) and closes a return the merchant confirms', async () => {
    const d = await newDriver(t, { lon: -68.135, lat: -16.5 }, { capacity: 2, admin });
    const a = await orderInTransit(d);
    const b = await orderInTransit(d);
    const status = (tripId: string, body: Record<string, unknown>) =>
      t.req(admin, { method: 'POST', url: `/trips/${tripId}/status`, payload: { reason: 'driver phoned in', ...body } });

    const missing = await status(a.tripId, { status: 'failed' });
    expect(missing.statusCode).toBe(400);
    expect(missing.json().errors).toEqual([{ field: 'failure_reason', message: 'required' }]);
    expect((await status(a.tripId, { status: 'failed', failure_reason: 'stolen' })).statusCode).toBe(400);
    expect((await tripDb(t, a.tripId)).status).toBe('in_transit');

    const closed = await status(a.tripId, { status: 'failed', failure_reason: 'damaged' });
    expect(closed.statusCode, closed.body).toBe(200);
    expect(closed.json()).toMatchObject({ status: 'failed', failure_reason: 'damaged', failure_note: 'driver phoned in' });
    expect((await orderRow(t, a.orderId)).status).toBe('delivery_failed');
    expect((await event(a.tripId, 'trip.delivery_failed'))[0].payload).toMatchObject({
      recorded_by: 'dispatch',
      failure_reason: 'damaged',
    });
    expect((await driverDb(t, d.id)).active_trips).toBe(1);

    ok(await status(b.tripId, { status: 'returning', failure_reason: 'wrong_address' }));
    // Goods on their way back cannot be cancelled; the return is closed once the merchant confirms.
    expect((await status(b.tripId, { status: 'cancelled' })).statusCode).toBe(409);
    const back = await status(b.tripId, { status: 'returned' });
    expect(back.statusCode, back.body).toBe(200);
    expect(back.json().status).toBe('returned');
    expect((await orderRow(t, b.orderId)).status).toBe('returned');
    expect((await driverDb(t, d.id)).active_trips).toBe(0);
    expect(await tripEntries(b.tripId)).toHaveLength(1);
    // No payment is received for an order whose delivery failed.
    const receipt = await t.req(admin, {
      method: 'POST',
      url: `/admin/orders/${b.orderId}/payment-received`,
      payload: { method: 'driver_cash' },
    });
    expect(receipt.statusCode).toBe(409);
    expect(receipt.json().code).toBe('ORDER_DELIVERY_FAILED');
  });
});

describe('driver app offline', () => {
  it('sync push trip.fail_delivery applies once; a later report of the same trip is a conflict', async () => {
    const d = await newDriver(t, { lon: -68.135, lat: -16.5 }, { capacity: 1, admin });
    const { tripId, orderId } = await orderInTransit(d);
    const op = {
      client_operation_id: `fail-${tripId}`,
      type: 'trip.fail_delivery',
      payload: { trip_id: tripId, reason: 'unsafe_location', note: 'no signal there' },
    };
    const push = (ops: unknown[]) => t.req(d.session, { method: 'POST', url: '/mobile/sync/push', payload: { operations: ops } });
    const r1 = ok(await push([op])).results[0];
    expect(r1).toMatchObject({
      status: 'applied',
      replayed: false,
      data: { id: tripId, status: 'returning', failure_reason: 'unsafe_location' },
    });
    expect(ok(await push([op])).results[0]).toMatchObject({ status: 'applied', replayed: true });
    const r3 = ok(await push([{ ...op, client_operation_id: `fail2-${tripId}` }])).results[0];
    expect(r3).toMatchObject({ status: 'conflict', code: 'INVALID_TRANSITION' });
    const bad = ok(await push([{ ...op, client_operation_id: `fail3-${tripId}`, payload: { trip_id: tripId, reason: 'nope' } }]))
      .results[0];
    expect(bad).toMatchObject({ status: 'rejected', code: 'VALIDATION_FAILED' });
    expect((await orderRow(t, orderId)).status).toBe('delivery_failed');
    expect(await event(tripId, 'trip.delivery_failed')).toHaveLength(1);
    expect(await tripEntries(tripId)).toHaveLength(1);
  });
});

describe('settings', () => {
  it('failed_delivery_policy is return_to_merchant by default, administrators change it, other values are 400', async () => {
    expect(ok(await t.req(admin, { method: 'GET', url: '/logistics/settings' })).failed_delivery_policy).toBe('return_to_merchant');
    const bad = await t.req(admin, { method: 'PATCH', url: '/logistics/settings', payload: { failed_delivery_policy: 'burn' } });
    expect(bad.statusCode).toBe(400);
    expect(
      (await t.req(await t.as('dispatch'), { method: 'PATCH', url: '/logistics/settings', payload: { failed_delivery_policy: 'close' } }))
        .statusCode,
    ).toBe(403);
    expect(ok(await t.req(admin, { method: 'GET', url: '/logistics/settings' })).failed_delivery_policy).toBe('return_to_merchant');
  });
});
