/**
 * GENERATED WALK: every route whose declaration lets a sub-administrator call it (from app.routeTable)
 * is exercised by a sub-administrator confined to territory A while records exist in A and in B:
 * lists must not carry any id of B, single B records are 404 (and stay unchanged), creations in B are
 * refused and write nothing, and every permission key a route declares, switched off, gives 403.
 * A route without a plan fails the test, so new routes cannot slip past confinement.
 */
import net from 'node:net';
import ExcelJS from 'exceljs';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type Session, type TestApp } from '../helpers.js';
import { newDriver, newUser, tripDb } from '../logistics/fixtures.js';
import { JPEG } from '../storage/fixtures.js';
import { SseClient, json } from '../realtime/sse.js';
import type { PermissionKey } from '../../src/platform/auth.js';
import { newSubadmin, newTerritory, pt, type TestSubadmin } from './fixtures.js';

let t: TestApp;
let admin: Session;
let base: string;
let subA: TestSubadmin;
let subP: TestSubadmin;
let childA: TestSubadmin;
/** Dispatch plans: one of the administrator over B, one of the sub-administrator of A. */
const plans = { B: '', A: '' };
/** An import of trips in B by the administrator (a sub-administrator sees only his own imports). */
let importOfB = '';

interface Zone {
  territory: string;
  at: { lon: number; lat: number };
  driver: string;
  driverUser: string;
  driverPending: string;
  merchant: string;
  merchantPending: string;
  tripPending: string;
  tripAssigned: string;
  object: string;
  review: string;
  order: string;
  coupon: string;
  tariff: string;
  banner: string;
  subadmin: string;
  hub: string;
}
const Z: Record<'A' | 'B', Zone> = {} as Record<'A' | 'B', Zone>;
/** Every id of B a sub-administrator of A must never see. */
let secretsB: string[] = [];

async function ok(p: Promise<LightMyRequestResponse>, status = 200) {
  const r = await p;
  expect(r.statusCode, r.body).toBe(status);
  return r.json();
}

async function merchantIn(zone: { lon: number; lat: number }, territory: string, approve: boolean) {
  const u = await newUser(t, 'comercio');
  const m = await ok(
    t.req(admin, {
      method: 'POST',
      url: '/merchants',
      payload: { owner_user_id: u.userId, name: 'Shop', location: pt(zone.lon, zone.lat), territory_id: territory },
    }),
    201,
  );
  if (approve) await ok(t.req(admin, { method: 'POST', url: `/merchants/${m.id}/approve`, payload: {} }));
  return { id: m.id as string, email: u.email };
}

/** A branch and an item of the merchant, a coupon, the zone's tariff, and a customer's merchant_direct order with its payment proof. */
async function commerceIn(name: string, at: { lon: number; lat: number }, territory: string, merchantEmail: string) {
  const merchant = await t.login(merchantEmail);
  const branch = await ok(
    t.req(merchant, {
      method: 'POST',
      url: '/merchant/branches',
      payload: { name: 'Branch', address: 'Calle 1', location: pt(at.lon, at.lat) },
    }),
    201,
  );
  expect(branch.territory_id).toBe(territory);
  const item = await ok(t.req(merchant, { method: 'POST', url: '/merchant/catalog', payload: { name: 'Item', price: '40.00' } }), 201);
  await ok(
    t.req(merchant, {
      method: 'PATCH',
      url: '/merchant/payment-profile',
      payload: { direct_payment_enabled: true, instructions: 'Transfer' },
    }),
  );
  const coupon = (
    await ok(
      t.req(merchant, {
        method: 'POST',
        url: '/merchant/coupons',
        payload: { code: `Z${name}10`, name: 'ten', discount_type: 'percent', discount_value: '10' },
      }),
      201,
    )
  ).id;
  const tariff = (
    await ok(
      t.req(admin, {
        method: 'POST',
        url: '/admin/territory-tariffs',
        payload: { territory_id: territory, service_mode: 'marketplace', base_fee: '5.00', per_km_fee: '1.00', driver_share_value: '70' },
      }),
      201,
    )
  ).id;
  const customer = await newUser(t, 'delivery');
  const cs = await t.login(customer.email);
  const address = await ok(
    t.req(cs, { method: 'POST', url: '/customer/addresses', payload: { address: 'Av. 1', location: pt(at.lon + 0.005, at.lat) } }),
    201,
  );
  const order = await ok(
    t.req(cs, {
      method: 'POST',
      url: '/customer/orders',
      payload: {
        branch_id: branch.id,
        address_id: address.id,
        items: [{ catalog_item_id: item.id, quantity: 1 }],
        payment_destination: 'merchant_direct',
      },
    }),
    201,
  );
  expect(order.territory_id).toBe(territory);
  const review = (
    await ok(
      t.req(cs, {
        method: 'POST',
        url: `/customer/orders/${order.id}/payment-proof`,
        payload: { amount: order.total, customer_reference: `ref-${name}` },
      }),
      201,
    )
  ).id;
  return { order: order.id as string, review: review as string, coupon: coupon as string, tariff: tariff as string };
}

async function evidenceFor(tripId: string): Promise<string> {
  const slot = await ok(
    t.req(admin, {
      method: 'POST',
      url: '/storage/evidence/uploads',
      payload: {
        trip_id: tripId,
        stage: 'pickup',
        proof_type: 'photo',
        mime_type: 'image/jpeg',
        size_bytes: JPEG.length,
        filename: 'p.jpg',
      },
    }),
    201,
  );
  const o = await ok(
    t.req(admin, {
      method: 'PUT',
      url: `/storage/uploads/${slot.upload_id}`,
      payload: JPEG,
      headers: { 'content-type': 'image/jpeg', 'x-upload-token': slot.upload_token },
    }),
    201,
  );
  return o.id;
}

