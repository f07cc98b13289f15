import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type Session, type TestApp } from '../helpers.js';
import { newDriver, newTrip, pt, readAllNotifications, tripDb, tripIn } from './fixtures.js';
import { newSubadmin, newTerritory } from '../subadmin/fixtures.js';

/**
 * Exceptions: a failed delivery, a return, a late trip, a driver whose GPS went silent, a trip rejected again and a
 * locked PIN are events (streams, webhooks, the dispatchers' inbox) and GET /exceptions lists the open ones with counts.
 */
let t: TestApp;
let admin: Session;
let dispatch: Session;
let merchant: Session;

beforeAll(async () => {
  t = await createTestApp();
  admin = await t.as('admin');
  dispatch = await t.as('dispatch');
  merchant = await t.as('merchant');
}, 60_000);
afterAll(() => t?.close());

const count = async (sql: string, params: unknown[] = []) =>
  Number((await t.db.withSystem((tx) => tx.query<{ n: number }>(sql, params))).rows[0]!.n);
const events = (type: string, entityId: string) =>
  count('SELECT count(*)::int AS n FROM event WHERE type = $1 AND entity_id = $2', [type, entityId]);
const inbox = (type: string, entityId: string, userId: string) =>
  count('SELECT count(*)::int AS n FROM notification WHERE type = $1 AND entity_id = $2 AND user_id = $3', [type, entityId, userId]);
const unreadOf = (type: string, userId: string) =>
  count('SELECT count(*)::int AS n FROM notification WHERE type = $1 AND user_id = $2 AND read_at IS NULL', [type, userId]);
const exceptions = async (s: Session, query = '') => {
  const res = await t.req(s, { method: 'GET', url: `/exceptions${query}` });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as {
    counts: Record<string, number>;
    items: {
      kind: string;
      trip_id: string | null;
      driver_id: string | null;
      trip: { id: string; status: string } | null;
      detail: Record<string, unknown>;
    }[];
    next_cursor: string | null;
  };
};
const driverOut = async (id: string) => {
  const res = await t.req(dispatch, { method: 'GET', url: '/drivers?limit=200' });
  expect(res.statusCode, res.body).toBe(200);
  return (res.json().data as { id: string; location_stale: boolean }[]).find((d) => d.id === id)!;
};
const fresh = (driverId: string, lon = -68.13, lat = -16.5) =>
  t.req(admin, {
    method: 'POST',
    url: `/drivers/${driverId}/location`,
    payload: { location: pt(lon, lat), recorded_at: new Date().toISOString() },
  });

