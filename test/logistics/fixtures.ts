import { expect } from 'vitest';
import type { Session, TestApp } from '../helpers.js';
import { DEMO_PASSWORD } from '../../src/seed.js';
import { newId } from '../../src/platform/ids.js';
import { pt } from '../support.js';

export { pt };

/** A user of a role in the demo organization (or another), created through the identity service. */
export async function newUser(
  t: TestApp,
  role: 'repartidor' | 'comercio' | 'delivery' | 'administrator',
  organizationId = t.demo.organizationId,
  extra: { subadmin?: boolean; dispatch?: boolean } = {},
) {
  const email = `${role}-${newId().slice(-12)}@test.test`;
  const user = await t.db.withSystem((tx) =>
    t.app.services.identity.insertUser(tx, organizationId, {
      email,
      password: DEMO_PASSWORD,
      display_name: `${role} user`,
      role,
      ...extra,
    }),
  );
  return { userId: user.id, email };
}

export interface TestDriver {
  id: string;
  userId: string;
  session: Session;
}

/** An approved, available driver at (lon, lat), created through the API as the demo administrator. */
export async function newDriver(
  t: TestApp,
  at: { lon: number; lat: number },
  opts: { capacity?: number; territory_ids?: string[]; admin?: Session } = {},
): Promise<TestDriver> {
  const admin = opts.admin ?? (await t.as('admin'));
  const u = await newUser(t, 'repartidor', admin.organizationId);
  const created = await t.req(admin, {
    method: 'POST',
    url: '/drivers',
    payload: { user_id: u.userId, capacity: opts.capacity ?? 1, ...(opts.territory_ids ? { territory_ids: opts.territory_ids } : {}) },
  });
  expect(created.statusCode, created.body).toBe(201);
  const id = created.json().id;
  expect((await t.req(admin, { method: 'POST', url: `/drivers/${id}/approve`, payload: {} })).statusCode).toBe(200);
  expect((await t.req(admin, { method: 'POST', url: `/drivers/${id}/availability`, payload: { available: true } })).statusCode).toBe(200);
  const loc = await t.req(admin, {
    method: 'POST',
    url: `/drivers/${id}/location`,
    payload: { location: pt(at.lon, at.lat), recorded_at: new Date(Date.now() - 600_000).toISOString() },
  });
  expect(loc.statusCode, loc.body).toBe(200);
  return { id, userId: u.userId, session: await t.login(u.email) };
}

export async function newTrip(t: TestApp, session: Session, over: Record<string, unknown> = {}, at = { lon: -68.13, lat: -16.5 }) {
  const res = await t.req(session, {
    method: 'POST',
    url: '/trips',
    payload: {
      pickup_location: pt(at.lon, at.lat),
      pickup_address: 'Pickup street 1',
      dropoff_location: pt(at.lon + 0.01, at.lat + 0.01),
      dropoff_address: 'Dropoff street 2',
      ...over,
    },
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as { id: string; status: string; [k: string]: unknown };
}

export async function tripDb(t: TestApp, id: string) {
  return (await t.db.withSystem((tx) => tx.query('SELECT * FROM trip WHERE id = $1', [id]))).rows[0];
}

export async function driverDb(t: TestApp, id: string) {
  return (await t.db.withSystem((tx) => tx.query('SELECT * FROM driver WHERE id = $1', [id]))).rows[0];
}

export async function eventTypes(t: TestApp, tripId: string): Promise<string[]> {
  const { rows } = await t.db.withSystem((tx) =>
    tx.query("SELECT type FROM event WHERE entity_type = 'trip' AND entity_id = $1 ORDER BY seq", [tripId]),
  );
  return rows.map((r: { type: string }) => r.type);
}

/** Drives a new trip through the real operations to `state` with `driver` (and `other` for nothing but symmetry). */
export async function tripIn(
  t: TestApp,
  admin: Session,
  driver: TestDriver,
  state: string,
  at = { lon: -68.13, lat: -16.5 },
  creator: Session = admin,
) {
  const trip = await newTrip(t, creator, {}, at);
  const ok = async (p: Promise<{ statusCode: number; body: string }>) => {
    const r = await p;
    expect(r.statusCode, r.body).toBe(200);
  };
  if (state === 'pending') return trip.id;
  if (state === 'cancelled') {
    await ok(t.req(admin, { method: 'POST', url: `/trips/${trip.id}/status`, payload: { status: 'cancelled', reason: 'setup' } }));
    return trip.id;
  }
  await ok(t.req(admin, { method: 'POST', url: `/trips/${trip.id}/assign`, payload: { driver_id: driver.id } }));
  if (state === 'assigned') return trip.id;
  await ok(t.req(driver.session, { method: 'POST', url: `/driver/trips/${trip.id}/accept` }));
  if (state === 'accepted') return trip.id;
  const row = await tripDb(t, trip.id);
  await ok(t.req(driver.session, { method: 'POST', url: `/trips/${trip.id}/verify-pickup`, payload: { pin: row.pickup_pin } }));
  if (state === 'picked_up') return trip.id;
  await ok(t.req(driver.session, { method: 'POST', url: `/driver/trips/${trip.id}/start-delivery` }));
  if (state === 'in_transit') return trip.id;
  if (state === 'returning' || state === 'returned') {
    await ok(
      t.req(driver.session, { method: 'POST', url: `/driver/trips/${trip.id}/fail-delivery`, payload: { reason: 'recipient_absent' } }),
    );
    if (state === 'returned')
      await ok(t.req(driver.session, { method: 'POST', url: `/driver/trips/${trip.id}/return`, payload: { pin: row.pickup_pin } }));
    return trip.id;
  }
  if (state === 'failed') {
    await setFailedDeliveryPolicy(t, 'close');
    await ok(t.req(driver.session, { method: 'POST', url: `/driver/trips/${trip.id}/fail-delivery`, payload: { reason: 'refused' } }));
    await setFailedDeliveryPolicy(t, 'return_to_merchant');
    return trip.id;
  }
  await ok(t.req(driver.session, { method: 'POST', url: `/trips/${trip.id}/verify-delivery`, payload: { pin: row.delivery_pin } }));
  return trip.id;
}

/** The organization's failed_delivery_policy (logistics settings), set as the demo administrator. */
export async function setFailedDeliveryPolicy(t: TestApp, policy: 'return_to_merchant' | 'close', admin?: Session) {
  const res = await t.req(admin ?? (await t.as('admin')), {
    method: 'PATCH',
    url: '/logistics/settings',
    payload: { failed_delivery_policy: policy },
  });
  expect(res.statusCode, res.body).toBe(200);
  expect(res.json().failed_delivery_policy).toBe(policy);
}

/** Reads every unread notification of the session through the API (so the next exception alert reaches the inbox). */
export async function readAllNotifications(t: TestApp, s: Session) {
  for (;;) {
    const res = await t.req(s, { method: 'GET', url: '/notifications?unread=true&limit=100' });
    expect(res.statusCode, res.body).toBe(200);
    const ids = (res.json().data as { id: string }[]).map((n) => n.id);
    if (ids.length === 0) return;
    for (const id of ids) expect((await t.req(s, { method: 'POST', url: `/notifications/${id}/read` })).statusCode).toBe(200);
  }
}
