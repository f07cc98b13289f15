import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type Session, type TestApp } from '../helpers.js';
import { driverDb, newDriver, newTrip, pt, tripDb, tripIn } from './fixtures.js';

let t: TestApp;
let admin: Session;

beforeAll(async () => {
  t = await createTestApp();
  admin = await t.as('admin');
});
afterAll(() => t?.close());

const tripPayload = (notes: string) => ({
  pickup_location: pt(-68.13, -16.5),
  pickup_address: 'A',
  dropoff_location: pt(-68.12, -16.49),
  dropoff_address: 'B',
  notes,
});

describe('idempotent trip creation', () => {
  it('20 concurrent requests with one Idempotency-Key create one trip and all get it', async () => {
    const notes = `idem-${Date.now()}`;
    const key = `key-${Date.now()}-abcdef`;
    const results = await Promise.all(
      Array.from({ length: 20 }, () =>
        t.req(admin, { method: 'POST', url: '/trips', headers: { 'idempotency-key': key }, payload: tripPayload(notes) }),
      ),
    );
    for (const r of results) expect(r.statusCode, r.body).toBe(201);
    const ids = new Set(results.map((r) => r.json().id));
    expect(ids.size).toBe(1);
    expect(results.filter((r) => r.headers['idempotent-replayed'] === 'true')).toHaveLength(19);
    const { rows } = await t.db.withSystem((tx) => tx.query('SELECT id FROM trip WHERE notes = $1', [notes]));
    expect(rows).toHaveLength(1);
    const events = await t.db.withSystem((tx) =>
      tx.query("SELECT 1 FROM event WHERE entity_id = $1 AND type = 'trip.created'", [rows[0].id]),
    );
    expect(events.rowCount).toBe(1);
  });

  it('refuses the same key with another body (422) and writes nothing', async () => {
    const key = `key-${Date.now()}-reuse1`;
    expect(
      (await t.req(admin, { method: 'POST', url: '/trips', headers: { 'idempotency-key': key }, payload: tripPayload('first') }))
        .statusCode,
    ).toBe(201);
    const second = await t.req(admin, {
      method: 'POST',
      url: '/trips',
      headers: { 'idempotency-key': key },
      payload: tripPayload('second'),
    });
    expect(second.statusCode).toBe(422);
    expect(second.json().code).toBe('IDEMPOTENCY_KEY_REUSED');
    expect((await t.db.withSystem((tx) => tx.query("SELECT 1 FROM trip WHERE notes = 'second'"))).rowCount).toBe(0);
  });

  it('rejects bad input with 400 and writes nothing', async () => {
    const before = (await t.db.withSystem((tx) => tx.query('SELECT count(*)::int AS n FROM trip'))).rows[0].n;
    for (const payload of [
      { ...tripPayload('bad'), pickup_location: pt(-200, 0) },
      { ...tripPayload('bad'), dropoff_location: { type: 'Point', coordinates: [1] } },
      { ...tripPayload('bad'), unknown_field: 1 },
      { ...tripPayload('bad'), delivery_fee: '1.234' },
      { ...tripPayload('bad'), delivery_fee: '-5.00' },
    ]) {
      const r = await t.req(admin, { method: 'POST', url: '/trips', payload });
      expect(r.statusCode, JSON.stringify(payload)).toBe(400);
    }
    expect((await t.db.withSystem((tx) => tx.query('SELECT count(*)::int AS n FROM trip'))).rows[0].n).toBe(before);
  });
});

