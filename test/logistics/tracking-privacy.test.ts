import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type Session, type TestApp } from '../helpers.js';
import { eventTypes, newDriver, newTrip, pt, tripIn, type TestDriver } from './fixtures.js';

let t: TestApp;
let admin: Session;
let d: TestDriver;

beforeAll(async () => {
  t = await createTestApp();
  admin = await t.as('dispatch');
  d = await newDriver(t, { lon: -68.131, lat: -16.501 }, { capacity: 5 });
});
afterAll(() => t?.close());

const gps = (at: number, lon: number, lat: number, id = `p-${at}-${lon}`) =>
  t.req(d.session, {
    method: 'POST',
    url: '/driver/locations/batch',
    payload: { points: [{ client_point_id: id, location: pt(lon, lat), recorded_at: new Date(at).toISOString() }] },
  });

describe('tracking after the trip ended', () => {
  it('shows the last point recorded during the trip, never where the driver went afterwards', async () => {
    const tripId = await tripIn(t, admin, d, 'in_transit');
    const delivered = Date.now();
    expect((await gps(delivered, -68.12, -16.49)).statusCode).toBe(200);
    const during = (await t.req(admin, { method: 'GET', url: `/trips/${tripId}/tracking` })).json();
    expect(during.last_location).toEqual(pt(-68.12, -16.49));

    const row = (await t.db.withSystem((tx) => tx.query('SELECT delivery_pin FROM trip WHERE id = $1', [tripId]))).rows[0];
    const done = await t.req(d.session, { method: 'POST', url: `/trips/${tripId}/verify-delivery`, payload: { pin: row.delivery_pin } });
    expect(done.json().status).toBe('completed');

    // The driver drives home; the finished trip must not follow him.
    expect((await gps(Date.now() + 1000, -68.3, -16.7)).statusCode).toBe(200);
    const after = (await t.req(admin, { method: 'GET', url: `/trips/${tripId}/tracking` })).json();
    expect(after.status).toBe('completed');
    expect(after.last_location).toEqual(pt(-68.12, -16.49));
    expect(new Date(after.last_location_at).getTime()).toBe(delivered);
    expect(after.breadcrumb.map((c: { location: unknown }) => c.location)).not.toContainEqual(pt(-68.3, -16.7));
    expect(after.next_stop).toBeNull();
    expect(after.eta_seconds).toBeNull();
  });

  it('a cancelled trip shows no later position either', async () => {
    const tripId = await tripIn(t, admin, d, 'accepted');
    const cancel = await t.req(admin, { method: 'POST', url: `/trips/${tripId}/status`, payload: { status: 'cancelled', reason: 'test' } });
    expect(cancel.statusCode, cancel.body).toBe(200);
    expect((await gps(Date.now() + 1000, -68.4, -16.8)).statusCode).toBe(200);
    const after = (await t.req(admin, { method: 'GET', url: `/trips/${tripId}/tracking` })).json();
    expect(after.last_location).not.toEqual(pt(-68.4, -16.8));
  });
});

describe('tracking of an organization whose settings were never written', () => {
  it('estimates with the default average speed (a read, which cannot write the defaults)', async () => {
    const tripId = await tripIn(t, admin, d, 'in_transit');
    const org = t.demo.organizationId;
    const saved = (
      await t.db.withSystem((tx) => tx.query('SELECT row_to_json(s) AS r FROM logistics_settings s WHERE organization_id = $1', [org]))
    ).rows[0]?.r;
    await t.db.withSystem((tx) => tx.query('DELETE FROM logistics_settings WHERE organization_id = $1', [org]));
    try {
      const res = await t.req(admin, { method: 'GET', url: `/trips/${tripId}/tracking` });
      expect(res.statusCode, res.body).toBe(200);
      const view = res.json();
      expect(view.next_stop).toBe('dropoff');
      expect(Math.abs(view.eta_seconds - view.distance_remaining_m / (25 / 3.6))).toBeLessThanOrEqual(1);
    } finally {
      if (saved)
        await t.db.withSystem((tx) =>
          tx.query(
            'INSERT INTO logistics_settings SELECT * FROM json_populate_record(NULL::logistics_settings, $1) ON CONFLICT DO NOTHING',
            [JSON.stringify(saved)],
          ),
        );
    }
  });
});

describe('late GPS points', () => {
  it('go to history only: no location_updated with the old position, the driver does not move back', async () => {
    const tripId = await tripIn(t, admin, d, 'accepted');
    const now = Date.now() + 2000;
    const fresh = await gps(now, -68.135, -16.505);
    expect(fresh.json().last_location).toEqual(pt(-68.135, -16.505));
    const before = (await eventTypes(t, tripId)).filter((x) => x === 'trip.location_updated').length;
    expect(before).toBe(1);

    const late = await gps(now - 1000, -68.2, -16.6);
    expect(late.statusCode).toBe(200);
    expect(late.json()).toMatchObject({ accepted: 1, last_location: pt(-68.135, -16.505) });
    expect((await eventTypes(t, tripId)).filter((x) => x === 'trip.location_updated').length).toBe(1);
    const track = (await t.req(admin, { method: 'GET', url: `/trips/${tripId}/tracking` })).json();
    expect(track.last_location).toEqual(pt(-68.135, -16.505));
    // ...but the late point is in the history.
    expect(track.breadcrumb.map((c: { location: unknown }) => c.location)).toContainEqual(pt(-68.2, -16.6));
  });
});

describe('GET /trips/:id', () => {
  it('answers staff, the merchant, the customer and the assigned driver with their view; 404 to anyone else', async () => {
    const merchant = await t.as('merchant');
    const customer = await t.as('customer');
    const trip = await newTrip(t, merchant, { customer_user_id: customer.userId });
    const get = (s: Session) => t.req(s, { method: 'GET', url: `/trips/${trip.id}` });
    const staff = await get(admin);
    expect(staff.statusCode, staff.body).toBe(200);
    expect(staff.json()).toMatchObject({ id: trip.id, status: 'pending' });
    expect((await get(merchant)).json().pickup_pin).toMatch(/^\d{4}$/);
    const mine = (await get(customer)).json();
    expect(mine.delivery_pin).toMatch(/^\d{4}$/);
    expect(mine.pickup_pin).toBeUndefined();
    expect((await get(d.session)).statusCode).toBe(404); // not his trip (yet)
    expect((await t.req(admin, { method: 'POST', url: `/trips/${trip.id}/assign`, payload: { driver_id: d.id } })).statusCode).toBe(200);
    const driverView = await get(d.session);
    expect(driverView.statusCode).toBe(200);
    expect(driverView.json().pickup_pin).toBeUndefined();
    const other = await t.newOrganization();
    const stranger = await t.login(other.logins.admin!);
    expect((await get(stranger)).statusCode).toBe(404);
  });
});
