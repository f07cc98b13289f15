import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type Session, type TestApp } from '../helpers.js';
import { newDriver, newTrip, pt } from '../logistics/fixtures.js';

let t: TestApp;
let admin: Session;

const OPTIMIZE = '/admin/dispatch-batches/optimize';

beforeAll(async () => {
  t = await createTestApp();
  admin = await t.as('admin');
});
afterAll(() => t?.close());

const optimize = (payload: Record<string, unknown>) => t.req(admin, { method: 'POST', url: OPTIMIZE, payload });
const inMin = (m: number) => new Date(Date.now() + m * 60_000).toISOString();
const home = { lon: -68.15, lat: -16.51 };

interface Stop {
  trip_id: string;
  kind: 'pickup' | 'dropoff';
  wait_s: number;
  arrival_offset_s: number;
  load_after: number;
  weight_kg_after?: number;
}
interface Plan {
  routes: { driver_id: string; stops: Stop[] }[];
  unassigned: { trip_id: string; reason: string }[];
  assignments: unknown[];
  solver: { objective: string; algorithm: string };
}

describe('plans with windows, loads and vehicles', () => {
  it('leaves a trip whose window cannot be met unassigned TIME_WINDOW, and one larger than every vehicle CAPACITY (not an error)', async () => {
    const d = await newDriver(t, home, { capacity: 3 });
    // the drop-off 30 km away must be served within 10 minutes
    const late = await newTrip(t, admin, { dropoff_location: pt(home.lon + 0.28, home.lat), deliver_before: inMin(10) }, home);
    const heavy = await newTrip(t, admin, { weight_kg: 2000 }, home);
    const bulky = await newTrip(t, admin, { units: 5 }, home);
    const fine = await newTrip(t, admin, { weight_kg: 5, pickup_after: inMin(15) }, home);
    const res = await optimize({ trip_ids: [late.id, heavy.id, bulky.id, fine.id], driver_ids: [d.id] });
    expect(res.statusCode, res.body).toBe(201);
    const plan = res.json() as Plan;
    expect(plan.unassigned).toEqual(
      expect.arrayContaining([
        { trip_id: late.id, reason: 'TIME_WINDOW' },
        { trip_id: heavy.id, reason: 'CAPACITY' },
        { trip_id: bulky.id, reason: 'CAPACITY' },
      ]),
    );
    expect(plan.unassigned).toHaveLength(3);
    const stops = plan.routes[0]!.stops;
    const pickup = stops.find((s) => s.trip_id === fine.id && s.kind === 'pickup')!;
    // the pickup window opens in 15 minutes: the driver waits for it
    expect(pickup.arrival_offset_s + pickup.wait_s).toBeGreaterThanOrEqual(14 * 60);
    expect(pickup.weight_kg_after).toBe(5);
  });

  it('objective vehicles uses fewer routes than time, and the same seed gives the same plan', async () => {
    const a = await newDriver(t, home, { capacity: 2 });
    const b = await newDriver(t, home, { capacity: 2 });
    const ids = [
      (await newTrip(t, admin, { dropoff_location: pt(home.lon + 0.02, home.lat + 0.01) }, home)).id,
      (await newTrip(t, admin, { dropoff_location: pt(home.lon + 0.021, home.lat + 0.011) }, { lon: home.lon + 0.001, lat: home.lat })).id,
    ];
    const base = { trip_ids: ids, driver_ids: [a.id, b.id], seed: 7, iterations: 300 };
    const byTime = (await optimize({ ...base, objective: 'time' })).json() as Plan;
    const res = await optimize({ ...base, objective: 'vehicles' });
    expect(res.statusCode, res.body).toBe(201);
    const byVehicles = res.json() as Plan;
    expect(byVehicles.solver.objective).toBe('vehicles');
    expect(byVehicles.unassigned).toEqual([]);
    expect(byTime.routes).toHaveLength(2);
    expect(byVehicles.routes).toHaveLength(1);
    const again = (await optimize({ ...base, objective: 'vehicles' })).json() as Plan;
    const shape = (p: Plan) => p.routes.map((r) => [r.driver_id, r.stops.map((s) => `${s.trip_id}:${s.kind}`)]);
    expect(shape(again)).toEqual(shape(byVehicles));
    expect(again.assignments).toEqual(byVehicles.assignments);
  });

  it('refuses an unknown objective', async () => {
    expect((await optimize({ objective: 'fewest' })).statusCode).toBe(400);
  });
});