describe('GPS batches', () => {
  it('50 concurrent duplicate batches store each point once', async () => {
    const d = await newDriver(t, { lon: -68.1, lat: -16.4 });
    const base = Date.now() - 100_000;
    const points = Array.from({ length: 100 }, (_, i) => ({
      client_point_id: `dup-${i}`,
      location: pt(-68.1 + i * 1e-4, -16.4),
      // shuffled device times: out of order on arrival
      recorded_at: new Date(base + ((i * 37) % 100) * 1000).toISOString(),
    }));
    const results = await Promise.all(
      Array.from({ length: 50 }, () => t.req(d.session, { method: 'POST', url: '/driver/locations/batch', payload: { points } })),
    );
    for (const r of results) expect(r.statusCode, r.body).toBe(200);
    expect(results.reduce((s, r) => s + r.json().accepted, 0)).toBe(100);
    expect(results.reduce((s, r) => s + r.json().duplicates, 0)).toBe(4900);
    const { rows } = await t.db.withSystem((tx) =>
      tx.query('SELECT count(*)::int AS n, count(DISTINCT client_point_id)::int AS u FROM driver_location WHERE driver_id = $1', [d.id]),
    );
    expect(rows[0]).toEqual({ n: 101, u: 101 }); // 100 points + the fixture's position
    // The last position is the newest by device time, not the last to arrive.
    const newest = points.reduce((a, b) => (a.recorded_at > b.recorded_at ? a : b));
    const row = await t.db.withSystem((tx) =>
      tx.query('SELECT (last_location)[0] AS lon, last_location_at FROM driver WHERE id = $1', [d.id]),
    );
    expect(row.rows[0].lon).toBeCloseTo(newest.location.coordinates[0], 9);
    expect(new Date(row.rows[0].last_location_at).toISOString()).toBe(newest.recorded_at);
  });

  it('refuses a point without client_point_id (400) and stores nothing of the batch', async () => {
    const d = await newDriver(t, { lon: -68.1, lat: -16.41 });
    const r = await t.req(d.session, {
      method: 'POST',
      url: '/driver/locations/batch',
      payload: {
        points: [
          { client_point_id: 'ok-1', location: pt(-68.1, -16.4), recorded_at: new Date().toISOString() },
          { location: pt(-68.1, -16.4), recorded_at: new Date().toISOString() },
        ],
      },
    });
    expect(r.statusCode).toBe(400);
    const { rows } = await t.db.withSystem((tx) =>
      tx.query("SELECT 1 FROM driver_location WHERE driver_id = $1 AND client_point_id = 'ok-1'", [d.id]),
    );
    expect(rows).toHaveLength(0);
  });
});

describe('one-winner races', () => {
  it('concurrent accepts of one trip: exactly one wins, the others get 409', async () => {
    const a = await newDriver(t, { lon: -68.13, lat: -16.5 }, { capacity: 5 });
    const b = await newDriver(t, { lon: -68.13, lat: -16.5 }, { capacity: 5 });
    const id = await tripIn(t, admin, a, 'assigned');
    const results = await Promise.all([
      ...Array.from({ length: 5 }, () => t.req(a.session, { method: 'POST', url: `/driver/trips/${id}/accept` })),
      ...Array.from({ length: 5 }, () => t.req(b.session, { method: 'POST', url: `/driver/trips/${id}/accept` })),
    ]);
    expect(results.filter((r) => r.statusCode === 200)).toHaveLength(1);
    expect(results.filter((r) => r.statusCode === 409)).toHaveLength(9);
    expect(await tripDb(t, id)).toMatchObject({ status: 'accepted', driver_id: a.id });
    const accepted = await t.db.withSystem((tx) => tx.query("SELECT 1 FROM event WHERE entity_id = $1 AND type = 'trip.accepted'", [id]));
    expect(accepted.rowCount).toBe(1);
  });

  it('concurrent auto-assignments never push a driver past his capacity', async () => {
    // A remote spot where only this driver (capacity 2) is within the radius.
    const spot = { lon: 12.5, lat: 41.9 };
    const d = await newDriver(t, spot, { capacity: 2 });
    const trips = [];
    for (let i = 0; i < 6; i++) trips.push(await newTrip(t, admin, {}, spot));
    const results = await Promise.all(trips.map((x) => t.req(admin, { method: 'POST', url: `/trips/${x.id}/auto-assign` })));
    expect(results.filter((r) => r.statusCode === 200)).toHaveLength(2);
    expect(results.filter((r) => r.statusCode === 422).every((r) => r.json().code === 'NO_ELIGIBLE_DRIVER')).toBe(true);
    expect((await driverDb(t, d.id)).active_trips).toBe(2);
    const { rows } = await t.db.withSystem((tx) =>
      tx.query("SELECT count(*)::int AS n FROM trip WHERE driver_id = $1 AND status = 'assigned'", [d.id]),
    );
    expect(rows[0].n).toBe(2);
    const manual = await t.req(admin, {
      method: 'POST',
      url: `/trips/${trips.find((x, i) => results[i].statusCode !== 200)!.id}/assign`,
      payload: { driver_id: d.id },
    });
    expect(manual.statusCode).toBe(409);
    expect(manual.json().code).toBe('DRIVER_AT_CAPACITY');
  });
});
