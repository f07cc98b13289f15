import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { createTestApp, waitFor, type TestApp } from '../helpers.js';
import { once, requestHash } from '../../src/platform/idempotency.js';
import { pageRequest, toPage, encodeCursor } from '../../src/platform/pagination.js';
import { haversineMeters, parseArea, parsePoint, polygonContains, pointFromSql, pointSql, HAVERSINE_SQL } from '../../src/platform/geo.js';
import { formatMoney, money, sumMoney } from '../../src/platform/money.js';
import { newId } from '../../src/platform/ids.js';
import { AppError } from '../../src/platform/errors.js';

let t: TestApp;
let ctx: { organizationId: string; userId: string };
beforeAll(async () => {
  t = await createTestApp();
  ctx = { organizationId: t.demo.organizationId, userId: t.demo.users.admin };
});
afterAll(() => t?.close());

describe('idempotency store', () => {
  it('same key + same body → the first result, applied once; different body → 422', async () => {
    let runs = 0;
    const call = (body: unknown) =>
      t.db.withTenant(ctx, (tx) =>
        once(tx, { organizationId: ctx.organizationId, scope: 'test', key: 'key-00000001', hash: requestHash(body) }, async () => {
          runs++;
          return { status: 201, body: { id: newId(), n: runs } };
        }),
      );
    const a = await call({ x: 1, y: [1, 2] });
    const b = await call({ y: [1, 2], x: 1 });
    expect(a.replayed).toBe(false);
    expect(b).toMatchObject({ replayed: true, status: 201, body: a.body });
    expect(runs).toBe(1);
    await expect(call({ x: 2 })).rejects.toMatchObject({ status: 422, code: 'IDEMPOTENCY_KEY_REUSED' });
  });

  it('20 concurrent duplicates produce one result', async () => {
    let runs = 0;
    const results = await Promise.all(
      Array.from({ length: 20 }, () =>
        t.db.withTenant(ctx, (tx) =>
          once(tx, { organizationId: ctx.organizationId, scope: 'test', key: 'key-concurrent', hash: requestHash({ a: 1 }) }, async () => {
            runs++;
            const id = newId();
            await tx.query(
              "INSERT INTO audit_log (organization_id, id, action, entity_type, entity_id) VALUES ($1, $2, 'idem.test', 'x', $2)",
              [ctx.organizationId, id],
            );
            return { status: 201, body: { id } };
          }),
        ),
      ),
    );
    expect(new Set(results.map((r) => (r.body as { id: string }).id)).size).toBe(1);
    expect(runs).toBe(1);
    const rows = await t.db.withSystem(
      async (tx) => (await tx.query("SELECT count(*)::int AS n FROM audit_log WHERE action = 'idem.test'")).rows[0].n,
    );
    expect(rows).toBe(1);
  });
});

