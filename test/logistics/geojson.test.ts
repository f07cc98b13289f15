import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type Session, type TestApp } from '../helpers.js';
import { selfIntersection } from '../../src/platform/geo.js';

let t: TestApp;
let admin: Session, customer: Session;
beforeAll(async () => {
  t = await createTestApp();
  [admin, customer] = await Promise.all([t.as('admin'), t.as('customer')]);
});
afterAll(() => t?.close());

const territories = async () => (await t.db.withSystem((tx) => tx.query('SELECT count(*)::int AS n FROM territory'))).rows[0].n as number;

describe('GeoJSON positions with an altitude', () => {
  it('a Point [lon, lat, alt] is accepted and the altitude ignored', async () => {
    const res = await t.req(customer, {
      method: 'POST',
      url: '/customer/addresses',
      payload: { address: 'Calle 1', location: { type: 'Point', coordinates: [-68.12, -16.5, 3640.5] } },
    });
    expect(res.statusCode).toBe(201);
    expect(res.json().location).toEqual({ type: 'Point', coordinates: [-68.12, -16.5] });
  });

  it('a Polygon whose positions carry altitudes is accepted and stored without them', async () => {
    const ring = [
      [30, 30, 100],
      [30.1, 30, 120],
      [30.1, 30.1, 90],
      [30, 30.1, 95],
      [30, 30, 100],
    ];
    const res = await t.req(admin, {
      method: 'POST',
      url: '/territories',
      payload: { name: 'Altiplano', geometry: { type: 'Polygon', coordinates: [ring] } },
    });
    expect(res.statusCode).toBe(201);
    expect(res.json().geometry).toEqual({ type: 'Polygon', coordinates: [ring.map(([lon, lat]) => [lon, lat])] });
  });

  it('still refuses a position of four numbers or an out-of-range latitude with an altitude', async () => {
    for (const coordinates of [[-68.12, -16.5, 10, 1], [-68.12, -95, 10], [-68.12]]) {
      const res = await t.req(customer, {
        method: 'POST',
        url: '/customer/addresses',
        payload: { address: 'Calle 2', location: { type: 'Point', coordinates } },
      });
      expect(res.statusCode, JSON.stringify(coordinates)).toBe(400);
    }
  });
});

describe('self-intersecting polygons', () => {
  it('refuses a bow-tie, a ring folding back on itself and a hole crossing its outer ring (400), storing nothing', async () => {
    const before = await territories();
    const cases = [
      // Bow-tie: the edges (0,0)-(1,1) and (1,0)-(0,1) cross.
      {
        type: 'Polygon',
        coordinates: [
          [
            [0, 0],
            [1, 1],
            [1, 0],
            [0, 1],
            [0, 0],
          ],
        ],
      },
      // The same, with altitudes.
      {
        type: 'Polygon',
        coordinates: [
          [
            [0, 0, 5],
            [1, 1, 5],
            [1, 0, 5],
            [0, 1, 5],
            [0, 0, 5],
          ],
        ],
      },
      // A figure eight touching itself at (1,1).
      {
        type: 'Polygon',
        coordinates: [
          [
            [0, 0],
            [2, 0],
            [1, 1],
            [2, 2],
            [0, 2],
            [1, 1],
            [0, 0],
          ],
        ],
      },
      // A spike that folds back over its own edge.
      {
        type: 'Polygon',
        coordinates: [
          [
            [0, 0],
            [2, 0],
            [3, 0],
            [1, 0],
            [1, 1],
            [0, 0],
          ],
        ],
      },
      // A hole that crosses the outer ring.
      {
        type: 'Polygon',
        coordinates: [
          [
            [0, 0],
            [4, 0],
            [4, 4],
            [0, 4],
            [0, 0],
          ],
          [
            [3, 1],
            [5, 1],
            [5, 2],
            [3, 2],
            [3, 1],
          ],
        ],
      },
      // One bow-tie part of a MultiPolygon.
      {
        type: 'MultiPolygon',
        coordinates: [
          [
            [
              [10, 10],
              [11, 10],
              [11, 11],
              [10, 11],
              [10, 10],
            ],
          ],
          [
            [
              [0, 0],
              [1, 1],
              [1, 0],
              [0, 1],
              [0, 0],
            ],
          ],
        ],
      },
    ];
    for (const geometry of cases) {
      const res = await t.req(admin, { method: 'POST', url: '/territories', payload: { name: 'bad', geometry } });
      expect(res.statusCode, JSON.stringify(geometry)).toBe(400);
      expect(res.json().code).toBe('VALIDATION_FAILED');
      expect(res.json().errors[0].message).toMatch(/intersect|cross/);
    }
    expect(await territories()).toBe(before);
  });

  it('accepts simple polygons: concave, with a hole inside, with a repeated position', () => {
    expect(
      selfIntersection([
        [
          [0, 0],
          [4, 0],
          [4, 4],
          [2, 1],
          [0, 4],
          [0, 0],
        ],
      ]),
    ).toBeNull();
    expect(
      selfIntersection([
        [
          [0, 0],
          [4, 0],
          [4, 4],
          [0, 4],
          [0, 0],
        ],
        [
          [1, 1],
          [2, 1],
          [2, 2],
          [1, 2],
          [1, 1],
        ],
      ]),
    ).toBeNull();
    expect(
      selfIntersection([
        [
          [0, 0],
          [4, 0],
          [4, 0],
          [4, 4],
          [0, 4],
          [0, 0],
        ],
      ]),
    ).toBeNull();
    expect(
      selfIntersection([
        [
          [0, 0],
          [1, 1],
          [1, 0],
          [0, 1],
          [0, 0],
        ],
      ]),
    ).not.toBeNull();
  });

  it('compares only neighbouring segments of a large ring: the work grows with the ring, not with its square', () => {
    // Every coordinate the check reads is counted; a ten times larger ring must cost about ten times more
    // reads (an all-pairs comparison would cost a hundred times more).
    let reads = 0;
    const counted = (p: [number, number]): [number, number] =>
      new Proxy(p, {
        get(target, key, receiver) {
          if (key === '0' || key === '1') reads++;
          return Reflect.get(target, key, receiver) as unknown;
        },
      });
    const circle = (n: number) => {
      const ring: [number, number][] = [];
      for (let i = 0; i < n; i++) ring.push(counted([Math.cos((2 * Math.PI * i) / n), Math.sin((2 * Math.PI * i) / n)]));
      ring.push(ring[0]);
      return ring;
    };
    const cost = (n: number) => {
      const ring = circle(n);
      reads = 0;
      expect(selfIntersection([ring])).toBeNull();
      return reads;
    };
    const small = cost(1_000);
    const large = cost(10_000);
    expect(large / small).toBeLessThan(20);
    // And a large ring that does fold over itself is still caught.
    const bad = circle(10_000);
    [bad[10], bad[11]] = [bad[11], bad[10]];
    expect(selfIntersection([bad])).not.toBeNull();
  });
});
