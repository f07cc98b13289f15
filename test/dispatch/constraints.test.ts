import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type Session, type TestApp } from '../helpers.js';
import { newDriver, newTrip } from '../logistics/fixtures.js';

let t: TestApp;
let admin: Session;

const SETTINGS = '/admin/dispatch-settings';
const OPTIMIZE = '/admin/dispatch-batches/optimize';

beforeAll(async () => {
  t = await createTestApp();
  admin = await t.as('admin');
});
afterAll(() => t?.close());

const near = (i: number) => ({ lon: -68.15 + 0.004 * i, lat: -16.51 + 0.002 * (i % 3) });
const optimize = (payload: Record<string, unknown>, session = admin) => t.req(session, { method: 'POST', url: OPTIMIZE, payload });

interface Stop {
  trip_id: string;
  kind: 'pickup' | 'dropoff';
  arrival_offset_s: number;
  eta: string;
  wait_s: number;
  departure_offset_s: number;
}
interface Route {
  driver_id: string;
  stop_count: number;
  stops: Stop[];
  duration_s: number;
  ends_at: string;
}

async function fixture(nTrips: number, capacity = 2) {
  const d = await newDriver(t, { lon: -68.15, lat: -16.51 }, { capacity });
  const ids: string[] = [];
  for (let i = 0; i < nTrips; i++) ids.push((await newTrip(t, admin, {}, near(i))).id);
  return { d, ids };
}

describe('dispatch settings', () => {
  it('reads the defaults, changes them (administrators, audited), refuses bad values and other roles', async () => {
    const first = await t.req(admin, { method: 'GET', url: SETTINGS });
    expect(first.statusCode, first.body).toBe(200);
    expect(first.json()).toMatchObject({
      objective: 'time',
      max_route_duration_s: 3600,
      max_stops_per_route: null,
      service_time_pickup_s: 180,
      service_time_dropoff_s: 120,
      iterations: null,
    });
    const dispatch = await t.as('dispatch');
    expect((await t.req(dispatch, { method: 'GET', url: SETTINGS })).statusCode).toBe(200);
    expect((await t.req(dispatch, { method: 'PATCH', url: SETTINGS, payload: { objective: 'distance' } })).statusCode).toBe(403);
    for (const payload of [
      {},
      { objective: 'fast' },
      { max_route_duration_s: 10 },
      { service_time_pickup_s: -1 },
      { max_stops_per_route: 1 },
      { colour: 'red' },
      { iterations: 1.5 },
    ]) {
      const res = await t.req(admin, { method: 'PATCH', url: SETTINGS, payload });
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
    }
    const res = await t.req(admin, {
      method: 'PATCH',
      url: SETTINGS,
      payload: { objective: 'balanced', max_stops_per_route: 8, iterations: 300 },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ objective: 'balanced', max_stops_per_route: 8, iterations: 300, max_route_duration_s: 3600 });
    const audit = await t.db.withSystem((tx) =>
      tx.query("SELECT after FROM audit_log WHERE action = 'dispatch_settings.updated' AND entity_id = $1", [t.demo.organizationId]),
    );
    expect(audit.rows).toHaveLength(1);
    expect(audit.rows[0].after).toMatchObject({ objective: 'balanced' });
    // back to the defaults for the tests below (null clears)
    const back = await t.req(admin, {
      method: 'PATCH',
      url: SETTINGS,
      payload: { objective: 'time', max_stops_per_route: null, iterations: null },
    });
    expect(back.json()).toMatchObject({ objective: 'time', max_stops_per_route: null, iterations: null });
  });

  it('plans with the settings, and the request overrides them', async () => {
    const { d, ids } = await fixture(2);
    await t.req(admin, { method: 'PATCH', url: SETTINGS, payload: { objective: 'distance', service_time_pickup_s: 30 } });
    const bySettings = await optimize({ trip_ids: ids, driver_ids: [d.id] });
    expect(bySettings.statusCode, bySettings.body).toBe(201);
    expect(bySettings.json().constraints).toMatchObject({
      objective: 'distance',
      service_time_pickup_s: 30,
      service_time_dropoff_s: 120,
      max_route_duration_s: 3600,
      speed_kmh: 25,
    });
    expect(bySettings.json().solver.objective).toBe('distance');
    const overridden = (
      await optimize({ trip_ids: ids, driver_ids: [d.id], objective: 'time', service_time_pickup_s: 0, service_time_dropoff_s: 0 })
    ).json();
    expect(overridden.constraints).toMatchObject({ objective: 'time', service_time_pickup_s: 0, service_time_dropoff_s: 0 });
    for (const r of overridden.routes as Route[])
      for (const s of r.stops) expect(s.departure_offset_s).toBeCloseTo(s.arrival_offset_s + s.wait_s, 0);
    await t.req(admin, { method: 'PATCH', url: SETTINGS, payload: { objective: 'time', service_time_pickup_s: 180 } });
  });
});

