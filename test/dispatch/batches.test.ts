import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validatePlan, type OptimizerOptions, type OptimizerProblem, type Plan } from '../../src/modules/dispatch/optimizer/index.js';
import { createTestApp, type Session, type TestApp } from '../helpers.js';
import { driverDb, eventTypes, newDriver, newTrip, tripDb, type TestDriver } from '../logistics/fixtures.js';

let t: TestApp;
let admin: Session;
let demoTerritory: string;

const ADMIN = '/admin/dispatch-batches/optimize';
const SUB = '/subadmin/dispatch-batches/optimize';

beforeAll(async () => {
  t = await createTestApp();
  admin = await t.as('admin');
  const list = await t.req(admin, { method: 'GET', url: '/territories' });
  demoTerritory = list.json().data.find((x: { name: string }) => x.name === 'La Paz Centro').id;
});
afterAll(() => t?.close());

// Points inside the demo territory (central La Paz).
const near = (i: number) => ({ lon: -68.15 + 0.004 * i, lat: -16.51 + 0.002 * (i % 3) });

async function trips(n: number, session = admin, at = near): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) ids.push((await newTrip(t, session, {}, at(i))).id);
  return ids;
}

const optimize = (session: Session, payload: Record<string, unknown>, url = ADMIN) => t.req(session, { method: 'POST', url, payload });
const commit = (session: Session, planId: string, url = ADMIN) => t.req(session, { method: 'POST', url: `${url}/${planId}/commit` });
const planRow = async (id: string) => (await t.db.withSystem((tx) => tx.query('SELECT * FROM dispatch_plan WHERE id = $1', [id]))).rows[0];
const planCount = async () =>
  (await t.db.withSystem((tx) => tx.query<{ n: number }>('SELECT count(*)::int AS n FROM dispatch_plan'))).rows[0].n;
const tripStates = async (ids: string[]) =>
  (
    await t.db.withSystem((tx) =>
      tx.query('SELECT id, status, driver_id, plan_id, stop_order, updated_at FROM trip WHERE id = ANY($1) ORDER BY id', [ids]),
    )
  ).rows;

/** A plan and its inputs: two drivers of capacity 2 and four trips. */
async function scenario(nTrips = 4) {
  const d1 = await newDriver(t, { lon: -68.15, lat: -16.51 }, { capacity: 2 });
  const d2 = await newDriver(t, { lon: -68.13, lat: -16.505 }, { capacity: 2 });
  const ids = await trips(nTrips);
  const res = await optimize(admin, { trip_ids: ids, driver_ids: [d1.id, d2.id], time_budget_ms: 300 });
  expect(res.statusCode, res.body).toBe(201);
  return { d1, d2, ids, plan: res.json() };
}

/** The optimizer's problem rebuilt from the database, and the HTTP plan in the optimizer's shape, for validatePlan. */
async function asOptimizer(ids: string[], drivers: TestDriver[], body: PlanJson): Promise<{ problem: OptimizerProblem; plan: Plan }> {
  const rows = await t.db.withSystem((tx) =>
    tx.query(
      'SELECT id, (pickup_location)[0] AS plon, (pickup_location)[1] AS plat, (dropoff_location)[0] AS dlon, (dropoff_location)[1] AS dlat FROM trip WHERE id = ANY($1)',
      [ids],
    ),
  );
  const problem: OptimizerProblem = {
    trips: rows.rows.map((r) => ({ id: r.id, pickup: { lon: r.plon, lat: r.plat }, dropoff: { lon: r.dlon, lat: r.dlat } })),
    drivers: await Promise.all(
      drivers.map(async (d) => {
        const row = await t.db.withSystem((tx) =>
          tx.query('SELECT capacity, active_trips, (last_location)[0] AS lon, (last_location)[1] AS lat FROM driver WHERE id = $1', [d.id]),
        );
        const r = row.rows[0];
        return {
          id: d.id,
          position: { lon: r.lon, lat: r.lat },
          capacity: r.capacity,
          currentLoad: r.active_trips,
          maxStops: 2 * (r.capacity - r.active_trips),
        };
      }),
    ),
  };
  const routes = body.routes.map((r) => ({
    driverId: r.driver_id,
    stops: r.stops.map((s) => ({
      tripId: s.trip_id,
      kind: s.kind,
      position: { lon: s.position.coordinates[0], lat: s.position.coordinates[1] },
      arrivalOffsetS: s.arrival_offset_s,
      waitS: s.wait_s,
      departureOffsetS: s.departure_offset_s,
      cumulativeDistanceM: s.cumulative_distance_m,
      loadAfter: s.load_after,
    })),
    distanceM: r.distance_m,
    durationS: r.duration_s,
  }));
  const plan: Plan = {
    algorithm: 'regret-insertion+lns',
    routes,
    unassigned: body.unassigned.map((u) => ({ tripId: u.trip_id, reason: u.reason as Plan['unassigned'][number]['reason'] })),
    // Totals of the rounded routes (the HTTP totals are rounded separately).
    totals: {
      assigned: body.totals.assigned,
      unassigned: body.totals.unassigned,
      distanceM: routes.reduce((s, r) => s + r.distanceM, 0),
      durationS: routes.reduce((s, r) => s + r.durationS, 0),
      sumDropoffS: body.totals.sum_dropoff_s,
      maxDropoffS: body.totals.max_dropoff_s,
    },
    objective: body.constraints.objective,
    cost: 0,
    seed: 1,
    iterations: 0,
    iterationBudget: 0,
    stoppedBy: 'iterations',
    curve: [],
    elapsedMs: 0,
  };
  return { problem, plan };
}

