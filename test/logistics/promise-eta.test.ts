import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type Session, type TestApp } from '../helpers.js';
import { haversineMeters } from '../../src/platform/geo.js';
import { DWELL_S } from '../../src/modules/logistics/service/eta-model.js';
import { newDriver, newTrip, pt, readAllNotifications, tripDb, tripIn } from './fixtures.js';

/**
 * The promise of a trip (creation, staff changes, windows) and its live ETA: recomputed when the driver's GPS arrives,
 * from his position along his remaining stops (the pickup leg counts), and trip.delayed once per crossing of the promise.
 */
let t: TestApp;
let admin: Session;

beforeAll(async () => {
  t = await createTestApp();
  admin = await t.as('admin');
}, 60_000);
afterAll(() => t?.close());

const count = async (sql: string, params: unknown[] = []) =>
  Number((await t.db.withSystem((tx) => tx.query<{ n: number }>(sql, params))).rows[0]!.n);
const delayedEvents = (tripId: string) =>
  count("SELECT count(*)::int AS n FROM event WHERE type = 'trip.delayed' AND entity_id = $1", [tripId]);
const fix = (driverId: string, lon: number, lat: number) =>
  t.req(admin, {
    method: 'POST',
    url: `/drivers/${driverId}/location`,
    payload: { location: pt(lon, lat), recorded_at: new Date().toISOString() },
  });