async function zone(name: 'A' | 'B', lon: number, lat: number): Promise<Zone> {
  const territory = await newTerritory(t, admin, `Zone ${name}`, lon, lat);
  const at = { lon, lat };
  const driver = await newDriver(t, at, { territory_ids: [territory] });
  const pendingUser = await newUser(t, 'repartidor');
  const driverPending = (
    await ok(t.req(admin, { method: 'POST', url: '/drivers', payload: { user_id: pendingUser.userId, territory_ids: [territory] } }), 201)
  ).id;
  const shop = await merchantIn(at, territory, true);
  const merchant = shop.id;
  const merchantPending = (await merchantIn(at, territory, false)).id;
  const trip = (over: Record<string, unknown> = {}) =>
    ok(
      t.req(admin, {
        method: 'POST',
        url: '/trips',
        payload: {
          pickup_location: pt(lon, lat),
          pickup_address: 'p',
          dropoff_location: pt(lon + 0.01, lat),
          dropoff_address: 'd',
          merchant_id: merchant,
          ...over,
        },
      }),
      201,
    );
  const tripPending = (await trip()).id;
  const tripAssigned = (await trip()).id;
  await ok(t.req(admin, { method: 'POST', url: `/trips/${tripAssigned}/assign`, payload: { driver_id: driver.id } }));
  const object = await evidenceFor(tripAssigned);
  const { order, review, coupon, tariff } = await commerceIn(name, at, territory, shop.email);
  const banner = (
    await ok(
      t.req(admin, { method: 'POST', url: '/subadmin/banners', payload: { title: `Banner ${name}`, territory_ids: [territory] } }),
      201,
    )
  ).id;
  const subadmin = (await newSubadmin(t, admin, { territory_ids: [territory] })).userId;
  const hub = (
    await ok(t.req(admin, { method: 'POST', url: '/hubs', payload: { name: `Hub ${name}`, address: 'h', location: pt(lon, lat) } }), 201)
  ).id;
  return {
    territory,
    at,
    driver: driver.id,
    driverUser: driver.userId,
    driverPending,
    merchant,
    merchantPending,
    tripPending,
    tripAssigned,
    object,
    review,
    order,
    coupon,
    tariff,
    banner,
    subadmin,
    hub,
  };
}