interface PlanJson {
  plan_id: string;
  status: string;
  routes: {
    driver_id: string;
    stops: {
      trip_id: string;
      kind: 'pickup' | 'dropoff';
      position: { coordinates: [number, number] };
      arrival_offset_s: number;
      wait_s: number;
      departure_offset_s: number;
      cumulative_distance_m: number;
      load_after: number;
    }[];
    distance_m: number;
    duration_s: number;
  }[];
  unassigned: { trip_id: string; reason: string }[];
  assignments: { trip_id: string; driver_id: string; stop_order: number }[];
  totals: { assigned: number; unassigned: number; distance_m: number; duration_s: number; sum_dropoff_s: number; max_dropoff_s: number };
  baseline: { distance_m: number; assigned: number };
  constraints: {
    objective: 'time' | 'balanced' | 'distance';
    max_route_duration_s: number;
    service_time_pickup_s: number;
    service_time_dropoff_s: number;
    speed_kmh: number;
  };
}

/** The optimizer options a plan was made with (its constraints), for validatePlan. */
const optionsOf = (body: PlanJson): OptimizerOptions => ({
  maxRouteDurationS: body.constraints.max_route_duration_s,
  serviceTimePickupS: body.constraints.service_time_pickup_s,
  serviceTimeDropoffS: body.constraints.service_time_dropoff_s,
  speedKmh: body.constraints.speed_kmh,
});

