import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type Session, type TestApp } from '../helpers.js';
import { expireOffers } from '../../src/modules/logistics/worker.js';
import type { LogisticsService } from '../../src/modules/logistics/service/logistics.js';
import { eventTypes, newDriver, tripDb, tripIn, type TestDriver } from './fixtures.js';

let t: TestApp;
let admin: Session;
let dispatch: Session;
let a: TestDriver;
let b: TestDriver;
let svc: LogisticsService;

/** The worker's round at a chosen instant: the test is the clock. */
const tick = (secondsFromNow: number) => expireOffers(t.app.ctx, svc, new Date(Date.now() + secondsFromNow * 1000));
const setSettings = async (payload: Record<string, unknown>) => {
  const res = await t.req(admin, { method: 'PATCH', url: '/logistics/settings', payload });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
};

beforeAll(async () => {
  t = await createTestApp();
  admin = await t.as('admin');
  dispatch = await t.as('dispatch');
  // Park the demo driver so the only candidates are a and b.
  await t.db.withSystem((tx) => tx.query("UPDATE driver SET available = false WHERE status = 'approved'"));
  a = await newDriver(t, { lon: -68.1301, lat: -16.5001 }, { capacity: 5 });
  b = await newDriver(t, { lon: -68.1302, lat: -16.5002 }, { capacity: 5 });
  svc = t.app.services.logistics;
});
afterAll(() => t?.close());

describe('acceptance timeout', () => {
  it('is off by default: an unanswered offer is left alone', async () => {
    const s = (await t.req(admin, { method: 'GET', url: '/logistics/settings' })).json();
    expect(s).toMatchObject({ acceptance_timeout_enabled: false, acceptance_max_offers: 3 });
    const id = await tripIn(t, dispatch, a, 'assigned');
    expect(await tick(3600)).toBe(0);
    expect((await tripDb(t, id)).status).toBe('assigned');
    await t.req(dispatch, { method: 'POST', url: `/trips/${id}/status`, payload: { status: 'cancelled', reason: 'cleanup' } });
  });

  it('settings are validated', async () => {
    for (const payload of [{ acceptance_max_offers: 0 }, { acceptance_max_offers: 21 }, { acceptance_timeout_enabled: 'yes' }]) {
      const res = await t.req(admin, { method: 'PATCH', url: '/logistics/settings', payload });
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
    }
    expect(
      (await t.req(dispatch, { method: 'PATCH', url: '/logistics/settings', payload: { acceptance_timeout_enabled: true } })).statusCode,
    ).toBe(403);
  });

  it('withdraws an offer not accepted in time and offers the trip to the next candidate, then back to the queue after the maximum', async () => {
    await setSettings({ acceptance_timeout_enabled: true, acceptance_timeout_s: 60, acceptance_max_offers: 2 });
    const id = await tripIn(t, dispatch, a, 'assigned');
    expect(await tick(30)).toBe(0); // not yet
    expect((await tripDb(t, id)).driver_id).toBe(a.id);

    expect(await tick(61)).toBe(1);
    const second = await tripDb(t, id);
    expect(second).toMatchObject({ status: 'assigned', driver_id: b.id });
    expect(await tick(50)).toBe(0); // b's offer is new: its clock starts at its own assignment

    // b does not answer either: two offers expired = the maximum, the trip waits in the queue for a person.
    await t.db.withSystem((tx) => tx.query("UPDATE trip SET assigned_at = now() - interval '2 minutes' WHERE id = $1", [id]));
    expect(await tick(0)).toBe(1);
    expect(await tripDb(t, id)).toMatchObject({ status: 'pending', driver_id: null });
    expect(await eventTypes(t, id)).toEqual(['trip.created', 'trip.assigned', 'trip.offer_expired', 'trip.assigned', 'trip.offer_expired']);
    const ev = (
      await t.db.withSystem((tx) =>
        tx.query("SELECT payload FROM event WHERE entity_id = $1 AND type = 'trip.offer_expired' ORDER BY seq", [id]),
      )
    ).rows;
    expect(ev.map((e: { payload: Record<string, unknown> }) => [e.payload.previous_driver_id, e.payload.offers_expired])).toEqual([
      [a.id, 1],
      [b.id, 2],
    ]);
    // Both drivers' capacity was given back.
    const drivers = (await t.db.withSystem((tx) => tx.query('SELECT id, active_trips FROM driver WHERE id = ANY($1)', [[a.id, b.id]])))
      .rows;
    expect(drivers.every((d: { active_trips: number }) => d.active_trips === 0)).toBe(true);

    // Automatic offers skip both now; the dispatcher may still assign either by hand.
    const auto = await t.req(dispatch, { method: 'POST', url: `/trips/${id}/auto-assign` });
    expect(auto.statusCode).toBe(422);
    expect(auto.json().code).toBe('NO_ELIGIBLE_DRIVER');
    expect((await t.req(dispatch, { method: 'POST', url: `/trips/${id}/assign`, payload: { driver_id: a.id } })).statusCode).toBe(200);
    await t.req(dispatch, { method: 'POST', url: `/trips/${id}/status`, payload: { status: 'cancelled', reason: 'cleanup' } });
  });

  it('an accepted offer never expires, and two workers expire one offer once', async () => {
    await setSettings({ acceptance_timeout_enabled: true, acceptance_timeout_s: 60, acceptance_max_offers: 3 });
    const accepted = await tripIn(t, dispatch, a, 'accepted');
    const open = await tripIn(t, dispatch, a, 'assigned');
    await t.db.withSystem((tx) =>
      tx.query("UPDATE trip SET assigned_at = now() - interval '2 minutes' WHERE id = ANY($1)", [[accepted, open]]),
    );
    const results = await Promise.all([tick(0), tick(0)]);
    expect(results[0] + results[1]).toBe(1);
    expect((await tripDb(t, accepted)).status).toBe('accepted');
    expect((await tripDb(t, open)).driver_id).toBe(b.id);
    expect((await eventTypes(t, open)).filter((x) => x === 'trip.offer_expired')).toHaveLength(1);
  });
});
