import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { createTestApp, type Session, type TestApp } from '../helpers.js';
import { haversineMeters } from '../../src/platform/geo.js';
import { newId } from '../../src/platform/ids.js';
import { circleBox } from '../../src/modules/logistics/service/drivers.js';
import { newTrip, pt, tripDb } from './fixtures.js';

let t: TestApp;
let admin: Session;

beforeAll(async () => {
  t = await createTestApp();
  admin = await t.as('admin');
});
afterAll(() => t?.close());

const square = (lon: number, lat: number, half: number) => [
  [lon - half, lat - half],
  [lon + half, lat - half],
  [lon + half, lat + half],
  [lon - half, lat + half],
  [lon - half, lat - half],
];

/** Drivers inserted with SQL (test data): random positions around a centre, some unavailable or not approved. */
async function seedDrivers(center: { lon: number; lat: number }, n: number, spread: number, rnd: () => number) {
  const org = t.demo.organizationId;
  const drivers: { id: string; lon: number; lat: number; ok: boolean }[] = [];
  await t.db.withSystem(async (tx) => {
    for (let i = 0; i < n; i++) {
      const id = newId();
      const userId = newId();
      const lon = center.lon + (rnd() - 0.5) * spread;
      const lat = center.lat + (rnd() - 0.5) * spread;
      const status = i % 7 === 0 ? 'pending' : 'approved';
      const available = i % 5 !== 0;
      await tx.query(
        "INSERT INTO users (organization_id, id, email, password_hash, display_name, role) VALUES ($1, $2, $3, 'x', 'geo driver', 'repartidor')",
        [org, userId, `geo-${userId}@t.test`],
      );
      await tx.query(
        'INSERT INTO driver (organization_id, id, user_id, status, available, last_location, last_location_at) VALUES ($1, $2, $3, $4, $5, point($6, $7), now())',
        [org, id, userId, status, available, lon, lat],
      );
      drivers.push({ id, lon, lat, ok: status === 'approved' && available });
    }
  });
  return drivers;
}

