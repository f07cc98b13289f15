import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { createTestApp, type Session, type TestApp } from '../helpers.js';
import { driverDb, eventTypes, newDriver, newTrip, pt, tripDb, tripIn, type TestDriver } from './fixtures.js';

const STATES = [
  'pending',
  'assigned',
  'accepted',
  'picked_up',
  'in_transit',
  'completed',
  'cancelled',
  'returning',
  'returned',
  'failed',
] as const;
type State = (typeof STATES)[number];

let t: TestApp;
let admin: Session;
let a: TestDriver;
let b: TestDriver;

beforeAll(async () => {
  t = await createTestApp();
  admin = await t.as('dispatch');
  a = await newDriver(t, { lon: -68.131, lat: -16.501 }, { capacity: 50 });
  b = await newDriver(t, { lon: -68.132, lat: -16.502 }, { capacity: 50 });
});
afterAll(() => t?.close());

/** Every trip operation: from which states it is allowed and the state it leads to. Written from the decisions, not read from the code. */
const OPERATIONS: { name: string; from: State[]; to: State; run: (id: string) => Promise<LightMyRequestResponse> }[] = [
  {
    name: 'assign (to driver b)',
    from: ['pending', 'assigned', 'accepted'],
    to: 'assigned',
    run: (id) => t.req(admin, { method: 'POST', url: `/trips/${id}/assign`, payload: { driver_id: b.id } }),
  },
  {
    name: 'auto-assign',
    from: ['pending'],
    to: 'assigned',
    run: (id) => t.req(admin, { method: 'POST', url: `/trips/${id}/auto-assign` }),
  },
  {
    name: 'driver accept',
    from: ['assigned'],
    to: 'accepted',
    run: (id) => t.req(a.session, { method: 'POST', url: `/driver/trips/${id}/accept` }),
  },
  {
    name: 'driver reject',
    from: ['assigned'],
    to: 'pending',
    run: (id) => t.req(a.session, { method: 'POST', url: `/driver/trips/${id}/reject`, payload: { reason: 'busy' } }),
  },
  {
    name: 'verify-pickup',
    from: ['accepted'],
    to: 'picked_up',
    run: async (id) =>
      t.req(a.session, { method: 'POST', url: `/trips/${id}/verify-pickup`, payload: { pin: (await tripDb(t, id)).pickup_pin } }),
  },
  {
    name: 'start-delivery',
    from: ['picked_up'],
    to: 'in_transit',
    run: (id) => t.req(a.session, { method: 'POST', url: `/driver/trips/${id}/start-delivery` }),
  },
  {
    name: 'verify-delivery',
    from: ['in_transit'],
    to: 'completed',
    run: async (id) =>
      t.req(a.session, { method: 'POST', url: `/trips/${id}/verify-delivery`, payload: { pin: (await tripDb(t, id)).delivery_pin } }),
  },
  // Failed delivery, with the default policy return_to_merchant (the `close` policy's in_transit → failed: failed-delivery.test.ts).
  {
    name: 'fail-delivery',
    from: ['in_transit'],
    to: 'returning',
    run: (id) => t.req(a.session, { method: 'POST', url: `/driver/trips/${id}/fail-delivery`, payload: { reason: 'refused' } }),
  },
  {
    name: 'return (pickup PIN)',
    from: ['returning'],
    to: 'returned',
    run: async (id) =>
      t.req(a.session, { method: 'POST', url: `/driver/trips/${id}/return`, payload: { pin: (await tripDb(t, id)).pickup_pin } }),
  },
  ...STATES.map((target) => ({
    name: `dispatch status → ${target}`,
    from: ({
      pending: ['assigned', 'accepted'],
      cancelled: ['pending', 'assigned', 'accepted', 'picked_up', 'in_transit'],
      returning: ['in_transit'],
      failed: ['in_transit'],
      returned: ['returning'],
    }[target as string] ?? []) as State[],
    to: target,
    run: (id: string) =>
      t.req(admin, {
        method: 'POST',
        url: `/trips/${id}/status`,
        payload: {
          status: target,
          reason: 'table test',
          ...(target === 'returning' || target === 'failed' ? { failure_reason: 'recipient_absent' } : {}),
        },
      }),
  })),
];

