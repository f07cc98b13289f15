import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type Session, type TestApp } from '../helpers.js';
import { newDriver, newTrip, newUser, pt, tripIn } from './fixtures.js';

let t: TestApp;
let admin: Session;
let dispatch: Session;

beforeAll(async () => {
  t = await createTestApp();
  admin = await t.as('admin');
  dispatch = await t.as('dispatch');
});
afterAll(() => t?.close());

describe('demo seed', () => {
  it('has an approved available driver in La Paz, an approved merchant and a territory', async () => {
    const me = await t.req(await t.as('driver'), { method: 'GET', url: '/driver/me' });
    expect(me.statusCode, me.body).toBe(200);
    expect(me.json()).toMatchObject({ status: 'approved', available: true, last_location: pt(-68.13, -16.5) });
    expect(me.json().territory_ids).toHaveLength(1);
    const merchants = (await t.req(admin, { method: 'GET', url: '/merchants?status=approved' })).json().data;
    expect(merchants.map((m: { owner_user_id: string }) => m.owner_user_id)).toContain(t.demo.users.merchant);
    expect(merchants[0].territory_id).toBe(me.json().territory_ids[0]);
  });
});

describe('drivers', () => {
  it('pending → approved | rejected, nothing else (409), audited', async () => {
    const u1 = await newUser(t, 'repartidor');
    const u2 = await newUser(t, 'repartidor');
    const d1 = (await t.req(admin, { method: 'POST', url: '/drivers', payload: { user_id: u1.userId } })).json();
    const d2 = (
      await t.req(admin, { method: 'POST', url: '/drivers', payload: { user_id: u2.userId, capacity: 3, vehicle_type: 'bicycle' } })
    ).json();
    expect(d1).toMatchObject({ status: 'pending', available: false, capacity: 1 });
    expect(d2).toMatchObject({ capacity: 3, vehicle_type: 'bicycle' });
    const notYet = await t.req(admin, { method: 'POST', url: `/drivers/${d1.id}/availability`, payload: { available: true } });
    expect(notYet.statusCode).toBe(422);
    expect(notYet.json().code).toBe('DRIVER_NOT_APPROVED');
    expect((await t.req(admin, { method: 'POST', url: `/drivers/${d1.id}/approve`, payload: { reason: 'docs ok' } })).json().status).toBe(
      'approved',
    );
    expect((await t.req(admin, { method: 'POST', url: `/drivers/${d2.id}/reject` })).json().status).toBe('rejected');
    for (const [id, action] of [
      [d1.id, 'approve'],
      [d1.id, 'reject'],
      [d2.id, 'approve'],
      [d2.id, 'reject'],
    ]) {
      const r = await t.req(admin, { method: 'POST', url: `/drivers/${id}/${action}`, payload: {} });
      expect(r.statusCode).toBe(409);
      expect(r.json().code).toBe('INVALID_TRANSITION');
    }
    const audit = await t.db.withSystem((tx) => tx.query('SELECT action FROM audit_log WHERE entity_id = $1 ORDER BY id', [d1.id]));
    expect(audit.rows.map((r: { action: string }) => r.action)).toEqual(['driver.created', 'driver.approved']);
    expect((await t.req(admin, { method: 'GET', url: '/drivers?status=rejected' })).json().data.map((d: { id: string }) => d.id)).toContain(
      d2.id,
    );
  });

  it('refuses a non-driver user (422), a duplicate (409), and a driver without profile gets 404', async () => {
    const customer = await t.as('customer');
    const r = await t.req(admin, { method: 'POST', url: '/drivers', payload: { user_id: customer.userId } });
    expect(r.statusCode).toBe(422);
    expect(r.json().code).toBe('USER_NOT_DRIVER');
    const dup = await t.req(admin, { method: 'POST', url: '/drivers', payload: { user_id: t.demo.users.driver } });
    expect(dup.statusCode).toBe(409);
    const u = await newUser(t, 'repartidor');
    const s = await t.login(u.email);
    const me = await t.req(s, { method: 'GET', url: '/driver/me' });
    expect(me.statusCode).toBe(404);
    expect(me.json().code).toBe('DRIVER_PROFILE_NOT_FOUND');
    // A position without a profile: the same 404, and no point is stored.
    const point = { client_point_id: `no-profile-${u.userId}`, location: pt(-68.13, -16.5), recorded_at: new Date().toISOString() };
    for (const [url, payload] of [
      ['/driver/location', point],
      ['/driver/locations/batch', { points: [point] }],
    ] as const) {
      const posted = await t.req(s, { method: 'POST', url, payload });
      expect(posted.statusCode, posted.body).toBe(404);
      expect(posted.json().code).toBe('DRIVER_PROFILE_NOT_FOUND');
    }
    const stored = await t.db.withSystem((tx) =>
      tx.query('SELECT 1 FROM driver_location WHERE client_point_id = $1', [point.client_point_id]),
    );
    expect(stored.rowCount).toBe(0);
    const self = await t.req(s, { method: 'POST', url: '/drivers', payload: {} });
    expect(self.statusCode, self.body).toBe(201);
    expect(self.json()).toMatchObject({ user_id: u.userId, status: 'pending' });
    expect((await t.req(s, { method: 'POST', url: '/driver/availability', payload: { available: true } })).statusCode).toBe(422);
  });
});