describe('optimize and commit', () => {
  it('proposes a feasible stored plan, and the commit assigns every trip as planned with trip.assigned events', async () => {
    const { d1, d2, ids, plan } = await scenario();
    expect(plan.status).toBe('proposed');
    expect(plan.totals).toMatchObject({ assigned: 4, unassigned: 0 });
    expect(plan.baseline.assigned).toBe(4);
    // the default objective is the customers' time
    expect(plan.constraints.objective).toBe('time');
    expect(plan.totals.mean_dropoff_s).toBeLessThanOrEqual(plan.baseline.mean_dropoff_s + 0.5);
    expect(new Date(plan.expires_at).getTime()).toBeGreaterThan(Date.now() + 9 * 60_000);
    const { problem, plan: asPlan } = await asOptimizer(ids, [d1, d2], plan);
    expect(validatePlan(problem, asPlan, optionsOf(plan), 0.5)).toEqual([]);
    // Each driver takes at most his free capacity (every trip holds a unit from the commit on).
    for (const r of plan.routes) expect(r.stops.length).toBeLessThanOrEqual(4);
    const stored = await planRow(plan.plan_id);
    expect(stored).toMatchObject({
      status: 'proposed',
      organization_id: t.demo.organizationId,
      created_by_user_id: admin.userId,
      territory_ids: null,
    });
    expect(stored.inputs.trips.map((x: { id: string }) => x.id).sort()).toEqual([...ids].sort());
    for (const id of ids) expect((await tripDb(t, id)).status).toBe('pending');

    const res = await commit(admin, plan.plan_id);
    expect(res.statusCode, res.body).toBe(200);
    const committed = res.json();
    expect(committed.status).toBe('committed');
    expect(committed.committed_at).toBeTruthy();
    expect(committed.assignments).toEqual(plan.assignments);
    for (const a of plan.assignments as PlanJson['assignments']) {
      const row = await tripDb(t, a.trip_id);
      expect(row).toMatchObject({ status: 'assigned', driver_id: a.driver_id, plan_id: plan.plan_id, stop_order: a.stop_order });
      expect(await eventTypes(t, a.trip_id)).toEqual(['trip.created', 'trip.assigned']);
      const route = plan.routes.find((r: PlanJson['routes'][number]) => r.driver_id === a.driver_id)!;
      expect(route.stops[a.stop_order - 1]).toMatchObject({ trip_id: a.trip_id, kind: 'pickup' });
    }
    for (const d of [d1, d2]) {
      const planned = plan.assignments.filter((a: { driver_id: string }) => a.driver_id === d.id).length;
      expect((await driverDb(t, d.id)).active_trips).toBe(planned);
    }
    expect((await planRow(plan.plan_id)).status).toBe('committed');

    // Idempotent: the same result, nothing applied twice.
    const again = await commit(admin, plan.plan_id);
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual(committed);
    for (const id of ids) expect(await eventTypes(t, id)).toEqual(['trip.created', 'trip.assigned']);
  });

  it('leaves trips over the drivers free capacity unassigned (CAPACITY), reports non-pending and unknown ids', async () => {
    const d = await newDriver(t, { lon: -68.15, lat: -16.51 }, { capacity: 1 });
    const ids = await trips(2);
    const assigned = (await newTrip(t, admin, {}, near(1))).id;
    const other = await newDriver(t, { lon: -68.15, lat: -16.51 }, { capacity: 3 });
    expect((await t.req(admin, { method: 'POST', url: `/trips/${assigned}/assign`, payload: { driver_id: other.id } })).statusCode).toBe(
      200,
    );
    const res = await optimize(admin, { trip_ids: [...ids, assigned, 'no-such-trip'], driver_ids: [d.id], time_budget_ms: 200 });
    expect(res.statusCode, res.body).toBe(201);
    const plan = res.json();
    expect(plan.totals).toMatchObject({ assigned: 1, unassigned: 3 });
    expect(plan.unassigned.map((u: { reason: string }) => u.reason).sort()).toEqual(['CAPACITY', 'NOT_FOUND', 'NOT_PENDING']);
    expect((await commit(admin, plan.plan_id)).statusCode).toBe(200);
    expect((await driverDb(t, d.id)).active_trips).toBe(1);
  });

  it('never plans a trip for a driver who rejected it', async () => {
    const d = await newDriver(t, { lon: -68.15, lat: -16.51 }, { capacity: 2 });
    const [id] = await trips(1);
    expect((await t.req(admin, { method: 'POST', url: `/trips/${id}/assign`, payload: { driver_id: d.id } })).statusCode).toBe(200);
    expect((await t.req(d.session, { method: 'POST', url: `/driver/trips/${id}/reject`, payload: { reason: 'no' } })).statusCode).toBe(200);
    const plan = (await optimize(admin, { trip_ids: [id], driver_ids: [d.id], time_budget_ms: 100 })).json();
    expect(plan.unassigned).toEqual([{ trip_id: id, reason: 'NO_DRIVER_IN_TERRITORY' }]);
  });
});