beforeAll(async () => {
  t = await createTestApp();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(t.app.server.address() as net.AddressInfo).port}/api/v1`;
  admin = await t.as('admin');
  Z.A = await zone('A', -67, -16);
  Z.B = await zone('B', -66, -16);
  secretsB = Object.values(Z.B).filter((v): v is string => typeof v === 'string');
  const b = Z.B;
  secretsB.push((await tripDb(t, b.tripAssigned)).driver_id);
  subA = await newSubadmin(t, admin, {
    territory_ids: [Z.A.territory],
    permissions: { payments_review_decide: true, cash_remittances_record: true },
    commission_min_percent: '5',
    commission_max_percent: '15',
  });
  subP = await newSubadmin(t, admin, { territory_ids: [Z.A.territory], permissions: { payments_review_decide: true } });
  childA = await newSubadmin(t, subA.session, { territory_ids: [Z.A.territory] }, '/subadmin/profiles');
  plans.B = (
    await ok(t.req(admin, { method: 'POST', url: '/admin/dispatch-batches/optimize', payload: { territory_id: Z.B.territory } }), 201)
  ).plan_id;
  plans.A = (
    await ok(
      t.req(subA.session, { method: 'POST', url: '/subadmin/dispatch-batches/optimize', payload: { territory_id: Z.A.territory } }),
      201,
    )
  ).plan_id;
  expect(plans.A && plans.B).toBeTruthy();
  importOfB = (await ok(t.req(admin, importTrips(Z.B, 'by-admin')), 201)).id;
}, 120_000);
afterAll(async () => t?.close());

const PREFIX = '/api/v1';
type Call = Omit<InjectOptions, 'url'> & { url: string };

/** Yesterday to tomorrow: the days of the walk's cash entries. */
const cashDays = () =>
  `from=${new Date(Date.now() - 86_400_000).toISOString().slice(0, 10)}&to=${new Date(Date.now() + 2 * 86_400_000).toISOString().slice(0, 10)}`;

interface Plan {
  /** Reads whose answer must not contain any id of B, and (when given) must contain these ids of A. */
  list?: { call: Call; status?: number; mustSee?: () => string[]; check?: (res: LightMyRequestResponse) => Promise<void> | void };
  /** Single-record operations: with B's id 404 (B unchanged), with A's id anything but 404. */
  single?: { call: (id: string) => Call; b: () => string; a?: () => string; unchanged?: () => Promise<unknown> };
  /** Creations: placed in B refused (4xx, nothing written), in A created. */
  create?: { call: (zone: Zone) => Promise<Call>; written: (res: LightMyRequestResponse | null, zone: Zone) => Promise<number> };
  /** Personal routes (the caller's own records): must answer without a server error and without any id of B. */
  personal?: Call;
}

const post = (url: string, payload: unknown = {}): Call => ({ method: 'POST', url, payload: payload as Record<string, unknown> });
const get = (url: string): Call => ({ method: 'GET', url });
const count = async (sql: string, params: unknown[]) => (await t.db.withSystem((tx) => tx.query<{ n: number }>(sql, params))).rows[0].n;

/** A one-row CSV of trips picked up in the zone, imported for real (not a dry run). */
const importTrips = (z: Zone, ref: string): Call => ({
  method: 'POST',
  url: '/imports/trips?dry_run=false',
  headers: { 'content-type': 'text/csv' },
  payload: [
    'external_ref,pickup_address,pickup_lat,pickup_lon,dropoff_address,dropoff_lat,dropoff_lon',
    `${ref}-${z.territory},imported-by-${ref},${z.at.lat},${z.at.lon},d,${z.at.lat + 0.01},${z.at.lon}`,
  ].join('\n'),
});

const liveLinks = (tripId: string) =>
  t.db
    .withSystem((tx) => tx.query('SELECT id FROM trip_recipient_link WHERE trip_id = $1 AND revoked_at IS NULL', [tripId]))
    .then((r) => r.rows);

const PLANS: Record<string, Plan> = {
  'POST /auth/mobile/revoke': { personal: post('/auth/mobile/revoke', { refresh_token: 'not-a-token' }) },
  'POST /auth/logout': { personal: post('/auth/logout') },
  'GET /me': { personal: get('/me') },
  'POST /storage/generic/uploads': {
    personal: post('/storage/generic/uploads', { purpose: 'other', mime_type: 'image/jpeg', size_bytes: JPEG.length, filename: 'x.jpg' }),
  },
  'PUT /storage/uploads/:upload_id': {
    personal: {
      method: 'PUT',
      url: '/storage/uploads/nope',
      payload: JPEG,
      headers: { 'content-type': 'image/jpeg', 'x-upload-token': 'x' },
    },
  },
  'GET /storage/objects/:object_id': { single: { call: (id) => get(`/storage/objects/${id}`), b: () => Z.B.object, a: () => Z.A.object } },
  'GET /documents': { personal: get('/documents') },
  // Webhook subscriptions: his own (another's is 404); what they receive is confined by test/integration/webhook-scope.test.ts.
  'POST /webhooks/subscriptions': {
    personal: post('/webhooks/subscriptions', { url: 'https://hooks.example.com/sub', event_types: ['trip.created'] }),
  },
  'GET /webhooks/subscriptions': { personal: get('/webhooks/subscriptions') },
  'GET /webhooks/subscriptions/:id': { personal: get('/webhooks/subscriptions/nope') },
  'PATCH /webhooks/subscriptions/:id': { personal: { method: 'PATCH', url: '/webhooks/subscriptions/nope', payload: { active: false } } },
  'DELETE /webhooks/subscriptions/:id': { personal: { method: 'DELETE', url: '/webhooks/subscriptions/nope' } },
  'POST /webhooks/subscriptions/:id/rotate-secret': { personal: post('/webhooks/subscriptions/nope/rotate-secret') },
  'POST /webhooks/subscriptions/:id/test': { personal: post('/webhooks/subscriptions/nope/test') },
  'GET /webhooks/subscriptions/:id/deliveries': { personal: get('/webhooks/subscriptions/nope/deliveries') },
  'GET /webhooks/deliveries/:id': { personal: get('/webhooks/deliveries/nope') },
  'POST /webhooks/deliveries/:id/redeliver': { personal: post('/webhooks/deliveries/nope/redeliver') },
  'POST /documents': { personal: post('/documents', {}) },
  'GET /dashboard': {
    list: {
      call: get('/dashboard'),
      check: async (res) => {
        const s = res.json();
        expect(s.scope).toBe('territories');
        const trips = Object.values(s.sections.logistics.trips as Record<string, number>).reduce((a, b) => a + b, 0);
        expect(trips).toBe(await count('SELECT count(*)::int AS n FROM trip WHERE territory_id = $1', [Z.A.territory]));
        expect(s.sections.money.pending_payment_reviews).toBe(
          await count("SELECT count(*)::int AS n FROM merchant_payment_review WHERE status = 'pending' AND territory_id = $1", [
            Z.A.territory,
          ]),
        );
        expect(s.sections.operator.users_by_role).toBeUndefined();
      },
    },
  },
  // The on-time report: every territory line is one of his (the numbers themselves: test/logistics/on-time.test.ts).
  'GET /dashboard/on-time': {
    list: {
      call: get('/dashboard/on-time'),
      check: async (res) => {
        for (const line of res.json().territory as { key: string | null }[]) expect(line.key).toBe(Z.A.territory);
      },
    },
  },
  'GET /dashboard/on-time.xlsx': {
    list: { call: get('/dashboard/on-time.xlsx'), check: async (res) => expect(res.rawPayload.subarray(0, 2).toString()).toBe('PK') },
  },
  'GET /logistics/settings': { personal: get('/logistics/settings') },
  'GET /territories': { list: { call: get('/territories'), mustSee: () => [Z.A.territory] } },
  'GET /hubs': { list: { call: get('/hubs'), mustSee: () => [Z.A.hub] } },
  'POST /hubs': {
    create: {
      call: async (z) => post('/hubs', { name: 'New hub', address: 'h', location: pt(z.at.lon + 0.001, z.at.lat) }),
      written: async (res, z) =>
        count('SELECT count(*)::int AS n FROM hub WHERE territory_id = $1 AND name = $2', [z.territory, 'New hub']),
    },
  },
  'GET /hubs/:id': { single: { call: (id) => get(`/hubs/${id}`), b: () => Z.B.hub, a: () => Z.A.hub } },
  'PATCH /hubs/:id': {
    single: {
      call: (id) => ({ method: 'PATCH', url: `/hubs/${id}`, payload: { name: 'Renamed hub' } }),
      b: () => Z.B.hub,
      a: () => Z.A.hub,
      unchanged: async () => (await t.db.withSystem((tx) => tx.query('SELECT name, updated_at FROM hub WHERE id = $1', [Z.B.hub]))).rows[0],
    },
  },
  // Last of the hub plans: it deletes A's hub.
  'DELETE /hubs/:id': {
    single: {
      call: (id) => ({ method: 'DELETE', url: `/hubs/${id}` }),
      b: () => Z.B.hub,
      a: () => Z.A.hub,
      unchanged: async () => count('SELECT count(*)::int AS n FROM hub WHERE id = $1', [Z.B.hub]),
    },
  },
  'GET /merchants': { list: { call: get('/merchants'), mustSee: () => [Z.A.merchant, Z.A.merchantPending] } },
  'POST /merchants': {
    create: {
      call: async (z) =>
        post('/merchants', { owner_user_id: (await newUser(t, 'comercio')).userId, name: 'New shop', territory_id: z.territory }),
      written: async (res, z) =>
        count('SELECT count(*)::int AS n FROM merchant WHERE territory_id = $1 AND name = $2', [z.territory, 'New shop']),
    },
  },
  'POST /merchants/:id/approve': {
    single: {
      call: (id) => post(`/merchants/${id}/approve`),
      b: () => Z.B.merchantPending,
      a: () => Z.A.merchantPending,
      unchanged: () => status('merchant', Z.B.merchantPending),
    },
  },
  'POST /merchants/:id/reject': {
    single: {
      call: (id) => post(`/merchants/${id}/reject`, { reason: 'x' }),
      b: () => Z.B.merchantPending,
      a: () => Z.A.merchantPending,
      unchanged: () => status('merchant', Z.B.merchantPending),
    },
  },
  // Suspend then reactivate A's merchant that approve (above) just approved: real transitions in A, B untouched.
  'POST /merchants/:id/suspend': {
    single: {
      call: (id) => post(`/merchants/${id}/suspend`, { reason: 'x' }),
      b: () => Z.B.merchant,
      a: () => Z.A.merchantPending,
      unchanged: () => status('merchant', Z.B.merchant),
    },
  },
  'POST /merchants/:id/reactivate': {
    single: {
      call: (id) => post(`/merchants/${id}/reactivate`),
      b: () => Z.B.merchant,
      a: () => Z.A.merchantPending,
      unchanged: () => status('merchant', Z.B.merchant),
    },
  },
  'GET /drivers': { list: { call: get('/drivers'), mustSee: () => [Z.A.driver, Z.A.driverPending] } },
  'POST /drivers': {
    create: {
      call: async (z) => post('/drivers', { user_id: (await newUser(t, 'repartidor')).userId, territory_ids: [z.territory] }),
      written: async (res, z) => count('SELECT count(*)::int AS n FROM driver_territory WHERE territory_id = $1', [z.territory]),
    },
  },
  'GET /drivers/nearby': { list: { call: get('/drivers/nearby?lon=-66.5&lat=-16&radius_m=200000'), mustSee: () => [Z.A.driver] } },
  'POST /drivers/:id/approve': {
    single: {
      call: (id) => post(`/drivers/${id}/approve`),
      b: () => Z.B.driverPending,
      a: () => Z.A.driverPending,
      unchanged: () => status('driver', Z.B.driverPending),
    },
  },
  'POST /drivers/:id/reject': {
    single: {
      call: (id) => post(`/drivers/${id}/reject`, { reason: 'x' }),
      b: () => Z.B.driverPending,
      a: () => Z.A.driverPending,
      unchanged: () => status('driver', Z.B.driverPending),
    },
  },
  'POST /drivers/:id/suspend': {
    single: {
      call: (id) => post(`/drivers/${id}/suspend`, { reason: 'x' }),
      b: () => Z.B.driver,
      a: () => Z.A.driverPending,
      unchanged: () => status('driver', Z.B.driver),
    },
  },
  'POST /drivers/:id/reactivate': {
    single: {
      call: (id) => post(`/drivers/${id}/reactivate`),
      b: () => Z.B.driver,
      a: () => Z.A.driverPending,
      unchanged: () => status('driver', Z.B.driver),
    },
  },
  'PATCH /drivers/:id': {
    single: {
      call: (id) => ({ method: 'PATCH', url: `/drivers/${id}`, payload: { vehicle_type: 'motorcycle', territory_ids: [Z.A.territory] } }),
      b: () => Z.B.driver,
      a: () => Z.A.driver,
      unchanged: async () =>
        (await t.db.withSystem((tx) => tx.query('SELECT vehicle_type, capacity, updated_at FROM driver WHERE id = $1', [Z.B.driver])))
          .rows[0],
    },
  },
  'POST /drivers/:id/availability': {
    single: {
      call: (id) => post(`/drivers/${id}/availability`, { available: false }),
      b: () => Z.B.driver,
      a: () => Z.A.driver,
      unchanged: () => driverAvailable(Z.B.driver),
    },
  },
  'POST /drivers/:id/location': {
    single: { call: (id) => post(`/drivers/${id}/location`, { location: pt(-66.99, -16) }), b: () => Z.B.driver, a: () => Z.A.driver },
  },
  // Cash on delivery: a driver's cash ledger and remittances, only for drivers of his territories.
  'GET /drivers/:id/cash': { single: { call: (id) => get(`/drivers/${id}/cash`), b: () => Z.B.driver, a: () => Z.A.driver } },
  'POST /drivers/:id/cash-remittances': {
    single: {
      call: (id) => post(`/drivers/${id}/cash-remittances`, { amount: '1.00', method: 'cash' }),
      b: () => Z.B.driver,
      a: () => Z.A.driver,
      unchanged: () => count('SELECT count(*)::int AS n FROM driver_cash_entry WHERE driver_id = $1', [Z.B.driver]),
    },
  },
  'GET /admin/cash-reconciliation': {
    list: {
      call: get(`/admin/cash-reconciliation?${cashDays()}`),
      check: async (res) => {
        for (const line of res.json().data as { territory_id: string | null }[]) expect(line.territory_id).toBe(Z.A.territory);
      },
    },
  },
  'GET /admin/cash-reconciliation.xlsx': {
    list: {
      call: get(`/admin/cash-reconciliation.xlsx?${cashDays()}`),
      check: async (res) => expect(res.rawPayload.subarray(0, 2).toString()).toBe('PK'),
    },
  },
  'GET /admin/dispatch': { list: { call: get('/admin/dispatch'), mustSee: () => [Z.A.tripPending] } },
  'GET /admin/live-map': { list: { call: get('/admin/live-map'), mustSee: () => [Z.A.tripPending, Z.A.driver] } },
  'GET /trips': { list: { call: get('/trips'), mustSee: () => [Z.A.tripPending, Z.A.tripAssigned] } },
  'POST /trips': {
    create: {
      call: async (z) =>
        post('/trips', {
          pickup_location: pt(z.at.lon, z.at.lat),
          pickup_address: 'created-by-sub',
          dropoff_location: pt(z.at.lon, z.at.lat + 0.01),
          dropoff_address: 'd',
        }),
      written: async (res, z) =>
        count("SELECT count(*)::int AS n FROM trip WHERE territory_id = $1 AND pickup_address = 'created-by-sub'", [z.territory]),
    },
  },
  'POST /trips/:id/assign': {
    single: {
      call: (id) => post(`/trips/${id}/assign`, { driver_id: Z.A.driver }),
      b: () => Z.B.tripPending,
      a: () => Z.A.tripPending,
      unchanged: () => status('trip', Z.B.tripPending),
    },
  },
  'POST /trips/:id/status': {
    single: {
      call: (id) => post(`/trips/${id}/status`, { status: 'cancelled', reason: 'x' }),
      b: () => Z.B.tripAssigned,
      a: () => Z.A.tripAssigned,
      unchanged: () => status('trip', Z.B.tripAssigned),
    },
  },
  'PATCH /trips/:id/coordinates': {
    single: {
      call: (id) => ({ method: 'PATCH', url: `/trips/${id}/coordinates`, payload: { dropoff_address: 'moved' } }),
      b: () => Z.B.tripPending,
      a: () => Z.A.tripPending,
    },
  },
  'GET /trips/:id/candidates': {
    single: { call: (id) => get(`/trips/${id}/candidates?radius_m=200000`), b: () => Z.B.tripPending, a: () => Z.A.tripPending },
  },
  'PATCH /trips/:id/promise': {
    single: {
      call: (id) => ({
        method: 'PATCH',
        url: `/trips/${id}/promise`,
        payload: { promised_at: new Date(Date.now() + 3_600_000).toISOString() },
      }),
      b: () => Z.B.tripPending,
      a: () => Z.A.tripPending,
      unchanged: () =>
        t.db.withSystem((tx) => tx.query('SELECT promised_at FROM trip WHERE id = $1', [Z.B.tripPending])).then((r) => r.rows),
    },
  },
  'GET /exceptions': { list: { call: get('/exceptions') } },
  'GET /imports/trips/template': { personal: get('/imports/trips/template') },
  'GET /imports/express-requests/template': { personal: get('/imports/express-requests/template') },
  'GET /imports': { list: { call: get('/imports') } },
  'GET /imports/:id': { single: { call: (id) => get(`/imports/${id}`), b: () => importOfB } },
  'GET /imports/:id/report': { single: { call: (id) => get(`/imports/${id}/report`), b: () => importOfB } },
  'POST /imports/trips': {
    create: {
      call: async (z) => importTrips(z, 'sub'),
      written: async (_res, z) =>
        count("SELECT count(*)::int AS n FROM trip WHERE territory_id = $1 AND pickup_address = 'imported-by-sub'", [z.territory]),
    },
  },
  'POST /imports/express-requests': {
    create: {
      call: async (z) => ({
        method: 'POST',
        url: `/imports/express-requests?dry_run=false&merchant_id=${z.merchant}`,
        headers: { 'content-type': 'text/csv' },
        payload: [
          'external_ref,customer_name,pickup_address,pickup_lat,pickup_lon,dropoff_address,dropoff_lat,dropoff_lon',
          `x-${z.territory},imported-by-sub,p,${z.at.lat},${z.at.lon},d,${z.at.lat + 0.01},${z.at.lon}`,
        ].join('\n'),
      }),
      written: async (_res, z) =>
        count("SELECT count(*)::int AS n FROM delivery_express_request WHERE merchant_id = $1 AND customer_name = 'imported-by-sub'", [
          z.merchant,
        ]),
    },
  },
  'POST /trips/:id/auto-assign': {
    single: {
      call: (id) => post(`/trips/${id}/auto-assign`),
      b: () => Z.B.tripPending,
      a: () => Z.A.tripAssigned,
      unchanged: () => status('trip', Z.B.tripPending),
    },
  },
  'GET /trips/:id': { single: { call: (id) => get(`/trips/${id}`), b: () => Z.B.tripAssigned, a: () => Z.A.tripAssigned } },
  'GET /trips/:id/track': { single: { call: (id) => get(`/trips/${id}/track`), b: () => Z.B.tripAssigned, a: () => Z.A.tripAssigned } },
  'GET /trips/:id/recipient-link': {
    single: { call: (id) => get(`/trips/${id}/recipient-link`), b: () => Z.B.tripPending, a: () => Z.A.tripPending },
  },
  'POST /trips/:id/recipient-link': {
    single: {
      call: (id) => post(`/trips/${id}/recipient-link`),
      b: () => Z.B.tripPending,
      a: () => Z.A.tripPending,
      unchanged: () => liveLinks(Z.B.tripPending),
    },
  },
  'DELETE /trips/:id/recipient-link': {
    single: {
      call: (id) => ({ method: 'DELETE', url: `/trips/${id}/recipient-link` }),
      b: () => Z.B.tripPending,
      unchanged: () => liveLinks(Z.B.tripPending),
    },
  },
  'GET /trips/:id/tracking': {
    single: { call: (id) => get(`/trips/${id}/tracking`), b: () => Z.B.tripAssigned, a: () => Z.A.tripAssigned },
  },
  'GET /trips/:id/proofs': { single: { call: (id) => get(`/trips/${id}/proofs`), b: () => Z.B.tripAssigned, a: () => Z.A.tripAssigned } },
  'POST /merchant/payment-reviews/:id/approve': {
    single: {
      call: (id) => post(`/merchant/payment-reviews/${id}/approve`),
      b: () => Z.B.review,
      a: () => Z.A.review,
      unchanged: () => status('merchant_payment_review', Z.B.review),
    },
  },
  'POST /merchant/payment-reviews/:id/reject': {
    single: {
      call: (id) => post(`/merchant/payment-reviews/${id}/reject`, { notes: 'x' }),
      b: () => Z.B.review,
      a: () => Z.A.review,
      unchanged: () => status('merchant_payment_review', Z.B.review),
    },
  },
  'GET /admin/payment-reviews': { list: { call: get('/admin/payment-reviews'), mustSee: () => [Z.A.review] } },
  'GET /integrations/payments': { personal: get('/integrations/payments') },
  'GET /notifications': { personal: get('/notifications') },
  'POST /notifications/:id/read': { personal: post('/notifications/nope/read') },
  'POST /notifications/test': { personal: post('/notifications/test', {}) },
  'GET /mobile/devices': { personal: get('/mobile/devices') },
  'POST /mobile/devices': { personal: post('/mobile/devices', {}) },
  'DELETE /mobile/devices/:id': { personal: { method: 'DELETE', url: '/mobile/devices/nope' } },
  'POST /mobile/heartbeat': { personal: post('/mobile/heartbeat', {}) },
  'GET /mobile/bootstrap': { personal: get('/mobile/bootstrap') },
  'GET /mobile/contract': { personal: get('/mobile/contract') },
  'GET /mobile/brand-assets': { personal: get('/mobile/brand-assets') },
  'GET /app-builds': { personal: get('/app-builds') },
  'GET /mobile/sync/pull': { personal: get('/mobile/sync/pull') },
  'POST /mobile/sync/push': { personal: post('/mobile/sync/push', { operations: [] }) },
  'POST /realtime/tokens': { personal: post('/realtime/tokens', {}) },
  'PATCH /admin/subadmins/:id': {
    single: {
      call: (id) => ({ method: 'PATCH', url: `/admin/subadmins/${id}`, payload: { display_name: 'renamed' } }),
      b: () => Z.B.subadmin,
      a: () => childA.userId,
    },
  },
  'GET /subadmin/me': { list: { call: get('/subadmin/me'), mustSee: () => [Z.A.territory] } },
  'GET /subadmin/profiles': { list: { call: get('/subadmin/profiles'), mustSee: () => [childA.userId] } },
  'POST /subadmin/profiles': {
    create: {
      call: async (z) =>
        post('/subadmin/profiles', {
          email: `c-${Math.random().toString(36).slice(2)}@t.test`,
          password: 'Demo-pass-2026',
          display_name: 'sub-created',
          territory_ids: [z.territory],
        }),
      written: async (res, z) =>
        count(
          "SELECT count(*)::int AS n FROM subadmin_profile p JOIN user_territory ut ON ut.user_id = p.user_id WHERE p.display_name = 'sub-created' AND ut.territory_id = $1",
          [z.territory],
        ),
    },
  },
  'GET /subadmin/tracking': { list: { call: get('/subadmin/tracking'), mustSee: () => [Z.A.driver, Z.A.tripAssigned] } },
  'GET /subadmin/deliveries/status': {
    list: {
      call: get('/subadmin/deliveries/status'),
      mustSee: () => [Z.A.tripPending],
      check: async (res) =>
        expect(res.json().total).toBe(await count('SELECT count(*)::int AS n FROM trip WHERE territory_id = $1', [Z.A.territory])),
    },
  },
  'GET /subadmin/payments/review': { list: { call: get('/subadmin/payments/review'), mustSee: () => [Z.A.review] } },
  'PATCH /subadmin/merchants/:id/commission': {
    single: {
      call: (id) => ({ method: 'PATCH', url: `/subadmin/merchants/${id}/commission`, payload: { commission_percent: '10' } }),
      b: () => Z.B.merchant,
      a: () => Z.A.merchant,
      unchanged: async () =>
        (await t.db.withSystem((tx) => tx.query('SELECT commission_percent FROM merchant WHERE id = $1', [Z.B.merchant]))).rows[0]
          .commission_percent,
    },
  },
  'GET /subadmin/banners': { list: { call: get('/subadmin/banners'), mustSee: () => [Z.A.banner] } },
  'POST /subadmin/banners': {
    create: {
      call: async (z) => post('/subadmin/banners', { title: 'sub-banner', territory_ids: [z.territory] }),
      written: async (res, z) =>
        count(
          "SELECT count(*)::int AS n FROM zone_banner b JOIN banner_territory bt ON bt.banner_id = b.id WHERE b.title = 'sub-banner' AND bt.territory_id = $1",
          [z.territory],
        ),
    },
  },
  'GET /customer/marketplace': { list: { call: get('/customer/marketplace'), mustSee: () => [Z.A.merchant] } },
  'GET /subadmin/orders/status': {
    list: {
      call: get('/subadmin/orders/status'),
      mustSee: () => [Z.A.order],
      check: async (res) =>
        expect(res.json().total).toBe(
          await count('SELECT count(*)::int AS n FROM merchant_order WHERE territory_id = $1', [Z.A.territory]),
        ),
    },
  },
  'GET /subadmin/coupons': { list: { call: get('/subadmin/coupons'), mustSee: () => [Z.A.coupon] } },
  'POST /subadmin/merchants/:id/coupons': {
    single: {
      call: (id) =>
        post(`/subadmin/merchants/${id}/coupons`, {
          code: `S${Math.random().toString(36).slice(2, 10)}`,
          name: 'sub coupon',
          discount_type: 'fixed',
          discount_value: '5.00',
        }),
      b: () => Z.B.merchant,
      a: () => Z.A.merchant,
      unchanged: () => count('SELECT count(*)::int AS n FROM merchant_coupon WHERE merchant_id = $1', [Z.B.merchant]),
    },
  },
  'GET /subadmin/territory-tariffs': { list: { call: get('/subadmin/territory-tariffs'), mustSee: () => [Z.A.tariff] } },
  'GET /subadmin/reports/sales.xls': {
    list: {
      call: get('/subadmin/reports/sales.xls'),
      check: async (res) => {
        const ids = await workbookColumn(res.rawPayload, 1);
        expect(ids).toContain(Z.A.order);
        for (const id of secretsB) expect(ids).not.toContain(id);
      },
    },
  },
  'POST /subadmin/dispatch-batches/optimize': {
    list: {
      get call() {
        return post('/subadmin/dispatch-batches/optimize', { territory_id: Z.A.territory });
      },
      status: 201,
      mustSee: () => [Z.A.territory],
      check: async () => {
        // Naming B's territory is 404; naming B's trips plans nothing for them.
        expect((await asA(post('/subadmin/dispatch-batches/optimize', { territory_id: Z.B.territory }))).statusCode).toBe(404);
        const byIds = await asA(post('/subadmin/dispatch-batches/optimize', { trip_ids: [Z.B.tripPending] }));
        expect(byIds.statusCode).toBe(201);
        expect(JSON.stringify(byIds.json().assignments ?? [])).not.toContain(Z.B.tripPending);
      },
    },
  },
  'POST /subadmin/dispatch-batches/optimize/:planId/commit': {
    single: {
      call: (id) => post(`/subadmin/dispatch-batches/optimize/${id}/commit`),
      b: () => plans.B,
      a: () => plans.A,
      unchanged: () => status('trip', Z.B.tripPending),
    },
  },
  'GET /subadmin/reports/deliveries.xls': {
    list: {
      call: get('/subadmin/reports/deliveries.xls'),
      check: async (res) => {
        const ids = await workbookColumn(res.rawPayload, 1);
        expect(ids).toEqual(expect.arrayContaining([Z.A.tripPending, Z.A.tripAssigned]));
        for (const id of secretsB) expect(ids).not.toContain(id);
      },
    },
  },
};

async function status(table: string, id: string) {
  return (await t.db.withSystem((tx) => tx.query(`SELECT status FROM ${table} WHERE id = $1`, [id]))).rows[0].status;
}
async function driverAvailable(id: string) {
  return (await t.db.withSystem((tx) => tx.query('SELECT available FROM driver WHERE id = $1', [id]))).rows[0].available;
}
async function workbookColumn(file: Buffer, col: number): Promise<string[]> {
  const wb = new ExcelJS.Workbook();
  await wb.xlsx.load(file as unknown as ArrayBuffer);
  const out: string[] = [];
  // Every sheet: reports list cancelled and open records apart from the counted ones.
  for (const ws of wb.worksheets) ws.eachRow((row) => out.push(String(row.getCell(col).value ?? '')));
  return out;
}

/** Routes a sub-administrator may call: declared roles include 'subadmin', or no roles (any authenticated user). */
function subadminRoutes() {
  return t.app.routeTable
    .filter((r) => r.url.startsWith(PREFIX) && !r.isPublic && r.method !== 'HEAD' && (!r.roles || r.roles.includes('subadmin')))
    .map((r) => ({ key: `${r.method} ${r.url.slice(PREFIX.length)}`, permission: r.permission as PermissionKey | undefined }));
}

const asA = (c: Call) => t.req(subA.session, c);
const leaks = (body: string) => secretsB.filter((id) => body.includes(id));

describe('generated confinement walk', () => {
  it('has a plan for every route a sub-administrator may call (and no stale plan)', () => {
    const keys = subadminRoutes().map((r) => r.key);
    expect(
      keys.filter((k) => !PLANS[k]),
      'routes without a confinement plan',
    ).toEqual([]);
    expect(
      Object.keys(PLANS).filter((k) => !keys.includes(k)),
      'plans of routes that do not exist',
    ).toEqual([]);
  });

  it('lists and reads show nothing of territory B', async () => {
    for (const [key, plan] of Object.entries(PLANS)) {
      if (!plan.list) continue;
      const res = await asA(plan.list.call);
      expect(res.statusCode, `${key}: ${res.body.slice(0, 300)}`).toBe(plan.list.status ?? 200);
      const body = res.headers['content-type']?.toString().includes('json') ? res.body : '';
      expect(leaks(body), key).toEqual([]);
      for (const id of plan.list.mustSee?.() ?? []) expect(body, `${key} must show ${id}`).toContain(id);
      await plan.list.check?.(res);
    }
    // A filter naming B's territory gives nothing, not B's records.
    for (const url of [
      `/customer/marketplace?territory_id=${Z.B.territory}`,
      `/subadmin/territory-tariffs?territory_id=${Z.B.territory}`,
      `/trips?territory_id=${Z.B.territory}`,
      `/merchants?territory_id=${Z.B.territory}`,
      `/drivers?territory_id=${Z.B.territory}`,
      `/subadmin/banners?territory_id=${Z.B.territory}`,
      `/hubs?territory_id=${Z.B.territory}`,
    ]) {
      const res = await asA(get(url));
      expect(res.statusCode, url).toBe(200);
      expect(res.json().data, url).toEqual([]);
    }
  });

  it('personal routes answer without a server error and without B ids', async () => {
    for (const [key, plan] of Object.entries(PLANS)) {
      if (!plan.personal) continue;
      // A throwaway session: some of these end the session (logout).
      const session = await t.login(subA.email);
      const res = await t.req(session, plan.personal);
      expect(res.statusCode, `${key}: ${res.body.slice(0, 300)}`).toBeLessThan(500);
      expect(leaks(res.body), key).toEqual([]);
    }
  });

  it('creations placed in B are refused and write nothing; in A they work', async () => {
    for (const [key, plan] of Object.entries(PLANS)) {
      if (!plan.create) continue;
      const beforeB = await plan.create.written(null, Z.B);
      const refused = await asA(await plan.create.call(Z.B));
      expect([403, 404, 422], `${key} in B: ${refused.statusCode} ${refused.body.slice(0, 200)}`).toContain(refused.statusCode);
      expect(await plan.create.written(refused, Z.B), `${key} wrote in B`).toBe(beforeB);
      const beforeA = await plan.create.written(null, Z.A);
      const created = await asA(await plan.create.call(Z.A));
      expect(created.statusCode, `${key} in A: ${created.body.slice(0, 300)}`).toBe(201);
      expect(await plan.create.written(created, Z.A), `${key} in A`).toBe(beforeA + 1);
    }
  });

  it('single records of B are 404 and stay unchanged; those of A are reachable', async () => {
    for (const [key, plan] of Object.entries(PLANS)) {
      if (!plan.single) continue;
      const before = await plan.single.unchanged?.();
      const res = await asA(plan.single.call(plan.single.b()));
      expect(res.statusCode, `${key} with B's id: ${res.body.slice(0, 200)}`).toBe(404);
      if (plan.single.unchanged) expect(await plan.single.unchanged(), `${key} changed B`).toEqual(before);
      if (plan.single.a) {
        const a = await asA(plan.single.call(plan.single.a()));
        expect(a.statusCode, `${key} with A's id: ${a.body.slice(0, 300)}`).not.toBe(404);
        expect(a.statusCode, `${key} with A's id: ${a.body.slice(0, 300)}`).toBeLessThan(500);
      }
    }
    // Cross links: a B driver cannot be put on an A trip, nor an A trip's candidate list show B drivers.
    const a = await tripDb(t, Z.A.tripPending);
    if (a.status === 'pending') {
      const cross = await asA(post(`/trips/${Z.A.tripPending}/assign`, { driver_id: Z.B.driver }));
      expect(cross.statusCode).toBe(422);
    }
    const cands = await asA(get(`/trips/${Z.A.tripAssigned}/candidates?radius_m=200000`));
    expect(leaks(cands.body)).toEqual([]);
  });

  it('each permission key a route declares, switched off, gives 403 PERMISSION_DENIED', async () => {
    const byKey = new Map<PermissionKey, string[]>();
    for (const r of subadminRoutes()) if (r.permission) byKey.set(r.permission, [...(byKey.get(r.permission) ?? []), r.key]);
    expect(byKey.size).toBeGreaterThan(10);
    for (const [perm, keys] of byKey) {
      await ok(t.req(admin, { method: 'PATCH', url: `/admin/subadmins/${subP.userId}`, payload: { permissions: { [perm]: false } } }));
      for (const key of keys) {
        const [method, url] = key.split(' ');
        const res = await t.req(subP.session, {
          method: method as 'GET',
          url: url.replace(/:[a-z_]+/g, 'x'),
          payload: method === 'GET' || method === 'DELETE' ? undefined : {},
        });
        expect(res.statusCode, `${key} without ${perm}`).toBe(403);
        expect(res.json().code, key).toBe('PERMISSION_DENIED');
      }
      await ok(t.req(admin, { method: 'PATCH', url: `/admin/subadmins/${subP.userId}`, payload: { permissions: { [perm]: true } } }));
    }
  });

  it('keys checked inside handlers: trips_cancel / trips_reassign on trip status, reports on the spreadsheets', async () => {
    const trip = (
      await ok(
        t.req(admin, {
          method: 'POST',
          url: '/trips',
          payload: { pickup_location: pt(-67, -16), pickup_address: 'p', dropoff_location: pt(-67, -15.99), dropoff_address: 'd' },
        }),
        201,
      )
    ).id;
    const driver = await newDriver(t, Z.A.at, { territory_ids: [Z.A.territory] });
    await ok(t.req(admin, { method: 'POST', url: `/trips/${trip}/assign`, payload: { driver_id: driver.id } }));
    for (const [perm, body] of [
      ['trips_reassign', { status: 'pending', reason: 'x' }],
      ['trips_cancel', { status: 'cancelled', reason: 'x' }],
    ] as const) {
      await ok(t.req(admin, { method: 'PATCH', url: `/admin/subadmins/${subP.userId}`, payload: { permissions: { [perm]: false } } }));
      const res = await t.req(subP.session, post(`/trips/${trip}/status`, body));
      expect(res.statusCode, perm).toBe(403);
      expect((await tripDb(t, trip)).status).toBe('assigned');
      await ok(t.req(admin, { method: 'PATCH', url: `/admin/subadmins/${subP.userId}`, payload: { permissions: { [perm]: true } } }));
    }
    await ok(t.req(admin, { method: 'PATCH', url: `/admin/subadmins/${subP.userId}`, payload: { permissions: { reports: false } } }));
    expect((await t.req(subP.session, get('/subadmin/reports/deliveries.xls'))).statusCode).toBe(403);
    expect((await t.req(subP.session, get('/subadmin/reports/sales.xls'))).statusCode).toBe(403);
    await ok(t.req(admin, { method: 'PATCH', url: `/admin/subadmins/${subP.userId}`, payload: { permissions: { reports: true } } }));
    // payments_review_decide defaults to false: a fresh sub-administrator cannot decide.
    const fresh = await newSubadmin(t, admin, { territory_ids: [Z.A.territory] });
    expect((await t.req(fresh.session, post(`/merchant/payment-reviews/${Z.A.review}/approve`))).statusCode).toBe(403);
  });
});