describe('trip transitions (table)', () => {
  it('refuses every operation outside its states with 409 and changes nothing', async () => {
    for (const from of STATES) {
      const id = await tripIn(t, admin, a, from);
      for (const op of OPERATIONS.filter((o) => !o.from.includes(from))) {
        const res = await op.run(id);
        expect(res.statusCode, `${op.name} from ${from}: ${res.body}`).toBe(409);
        expect(['INVALID_TRANSITION', 'TRIP_NOT_ASSIGNED_TO_YOU']).toContain(JSON.parse(res.body).code);
        expect((await tripDb(t, id)).status, `${op.name} from ${from}`).toBe(from);
      }
    }
  });

  it('applies every allowed operation and records the new state', async () => {
    for (const op of OPERATIONS) {
      for (const from of op.from) {
        const id = await tripIn(t, admin, a, from);
        const res = await op.run(id);
        expect(res.statusCode, `${op.name} from ${from}: ${res.body}`).toBe(200);
        expect(res.json().status).toBe(op.to);
        expect((await tripDb(t, id)).status).toBe(op.to);
      }
    }
  });

  it('keeps the driver capacity counters equal to the active trips', async () => {
    const { rows } = await t.db.withSystem((tx) =>
      tx.query(
        `SELECT d.id, d.active_trips, (SELECT count(*)::int FROM trip x WHERE x.driver_id = d.id AND x.status IN ('assigned','accepted','picked_up','in_transit','returning')) AS real FROM driver d`,
      ),
    );
    for (const r of rows) expect(r.active_trips, r.id).toBe(r.real);
  });
});

describe('driver reject', () => {
  it('returns the trip to pending and excludes the driver from its automatic offers, not from manual assignment', async () => {
    const id = await tripIn(t, admin, a, 'assigned');
    const res = await t.req(a.session, { method: 'POST', url: `/driver/trips/${id}/reject`, payload: { reason: 'flat tyre' } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ status: 'pending', driver_id: null });
    const cands = (await t.req(admin, { method: 'GET', url: `/trips/${id}/candidates` })).json().data as {
      driver: { id: string };
      eligible: boolean;
      reasons: string[];
    }[];
    const mine = cands.find((c) => c.driver.id === a.id)!;
    expect(mine).toMatchObject({ eligible: false, reasons: ['rejected_this_trip'] });
    expect(cands.find((c) => c.driver.id === b.id)?.eligible).toBe(true);
    const auto = await t.req(admin, { method: 'POST', url: `/trips/${id}/auto-assign` });
    expect(auto.json().driver_id).not.toBe(a.id);
    // Excluded from automatic offers only: a dispatcher may still give him the trip by hand.
    const manual = await t.req(admin, { method: 'POST', url: `/trips/${id}/assign`, payload: { driver_id: a.id } });
    expect(manual.statusCode, manual.body).toBe(200);
    expect(manual.json()).toMatchObject({ status: 'assigned', driver_id: a.id });
    expect(await eventTypes(t, id)).toEqual(['trip.created', 'trip.assigned', 'trip.rejected', 'trip.assigned', 'trip.assigned']);
  });
});

