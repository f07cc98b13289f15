import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type Session, type TestApp } from '../helpers.js';
import { newDriver, newTrip, tripDb, type TestDriver } from './fixtures.js';

/**
 * The recipient's phone and name on a trip: staff always; the trip's own driver from his acceptance until the goods
 * are delivered or back at the merchant (to call or message the recipient from the door); nobody else (not the
 * driver of an offer, not another driver, not another organization).
 */

let t: TestApp;
let admin: Session;
let d: TestDriver;
let other: TestDriver;

beforeAll(async () => {
  t = await createTestApp();
  admin = await t.as('dispatch');
  d = await newDriver(t, { lon: -68.131, lat: -16.501 }, { capacity: 5 });
  other = await newDriver(t, { lon: -68.131, lat: -16.501 }, { capacity: 5 });
});
afterAll(() => t?.close());

const PHONE = '+59170011223';
type TripBody = { id?: string; recipient_phone?: unknown; recipient_name?: unknown };
const contactOf = (body: TripBody) => ({ phone: body.recipient_phone, name: body.recipient_name });
const asStaff = async (id: string) => contactOf((await t.req(admin, { method: 'GET', url: `/trips/${id}` })).json());
/** What the driver's app reads: the trip itself, his trip list and the sync pull. */
async function asDriver(s: Session, id: string) {
  const one = await t.req(s, { method: 'GET', url: `/trips/${id}` });
  const list = (await t.req(s, { method: 'GET', url: '/driver/trips?limit=100' })).json().data as TripBody[];
  const pulled = (await t.req(s, { method: 'GET', url: '/mobile/sync/pull' })).json().entities.trips.changed as TripBody[];
  return {
    status: one.statusCode,
    one: one.statusCode === 200 ? contactOf(one.json()) : null,
    listed: list.find((x) => x.id === id),
    pulled: pulled.find((x) => x.id === id),
  };
}
const ok = async (p: Promise<{ statusCode: number; body: string }>) => {
  const r = await p;
  expect(r.statusCode, r.body).toBe(200);
};