describe('stale plans are refused and change nothing', () => {
  it('a trip assigned manually in between: 409 PLAN_STALE naming it, no trip changed, plan stale', async () => {
    const { ids, plan } = await scenario();
    const intruder = await newDriver(t, { lon: -68.14, lat: -16.5 }, { capacity: 1 });
    expect((await t.req(admin, { method: 'POST', url: `/trips/${ids[0]}/assign`, payload: { driver_id: intruder.id } })).statusCode).toBe(
      200,
    );
    const before = await tripStates(ids);
    const res = await commit(admin, plan.plan_id);
    expect(res.statusCode).toBe(409);
    expect(res.json().code).toBe('PLAN_STALE');
    expect(res.json().changes).toEqual([{ kind: 'trip', id: ids[0], field: 'status', expected: 'pending', actual: 'assigned' }]);
    expect(await tripStates(ids)).toEqual(before);
    for (const id of ids.slice(1)) expect(await eventTypes(t, id)).toEqual(['trip.created']);
    expect((await planRow(plan.plan_id)).status).toBe('stale');
    const again = await commit(admin, plan.plan_id);
    expect(again.statusCode).toBe(409);
    expect(again.json().changes).toEqual(res.json().changes);
  });

  it('a driver who became unavailable: 409, nothing assigned', async () => {
    const { d1, d2, ids, plan } = await scenario();
    const used = (plan as PlanJson).assignments[0].driver_id;
    expect((await t.req(admin, { method: 'POST', url: `/drivers/${used}/availability`, payload: { available: false } })).statusCode).toBe(
      200,
    );
    const res = await commit(admin, plan.plan_id);
    expect(res.statusCode).toBe(409);
    expect(res.json().changes).toContainEqual({ kind: 'driver', id: used, field: 'available', expected: true, actual: false });
    for (const s of await tripStates(ids)) expect(s).toMatchObject({ status: 'pending', driver_id: null, plan_id: null });
    for (const d of [d1, d2]) expect((await driverDb(t, d.id)).active_trips).toBe(0);
  });

  it('an expired plan: 409, plan expired, nothing assigned', async () => {
    const { ids, plan } = await scenario(2);
    await t.db.withSystem((tx) =>
      tx.query("UPDATE dispatch_plan SET expires_at = now() - interval '1 second' WHERE id = $1", [plan.plan_id]),
    );
    const res = await commit(admin, plan.plan_id);
    expect(res.statusCode).toBe(409);
    expect(res.json().changes[0]).toMatchObject({ kind: 'plan', id: plan.plan_id, field: 'expires_at' });
    expect((await planRow(plan.plan_id)).status).toBe('expired');
    for (const s of await tripStates(ids)) expect(s.status).toBe('pending');
  });
});

describe('races, isolation, input', () => {
  it('two concurrent commits apply the plan once; both answer the committed plan', async () => {
    const { ids, plan } = await scenario();
    const [a, b] = await Promise.all([commit(admin, plan.plan_id), commit(admin, plan.plan_id)]);
    expect([a.statusCode, b.statusCode]).toEqual([200, 200]);
    expect(a.json()).toEqual(b.json());
    for (const id of ids) expect(await eventTypes(t, id)).toEqual(['trip.created', 'trip.assigned']);
    const audits = await t.db.withSystem((tx) =>
      tx.query("SELECT 1 FROM audit_log WHERE entity_id = $1 AND action = 'dispatch_plan.committed'", [plan.plan_id]),
    );
    expect(audits.rowCount).toBe(1);
  });

  it("another organization's plan is 404 and its trips are not visible", async () => {
    const { ids, plan } = await scenario(1);
    const other = await t.newOrganization();
    const otherAdmin = await t.login(other.logins.admin);
    expect((await commit(otherAdmin, plan.plan_id)).statusCode).toBe(404);
    expect((await commit(otherAdmin, 'no-such-plan')).statusCode).toBe(404);
    const foreign = await optimize(otherAdmin, { trip_ids: ids, time_budget_ms: 50 });
    expect(foreign.statusCode).toBe(201);
    expect(foreign.json().unassigned).toEqual([{ trip_id: ids[0], reason: 'NOT_FOUND' }]);
    expect((await planRow(plan.plan_id)).status).toBe('proposed');
    expect((await tripDb(t, ids[0])).status).toBe('pending');
  });

  it('bad input is 400 (unknown territory 404, wrong role 403) and writes nothing', async () => {
    const [id] = await trips(1);
    const before = await planCount();
    for (const payload of [
      {},
      { trip_ids: [] },
      { trip_ids: [id, id] },
      { trip_ids: [id], territory_id: demoTerritory },
      { trip_ids: [id], extra: 1 },
      { trip_ids: [id], time_budget_ms: 60_000 },
      { trip_ids: [id], max_stops_per_route: 1 },
      { created_from: '2030-01-02T00:00:00Z', created_to: '2030-01-01T00:00:00Z' },
      { created_from: 'yesterday' },
    ]) {
      const r = await optimize(admin, payload);
      expect(r.statusCode, JSON.stringify(payload)).toBe(400);
    }
    expect((await optimize(admin, { territory_id: 'no-such-territory' })).statusCode).toBe(404);
    expect((await optimize(await t.as('customer'), { trip_ids: [id] })).statusCode).toBe(403);
    expect((await optimize(admin, { trip_ids: [id] }, SUB)).statusCode).toBe(403);
    expect(await planCount()).toBe(before);
  });

  it('selects the pending trips of a territory and creation window', async () => {
    const from = (await t.db.withSystem((tx) => tx.query<{ now: Date }>('SELECT clock_timestamp() AS now'))).rows[0].now.toISOString();
    const ids = await trips(2);
    const d = await newDriver(t, { lon: -68.15, lat: -16.51 }, { capacity: 2 });
    const res = await optimize(admin, { territory_id: demoTerritory, created_from: from, driver_ids: [d.id], time_budget_ms: 100 });
    expect(res.statusCode, res.body).toBe(201);
    const planned = [
      ...res.json().assignments.map((a: { trip_id: string }) => a.trip_id),
      ...res.json().unassigned.map((u: { trip_id: string }) => u.trip_id),
    ];
    expect(planned.sort()).toEqual([...ids].sort());
  });
});