describe('merchants', () => {
  it('pending → approved | rejected; a merchant registers himself without setting his commission', async () => {
    const u = await newUser(t, 'comercio');
    const s = await t.login(u.email);
    expect((await t.req(s, { method: 'POST', url: '/merchants', payload: { name: 'Shop', commission_percent: '1.00' } })).statusCode).toBe(
      403,
    );
    const m = await t.req(s, { method: 'POST', url: '/merchants', payload: { name: 'Shop', location: pt(-68.13, -16.5) } });
    expect(m.statusCode, m.body).toBe(201);
    expect(m.json()).toMatchObject({ status: 'pending', commission_percent: '10.00', owner_user_id: u.userId });
    expect(m.json().territory_id).toBeTruthy();
    // An unapproved merchant cannot create trips.
    const trip = await t.req(s, {
      method: 'POST',
      url: '/trips',
      payload: { pickup_location: pt(-68.13, -16.5), pickup_address: 'a', dropoff_location: pt(-68.12, -16.5), dropoff_address: 'b' },
    });
    expect(trip.statusCode).toBe(422);
    expect(trip.json().code).toBe('MERCHANT_NOT_APPROVED');
    expect((await t.req(admin, { method: 'POST', url: `/merchants/${m.json().id}/approve` })).json().status).toBe('approved');
    const again = await t.req(admin, { method: 'POST', url: `/merchants/${m.json().id}/reject` });
    expect(again.statusCode).toBe(409);
    // The merchant may not price trips.
    const priced = await t.req(s, {
      method: 'POST',
      url: '/trips',
      payload: {
        pickup_location: pt(-68.13, -16.5),
        pickup_address: 'a',
        dropoff_location: pt(-68.12, -16.5),
        dropoff_address: 'b',
        delivery_fee: '0.01',
      },
    });
    expect(priced.statusCode).toBe(403);
  });

  it('setMerchantCommission is audited', async () => {
    const m = (await t.req(admin, { method: 'GET', url: '/merchants' })).json().data[0];
    await t.db.withTenant({ organizationId: t.demo.organizationId, userId: t.demo.users.admin }, (tx) =>
      t.app.services.logistics.setMerchantCommission(
        tx,
        {
          userId: t.demo.users.admin,
          organizationId: t.demo.organizationId,
          role: 'administrator',
          kind: 'administrator',
          sessionId: 's',
          requestId: 'r',
          subadmin: null,
        },
        m.id,
        '12.50',
      ),
    );
    expect((await t.req(admin, { method: 'GET', url: '/merchants' })).json().data[0].commission_percent).toBe('12.50');
    const audit = await t.db.withSystem((tx) =>
      tx.query("SELECT after FROM audit_log WHERE entity_id = $1 AND action = 'merchant.commission_updated'", [m.id]),
    );
    expect(audit.rows[0].after).toEqual({ commission_percent: '12.50' });
  });
});