describe('events', () => {
  it('an event is written in the caller transaction and vanishes with its rollback', async () => {
    const seen: string[] = [];
    const unlisten = await t.db.listen('app_events', (p) => seen.push(p));
    const committed = await t.db.withTenant(ctx, (tx) =>
      t.app.ctx.events.record(tx, ctx.organizationId, { type: 'test.done', entityType: 'test', entityId: 'e1', payload: { a: 1 } }),
    );
    await expect(
      t.db.withTenant(ctx, async (tx) => {
        await t.app.ctx.events.record(tx, ctx.organizationId, { type: 'test.rolled_back', entityType: 'test', entityId: 'e2' });
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    const rows = await t.db.withSystem(
      async (tx) => (await tx.query("SELECT type, seq FROM event WHERE entity_type = 'test' ORDER BY seq")).rows,
    );
    expect(rows.map((r) => r.type)).toEqual(['test.done']);
    // A later event, committed after the rollback: once its notification is in, the rolled-back one would be too.
    const marker = await t.db.withTenant(ctx, (tx) =>
      t.app.ctx.events.record(tx, ctx.organizationId, { type: 'test.marker', entityType: 'test', entityId: 'e3' }),
    );
    const seqs = () => seen.map((s) => JSON.parse(s).seq as number);
    await waitFor(() => seqs().includes(marker.seq), { message: 'the marker notification' });
    expect(seqs()).toContain(committed.seq);
    expect(seqs().filter((seq) => seq > committed.seq && seq < marker.seq)).toEqual([]);
    await unlisten();
  });
});

describe('pagination', () => {
  it('pages by id with an opaque cursor', () => {
    const rows = ['e', 'd', 'c'].map((id) => ({ id }));
    const req = pageRequest({ limit: 2 });
    expect(toPage(rows, req)).toEqual({ data: [{ id: 'e' }, { id: 'd' }], next_cursor: encodeCursor('d') });
    expect(pageRequest({ cursor: encodeCursor('d') }).after).toBe('d');
    expect(() => pageRequest({ cursor: encodeCursor("x' OR 1=1") })).toThrow(AppError);
    expect(pageRequest({ limit: 1000 }).limit).toBe(200);
  });
});

describe('geography', () => {
  it('validates GeoJSON points and polygons', () => {
    expect(parsePoint({ type: 'Point', coordinates: [-68.1, -16.5] })).toEqual({ lon: -68.1, lat: -16.5 });
    expect(() => parsePoint({ type: 'Point', coordinates: [200, 0] })).toThrow(AppError);
    const square = [
      [
        [0, 0],
        [1, 0],
        [1, 1],
        [0, 1],
        [0, 0],
      ],
    ];
    expect(parseArea({ type: 'Polygon', coordinates: square })).toHaveLength(1);
    expect(() =>
      parseArea({
        type: 'Polygon',
        coordinates: [
          [
            [0, 0],
            [1, 0],
            [1, 1],
            [0, 1],
          ],
        ],
      }),
    ).toThrow(/Invalid geometry/);
    expect(() =>
      parseArea({
        type: 'Polygon',
        coordinates: [
          [
            [0, 0],
            [1, 0],
            [0, 0],
          ],
        ],
      }),
    ).toThrow(AppError);
    expect(polygonContains(square[0] ? (square as [number, number][][]) : [], { lon: 0.5, lat: 0.5 })).toBe(true);
    expect(polygonContains(square as [number, number][][], { lon: 1.5, lat: 0.5 })).toBe(false);
    expect(pointFromSql(pointSql({ lon: -68.13, lat: -16.5 }))).toEqual({ lon: -68.13, lat: -16.5 });
  });

  it('the SQL haversine agrees with the JS one, and native containment works', async () => {
    const pairs = fc.sample(
      fc.tuple(
        fc.double({ min: -69, max: -67, noNaN: true }),
        fc.double({ min: -17, max: -16, noNaN: true }),
        fc.double({ min: -69, max: -67, noNaN: true }),
        fc.double({ min: -17, max: -16, noNaN: true }),
      ),
      20,
    );
    await t.db.withSystem(async (tx) => {
      for (const [a, b, c, d] of pairs) {
        const { rows } = await tx.query<{ m: number }>(`SELECT ${HAVERSINE_SQL('$1::point', '$2::point')} AS m`, [
          pointSql({ lon: a, lat: b }),
          pointSql({ lon: c, lat: d }),
        ]);
        expect(Math.abs(Number(rows[0].m) - haversineMeters({ lon: a, lat: b }, { lon: c, lat: d }))).toBeLessThan(0.01);
      }
      const inside = await tx.query(
        "SELECT polygon '((0,0),(1,0),(1,1),(0,1))' @> point '(0.5,0.5)' AS a, polygon '((0,0),(1,0),(1,1),(0,1))' @> point '(2,2)' AS b",
      );
      expect(inside.rows[0]).toEqual({ a: true, b: false });
    });
    expect(Math.round(haversineMeters({ lon: -68.13, lat: -16.5 }, { lon: -68.13, lat: -16.4 }))).toBe(11120);
  });
});

describe('money', () => {
  it('adds decimals exactly and formats with two digits', () => {
    expect(formatMoney(sumMoney(['0.10', '0.20']))).toBe('0.30');
    expect(formatMoney(money('2.675'))).toBe('2.68');
    expect(() => money(0.1)).toThrow();
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 10_000_000 }), { maxLength: 30 }), (cents) => {
        const total = sumMoney(cents.map((c) => (c / 100).toFixed(2)));
        expect(formatMoney(total)).toBe((cents.reduce((a, b) => a + b, 0) / 100).toFixed(2));
      }),
    );
  });
});
