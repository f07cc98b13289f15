import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type Session, type TestApp } from '../helpers.js';
import { newDriver, newTrip, tripDb, tripIn } from './fixtures.js';
import { newSubadmin, newTerritory, setPermissions } from '../subadmin/fixtures.js';

/** Staff change a trip's pickup window, load and service time before the pickup (PATCH /trips/:id/promise). */
let t: TestApp;
let admin: Session;

beforeAll(async () => {
  t = await createTestApp();
  admin = await t.as('admin');
});
afterAll(() => t?.close());

const inH = (h: number) => new Date(Date.now() + h * 3600_000).toISOString();
const patch = (s: Session, id: string, payload: Record<string, unknown>) =>
  t.req(s, { method: 'PATCH', url: `/trips/${id}/promise`, payload });
const count = async (sql: string, params: unknown[]) =>
  Number((await t.db.withSystem((tx) => tx.query<{ n: number }>(sql, params))).rows[0]!.n);
const audits = (id: string) =>
  count("SELECT count(*)::int AS n FROM audit_log WHERE action = 'trip.windows_load_changed' AND entity_id = $1", [id]);
const updates = (id: string) => count("SELECT count(*)::int AS n FROM event WHERE type = 'trip.updated' AND entity_id = $1", [id]);
const FIELDS = [
  'pickup_after',
  'pickup_before',
  'deliver_after',
  'deliver_before',
  'units',
  'weight_kg',
  'volume_l',
  'service_min',
] as const;
const snapshot = async (id: string) => {
  const r = await tripDb(t, id);
  return Object.fromEntries(FIELDS.map((f) => [f, r[f] instanceof Date ? r[f].toISOString() : r[f]]));
};

describe('PATCH /trips/:id/promise: pickup window, load and service time', () => {
  it('staff change them before the pickup: stored, answered, audited, trip.updated recorded', async () => {
    const trip = await newTrip(t, admin, { deliver_before: inH(4) });
    const events = await updates(trip.id);
    const change = { pickup_after: inH(1), pickup_before: inH(2), units: 4, weight_kg: 20, volume_l: 35, service_min: 7 };
    const res = await patch(admin, trip.id, change);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject(change);
    // the delivery window and promise stay
    expect(res.json().deliver_before).toBe(trip.deliver_before);
    expect(await snapshot(trip.id)).toMatchObject(change);
    expect(await audits(trip.id)).toBe(1);
    expect(await updates(trip.id)).toBe(events + 1);
    const { rows } = await t.db.withSystem((tx) =>
      tx.query("SELECT payload FROM event WHERE type = 'trip.updated' AND entity_id = $1 ORDER BY seq DESC LIMIT 1", [trip.id]),
    );
    expect(rows[0]!.payload).toMatchObject({ units: 4, service_min: 7, changed: expect.arrayContaining(['units', 'pickup_before']) });

    // null clears; a dispatcher may do it too, on an assigned trip
    const dispatcher = await t.as('dispatch');
    const d = await newDriver(t, { lon: -68.13, lat: -16.5 }, { capacity: 2 });
    const assigned = await tripIn(t, admin, d, 'accepted');
    const cleared = await patch(dispatcher, assigned, { weight_kg: 3, volume_l: null, service_min: null, pickup_before: inH(1) });
    expect(cleared.statusCode, cleared.body).toBe(200);
    expect(cleared.json()).toMatchObject({ weight_kg: 3, volume_l: null, service_min: null, status: 'accepted' });
  });

  it('after the pickup (and once ended) it is 409 INVALID_STATE and nothing changes; the promise may still move in transit', async () => {
    const d = await newDriver(t, { lon: -68.13, lat: -16.5 }, { capacity: 3 });
    for (const state of ['picked_up', 'in_transit', 'cancelled']) {
      const id = await tripIn(t, admin, d, state);
      const before = await snapshot(id);
      const res = await patch(admin, id, { units: 2 });
      expect(res.statusCode, `${state}: ${res.body}`).toBe(409);
      expect(res.json()).toMatchObject({ code: 'INVALID_STATE', current_status: state });
      expect(await snapshot(id)).toEqual(before);
      expect(await audits(id)).toBe(0);
    }
    const moving = await tripIn(t, admin, d, 'in_transit');
    expect((await patch(admin, moving, { promised_at: inH(2) })).statusCode).toBe(200);
  });

  it("bad values are 422 naming the field, validated as a new trip's; nothing is written", async () => {
    const trip = await newTrip(t, admin, { deliver_after: inH(2), deliver_before: inH(3), pickup_before: inH(2) });
    const before = await snapshot(trip.id);
    const events = await updates(trip.id);
    const cases: [Record<string, unknown>, string, string][] = [
      [{ pickup_after: inH(2), pickup_before: inH(1) }, 'WINDOW_INVALID', 'pickup_before'],
      [{ pickup_before: inH(-1) }, 'WINDOW_INVALID', 'pickup_before'],
      // the pickup may not close after the delivery window (its current end, or the new one)
      [{ pickup_before: inH(5) }, 'WINDOW_INVALID', 'pickup_before'],
      [{ deliver_before: inH(1.5), deliver_after: inH(1) }, 'WINDOW_INVALID', 'pickup_before'],
      [{ units: 0 }, 'LOAD_INVALID', 'units'],
      [{ weight_kg: 1e9 }, 'LOAD_INVALID', 'weight_kg'],
      [{ volume_l: 0 }, 'LOAD_INVALID', 'volume_l'],
      [{ service_min: 10_000 }, 'LOAD_INVALID', 'service_min'],
    ];
    for (const [body, code, field] of cases) {
      const res = await patch(admin, trip.id, body);
      expect(res.statusCode, `${JSON.stringify(body)}: ${res.body}`).toBe(422);
      expect(res.json()).toMatchObject({ code, errors: [{ field }] });
    }
    expect((await patch(admin, trip.id, { units: 'many' })).statusCode).toBe(400);
    expect(await snapshot(trip.id)).toEqual(before);
    expect(await updates(trip.id)).toBe(events);
    expect(await audits(trip.id)).toBe(0);
  });

  it('who: not the merchant, customer or driver (403); a sub-administrator within his territory only (404 outside)', async () => {
    const trip = await newTrip(t, admin);
    for (const role of ['merchant', 'customer', 'driver'] as const) {
      const res = await patch(await t.as(role), trip.id, { units: 2 });
      expect(res.statusCode, `${role}: ${res.body}`).toBe(403);
    }
    const territory = (await tripDb(t, trip.id)).territory_id as string;
    const near = await newSubadmin(t, admin, { territory_ids: [territory] });
    const far = await newSubadmin(t, admin, { territory_ids: [await newTerritory(t, admin, 'Far away', -60, -21)] });
    for (const s of [near, far]) await setPermissions(t, admin, s.userId, { delivery_status: true });
    expect((await patch(far.session, trip.id, { units: 2 })).statusCode).toBe(404);
    expect((await tripDb(t, trip.id)).units).toBe(1);
    const res = await patch(near.session, trip.id, { units: 2 });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().units).toBe(2);
  });
});
