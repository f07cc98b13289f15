/** Approved drivers and merchants can be suspended; staff availability lock; staff edit any driver. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type Session, type TestApp } from '../helpers.js';
import { newDriver, newTrip, newUser, tripDb, tripIn } from '../logistics/fixtures.js';
import { cart, newCustomer, newShop, ok } from '../commerce/fixtures.js';
import { DEMO_PASSWORD } from '../../src/seed.js';
import { newSubadmin, newTerritory } from '../subadmin/fixtures.js';

let t: TestApp;
let admin: Session;
let otherAdmin: Session;

beforeAll(async () => {
  t = await createTestApp();
  admin = await t.as('admin');
  const other = await t.newOrganization('Other org');
  otherAdmin = await t.login(other.logins.admin, DEMO_PASSWORD, other.organizationId);
});
afterAll(() => t?.close());

const post = (s: Session, url: string, payload: Record<string, unknown> = {}) => t.req(s, { method: 'POST', url, payload });
const audits = async (action: string, id: string) =>
  (
    await t.db.withSystem((tx) =>
      tx.query<{ n: number }>('SELECT count(*)::int AS n FROM audit_log WHERE action = $1 AND entity_id = $2', [action, id]),
    )
  ).rows[0].n;
const driverRow = async (id: string) =>
  (
    await t.db.withSystem((tx) =>
      tx.query('SELECT status, status_reason, available, availability_locked, capacity, vehicle_type FROM driver WHERE id = $1', [id]),
    )
  ).rows[0];
const here = { lon: -68.13, lat: -16.5 };

describe('driver suspension', () => {
  it('approved → suspended → approved, with reason, audited; illegal moves are 409', async () => {
    const u = await newUser(t, 'repartidor');
    const d = ok(await post(admin, '/drivers', { user_id: u.userId }), 201);
    const early = await post(admin, `/drivers/${d.id}/suspend`, { reason: 'x' });
    expect(early.statusCode).toBe(409);
    expect(early.json()).toMatchObject({ code: 'INVALID_TRANSITION', current_status: 'pending' });
    ok(await post(admin, `/drivers/${d.id}/approve`));
    const s = ok(await post(admin, `/drivers/${d.id}/suspend`, { reason: 'complaints' }));
    expect(s).toMatchObject({ status: 'suspended', status_reason: 'complaints', available: false });
    expect((await post(admin, `/drivers/${d.id}/suspend`)).statusCode).toBe(409);
    expect((await post(admin, `/drivers/${d.id}/approve`)).statusCode).toBe(409);
    expect(ok(await post(admin, `/drivers/${d.id}/reactivate`, { reason: 'cleared' })).status).toBe('approved');
    expect((await post(admin, `/drivers/${d.id}/reactivate`)).statusCode).toBe(409);
    expect(await audits('driver.suspended', d.id)).toBe(1);
    expect(await audits('driver.approved', d.id)).toBe(2);
    const listed = ok(await t.req(admin, { method: 'GET', url: '/drivers?status=approved' })).data.map((x: { id: string }) => x.id);
    expect(listed).toContain(d.id);
  });

  it('a suspended driver gets no trips: no assignment, no candidate, no auto-assignment, no optimizer route, cannot go available or accept', async () => {
    const d = await newDriver(t, here, { capacity: 3 });
    const assigned = await tripIn(t, admin, d, 'assigned');
    const pickedUp = await tripIn(t, admin, d, 'picked_up');
    ok(await post(admin, `/drivers/${d.id}/suspend`, { reason: 'investigation' }));
    // Work not yet started goes back to dispatch; goods already in his hands still arrive.
    expect((await tripDb(t, assigned)).status).toBe('pending');
    expect((await tripDb(t, assigned)).driver_id).toBeNull();
    expect((await tripDb(t, pickedUp)).status).toBe('picked_up');

    const trip = await newTrip(t, admin);
    const assign = await post(admin, `/trips/${trip.id}/assign`, { driver_id: d.id });
    expect(assign.statusCode).toBe(422);
    expect(assign.json().code).toBe('DRIVER_NOT_AVAILABLE');
    const cands = ok(await t.req(admin, { method: 'GET', url: `/trips/${trip.id}/candidates?radius_m=200000` }));
    expect(JSON.stringify(cands)).not.toContain(d.id);
    const auto = await post(admin, `/trips/${trip.id}/auto-assign`);
    if (auto.statusCode === 200) expect(auto.json().driver_id).not.toBe(d.id);
    const plan = await post(admin, '/admin/dispatch-batches/optimize', { trip_ids: [assigned], driver_ids: [d.id], time_budget_ms: 200 });
    expect(plan.statusCode).toBeLessThan(500);
    if (plan.statusCode === 201) expect(plan.json().routes.map((r: { driver_id: string }) => r.driver_id)).not.toContain(d.id);

    const avail = await post(d.session, '/driver/availability', { available: true });
    expect(avail.statusCode).toBe(422);
    expect(avail.json().code).toBe('DRIVER_NOT_APPROVED');
    expect((await driverRow(d.id)).available).toBe(false);
    // The picked-up trip can still be delivered.
    ok(await post(d.session, `/driver/trips/${pickedUp}/start-delivery`));
    // An assignment that raced the suspension cannot be accepted.
    const raced = await tripIn(t, admin, await newDriver(t, here), 'pending');
    await t.db.withSystem((tx) =>
      tx.query("UPDATE trip SET status = 'assigned', driver_id = $2, assigned_at = now() WHERE id = $1", [raced, d.id]),
    );
    const accept = await post(d.session, `/driver/trips/${raced}/accept`);
    expect(accept.statusCode).toBe(422);
    expect(accept.json().code).toBe('DRIVER_NOT_APPROVED');
    expect((await tripDb(t, raced)).status).toBe('assigned');
  });

  it("another organization's administrator gets 404 and changes nothing", async () => {
    const d = await newDriver(t, here);
    for (const action of ['suspend', 'reactivate', 'approve', 'reject'])
      expect((await post(otherAdmin, `/drivers/${d.id}/${action}`)).statusCode).toBe(404);
    expect((await t.req(otherAdmin, { method: 'PATCH', url: `/drivers/${d.id}`, payload: { capacity: 9 } })).statusCode).toBe(404);
    expect((await post(otherAdmin, `/drivers/${d.id}/availability`, { available: false, locked: true })).statusCode).toBe(404);
    expect(await driverRow(d.id)).toMatchObject({ status: 'approved', available: true, availability_locked: false, capacity: 1 });
  });
});

describe('approval machine (table, through HTTP)', () => {
  // Written out by hand: the allowed moves of drivers and merchants.
  const TABLE: [string, string, string | null][] = [
    ['pending', 'approve', 'approved'],
    ['pending', 'reject', 'rejected'],
    ['pending', 'suspend', null],
    ['pending', 'reactivate', null],
    ['approved', 'approve', null],
    ['approved', 'reject', null],
    ['approved', 'suspend', 'suspended'],
    ['approved', 'reactivate', null],
    ['suspended', 'approve', null],
    ['suspended', 'reject', null],
    ['suspended', 'suspend', null],
    ['suspended', 'reactivate', 'approved'],
    ['rejected', 'approve', null],
    ['rejected', 'reject', null],
    ['rejected', 'suspend', null],
    ['rejected', 'reactivate', null],
  ];
  const setup: Record<string, string[]> = { pending: [], approved: ['approve'], suspended: ['approve', 'suspend'], rejected: ['reject'] };

  it.each(TABLE)('driver %s --%s--> %s', async (from, action, to) => {
    const u = await newUser(t, 'repartidor');
    const d = ok(await post(admin, '/drivers', { user_id: u.userId }), 201);
    for (const a of setup[from]) ok(await post(admin, `/drivers/${d.id}/${a}`));
    const res = await post(admin, `/drivers/${d.id}/${action}`);
    expect(res.statusCode, res.body).toBe(to ? 200 : 409);
    expect((await driverRow(d.id)).status).toBe(to ?? from);
  });

  it.each(TABLE)('merchant %s --%s--> %s', async (from, action, to) => {
    const u = await newUser(t, 'comercio');
    const m = ok(await post(admin, '/merchants', { owner_user_id: u.userId, name: 'Table shop' }), 201);
    for (const a of setup[from]) ok(await post(admin, `/merchants/${m.id}/${a}`));
    const res = await post(admin, `/merchants/${m.id}/${action}`);
    expect(res.statusCode, res.body).toBe(to ? 200 : 409);
    const row = (await t.db.withSystem((tx) => tx.query('SELECT status FROM merchant WHERE id = $1', [m.id]))).rows[0];
    expect(row.status).toBe(to ?? from);
  });
});

describe('availability lock', () => {
  it('staff lock a driver unavailable; he cannot turn it back on (403 AVAILABILITY_LOCKED) until they unlock; audited', async () => {
    const d = await newDriver(t, here);
    const locked = ok(await post(admin, `/drivers/${d.id}/availability`, { available: false, locked: true, reason: 'no helmet' }));
    expect(locked).toMatchObject({ available: false, availability_locked: true, availability_lock_reason: 'no helmet' });
    const back = await post(d.session, '/driver/availability', { available: true });
    expect(back.statusCode).toBe(403);
    expect(back.json().code).toBe('AVAILABILITY_LOCKED');
    expect((await driverRow(d.id)).available).toBe(false);
    expect(ok(await post(d.session, '/driver/availability', { available: false })).available).toBe(false);
    // Staff turning availability on without unlocking is refused too; both together are 422.
    expect((await post(admin, `/drivers/${d.id}/availability`, { available: true })).statusCode).toBe(403);
    expect((await post(admin, `/drivers/${d.id}/availability`, { available: true, locked: true })).statusCode).toBe(422);
    const me = ok(await t.req(d.session, { method: 'GET', url: '/driver/me' }));
    expect(me.availability_locked).toBe(true);
    ok(await post(admin, `/drivers/${d.id}/availability`, { available: false, locked: false }));
    expect(ok(await post(d.session, '/driver/availability', { available: true })).available).toBe(true);
    expect(await audits('driver.availability_locked', d.id)).toBe(1);
    expect(await audits('driver.availability_unlocked', d.id)).toBe(1);
  });
});

describe('staff edit drivers', () => {
  it('an administrator edits capacity, vehicle and territories of a self-registered driver; bad territory is 422 and writes nothing; audited', async () => {
    const u = await newUser(t, 'repartidor');
    const s = await t.login(u.email);
    const self = ok(await post(s, '/drivers', { capacity: 1 }), 201);
    const territory = (
      await t.db.withSystem((tx) => tx.query('SELECT id FROM territory WHERE organization_id = $1 LIMIT 1', [t.demo.organizationId]))
    ).rows[0].id;
    const res = ok(
      await t.req(admin, {
        method: 'PATCH',
        url: `/drivers/${self.id}`,
        payload: { capacity: 4, vehicle_type: 'car', territory_ids: [territory] },
      }),
    );
    expect(res).toMatchObject({ capacity: 4, vehicle_type: 'car', territory_ids: [territory] });
    const bad = await t.req(admin, {
      method: 'PATCH',
      url: `/drivers/${self.id}`,
      payload: { capacity: 7, territory_ids: ['01900000-0000-7000-8000-000000000000'] },
    });
    expect(bad.statusCode).toBe(422);
    expect(await driverRow(self.id)).toMatchObject({ capacity: 4, vehicle_type: 'car' });
    expect((await t.req(admin, { method: 'PATCH', url: `/drivers/${self.id}`, payload: { capacity: 0 } })).statusCode).toBe(400);
    expect((await t.req(admin, { method: 'PATCH', url: `/drivers/${self.id}`, payload: {} })).statusCode).toBe(400);
    expect((await t.req(s, { method: 'PATCH', url: `/drivers/${self.id}`, payload: { capacity: 50 } })).statusCode).toBe(403);
    expect(await audits('driver.updated', self.id)).toBe(1);
  });
});

describe('sub-administrators edit drivers only inside their territories', () => {
  it('they replace only the links in their territories, cannot name others, must leave one; other drivers are 404', async () => {
    const a = await newTerritory(t, admin, 'Edit A', -65, -15);
    const x = await newTerritory(t, admin, 'Edit X', -64, -15);
    const y = await newTerritory(t, admin, 'Edit Y', -63, -15);
    const sub = await newSubadmin(t, admin, { territory_ids: [a, y] });
    const d = await newDriver(t, { lon: -65, lat: -15 }, { territory_ids: [a, x] });
    const outside = await newDriver(t, { lon: -64, lat: -15 }, { territory_ids: [x] });
    const patch = (id: string, payload: Record<string, unknown>) => t.req(sub.session, { method: 'PATCH', url: `/drivers/${id}`, payload });
    expect(ok(await patch(d.id, { territory_ids: [y], capacity: 2 })).territory_ids.sort()).toEqual([x, y].sort());
    expect((await patch(d.id, { territory_ids: [x] })).statusCode).toBe(422);
    const none = await patch(d.id, { territory_ids: [] });
    expect(none.statusCode).toBe(422);
    expect(none.json().code).toBe('TERRITORY_REQUIRED');
    expect((await patch(outside.id, { capacity: 5 })).statusCode).toBe(404);
    expect((await driverRow(outside.id)).capacity).toBe(1);
    expect((await driverRow(d.id)).capacity).toBe(2);
  });
});

describe('merchant suspension', () => {
  it('a suspended merchant disappears from the marketplace, takes no orders and creates no trips; reactivation restores it; audited', async () => {
    const shop = await newShop(t);
    const customer = await newCustomer(t);
    const market = async () => JSON.stringify(ok(await t.req(customer.session, { method: 'GET', url: '/customer/marketplace?limit=200' })));
    expect(await market()).toContain(shop.merchantId);

    const s = ok(await post(admin, `/merchants/${shop.merchantId}/suspend`, { reason: 'unpaid fees' }));
    expect(s).toMatchObject({ status: 'suspended', status_reason: 'unpaid fees' });
    const shown = await market();
    expect(shown).not.toContain(shop.merchantId);
    expect(shown).not.toContain(shop.branchId);
    expect(shown).not.toContain(shop.items[0].id);
    const orders = async () =>
      (
        await t.db.withSystem((tx) =>
          tx.query<{ n: number }>('SELECT count(*)::int AS n FROM merchant_order WHERE merchant_id = $1', [shop.merchantId]),
        )
      ).rows[0].n;
    const before = await orders();
    const order = await t.req(customer.session, { method: 'POST', url: '/customer/orders', payload: cart(shop, customer.addressId) });
    expect(order.statusCode).toBe(422);
    expect(order.json().code).toBe('MERCHANT_NOT_APPROVED');
    expect(await orders()).toBe(before);
    const trip = await t.req(shop.merchant, {
      method: 'POST',
      url: '/trips',
      payload: {
        pickup_location: { type: 'Point', coordinates: [-68.13, -16.5] },
        pickup_address: 'a',
        dropoff_location: { type: 'Point', coordinates: [-68.12, -16.49] },
        dropoff_address: 'b',
      },
    });
    expect(trip.statusCode).toBe(422);
    expect((await post(admin, `/merchants/${shop.merchantId}/suspend`)).statusCode).toBe(409);
    expect((await post(otherAdmin, `/merchants/${shop.merchantId}/reactivate`)).statusCode).toBe(404);

    ok(await post(admin, `/merchants/${shop.merchantId}/reactivate`));
    expect(await market()).toContain(shop.merchantId);
    ok(await t.req(customer.session, { method: 'POST', url: '/customer/orders', payload: cart(shop, customer.addressId) }), 201);
    expect(await audits('merchant.suspended', shop.merchantId)).toBe(1);
    expect(await audits('merchant.approved', shop.merchantId)).toBe(2);
  });
});