describe('full delivery', () => {
  it('goes from creation to completion with events, geofence, proofs, tracking and earnings', async () => {
    const merchant = await t.as('merchant');
    const customer = await t.as('customer');
    const d = await newDriver(t, { lon: -68.2, lat: -16.6 }, { capacity: 2 });
    const trip = await newTrip(t, merchant, { customer_user_id: customer.userId }, { lon: -68.14, lat: -16.51 });
    expect(trip.pickup_pin).toMatch(/^\d{4}$/);
    expect(trip.delivery_pin).toBeUndefined();
    expect(trip.driver_earning).toBe('10.00');
    expect(trip.delivery_fee).toBe('15.00');
    expect(trip.territory_id).toBeTruthy();
    expect((await t.req(admin, { method: 'POST', url: `/trips/${trip.id}/assign`, payload: { driver_id: d.id } })).statusCode).toBe(200);
    const accepted = await t.req(d.session, { method: 'POST', url: `/driver/trips/${trip.id}/accept` });
    expect(accepted.statusCode).toBe(200);
    expect(accepted.json().pickup_pin).toBeUndefined();
    expect(accepted.json().delivery_pin).toBeUndefined();
    const mine = (await t.req(d.session, { method: 'GET', url: '/driver/trips' })).json().data;
    expect(mine.map((x: { id: string }) => x.id)).toContain(trip.id);
    expect(mine.every((x: Record<string, unknown>) => !('pickup_pin' in x) && !('delivery_pin' in x))).toBe(true);
    const seen = (await t.req(customer, { method: 'GET', url: '/trips' })).json().data.find((x: { id: string }) => x.id === trip.id);
    expect(seen.delivery_pin).toMatch(/^\d{4}$/);
    expect(seen.pickup_pin).toBeUndefined();

    // The driver drives to the pickup: out-of-order points, the nearest inside the 100 m geofence.
    const now = Date.now();
    const gps = await t.req(d.session, {
      method: 'POST',
      url: '/driver/locations/batch',
      payload: {
        points: [
          { client_point_id: 'p2', location: pt(-68.1401, -16.5101), recorded_at: new Date(now).toISOString() },
          { client_point_id: 'p1', location: pt(-68.16, -16.53), recorded_at: new Date(now - 60_000).toISOString() },
        ],
      },
    });
    expect(gps.statusCode, gps.body).toBe(200);
    expect(gps.json()).toMatchObject({
      accepted: 2,
      duplicates: 0,
      geofence_entries: [{ trip_id: trip.id, stop: 'pickup' }],
      last_location: pt(-68.1401, -16.5101),
    });
    const again = await t.req(d.session, { method: 'POST', url: '/driver/location', payload: { location: pt(-68.1402, -16.5102) } });
    expect(again.json().geofence_entries).toEqual([]);

    const row = await tripDb(t, trip.id);
    expect(
      (await t.req(d.session, { method: 'POST', url: `/trips/${trip.id}/verify-pickup`, payload: { pin: row.pickup_pin } })).json().status,
    ).toBe('picked_up');
    expect((await t.req(d.session, { method: 'POST', url: `/driver/trips/${trip.id}/start-delivery` })).json().status).toBe('in_transit');
    const done = await t.req(d.session, { method: 'POST', url: `/trips/${trip.id}/verify-delivery`, payload: { pin: row.delivery_pin } });
    expect(done.json()).toMatchObject({ status: 'completed' });
    expect(done.json().completed_at).toBeTruthy();

    expect(await eventTypes(t, trip.id)).toEqual([
      'trip.created',
      'trip.assigned',
      'trip.accepted',
      'trip.location_updated',
      'trip.geofence_entered',
      'trip.location_updated',
      'trip.pickup_verified',
      'trip.on_the_way',
      'trip.delivery_verified',
      'trip.completed',
    ]);
    const ev = (await t.db.withSystem((tx) => tx.query("SELECT * FROM event WHERE entity_id = $1 AND type = 'trip.accepted'", [trip.id])))
      .rows[0];
    expect(ev.audience_user_ids.sort()).toEqual([d.userId, merchant.userId, customer.userId].sort());
    expect(ev.payload).toMatchObject({ trip_id: trip.id, status: 'accepted', driver_id: d.id });
    expect(ev.territory_id).toBe(trip.territory_id);

    const proofs = (await t.req(merchant, { method: 'GET', url: `/trips/${trip.id}/proofs` })).json().data;
    expect(proofs.map((p: { stage: string }) => p.stage)).toEqual(['pickup', 'delivery']);
    const track = (await t.req(customer, { method: 'GET', url: `/trips/${trip.id}/tracking` })).json();
    expect(track.breadcrumb.map((c: { location: unknown }) => c.location)).toEqual([pt(-68.1401, -16.5101), pt(-68.1402, -16.5102)]);
    expect(track.geofence_entries).toHaveLength(1);
    expect((await driverDb(t, d.id)).active_trips).toBe(0);

    const earn = (await t.req(d.session, { method: 'GET', url: '/driver/earnings' })).json();
    expect(earn).toMatchObject({ completed_trips: 1, total_earnings: '10.00', currency: 'BOB' });
    expect(earn.data[0]).toMatchObject({ trip_id: trip.id, driver_earning: '10.00' });
  });
});