describe('GET /exceptions', () => {
  it("a failed delivery (returning) is listed with its trip, counted, and reaches the dispatchers' inbox", async () => {
    const d = await newDriver(t, { lon: -68.13, lat: -16.5 });
    const id = await tripIn(t, admin, d, 'returning');
    const list = await exceptions(dispatch, '?kind=returning');
    const item = list.items.find((i) => i.trip_id === id)!;
    expect(item).toMatchObject({
      kind: 'returning',
      driver_id: d.id,
      trip: { id, status: 'returning' },
      detail: { failure_reason: 'recipient_absent' },
    });
    expect(list.counts.returning).toBeGreaterThanOrEqual(1);
    expect(await inbox('trip.delivery_failed', id, dispatch.userId)).toBe(1);
    // Closed by dispatch (the return flow): no longer open.
    const closed = await t.req(dispatch, {
      method: 'POST',
      url: `/trips/${id}/status`,
      payload: { status: 'returned', reason: 'merchant has the goods' },
    });
    expect(closed.statusCode, closed.body).toBe(200);
    expect((await exceptions(dispatch, '?kind=returning')).items.some((i) => i.trip_id === id)).toBe(false);
    // Whoever closed it is not notified of his own action; the other staff are.
    expect(await inbox('trip.returned', id, admin.userId)).toBe(1);
  });

  it("a second failed delivery is one unread alert for the dispatcher, while the merchant's inbox gets each", async () => {
    await readAllNotifications(t, dispatch);
    const ids = [];
    for (let i = 0; i < 2; i++)
      ids.push(await tripIn(t, admin, await newDriver(t, { lon: -68.13, lat: -16.5 }), 'returning', undefined, merchant));
    const [a, b] = ids as [string, string];
    expect([await events('trip.delivery_failed', a), await events('trip.delivery_failed', b)]).toEqual([1, 1]);
    expect([await inbox('trip.delivery_failed', a, dispatch.userId), await inbox('trip.delivery_failed', b, dispatch.userId)]).toEqual([
      1, 0,
    ]);
    const merchantUser = (
      await t.db.withSystem((tx) =>
        tx.query(
          'SELECT m.owner_user_id AS u FROM trip tr JOIN merchant m ON m.organization_id = tr.organization_id AND m.id = tr.merchant_id WHERE tr.id = $1',
          [a],
        ),
      )
    ).rows[0]!.u as string;
    expect([await inbox('trip.delivery_failed', a, merchantUser), await inbox('trip.delivery_failed', b, merchantUser)]).toEqual([1, 1]);
    // Both are open exceptions all the same.
    const open = (await exceptions(dispatch, '?kind=returning&limit=100')).items.map((i) => i.trip_id);
    expect(open).toEqual(expect.arrayContaining([a, b]));
  });

  it("the sub-administrators of the trip's territory are told in their inbox; one of another territory is not", async () => {
    const probe = await newTrip(t, admin);
    const territory = (await tripDb(t, probe.id)).territory_id as string;
    const near = await newSubadmin(t, admin, { territory_ids: [territory] });
    const far = await newSubadmin(t, admin, { territory_ids: [await newTerritory(t, admin, 'Elsewhere', -60, -21)] });
    const d = await newDriver(t, { lon: -68.13, lat: -16.5 });
    const id = await tripIn(t, admin, d, 'returning');
    expect(await inbox('trip.delivery_failed', id, near.userId)).toBe(1);
    expect(await inbox('trip.delivery_failed', id, far.userId)).toBe(0);
    const seen = (await t.req(near.session, { method: 'GET', url: '/notifications' })).json().data as { type: string; entity_id: string }[];
    expect(seen.some((n) => n.type === 'trip.delivery_failed' && n.entity_id === id)).toBe(true);
  });

  it('a delivery closed as failed is listed as failed', async () => {
    const d = await newDriver(t, { lon: -68.13, lat: -16.5 });
    const id = await tripIn(t, admin, d, 'failed');
    const list = await exceptions(admin, '?kind=failed');
    expect(list.items.find((i) => i.trip_id === id)).toMatchObject({ kind: 'failed', trip: { status: 'failed' } });
    expect(list.items.every((i) => i.kind === 'failed')).toBe(true);
  });

  it('a trip rejected by as many drivers as the threshold raises trip.rejected_repeatedly and is listed', async () => {
    const trip = await newTrip(t, admin);
    for (const [i, reason] of ['Moto averiada', 'Lejos'].entries()) {
      const d = await newDriver(t, { lon: -68.13, lat: -16.5 });
      expect((await t.req(admin, { method: 'POST', url: `/trips/${trip.id}/assign`, payload: { driver_id: d.id } })).statusCode).toBe(200);
      expect((await t.req(d.session, { method: 'POST', url: `/driver/trips/${trip.id}/reject`, payload: { reason } })).statusCode).toBe(
        200,
      );
      expect(await events('trip.rejected_repeatedly', trip.id)).toBe(i);
    }
    // A third rejection is counted in the list, not raised again.
    const third = await newDriver(t, { lon: -68.13, lat: -16.5 });
    expect((await t.req(admin, { method: 'POST', url: `/trips/${trip.id}/assign`, payload: { driver_id: third.id } })).statusCode).toBe(
      200,
    );
    expect(
      (await t.req(third.session, { method: 'POST', url: `/driver/trips/${trip.id}/reject`, payload: { reason: 'Lejos' } })).statusCode,
    ).toBe(200);
    expect(await events('trip.rejected_repeatedly', trip.id)).toBe(1);
    const item = (await exceptions(dispatch, '?kind=rejected_again')).items.find((x) => x.trip_id === trip.id);
    expect(item?.detail).toMatchObject({ rejections: 3, last_reason: 'Lejos' });
    expect(await inbox('trip.rejected_repeatedly', trip.id, dispatch.userId)).toBe(1);
  });

  it('the fifth wrong PIN raises trip.pin_locked once; the lock is listed until dispatch resets it', async () => {
    const d = await newDriver(t, { lon: -68.13, lat: -16.5 });
    const id = await tripIn(t, admin, d, 'accepted');
    const pin = (await tripDb(t, id)).pickup_pin as string;
    const wrong = pin === '0000' ? '1111' : '0000';
    for (let i = 0; i < 6; i++) await t.req(d.session, { method: 'POST', url: `/trips/${id}/verify-pickup`, payload: { pin: wrong } });
    expect(await events('trip.pin_locked', id)).toBe(1);
    expect((await exceptions(dispatch, '?kind=pin_locked')).items.find((i) => i.trip_id === id)?.detail).toEqual({ stage: 'pickup' });
    const reset = await t.req(dispatch, {
      method: 'POST',
      url: `/trips/${id}/status`,
      payload: { reset_pin_lock: 'pickup', reason: 'called the store' },
    });
    expect(reset.statusCode, reset.body).toBe(200);
    expect((await exceptions(dispatch, '?kind=pin_locked')).items.some((i) => i.trip_id === id)).toBe(false);
  });

  it('an on-duty driver whose last fix is old raises trip.location_stale once per silence (worker), shows location_stale and is listed', async () => {
    const d = await newDriver(t, { lon: -68.13, lat: -16.5 }); // his fix is 10 minutes old: stale at the default 300 s
    const id = await tripIn(t, admin, d, 'accepted');
    await t.db.withSystem((tx) => tx.query("UPDATE driver SET last_location_at = now() - interval '11 minutes' WHERE id = $1", [d.id]));
    expect((await driverOut(d.id)).location_stale).toBe(true);
    const svc = t.app.services.logistics;
    await svc.exceptions.tick();
    expect(await events('trip.location_stale', id)).toBe(1);
    await svc.exceptions.tick();
    expect(await events('trip.location_stale', id)).toBe(1);
    expect((await exceptions(dispatch, '?kind=stale_gps')).items.some((i) => i.driver_id === d.id && i.trip_id === null)).toBe(true);
    // Every stale driver of the organization was raised; the dispatcher's inbox has one unread alert for them all.
    expect(await unreadOf('trip.location_stale', dispatch.userId)).toBe(1);
    // A fresh fix ends the silence; a new silence alerts again.
    expect((await fresh(d.id)).statusCode).toBe(200);
    expect((await driverOut(d.id)).location_stale).toBe(false);
    expect((await exceptions(dispatch, '?kind=stale_gps')).items.some((i) => i.driver_id === d.id)).toBe(false);
    await t.db.withSystem((tx) => tx.query("UPDATE driver SET last_location_at = now() - interval '11 minutes' WHERE id = $1", [d.id]));
    await svc.exceptions.tick();
    expect(await events('trip.location_stale', id)).toBe(2);
  });

  it('a trip whose promise passed without an ETA is marked late by the worker, once', async () => {
    const trip = await newTrip(t, admin);
    await t.db.withSystem((tx) => tx.query("UPDATE trip SET promised_at = now() - interval '20 minutes' WHERE id = $1", [trip.id]));
    await t.app.services.logistics.exceptions.tick();
    await t.app.services.logistics.exceptions.tick();
    expect(await events('trip.delayed', trip.id)).toBe(1);
    expect((await exceptions(dispatch, '?kind=late')).items.find((i) => i.trip_id === trip.id)?.detail.late_by_s).toBeGreaterThanOrEqual(
      1200,
    );
  });

  it('late trips alert a dispatcher once while his last alert is unread; each is still an event and listed', async () => {
    await readAllNotifications(t, dispatch);
    const late = async () => {
      const trip = await newTrip(t, admin);
      await t.db.withSystem((tx) => tx.query("UPDATE trip SET promised_at = now() - interval '20 minutes' WHERE id = $1", [trip.id]));
      return trip.id;
    };
    const [a, b] = [await late(), await late()];
    await t.app.services.logistics.exceptions.tick();
    expect([await events('trip.delayed', a), await events('trip.delayed', b)]).toEqual([1, 1]);
    expect(await unreadOf('trip.delayed', dispatch.userId)).toBe(1);
    const listed = (await exceptions(dispatch, '?kind=late&limit=100')).items.map((i) => i.trip_id);
    expect(listed).toEqual(expect.arrayContaining([a, b]));
    // Nothing was sent to his phone for the second either: one notification.created for him, one row.
    const created = await count(
      "SELECT count(*)::int AS n FROM event WHERE type = 'notification.created' AND $1 = ANY(audience_user_ids) AND payload->'notification'->>'type' = 'trip.delayed' AND payload->'notification'->>'entity_id' = ANY($2)",
      [dispatch.userId, [a, b]],
    );
    expect(created).toBe(1);
    // Once he has read it, the next late trip alerts him again.
    await readAllNotifications(t, dispatch);
    const c = await late();
    await t.app.services.logistics.exceptions.tick();
    expect(await unreadOf('trip.delayed', dispatch.userId)).toBe(1);
    expect(await inbox('trip.delayed', c, dispatch.userId)).toBe(1);
  });

  it('pages with a cursor, and a sub-administrator sees only his territories', async () => {
    const all = await exceptions(admin, '?limit=1');
    expect(all.items).toHaveLength(1);
    expect(all.next_cursor).not.toBeNull();
    const next = await exceptions(admin, `?limit=1&cursor=${all.next_cursor}`);
    expect(next.items[0]).not.toEqual(all.items[0]);
    const far = await newTerritory(t, admin, 'Far away', -60, -20);
    const sub = await newSubadmin(t, admin, { territory_ids: [far] });
    const mine = await exceptions(sub.session);
    expect(mine.items).toEqual([]);
    expect(Object.values(mine.counts).every((n) => n === 0)).toBe(true);
    const customer = await t.as('customer');
    expect((await t.req(customer, { method: 'GET', url: '/exceptions' })).statusCode).toBe(403);
    expect((await t.req(admin, { method: 'GET', url: '/exceptions?kind=nope' })).statusCode).toBe(400);
  });
});