describe('promise', () => {
  it('a new trip is promised now + travel + dispatch buffer, and the settings carry the new knobs', async () => {
    const s = (await t.req(admin, { method: 'GET', url: '/logistics/settings' })).json();
    expect(s).toMatchObject({ dispatch_buffer_min: 10, delay_grace_min: 5, location_stale_after_s: 300, rejections_alert_threshold: 2 });
    const before = Date.now();
    const trip = await newTrip(t, admin);
    const travelS = haversineMeters({ lon: -68.13, lat: -16.5 }, { lon: -68.12, lat: -16.49 }) / ((s.average_speed_kmh * 1000) / 3600);
    const promised = new Date(trip.promised_at as string).getTime();
    expect(promised).toBeGreaterThanOrEqual(before + (travelS + 600) * 1000 - 1000);
    expect(promised).toBeLessThanOrEqual(Date.now() + (travelS + 600) * 1000 + 1000);
    expect(trip).toMatchObject({ deliver_after: null, deliver_before: null, eta_pickup_at: null, eta_dropoff_at: null, late_by_s: null });
  });

  it('a scheduled window is the promise; a window ending before it starts or a promise in the past is 422 and writes nothing', async () => {
    const after = new Date(Date.now() + 3600_000).toISOString();
    const before = new Date(Date.now() + 7200_000).toISOString();
    const trip = await newTrip(t, admin, { deliver_after: after, deliver_before: before });
    expect(trip.promised_at).toBe(before);
    expect(trip.deliver_after).toBe(after);
    const n = await count('SELECT count(*)::int AS n FROM trip');
    const base = { pickup_location: pt(-68.13, -16.5), pickup_address: 'a', dropoff_location: pt(-68.12, -16.49), dropoff_address: 'b' };
    const inverted = await t.req(admin, {
      method: 'POST',
      url: '/trips',
      payload: { ...base, deliver_after: before, deliver_before: after },
    });
    expect(inverted.statusCode).toBe(422);
    expect(inverted.json().code).toBe('WINDOW_INVALID');
    const past = await t.req(admin, {
      method: 'POST',
      url: '/trips',
      payload: { ...base, promised_at: new Date(Date.now() - 60_000).toISOString() },
    });
    expect(past.statusCode).toBe(422);
    expect(past.json().code).toBe('PROMISE_IN_PAST');
    expect(await count('SELECT count(*)::int AS n FROM trip')).toBe(n);
  });

  it('staff change the promise (audited); a promise in the past is refused and changes nothing', async () => {
    const trip = await newTrip(t, admin);
    const dispatch = await t.as('dispatch');
    const at = new Date(Date.now() + 5400_000).toISOString();
    const res = await t.req(dispatch, { method: 'PATCH', url: `/trips/${trip.id}/promise`, payload: { promised_at: at } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().promised_at).toBe(at);
    expect(
      await count("SELECT count(*)::int AS n FROM audit_log WHERE action = 'trip.promise_changed' AND entity_id = $1", [trip.id]),
    ).toBe(1);
    const bad = await t.req(dispatch, {
      method: 'PATCH',
      url: `/trips/${trip.id}/promise`,
      payload: { promised_at: new Date(Date.now() - 1000).toISOString() },
    });
    expect(bad.statusCode).toBe(422);
    const window = await t.req(dispatch, {
      method: 'PATCH',
      url: `/trips/${trip.id}/promise`,
      payload: {
        deliver_after: new Date(Date.now() + 7200_000).toISOString(),
        deliver_before: new Date(Date.now() + 3600_000).toISOString(),
      },
    });
    expect(window.statusCode).toBe(422);
    expect(window.json().code).toBe('WINDOW_INVALID');
    expect(new Date((await tripDb(t, trip.id)).promised_at).toISOString()).toBe(at);
    const customer = await t.as('customer');
    expect((await t.req(customer, { method: 'PATCH', url: `/trips/${trip.id}/promise`, payload: { promised_at: at } })).statusCode).toBe(
      403,
    );
  });
});

describe('live ETA', () => {
  it('while the driver still heads to the store, the dropoff ETA counts the pickup leg; GPS recomputes it', async () => {
    const d = await newDriver(t, { lon: -68.15, lat: -16.52 });
    const id = await tripIn(t, admin, d, 'accepted');
    const speed = ((await t.req(admin, { method: 'GET', url: '/logistics/settings' })).json().average_speed_kmh * 1000) / 3600;
    const here = { lon: -68.16, lat: -16.53 };
    const sent = Date.now();
    expect((await fix(d.id, here.lon, here.lat)).statusCode).toBe(200);
    const trip = (await t.req(admin, { method: 'GET', url: `/trips/${id}` })).json();
    const pickup = { lon: -68.13, lat: -16.5 };
    const dropoff = { lon: -68.12, lat: -16.49 };
    const toPickup = haversineMeters(here, pickup) / speed;
    const whole = toPickup + DWELL_S.pickup + haversineMeters(pickup, dropoff) / speed;
    const etaDropoff = new Date(trip.eta_dropoff_at).getTime();
    expect(etaDropoff).toBeGreaterThanOrEqual(sent + whole * 1000 - 1000);
    expect(etaDropoff).toBeLessThanOrEqual(Date.now() + whole * 1000 + 1000);
    expect(new Date(trip.eta_pickup_at).getTime()).toBeLessThanOrEqual(Date.now() + toPickup * 1000 + 1000);
    expect(trip.late_by_s).toBe(Math.round((new Date(trip.eta_dropoff_at).getTime() - new Date(trip.promised_at).getTime()) / 1000));
    // A new fix next to the store: the ETA moves.
    await fix(d.id, pickup.lon, pickup.lat);
    const again = (await t.req(admin, { method: 'GET', url: `/trips/${id}` })).json();
    expect(new Date(again.eta_dropoff_at).getTime()).toBeLessThan(etaDropoff);
    expect(again.eta_updated_at).not.toBe(trip.eta_updated_at);
  });

  it("a driver's second trip is reached after the first one's stops", async () => {
    const d = await newDriver(t, { lon: -68.14, lat: -16.51 }, { capacity: 2 });
    const first = await tripIn(t, admin, d, 'in_transit');
    const second = await tripIn(t, admin, d, 'accepted', { lon: -68.1, lat: -16.48 });
    await fix(d.id, -68.14, -16.51);
    const a = (await t.req(admin, { method: 'GET', url: `/trips/${first}` })).json();
    const b = (await t.req(admin, { method: 'GET', url: `/trips/${second}` })).json();
    expect(a.eta_pickup_at).toBeNull();
    expect(new Date(b.eta_pickup_at).getTime()).toBeGreaterThan(new Date(a.eta_dropoff_at).getTime());
    expect(new Date(b.eta_dropoff_at).getTime()).toBeGreaterThan(new Date(b.eta_pickup_at).getTime());
  });

  it("a committed plan's route sets the order of the ETAs: both pickups at the store, then the near dropoff, then the far one", async () => {
    const d = await newDriver(t, { lon: -68.15, lat: -16.51 }, { capacity: 2 });
    const store = { lon: -68.14, lat: -16.5 };
    const far = await newTrip(t, admin, { dropoff_location: pt(-68.1, -16.48) }, store);
    const near = await newTrip(t, admin, { dropoff_location: pt(-68.135, -16.497) }, store);
    const optimized = await t.req(admin, {
      method: 'POST',
      url: '/admin/dispatch-batches/optimize',
      payload: { trip_ids: [far.id, near.id], driver_ids: [d.id], time_budget_ms: 300 },
    });
    expect(optimized.statusCode, optimized.body).toBe(201);
    const plan = optimized.json();
    const route = (plan.routes[0].stops as { trip_id: string; kind: string }[]).map((s) => `${s.trip_id}|${s.kind}`);
    // The scenario: the plan collects both orders before the first dropoff.
    expect(route.slice(0, 2).every((k) => k.endsWith('|pickup'))).toBe(true);
    expect((await t.req(admin, { method: 'POST', url: `/admin/dispatch-batches/optimize/${plan.plan_id}/commit` })).statusCode).toBe(200);
    await fix(d.id, -68.15, -16.51);
    const eta = new Map<string, number>();
    for (const id of [far.id, near.id]) {
      const trip = (await t.req(admin, { method: 'GET', url: `/trips/${id}` })).json();
      eta.set(`${id}|pickup`, new Date(trip.eta_pickup_at).getTime());
      eta.set(`${id}|dropoff`, new Date(trip.eta_dropoff_at).getTime());
    }
    const byEta = [...eta.keys()].sort((a, b) => eta.get(a)! - eta.get(b)!);
    expect(byEta).toEqual(route);
  });

  it('trip.delayed is raised once per crossing of the promise plus the grace, again only after it came back under', async () => {
    const dispatch = await t.as('dispatch');
    await readAllNotifications(t, dispatch); // an unread "Trip late" of another trip would hold this one's alert back
    const d = await newDriver(t, { lon: -68.13, lat: -16.5 });
    const trip = await newTrip(t, admin, { promised_at: new Date(Date.now() + 10 * 60_000).toISOString() });
    expect((await t.req(admin, { method: 'POST', url: `/trips/${trip.id}/assign`, payload: { driver_id: d.id } })).statusCode).toBe(200);
    // Far away (about 45 km at 25 km/h): late.
    await fix(d.id, -68.5, -16.6);
    expect(await delayedEvents(trip.id)).toBe(1);
    await fix(d.id, -68.49, -16.6);
    expect(await delayedEvents(trip.id)).toBe(1);
    const late = (await t.req(admin, { method: 'GET', url: `/trips/${trip.id}` })).json();
    expect(late.late_by_s).toBeGreaterThan(300);
    // At the store: back under, then far again: a second crossing (the dispatcher read the first alert, so the second
    // reaches his inbox too).
    await readAllNotifications(t, dispatch);
    await fix(d.id, -68.13, -16.5);
    expect((await tripDb(t, trip.id)).delayed_at).toBeNull();
    await fix(d.id, -68.5, -16.6);
    expect(await delayedEvents(trip.id)).toBe(2);
    const ev = (
      await t.db.withSystem((tx) =>
        tx.query("SELECT payload, audience_user_ids FROM event WHERE type = 'trip.delayed' AND entity_id = $1 ORDER BY seq DESC LIMIT 1", [
          trip.id,
        ]),
      )
    ).rows[0];
    expect(ev.payload).toMatchObject({ trip_id: trip.id, source: 'eta', grace_min: 5 });
    // The dispatchers' inbox has it.
    const dispatchUser = dispatch.userId;
    expect(ev.audience_user_ids).toContain(dispatchUser);
    expect(
      await count("SELECT count(*)::int AS n FROM notification WHERE type = 'trip.delayed' AND entity_id = $1 AND user_id = $2", [
        trip.id,
        dispatchUser,
      ]),
    ).toBe(2);
  });
});
