import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type Session, type TestApp } from '../helpers.js';
import type { AppContext } from '../../src/platform/context.js';
import type { Tx } from '../../src/platform/db/index.js';
import { BREADCRUMB_SQL, TRACK_SQL } from '../../src/modules/logistics/repo/locations.js';
import { maintainLocationHistory } from '../../src/modules/logistics/worker.js';
import { newDriver, pt, tripDb, tripIn, type TestDriver } from './fixtures.js';

let t: TestApp;
let admin: Session;
let ctx: AppContext;

beforeAll(async () => {
  t = await createTestApp();
  admin = await t.as('admin');
  ctx = { db: t.db, config: t.config } as AppContext;
});
afterAll(async () => t?.close());

const DAY = 86_400_000;
/** The UTC date `offset` days from today, YYYY-MM-DD. */
const day = (offset = 0) => new Date(Date.now() + offset * DAY).toISOString().slice(0, 10);
const partitionOf = (d: string) => `driver_location_p${d.replace(/-/g, '')}`;
const at = (d: string, time: string) => `${d}T${time}Z`;

const partitions = () =>
  t.db.withSystem(async (tx) =>
    (
      await tx.query<{ relname: string }>(
        `SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
            WHERE i.inhparent = 'driver_location'::regclass ORDER BY 1`,
      )
    ).rows.map((r) => r.relname),
  );

const pointsOf = (driverId: string) =>
  t.db.withSystem(
    async (tx) =>
      (
        await tx.query<{ client_point_id: string; recorded_at: Date; part: string }>(
          `SELECT client_point_id, recorded_at, tableoid::regclass::text AS part FROM driver_location WHERE driver_id = $1 ORDER BY recorded_at`,
          [driverId],
        )
      ).rows,
  );

const batch = (d: TestDriver, points: { id: string; at: string; lon?: number; speed?: number }[]) =>
  t.req(d.session, {
    method: 'POST',
    url: '/driver/locations/batch',
    payload: {
      points: points.map((p) => ({
        client_point_id: p.id,
        location: pt(p.lon ?? -68.13, -16.5),
        recorded_at: p.at,
        ...(p.speed !== undefined ? { speed_mps: p.speed } : {}),
      })),
    },
  });

/** The tables an EXPLAIN (FORMAT JSON) plan reads. */
function relations(plan: unknown): string[] {
  const out = new Set<string>();
  const walk = (n: unknown) => {
    if (Array.isArray(n)) return n.forEach(walk);
    if (n && typeof n === 'object') {
      const o = n as Record<string, unknown>;
      if (typeof o['Relation Name'] === 'string') out.add(o['Relation Name']);
      Object.values(o).forEach(walk);
    }
  };
  walk(plan);
  return [...out].sort();
}

const planOf = (rows: Record<string, unknown>[]) => {
  const v = Object.values(rows[0]!)[0];
  return typeof v === 'string' ? JSON.parse(v) : v;
};

/**
 * The tables read by `sql` with `params`, planned both ways the server may plan it: with the values (a custom plan,
 * pruned by the planner) and as a generic plan of a prepared statement (pruned by the executor at start).
 */
async function scanned(tx: Tx, sql: string, params: unknown[], types: string): Promise<{ custom: string[]; generic: string[] }> {
  const custom = relations(planOf((await tx.query(`EXPLAIN (FORMAT JSON) ${sql}`, params)).rows));
  await tx.query(`PREPARE pruned_q(${types}) AS ${sql}`);
  await tx.query(`SELECT set_config('plan_cache_mode', 'force_generic_plan', true)`);
  const literal = params.map((p) => (p === null ? 'NULL' : `'${p instanceof Date ? p.toISOString() : String(p)}'`)).join(', ');
  const generic = relations(planOf((await tx.query(`EXPLAIN (FORMAT JSON) EXECUTE pruned_q(${literal})`)).rows));
  await tx.query('DEALLOCATE pruned_q');
  return { custom, generic };
}