describe('recipient phone on trips', () => {
  it('staff always; the driver only while he carries the trip; another driver never', async () => {
    const trip = await newTrip(t, admin, { recipient_phone: PHONE, recipient_name: 'Ana Flores' });
    expect(await asStaff(trip.id)).toEqual({ phone: PHONE, name: 'Ana Flores' });

    // An offer: the driver does not get the recipient's phone before he accepts.
    await ok(t.req(admin, { method: 'POST', url: `/trips/${trip.id}/assign`, payload: { driver_id: d.id } }));
    let seen = await asDriver(d.session, trip.id);
    expect(seen.one).toEqual({ phone: null, name: null });
    expect(contactOf(seen.listed!)).toEqual({ phone: null, name: null });
    expect(contactOf(seen.pulled!)).toEqual({ phone: null, name: null });

    // Accepted, picked up, on the way: his, in every read he makes.
    const accepted = await t.req(d.session, { method: 'POST', url: `/driver/trips/${trip.id}/accept` });
    expect(contactOf(accepted.json())).toEqual({ phone: PHONE, name: 'Ana Flores' });
    for (const step of ['accepted', 'picked_up', 'in_transit']) {
      if (step === 'picked_up')
        await ok(
          t.req(d.session, {
            method: 'POST',
            url: `/trips/${trip.id}/verify-pickup`,
            payload: { pin: (await tripDb(t, trip.id)).pickup_pin },
          }),
        );
      if (step === 'in_transit') await ok(t.req(d.session, { method: 'POST', url: `/driver/trips/${trip.id}/start-delivery` }));
      seen = await asDriver(d.session, trip.id);
      expect(seen.one, step).toEqual({ phone: PHONE, name: 'Ana Flores' });
      expect(contactOf(seen.listed!), step).toEqual({ phone: PHONE, name: 'Ana Flores' });
      expect(contactOf(seen.pulled!), step).toEqual({ phone: PHONE, name: 'Ana Flores' });
    }

    // Another driver of the organization and another organization's staff: not their trip (404), not in their lists.
    const stranger = await asDriver(other.session, trip.id);
    expect(stranger.status).toBe(404);
    expect(stranger.listed).toBeUndefined();
    expect(stranger.pulled).toBeUndefined();
    const org = await t.newOrganization();
    expect((await t.req(await t.login(org.logins.admin!), { method: 'GET', url: `/trips/${trip.id}` })).statusCode).toBe(404);

    // Delivered: the driver no longer has it; staff still do.
    const delivered = await t.req(d.session, {
      method: 'POST',
      url: `/trips/${trip.id}/verify-delivery`,
      payload: { pin: (await tripDb(t, trip.id)).delivery_pin },
    });
    expect(delivered.json().status).toBe('completed');
    expect(contactOf(delivered.json())).toEqual({ phone: null, name: null });
    seen = await asDriver(d.session, trip.id);
    expect(seen.one).toEqual({ phone: null, name: null });
    expect(contactOf(seen.listed!)).toEqual({ phone: null, name: null });
    expect(await asStaff(trip.id)).toEqual({ phone: PHONE, name: 'Ana Flores' });
  });

  it('a failed delivery on its way back: the driver keeps the phone until the return; a trip taken from him loses it', async () => {
    const trip = await newTrip(t, admin, { recipient_phone: PHONE });
    await ok(t.req(admin, { method: 'POST', url: `/trips/${trip.id}/assign`, payload: { driver_id: d.id } }));
    await ok(t.req(d.session, { method: 'POST', url: `/driver/trips/${trip.id}/accept` }));
    const pin = (await tripDb(t, trip.id)).pickup_pin;
    await ok(t.req(d.session, { method: 'POST', url: `/trips/${trip.id}/verify-pickup`, payload: { pin } }));
    await ok(t.req(d.session, { method: 'POST', url: `/driver/trips/${trip.id}/start-delivery` }));
    await ok(t.req(d.session, { method: 'POST', url: `/driver/trips/${trip.id}/fail-delivery`, payload: { reason: 'recipient_absent' } }));
    expect((await asDriver(d.session, trip.id)).one).toEqual({ phone: PHONE, name: null });
    await ok(t.req(d.session, { method: 'POST', url: `/driver/trips/${trip.id}/return`, payload: { pin } }));
    expect((await asDriver(d.session, trip.id)).one).toEqual({ phone: null, name: null });

    // Accepted by one driver, then reassigned to another: the first loses it (404), the second has an offer (no phone).
    const moved = await newTrip(t, admin, { recipient_phone: PHONE });
    await ok(t.req(admin, { method: 'POST', url: `/trips/${moved.id}/assign`, payload: { driver_id: d.id } }));
    await ok(t.req(d.session, { method: 'POST', url: `/driver/trips/${moved.id}/accept` }));
    expect((await asDriver(d.session, moved.id)).one).toEqual({ phone: PHONE, name: null });
    await ok(t.req(admin, { method: 'POST', url: `/trips/${moved.id}/assign`, payload: { driver_id: other.id } }));
    const first = await asDriver(d.session, moved.id);
    expect(first.status).toBe(404);
    expect(first.listed).toBeUndefined();
    expect((await asDriver(other.session, moved.id)).one).toEqual({ phone: null, name: null });
  });

  it("a recipient with an account: his account's phone and name", async () => {
    const customer = await t.as('customer');
    await t.db.withSystem((tx) => tx.query('UPDATE users SET phone = $2 WHERE id = $1', [customer.userId, '+59170099887']));
    const trip = await newTrip(t, admin, { customer_user_id: customer.userId });
    expect(await asStaff(trip.id)).toEqual({ phone: '+59170099887', name: 'Demo customer' });
    // The customer and the merchant get no recipient fields filled (the customer is the recipient).
    expect(contactOf((await t.req(customer, { method: 'GET', url: `/trips/${trip.id}` })).json())).toEqual({ phone: null, name: null });
    await ok(t.req(admin, { method: 'POST', url: `/trips/${trip.id}/assign`, payload: { driver_id: d.id } }));
    await ok(t.req(d.session, { method: 'POST', url: `/driver/trips/${trip.id}/accept` }));
    expect((await asDriver(d.session, trip.id)).one).toEqual({ phone: '+59170099887', name: 'Demo customer' });
  });

  it('is documented on the Trip schema of the OpenAPI document', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
    const trip = doc.components.schemas.Trip.properties;
    expect(JSON.stringify(trip.recipient_phone)).toMatch(/the trip's driver/);
    expect(JSON.stringify(trip.recipient_name)).toMatch(/recipient's name/);
  });
});