describe('territory streams', () => {
  it('the territory stream carries events of A only; a B trip stream is 404', async () => {
    const c = await SseClient.open(`${base}/realtime/territories/stream`, { authorization: `Bearer ${subA.session.token}` });
    try {
      expect(c.status).toBe(200);
      const tripB = (
        await ok(
          t.req(admin, {
            method: 'POST',
            url: '/trips',
            payload: { pickup_location: pt(-66, -16), pickup_address: 'p', dropoff_location: pt(-66, -15.99), dropoff_address: 'd' },
          }),
          201,
        )
      ).id;
      const tripA = (
        await ok(
          t.req(admin, {
            method: 'POST',
            url: '/trips',
            payload: { pickup_location: pt(-67, -16), pickup_address: 'p', dropoff_location: pt(-67, -15.99), dropoff_address: 'd' },
          }),
          201,
        )
      ).id;
      await c.waitFor((f) => f.event === 'trip.created' && json(f).entity_id === tripA);
      const seen = c.events.map((f) => json(f));
      expect(seen.map((e) => e.entity_id)).not.toContain(tripB);
      for (const e of seen) expect(e.territory_id).toBe(Z.A.territory);
    } finally {
      c.close();
    }
    const b = await SseClient.open(`${base}/realtime/trips/${Z.B.tripAssigned}/stream`, { authorization: `Bearer ${subA.session.token}` });
    expect(b.status).toBe(404);
    b.close();
    const a = await SseClient.open(`${base}/realtime/trips/${Z.A.tripAssigned}/stream`, { authorization: `Bearer ${subA.session.token}` });
    expect(a.status).toBe(200);
    a.close();
  });
});