describe('GPS history partitioned by day', () => {
  it('upkeep keeps today and the days ahead, is idempotent, and drops the days past the retention with their points', async () => {
    await maintainLocationHistory(ctx);
    const parts = await partitions();
    for (let i = 0; i <= t.config.settings.LOCATION_PARTITIONS_AHEAD_DAYS; i++) expect(parts).toContain(partitionOf(day(i)));
    expect(parts).toContain('driver_location_default');
    expect(await maintainLocationHistory(ctx)).toEqual({ created: 0, dropped: 0 });

    // The upkeep as it ran 100 days ago made that day's partition; a point of that day lands in it, and a point
    // far older than any partition lands in the default one.
    const old = day(-100);
    const then = await maintainLocationHistory(ctx, old);
    expect(then.created).toBeGreaterThan(0);
    const d = await newDriver(t, { lon: -68.13, lat: -16.5 });
    const r = await batch(d, [
      { id: 'old-1', at: at(old, '10:00:00') },
      { id: 'ancient-1', at: at(day(-400), '10:00:00') },
      { id: 'today-1', at: new Date(Date.now() - 60_000).toISOString() },
    ]);
    expect(r.statusCode, r.body).toBe(200);
    expect(r.json().accepted).toBe(3);
    const mine = (rows: { client_point_id: string }[]) => rows.filter((p) => ['old-1', 'ancient-1', 'today-1'].includes(p.client_point_id));
    const before = mine(await pointsOf(d.id)) as { client_point_id: string; part: string }[];
    expect(Object.fromEntries(before.map((p) => [p.client_point_id, p.part]))).toEqual({
      'old-1': partitionOf(old),
      'ancient-1': 'driver_location_default',
      'today-1': partitionOf(day()),
    });

    const now = await maintainLocationHistory(ctx);
    expect(now.dropped).toBeGreaterThanOrEqual(1);
    expect(await partitions()).not.toContain(partitionOf(old));
    expect(mine(await pointsOf(d.id)).map((p) => p.client_point_id)).toEqual(['today-1']);
  });

  it('a point of a day created later moves out of the default partition into it', async () => {
    const future = day(t.config.settings.LOCATION_PARTITIONS_AHEAD_DAYS + 3);
    // Written straight into the table: the API refuses points from the future.
    await t.db.withSystem((tx) =>
      tx.query(
        `INSERT INTO driver_location (organization_id, driver_id, client_point_id, location, recorded_at) VALUES ($1, 'd-x', 'f-1', point(0, 0), $2)`,
        [admin.organizationId, at(future, '12:00:00')],
      ),
    );
    expect((await pointsOf('d-x'))[0]!.part).toBe('driver_location_default');
    await maintainLocationHistory(ctx, day(3));
    expect((await pointsOf('d-x'))[0]!.part).toBe(partitionOf(future));
    await t.db.withSystem((tx) => tx.query(`DELETE FROM driver_location WHERE driver_id = 'd-x'`));
  });

  it('a resend of a point is stored once across partitions; a late point goes to history only', async () => {
    const d = await newDriver(t, { lon: -68.13, lat: -16.5 });
    const t1 = new Date(Date.now() - 120_000).toISOString();
    const t2 = new Date(Date.now() - 60_000).toISOString();
    const yesterday = at(day(-1), '23:59:59');
    const first = await batch(d, [
      { id: 'p-1', at: t1 },
      { id: 'p-2', at: t2 },
      { id: 'p-0', at: yesterday },
    ]);
    expect(first.json()).toMatchObject({ accepted: 3, duplicates: 0 });
    const again = await batch(d, [
      { id: 'p-2', at: t2 },
      { id: 'p-0', at: yesterday },
    ]);
    expect(again.statusCode, again.body).toBe(200);
    expect(again.json()).toMatchObject({ accepted: 0, duplicates: 2 });
    const late = await batch(d, [{ id: 'p-late', at: new Date(Date.now() - 90_000).toISOString() }]);
    expect(late.json()).toMatchObject({ accepted: 1, last_location_at: t2 });
    expect((await pointsOf(d.id)).filter((p) => p.client_point_id.startsWith('p-')).map((p) => p.client_point_id)).toEqual([
      'p-0',
      'p-1',
      'p-late',
      'p-2',
    ]);
  });

  it('row-level security holds on the parent and on every partition: another tenant reads nothing, even by partition name', async () => {
    const flags = await t.db.withSystem(
      async (tx) =>
        (
          await tx.query<{ relname: string; relrowsecurity: boolean; relforcerowsecurity: boolean; policies: number }>(
            `SELECT c.relname, c.relrowsecurity, c.relforcerowsecurity,
                    (SELECT count(*) FROM pg_policies p WHERE p.tablename = c.relname AND p.policyname = 'tenant_isolation')::int AS policies
               FROM pg_class c WHERE c.relname = 'driver_location' OR c.oid IN (SELECT inhrelid FROM pg_inherits WHERE inhparent = 'driver_location'::regclass)`,
          )
        ).rows,
    );
    expect(flags.length).toBeGreaterThan(3);
    for (const f of flags) expect(f, f.relname).toMatchObject({ relrowsecurity: true, relforcerowsecurity: true, policies: 1 });

    const d = await newDriver(t, { lon: -68.13, lat: -16.5 });
    expect((await batch(d, [{ id: 'rls-1', at: new Date(Date.now() - 30_000).toISOString() }])).statusCode).toBe(200);
    const other = await t.newOrganization('GPS history B');
    const part = partitionOf(day());
    const countAs = (organizationId: string, table: string) =>
      t.db
        .withTenant({ organizationId, userId: null }, async (tx) => {
          const { rows } = await tx.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM ${table} WHERE driver_id = $1 AND client_point_id = 'rls-1'`,
            [d.id],
          );
          return rows[0]!.n;
        })
        .catch((err: { code?: string }) => (err.code === '42501' ? 'denied' : Promise.reject(err)));
    expect(await countAs(admin.organizationId, 'driver_location')).toBe(1);
    expect(await countAs(other.organizationId, 'driver_location')).toBe(0);
    expect([0, 'denied']).toContain(await countAs(other.organizationId, part));
    expect([0, 'denied']).toContain(await countAs(other.organizationId, 'driver_location_default'));
    // A partition made by the upkeep after the migration: the same policy.
    await maintainLocationHistory(ctx, day(20));
    expect([0, 'denied']).toContain(await countAs(other.organizationId, partitionOf(day(25))));
  });

  it('the breadcrumb read with time bounds scans only the partitions of its days (EXPLAIN)', async () => {
    await maintainLocationHistory(ctx);
    const today = day();
    const plans = await t.db.withTenant({ organizationId: admin.organizationId, userId: null }, async (tx) => ({
      ended: await scanned(
        tx,
        BREADCRUMB_SQL,
        ['d-any', new Date(at(today, '00:10:00')), new Date(at(today, '00:50:00')), 1000],
        'text, timestamptz, timestamptz, bigint',
      ),
      overnight: await scanned(
        tx,
        BREADCRUMB_SQL,
        ['d-any', new Date(at(day(-1), '23:30:00')), new Date(at(today, '00:30:00')), 1000],
        'text, timestamptz, timestamptz, bigint',
      ),
      active: await scanned(
        tx,
        BREADCRUMB_SQL,
        ['d-any', new Date(at(today, '00:10:00')), null, 1000],
        'text, timestamptz, timestamptz, bigint',
      ),
    }));
    const track = await t.db.withTenant({ organizationId: admin.organizationId, userId: null }, (tx) =>
      scanned(
        tx,
        TRACK_SQL,
        ['d-any', new Date(at(today, '00:10:00')), new Date(at(today, '00:50:00')), null, 1001],
        'text, timestamptz, timestamptz, timestamptz, bigint',
      ),
    );
    console.log('EXPLAIN breadcrumb and track: relations scanned', JSON.stringify({ ...plans, track }));
    expect(track).toEqual({ custom: [partitionOf(today)], generic: [partitionOf(today)] });
    expect(plans.ended).toEqual({ custom: [partitionOf(today)], generic: [partitionOf(today)] });
    const overnight = [partitionOf(day(-1)), partitionOf(today)].sort();
    expect(plans.overnight).toEqual({ custom: overnight, generic: overnight });
    // Still going: up to a day past now, so today and tomorrow, never the default partition or the week ahead.
    const active = [partitionOf(today), partitionOf(day(1))];
    expect(plans.active).toEqual({ custom: active, generic: active });
  });

  it.skipIf(!process.env.TEST_DATABASE_URL)(
    'a GPS batch does not wait for its trip while a change holds the trip (the trip end then takes the driver: no deadlock)',
    async () => {
      const d = await newDriver(t, { lon: -68.13, lat: -16.5 });
      const tripId = await tripIn(t, admin, d, 'in_transit');
      await t.db.withSystem(async (tx) => {
        await tx.query('SELECT 1 FROM trip WHERE id = $1 FOR UPDATE', [tripId]);
        const r = await batch(d, [{ id: 'lk-1', at: new Date(Date.now() - 2000).toISOString() }]);
        expect(r.statusCode, r.body).toBe(200);
        expect(r.json().accepted).toBe(1);
      });
      // Once the trip is free, the next batch writes its ETA.
      expect((await batch(d, [{ id: 'lk-2', at: new Date(Date.now() - 1000).toISOString() }])).statusCode).toBe(200);
      expect((await tripDb(t, tripId)).eta_updated_at).not.toBeNull();
    },
  );

  it("a trip's route: from the history while active, kept with the trip once delivered, and still there after retention", async () => {
    await maintainLocationHistory(ctx);
    const d = await newDriver(t, { lon: -68.13, lat: -16.5 });
    const tripId = await tripIn(t, admin, d, 'in_transit');
    const row = await tripDb(t, tripId);
    const t0 = new Date(row.accepted_at).getTime();
    const sent = [1, 2, 3].map((i) => ({ id: `tr-${i}`, at: new Date(t0 + i * 10).toISOString(), lon: -68.13 + i / 1000, speed: i }));
    expect((await batch(d, [...sent].reverse())).json().accepted).toBe(3);
    const get = (who: Session, q = '') => t.req(who, { method: 'GET', url: `/trips/${tripId}/track${q}` });

    const live = await get(admin);
    expect(live.statusCode, live.body).toBe(200);
    expect(live.json()).toMatchObject({ trip_id: tripId, status: 'in_transit', source: 'history', next_after: null });
    expect(live.json().points).toEqual(sent.map((p) => ({ lon: p.lon, lat: -16.5, recorded_at: p.at, speed_mps: p.speed })));
    // Pages: the next_after of one is the after of the next.
    const first = (await get(admin, '?limit=2')).json();
    expect(first.points.map((p: { recorded_at: string }) => p.recorded_at)).toEqual([sent[0]!.at, sent[1]!.at]);
    expect(first.next_after).toBe(sent[1]!.at);
    const second = (await get(admin, `?limit=2&after=${encodeURIComponent(first.next_after)}`)).json();
    expect(second).toMatchObject({ next_after: null, points: [{ recorded_at: sent[2]!.at }] });
    expect((await get(d.session)).statusCode).toBe(200);

    const other = await newDriver(t, { lon: -68.13, lat: -16.5 });
    expect((await get(other.session)).statusCode).toBe(404);
    const stranger = await t.login((await t.newOrganization('Track Org B')).logins.admin!);
    expect((await get(stranger)).statusCode).toBe(404);

    const delivered = await t.req(d.session, {
      method: 'POST',
      url: `/trips/${tripId}/verify-delivery`,
      payload: { pin: row.delivery_pin },
    });
    expect(delivered.statusCode, delivered.body).toBe(200);
    // A point after the end is not the trip's.
    await batch(d, [{ id: 'tr-after', at: new Date(Date.now() + 1000).toISOString() }]);
    const kept = await get(admin);
    expect(kept.json()).toMatchObject({ status: 'completed', source: 'kept', next_after: null });
    expect(kept.json().points).toEqual(live.json().points);

    // The driver was offline: points of the trip's window reach the server after its end and join the kept track in
    // time order; a resend of them changes nothing, and a point after the end stays out.
    const ended = new Date((await tripDb(t, tripId)).updated_at).getTime();
    const synced = [
      { id: 'tr-late-1', at: new Date(t0 + 15).toISOString(), lon: -68.2, speed: 7 },
      { id: 'tr-late-2', at: new Date(t0 + 5).toISOString(), lon: -68.3, speed: 8 },
      { id: 'tr-late-3', at: new Date(ended).toISOString(), lon: -68.4, speed: 9 },
    ];
    const afterEnd = { id: 'tr-late-after', at: new Date(ended + 500).toISOString(), lon: -68.5 };
    expect((await batch(d, [...synced, afterEnd])).json()).toMatchObject({ accepted: 4 });
    const withLate = [...sent, ...synced]
      .sort((a, b) => a.at.localeCompare(b.at))
      .map((p) => ({ lon: p.lon, lat: -16.5, recorded_at: p.at, speed_mps: p.speed }));
    expect((await get(admin)).json().points).toEqual(withLate);
    expect((await batch(d, [...synced, afterEnd])).json()).toMatchObject({ accepted: 0, duplicates: 4 });
    // The same fixes under new ids (a client that lost its ids): still once each.
    expect(
      (
        await batch(
          d,
          synced.map((p) => ({ ...p, id: `${p.id}-again` })),
        )
      ).json(),
    ).toMatchObject({ accepted: 3 });
    expect((await get(admin)).json().points).toEqual(withLate);
    expect((await get(admin, '?limit=2')).json().next_after).toBe(withLate[1]!.recorded_at);

    // Retention as it will run 100 days from now: today's partition is dropped, the delivered trip's route stays.
    const later = await maintainLocationHistory(ctx, day(100));
    expect(later.dropped).toBeGreaterThan(0);
    expect(await partitions()).not.toContain(partitionOf(day()));
    expect(await pointsOf(d.id)).toEqual([]);
    expect((await get(admin)).json().points).toEqual(withLate);
    const tracking = await t.req(admin, { method: 'GET', url: `/trips/${tripId}/tracking` });
    expect(tracking.json().breadcrumb).toEqual([]);
    await maintainLocationHistory(ctx);
  });
});