describe('sub-administrators', () => {
  it('plan only trips and drivers of their territories and commit only their own plans', async () => {
    const created = await t.req(admin, {
      method: 'POST',
      url: '/territories',
      payload: {
        name: 'El Alto',
        geometry: {
          type: 'Polygon',
          coordinates: [
            [
              [-68.3, -16.6],
              [-68.2, -16.6],
              [-68.2, -16.55],
              [-68.3, -16.55],
              [-68.3, -16.6],
            ],
          ],
        },
      },
    });
    expect(created.statusCode, created.body).toBe(201);
    const elAlto = created.json().id;
    const mine = await trips(2);
    const theirs = await trips(1, admin, () => ({ lon: -68.25, lat: -16.58 }));
    expect((await tripDb(t, theirs[0])).territory_id).toBe(elAlto);
    const dMine = await newDriver(t, { lon: -68.15, lat: -16.51 }, { capacity: 3, territory_ids: [demoTerritory] });
    const dTheirs = await newDriver(t, { lon: -68.15, lat: -16.51 }, { capacity: 3, territory_ids: [elAlto] });

    // A real sub-administrator confined to the demo territory.
    const email = `sub-${Date.now()}@demo.test`;
    const subCreated = await t.req(admin, {
      method: 'POST',
      url: '/admin/subadmins',
      payload: { email, password: 'Demo-pass-2026', display_name: 'sub', territory_ids: [demoTerritory] },
    });
    expect(subCreated.statusCode, subCreated.body).toBe(201);
    const sub: Session = await t.login(email);
    {
      const res = await optimize(sub, { trip_ids: [...mine, ...theirs], driver_ids: [dMine.id, dTheirs.id], time_budget_ms: 200 }, SUB);
      expect(res.statusCode, res.body).toBe(201);
      const plan = res.json();
      expect(plan.territory_ids).toEqual([demoTerritory]);
      expect(plan.unassigned).toEqual([{ trip_id: theirs[0], reason: 'NOT_FOUND' }]);
      expect(new Set(plan.assignments.map((a: { driver_id: string }) => a.driver_id))).toEqual(new Set([dMine.id]));
      expect((await optimize(sub, { territory_id: elAlto }, SUB)).statusCode).toBe(404);

      const adminPlan = (await optimize(admin, { trip_ids: theirs, driver_ids: [dTheirs.id], time_budget_ms: 50 })).json();
      expect((await commit(sub, adminPlan.plan_id, SUB)).statusCode).toBe(404);
      expect((await commit(sub, plan.plan_id, ADMIN)).statusCode).toBe(403);

      const ok = await commit(sub, plan.plan_id, SUB);
      expect(ok.statusCode, ok.body).toBe(200);
      for (const id of mine) expect(await tripDb(t, id)).toMatchObject({ status: 'assigned', driver_id: dMine.id, plan_id: plan.plan_id });
      expect((await tripDb(t, theirs[0])).status).toBe('pending');
    }
  });
});