describe('settings, dispatch views, dashboard', () => {
  it('settings: defaults, administrator PATCH (audited), dispatch may not change them', async () => {
    expect((await t.req(dispatch, { method: 'GET', url: '/logistics/settings' })).json()).toMatchObject({
      auto_assign_radius_m: 5000,
      assignment_strategy: 'nearest',
      driver_flat_fee: '10.00',
    });
    expect((await t.req(dispatch, { method: 'PATCH', url: '/logistics/settings', payload: { driver_flat_fee: '9.00' } })).statusCode).toBe(
      403,
    );
    expect((await t.req(admin, { method: 'PATCH', url: '/logistics/settings', payload: { driver_flat_fee: '-1.00' } })).statusCode).toBe(
      400,
    );
    expect((await t.req(admin, { method: 'PATCH', url: '/logistics/settings', payload: { speed: 1 } })).statusCode).toBe(400);
    const r = await t.req(admin, {
      method: 'PATCH',
      url: '/logistics/settings',
      payload: { driver_flat_fee: '12.00', assignment_strategy: 'least_loaded' },
    });
    expect(r.json()).toMatchObject({ driver_flat_fee: '12.00', assignment_strategy: 'least_loaded' });
    expect((await newTrip(t, admin)).driver_earning).toBe('12.00');
    const audit = await t.db.withSystem((tx) =>
      tx.query("SELECT before, after FROM audit_log WHERE action = 'logistics_settings.updated'"),
    );
    expect(audit.rows[0].after).toMatchObject({ driver_flat_fee: '12.00', assignment_strategy: 'least_loaded' });
    await t.req(admin, {
      method: 'PATCH',
      url: '/logistics/settings',
      payload: { driver_flat_fee: '10.00', assignment_strategy: 'nearest' },
    });
  });

  it('dispatch board, live map and dashboard reflect trips and drivers', async () => {
    const d = await newDriver(t, { lon: -68.12, lat: -16.49 }, { capacity: 3 });
    const pending = await newTrip(t, dispatch);
    const active = await tripIn(t, dispatch, d, 'accepted');
    const board = (await t.req(dispatch, { method: 'GET', url: '/admin/dispatch' })).json();
    expect(board.unassigned.map((x: { id: string }) => x.id)).toContain(pending.id);
    expect(board.available_drivers.map((x: { id: string }) => x.id)).toContain(d.id);
    expect(board.counts.accepted).toBeGreaterThanOrEqual(1);
    const map = (await t.req(dispatch, { method: 'GET', url: '/admin/live-map' })).json();
    expect(map.type).toBe('FeatureCollection');
    expect(map.features.find((f: { id: string }) => f.id === d.id)).toMatchObject({
      geometry: pt(-68.12, -16.49),
      properties: { kind: 'driver' },
    });
    expect(map.features.find((f: { id: string }) => f.id === active).geometry.type).toBe('LineString');
    const dash = (await t.req(admin, { method: 'GET', url: '/dashboard' })).json().sections.logistics;
    expect(dash.trips.pending).toBeGreaterThanOrEqual(1);
    expect(dash.drivers.approved).toBeGreaterThanOrEqual(2);
    expect(dash.merchants.approved).toBeGreaterThanOrEqual(1);
  });

  it('customers and drivers may not use dispatch routes (403)', async () => {
    const customer = await t.as('customer');
    for (const [method, url] of [
      ['GET', '/admin/dispatch'],
      ['GET', '/drivers'],
      ['POST', '/territories'],
      ['GET', '/drivers/nearby?lon=0&lat=0'],
    ] as const) {
      expect((await t.req(customer, { method, url, payload: method === 'POST' ? {} : undefined })).statusCode, url).toBe(403);
    }
    expect((await t.req(await t.as('driver'), { method: 'POST', url: '/trips', payload: {} })).statusCode).toBe(403);
  });
});