describe('constraints of a plan', () => {
  it('reports per stop the ETA, waiting and departure; service times count', async () => {
    const { d, ids } = await fixture(2);
    const plan = (await optimize({ trip_ids: ids, driver_ids: [d.id] })).json();
    const route = (plan.routes as Route[])[0];
    expect(route.stop_count).toBe(4);
    const plannedAt = new Date(plan.planned_at).getTime();
    for (const s of route.stops) {
      // arrival_offset_s is rounded to 0.1 s
      expect(Math.abs(new Date(s.eta).getTime() - plannedAt - s.arrival_offset_s * 1000)).toBeLessThanOrEqual(51);
      expect(s.departure_offset_s).toBeCloseTo(s.arrival_offset_s + s.wait_s + (s.kind === 'pickup' ? 180 : 120), 0);
    }
    expect(route.duration_s).toBe(route.stops[3].departure_offset_s);
    expect(plan.totals.mean_dropoff_s).toBeGreaterThan(0);
  });

  it('a trip ready later is picked up no earlier (the driver waits)', async () => {
    const { d, ids } = await fixture(1);
    const readyAt = new Date(Date.now() + 20 * 60_000).toISOString();
    const res = await optimize({ trip_ids: ids, driver_ids: [d.id], ready_times: [{ trip_id: ids[0], ready_at: readyAt }] });
    expect(res.statusCode, res.body).toBe(201);
    const pickup = (res.json().routes as Route[])[0].stops[0];
    expect(pickup.wait_s).toBeGreaterThan(0);
    expect(new Date(pickup.eta).getTime() + pickup.wait_s * 1000).toBeGreaterThanOrEqual(new Date(readyAt).getTime() - 1000);
    const dup = await optimize({
      trip_ids: ids,
      driver_ids: [d.id],
      ready_times: [
        { trip_id: ids[0], ready_at: readyAt },
        { trip_id: ids[0], ready_at: readyAt },
      ],
    });
    expect(dup.statusCode).toBe(400);
    expect((await optimize({ trip_ids: ids, ready_times: [{ trip_id: ids[0], ready_at: 'soon' }] })).statusCode).toBe(400);
  });

  it('leaves out, with a reason, what does not fit the route duration or the shift', async () => {
    const { d, ids } = await fixture(2);
    const short = (await optimize({ trip_ids: ids, driver_ids: [d.id], max_route_duration_s: 60 })).json();
    expect(short.totals.assigned).toBe(0);
    expect(short.unassigned.map((u: { reason: string }) => u.reason)).toEqual(['ROUTE_DURATION', 'ROUTE_DURATION']);
    expect(short.assignments).toEqual([]);
    const past = new Date(Date.now() - 60_000).toISOString();
    const ended = (await optimize({ trip_ids: ids, driver_ids: [d.id], shift_ends: [{ driver_id: d.id, shift_end_at: past }] })).json();
    expect(ended.unassigned.map((u: { reason: string }) => u.reason)).toEqual(['SHIFT_END', 'SHIFT_END']);
    // with time for one trip only (each takes about 8 minutes, service included), the other is ROUTES_FULL
    const oneTrip = (await optimize({ trip_ids: ids, driver_ids: [d.id], max_route_duration_s: 900 })).json();
    expect(oneTrip.totals.assigned).toBe(1);
    expect(oneTrip.unassigned[0].reason).toBe('ROUTES_FULL');
    for (const r of oneTrip.routes as Route[]) expect(r.duration_s).toBeLessThanOrEqual(900);
  });

  it('the same seed and iterations give the same plan', async () => {
    const a = await newDriver(t, { lon: -68.15, lat: -16.51 }, { capacity: 3 });
    const b = await newDriver(t, { lon: -68.12, lat: -16.5 }, { capacity: 3 });
    const ids: string[] = [];
    for (let i = 0; i < 8; i++) ids.push((await newTrip(t, admin, {}, near(i))).id);
    const body = { trip_ids: ids, driver_ids: [a.id, b.id], seed: 11, iterations: 200 };
    const strip = (p: { routes: Route[]; solver: Record<string, unknown> }) => ({
      routes: p.routes.map((r) => ({ ...r, ends_at: undefined, stops: r.stops.map((s) => ({ ...s, eta: undefined })) })),
      solver: { ...p.solver, elapsed_ms: undefined },
    });
    const first = (await optimize(body)).json();
    const second = (await optimize(body)).json();
    expect(first.solver).toMatchObject({ seed: 11, iteration_budget: 200 });
    expect(strip(second)).toEqual(strip(first));
  });
});