describe('GET /drivers/nearby', () => {
  it('matches a brute-force haversine ranking on random data (mid latitude and near a pole)', async () => {
    let seed = 42;
    const rnd = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (const center of [
      { lon: 30.5, lat: 45.2 },
      { lon: -150.1, lat: 78.3 },
    ]) {
      const drivers = await seedDrivers(center, 120, 0.6, rnd);
      for (const [radius, limit] of [
        [5000, 200],
        [15_000, 10],
        [40_000, 50],
      ]) {
        const res = await t.req(admin, {
          method: 'GET',
          url: `/drivers/nearby?lon=${center.lon}&lat=${center.lat}&radius_m=${radius}&limit=${limit}`,
        });
        expect(res.statusCode, res.body).toBe(200);
        const expected = drivers
          .filter((d) => d.ok)
          .map((d) => ({ id: d.id, dist: haversineMeters(center, d) }))
          .filter((d) => d.dist <= radius)
          .sort((a, b) => a.dist - b.dist)
          .slice(0, limit);
        const got = res.json().data as { id: string; distance_m: number }[];
        expect(got.map((g) => g.id)).toEqual(expected.map((e) => e.id));
        got.forEach((g, i) => expect(Math.abs(g.distance_m - expected[i].dist)).toBeLessThan(0.1));
      }
    }
    const all = await t.req(admin, {
      method: 'GET',
      url: '/drivers/nearby?lon=30.5&lat=45.2&radius_m=50000&limit=200&available_only=false',
    });
    expect(all.json().data.length).toBeGreaterThan(
      (await t.req(admin, { method: 'GET', url: '/drivers/nearby?lon=30.5&lat=45.2&radius_m=50000&limit=200' })).json().data.length,
    );
  });

  it('its bounding box always contains the circle (property)', () => {
    fc.assert(
      fc.property(
        fc.double({ min: -179, max: 179, noNaN: true }),
        fc.double({ min: -89, max: 89, noNaN: true }),
        fc.integer({ min: 1, max: 200_000 }),
        fc.double({ min: 0, max: 2 * Math.PI, noNaN: true }),
        (lon, lat, r, bearing) => {
          const m = /^\(\(([^,]+),([^)]+)\),\(([^,]+),([^)]+)\)\)$/.exec(circleBox({ lon, lat }, r))!.slice(1).map(Number);
          // a point at distance r (slightly less) in direction `bearing`
          const d = (r * 0.999) / 6_371_008.8;
          const la1 = (lat * Math.PI) / 180;
          const la2 = Math.asin(Math.sin(la1) * Math.cos(d) + Math.cos(la1) * Math.sin(d) * Math.cos(bearing));
          const lo2 =
            (lon * Math.PI) / 180 +
            Math.atan2(Math.sin(bearing) * Math.sin(d) * Math.cos(la1), Math.cos(d) - Math.sin(la1) * Math.sin(la2));
          let plon = (lo2 * 180) / Math.PI;
          if (plon > 180) plon -= 360;
          if (plon < -180) plon += 360;
          const plat = (la2 * 180) / Math.PI;
          return plon >= m[0] - 1e-9 && plon <= m[2] + 1e-9 && plat >= m[1] - 1e-9 && plat <= m[3] + 1e-9;
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('validates its query (400)', async () => {
    expect((await t.req(admin, { method: 'GET', url: '/drivers/nearby?lon=200&lat=0' })).statusCode).toBe(400);
    expect((await t.req(admin, { method: 'GET', url: '/drivers/nearby?lat=0' })).statusCode).toBe(400);
  });
});

describe('territories', () => {
  const P = { lon: 20.05, lat: 20.05 };
  const Q = { lon: 20.2, lat: 20.2 };

  it('validates GeoJSON (400) and stores nothing', async () => {
    const count = async () => (await t.db.withSystem((tx) => tx.query('SELECT count(*)::int AS n FROM territory'))).rows[0].n;
    const before = await count();
    for (const geometry of [
      {
        type: 'Polygon',
        coordinates: [
          [
            [0, 0],
            [1, 0],
            [1, 1],
            [0, 1],
          ],
        ],
      }, // not closed
      {
        type: 'Polygon',
        coordinates: [
          [
            [0, 0],
            [1, 0],
            [0, 0],
          ],
        ],
      }, // too short
      {
        type: 'Polygon',
        coordinates: [
          [
            [0, 0],
            [181, 0],
            [1, 1],
            [0, 0],
          ],
        ],
      }, // out of range
      { type: 'Point', coordinates: [0, 0] },
    ]) {
      const r = await t.req(admin, { method: 'POST', url: '/territories', payload: { name: 'bad', geometry } });
      expect(r.statusCode, JSON.stringify(geometry)).toBe(400);
    }
    expect(await count()).toBe(before);
  });

  it('gives records without a territory the oldest active territory covering them (create and backfill)', async () => {
    // A trip created before any zone covers P has no territory.
    const early = await newTrip(t, admin, {}, P);
    expect(early.territory_id).toBeNull();
    // A legacy trip written directly (as before zones existed) and a merchant with a location.
    const legacyId = newId();
    await t.db.withSystem((tx) =>
      tx.query(
        `INSERT INTO trip (organization_id, id, pickup_location, pickup_address, dropoff_location, dropoff_address, delivery_fee, driver_earning, pickup_pin, delivery_pin)
         VALUES ($1, $2, point(20.06, 20.06), 'a', point(20.1, 20.1), 'b', 0, 0, '1111', '2222')`,
        [t.demo.organizationId, legacyId],
      ),
    );
    const mk = async (name: string, geometry: unknown, active = true) => {
      const r = await t.req(admin, { method: 'POST', url: '/territories', payload: { name, geometry, active } });
      expect(r.statusCode, r.body).toBe(201);
      return r.json();
    };
    const inactive = await mk('old but inactive', { type: 'Polygon', coordinates: [square(20, 20, 1)] }, false);
    // A: covers P, with a hole around Q.
    const a = await mk('A', { type: 'Polygon', coordinates: [square(20, 20, 0.5), square(Q.lon, Q.lat, 0.05)] });
    expect(a.backfilled).toBe(2);
    // B: newer MultiPolygon, covers P and Q.
    const b = await mk('B', { type: 'MultiPolygon', coordinates: [[square(20, 20, 0.4)], [square(30, 30, 0.1)]] });
    expect(b.backfilled).toBe(0);

    expect((await tripDb(t, early.id)).territory_id).toBe(a.id);
    expect((await tripDb(t, legacyId)).territory_id).toBe(a.id);
    expect((await newTrip(t, admin, {}, P)).territory_id).toBe(a.id); // oldest active, not the inactive one, not B
    expect((await newTrip(t, admin, {}, Q)).territory_id).toBe(b.id); // in A's hole
    expect((await newTrip(t, admin, {}, { lon: 30.01, lat: 30.01 })).territory_id).toBe(b.id); // B's second part
    expect((await newTrip(t, admin, { territory_id: b.id }, P)).territory_id).toBe(b.id); // explicit wins
    expect((await newTrip(t, admin, {}, { lon: 25, lat: 25 })).territory_id).toBeNull();
    expect(inactive.active).toBe(false);

    // The SQL function applies the same rule to legacy rows on demand.
    const legacy2 = newId();
    await t.db.withSystem(async (tx) => {
      await tx.query(
        `INSERT INTO trip (organization_id, id, pickup_location, pickup_address, dropoff_location, dropoff_address, delivery_fee, driver_earning, pickup_pin, delivery_pin)
         VALUES ($1, $2, point($3, $4), 'a', point(20.1, 20.1), 'b', 0, 0, '1111', '2222')`,
        [t.demo.organizationId, legacy2, Q.lon, Q.lat],
      );
      expect((await tx.query('SELECT logistics_backfill_territories($1) AS n', [t.demo.organizationId])).rows[0].n).toBe(1);
    });
    expect((await tripDb(t, legacy2)).territory_id).toBe(b.id);

    const list = (await t.req(admin, { method: 'GET', url: '/territories?active=true' })).json().data.map((x: { id: string }) => x.id);
    expect(list).toEqual(expect.arrayContaining([a.id, b.id]));
    expect(list).not.toContain(inactive.id);
  });

  it('PATCH /trips/:id/coordinates re-derives the territory and is refused after pickup', async () => {
    const trip = await newTrip(t, admin, {}, { lon: 25, lat: 25 });
    const r = await t.req(admin, {
      method: 'PATCH',
      url: `/trips/${trip.id}/coordinates`,
      payload: { pickup_location: pt(P.lon, P.lat), pickup_address: 'moved' },
    });
    expect(r.statusCode, r.body).toBe(200);
    expect(r.json().pickup_location).toEqual(pt(P.lon, P.lat));
    expect(r.json().territory_id).not.toBeNull();
    const bad = await t.req(admin, { method: 'PATCH', url: `/trips/${trip.id}/coordinates`, payload: { pickup_location: pt(0, 95) } });
    expect(bad.statusCode).toBe(400);
  });
});