describe('tenant isolation', () => {
  it("another organization's ids are 404 on every logistics route, and its lists do not show ours", async () => {
    const d = await newDriver(t, { lon: -68.13, lat: -16.5 }, { capacity: 2 });
    const trip = await tripIn(t, admin, d, 'accepted');
    const merchantId = (await t.req(admin, { method: 'GET', url: '/merchants' })).json().data[0].id;
    const other = await t.newOrganization();
    const oAdmin = await t.login(other.logins.admin);
    const oDriverUser = (await t.db.withSystem((tx) => tx.query('SELECT id FROM users WHERE email = $1', [other.logins.driver]))).rows[0]
      .id;
    const od = await t.req(oAdmin, { method: 'POST', url: '/drivers', payload: { user_id: oDriverUser } });
    expect(od.statusCode).toBe(201);
    await t.req(oAdmin, { method: 'POST', url: `/drivers/${od.json().id}/approve` });
    const oDriver = await t.login(other.logins.driver);

    const checks: [Session, 'GET' | 'POST' | 'PATCH', string, unknown?][] = [
      [oAdmin, 'GET', `/trips/${trip}/tracking`],
      [oAdmin, 'GET', `/trips/${trip}/proofs`],
      [oAdmin, 'GET', `/trips/${trip}/candidates`],
      [oAdmin, 'POST', `/trips/${trip}/assign`, { driver_id: od.json().id }],
      [oAdmin, 'POST', `/trips/${trip}/auto-assign`],
      [oAdmin, 'POST', `/trips/${trip}/status`, { status: 'cancelled', reason: 'x' }],
      [oAdmin, 'PATCH', `/trips/${trip}/coordinates`, { dropoff_address: 'x' }],
      [oAdmin, 'POST', `/drivers/${d.id}/approve`, {}],
      [oAdmin, 'POST', `/drivers/${d.id}/availability`, { available: false }],
      [oAdmin, 'POST', `/drivers/${d.id}/location`, { location: pt(0, 0) }],
      [oAdmin, 'POST', `/merchants/${merchantId}/approve`, {}],
      [oDriver, 'POST', `/driver/trips/${trip}/accept`],
      [oDriver, 'POST', `/trips/${trip}/verify-pickup`, { pin: '0000' }],
    ];
    for (const [s, method, url, payload] of checks) {
      const r = await t.req(s, { method, url, payload: payload as any });
      expect(r.statusCode, `${method} ${url}: ${r.body}`).toBe(404);
    }
    for (const url of ['/trips', '/drivers', '/merchants', '/territories']) {
      const data = (await t.req(oAdmin, { method: 'GET', url })).json().data as { id: string }[];
      expect(
        data.map((x) => x.id),
        url,
      ).not.toContain(url === '/trips' ? trip : url === '/drivers' ? d.id : merchantId);
      if (url !== '/drivers') expect(data, url).toHaveLength(0);
    }
    expect((await t.req(oAdmin, { method: 'GET', url: '/drivers/nearby?lon=-68.13&lat=-16.5' })).json().data).toHaveLength(0);
    expect((await t.req(admin, { method: 'GET', url: `/trips/${trip}/tracking` })).statusCode).toBe(200);
    const row = await t.db.withSystem((tx) => tx.query('SELECT status, driver_id FROM trip WHERE id = $1', [trip]));
    expect(row.rows[0]).toEqual({ status: 'accepted', driver_id: d.id });
  });

  it("a customer or merchant sees only his own trips (others' are 404)", async () => {
    const trip = await newTrip(t, admin);
    const u = await newUser(t, 'delivery');
    const s = await t.login(u.email);
    expect((await t.req(s, { method: 'GET', url: `/trips/${trip.id}/tracking` })).statusCode).toBe(404);
    expect((await t.req(s, { method: 'GET', url: '/trips' })).json().data).toHaveLength(0);
  });
});
