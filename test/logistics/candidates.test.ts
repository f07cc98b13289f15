import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database, Tx } from '../../src/platform/db/index.js';
import { createTestApp, type Session, type TestApp } from '../helpers.js';
import { newDriver, newTrip, type TestDriver } from './fixtures.js';

/**
 * Automatic assignment when most drivers of a city are busy: the candidate search must find the few free ones and
 * read the trip's rejections and the territory links once for the whole ranking, not once for each driver. The app's Database is wrapped so that each
 * candidate search is also explained (EXPLAIN ANALYZE, in the same transaction, with the same parameters).
 */
type PlanNode = { 'Relation Name'?: string; 'Actual Loops'?: number; Plans?: PlanNode[] };
const explained: PlanNode[] = [];

function explainingDb(db: Database): Database {
  const wrapTx = (tx: Tx): Tx => ({
    kind: tx.kind,
    get orm() {
      return tx.orm;
    },
    queryAndCommit: (text, params, then) => tx.queryAndCommit(text, params, then),
    queue: (text, params) => tx.queue(text, params),
    async query(text, params) {
      const result = await tx.query(text, params);
      const sql = typeof text === 'string' ? text : text.text;
      if (sql.trimStart().startsWith('WITH c AS') && sql.includes('FROM trip_rejection')) {
        const { rows } = await tx.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] | string }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${sql}`, params);
        const raw = rows[0]['QUERY PLAN'];
        const plan = (typeof raw === 'string' ? JSON.parse(raw) : raw)[0].Plan as PlanNode;
        explained.push(plan);
      }
      return result as never;
    },
    exec: (text) => tx.exec(text),
  });
  return { ...db, withTenant: (ctx, fn) => db.withTenant(ctx, (tx) => fn(wrapTx(tx))) };
}

/** How many times the plan scanned `relation` (summed over its nodes). */
function loopsOn(node: PlanNode, relation: string): number {
  const own = node['Relation Name'] === relation ? (node['Actual Loops'] ?? 0) : 0;
  return own + (node.Plans ?? []).reduce((n, p) => n + loopsOn(p, relation), 0);
}

let t: TestApp;
let admin: Session;
let merchant: Session;
// Far from the demo organization's drivers: the search sees only the drivers of this test.
const spot = { lon: 13.4, lat: 52.52 };
const near = (i: number) => ({ lon: spot.lon + 0.001 * (i + 1), lat: spot.lat });
const busy: TestDriver[] = [];
const free: TestDriver[] = [];

beforeAll(async () => {
  t = await createTestApp({}, { wrapDb: explainingDb });
  admin = await t.as('admin');
  merchant = await t.as('merchant');
  // Ten busy drivers nearest the pickup (capacity 1, one trip each), two free ones farther away.
  for (let i = 0; i < 10; i++) busy.push(await newDriver(t, near(i), { admin }));
  for (let i = 10; i < 12; i++) free.push(await newDriver(t, near(i), { admin }));
  for (const d of busy) {
    const trip = await newTrip(t, merchant, {}, spot);
    const res = await t.req(admin, { method: 'POST', url: `/trips/${trip.id}/assign`, payload: { driver_id: d.id } });
    expect(res.statusCode, res.body).toBe(200);
  }
}, 120_000);
afterAll(() => t?.close());

describe('candidate search with most drivers busy', () => {
  it("auto-assign gives the trip to the nearest free driver, reading the trip's rejections once", async () => {
    const trip = await newTrip(t, merchant, {}, spot);
    explained.length = 0;
    const auto = await t.req(admin, { method: 'POST', url: `/trips/${trip.id}/auto-assign` });
    expect(auto.statusCode, auto.body).toBe(200);
    expect(auto.json().driver_id).toBe(free[0].id);
    expect(explained).toHaveLength(1);
    // The busy drivers are left out by their own row; the trip's rejections are read once (a hashed lookup), not
    // once for each free driver ranked.
    expect(loopsOn(explained[0], 'trip_rejection')).toBe(1);
  });

  it('the dispatcher’s candidate list still ranks every driver, the free ones first, and reads the drivers of the page only', async () => {
    const trip = await newTrip(t, merchant, {}, spot);
    explained.length = 0;
    const res = await t.req(admin, { method: 'GET', url: `/trips/${trip.id}/candidates?limit=4` });
    expect(res.statusCode, res.body).toBe(200);
    const data = res.json().data as { driver: { id: string }; eligible: boolean; reasons: string[] }[];
    // free[0] took the trip of the previous test: free[1] is the one eligible driver left.
    expect(data.map((c) => c.driver.id)).toEqual([free[1].id, busy[0].id, busy[1].id, busy[2].id]);
    expect(data.map((c) => c.eligible)).toEqual([true, false, false, false]);
    expect(data[1].reasons).toEqual(['at_capacity']);
    expect(explained).toHaveLength(1);
    // The territory links read twice for the whole ranking (hashed lookups: the trip's territory, any territory), not
    // for each of the twelve ranked; the drivers' full read (user, territories) for the four returned.
    expect(loopsOn(explained[0], 'driver_territory')).toBeLessThanOrEqual(2 + 4);
  });

  it.skipIf(!process.env.TEST_DATABASE_URL)(
    'auto-assign passes over a free driver whose row another transaction holds, instead of waiting for it',
    async () => {
      const spare = await newDriver(t, near(12), { admin }); // farther than free[1], the nearest free driver left
      const trip = await newTrip(t, merchant, {}, spot);
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      let locked!: () => void;
      const isLocked = new Promise<void>((r) => (locked = r));
      // Another transaction holds free[1]'s row (as an assignment in flight does) until the test lets it go.
      const holder = t.db.withSystem(async (tx) => {
        await tx.query('SELECT id FROM driver WHERE id = $1 FOR UPDATE', [free[1].id]);
        locked();
        await gate;
      });
      await isLocked;
      let done = false;
      const waitsForLock = (async () => {
        while (!done) {
          const n = await t.db.withSystem((tx) =>
            tx.query<{ n: number }>(
              "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
            ),
          );
          if (n.rows[0]!.n > 0) return 'waited for the lock' as const;
          await new Promise((r) => setImmediate(r));
        }
        return 'answered first' as const;
      })();
      const auto = t.req(admin, { method: 'POST', url: `/trips/${trip.id}/auto-assign` });
      const first = await Promise.race([auto.then(() => 'answered' as const), waitsForLock]);
      done = true;
      release();
      await waitsForLock;
      await holder;
      expect(first).toBe('answered');
      const res = await auto;
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().driver_id).toBe(spare.id);
    },
  );
});