describe('PINs', () => {
  it('locks a verification after 5 wrong PINs (423) until dispatch resets it', async () => {
    const id = await tripIn(t, admin, a, 'accepted');
    const real = (await tripDb(t, id)).pickup_pin as string;
    const wrong = real === '0000' ? '0001' : '0000';
    for (let i = 1; i <= 4; i++) {
      const r = await t.req(a.session, { method: 'POST', url: `/trips/${id}/verify-pickup`, payload: { pin: wrong } });
      expect(r.statusCode).toBe(422);
      expect(r.json()).toMatchObject({ code: 'INVALID_PIN', attempts_remaining: 5 - i });
    }
    const fifth = await t.req(a.session, { method: 'POST', url: `/trips/${id}/verify-pickup`, payload: { pin: wrong } });
    expect(fifth.statusCode).toBe(423);
    expect(fifth.json().code).toBe('PIN_LOCKED');
    const right = await t.req(a.session, { method: 'POST', url: `/trips/${id}/verify-pickup`, payload: { pin: real } });
    expect(right.statusCode).toBe(423);
    expect(await tripDb(t, id)).toMatchObject({ status: 'accepted', pickup_pin_attempts: 5 });
    expect(
      (await t.req(admin, { method: 'GET', url: `/trips?status=accepted` })).json().data.find((x: { id: string }) => x.id === id)
        .pickup_pin_locked,
    ).toBe(true);

    const reset = await t.req(admin, {
      method: 'POST',
      url: `/trips/${id}/status`,
      payload: { reset_pin_lock: 'pickup', reason: 'driver called' },
    });
    expect(reset.statusCode, reset.body).toBe(200);
    expect(reset.json()).toMatchObject({ status: 'accepted', pickup_pin_locked: false });
    expect((await t.req(a.session, { method: 'POST', url: `/trips/${id}/verify-pickup`, payload: { pin: real } })).json().status).toBe(
      'picked_up',
    );
    const audit = await t.db.withSystem((tx) =>
      tx.query("SELECT * FROM audit_log WHERE entity_id = $1 AND action = 'trip.status_changed'", [id]),
    );
    expect(audit.rowCount).toBe(1);
  });

  it('refuses evidence that the storage module does not link to this trip and stage, and changes nothing', async () => {
    const id = await tripIn(t, admin, a, 'accepted');
    const other = await tripIn(t, admin, a, 'accepted');
    const pin = (await tripDb(t, id)).pickup_pin;
    const res = await t.req(a.session, {
      method: 'POST',
      url: `/trips/${id}/verify-pickup`,
      payload: { pin, evidence: { type: 'photo', storage_key: `obj-of-${other}` } },
    });
    expect(res.statusCode).toBe(422);
    expect(await tripDb(t, id)).toMatchObject({ status: 'accepted', pickup_pin_attempts: 0 });
    const proofs = await t.db.withSystem((tx) => tx.query('SELECT 1 FROM trip_proof WHERE trip_id = $1', [id]));
    expect(proofs.rowCount).toBe(0);
  });

  it('rejects a malformed verify body with 400', async () => {
    const id = await tripIn(t, admin, a, 'accepted');
    const res = await t.req(a.session, { method: 'POST', url: `/trips/${id}/verify-pickup`, payload: { pin: '1234', extra: true } });
    expect(res.statusCode).toBe(400);
    expect((await tripDb(t, id)).pickup_pin_attempts).toBe(0);
  });
});
