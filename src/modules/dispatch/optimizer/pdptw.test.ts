import { describe, expect, it } from 'vitest';
import {
  OptimizerInputError,
  greedyNearestDriver,
  matrixPoints,
  solve,
  type DistanceMatrix,
  type LonLat,
  type OptimizerOptions,
  type OptimizerProblem,
  type Plan,
} from './index.js';

/** Points on a plane (x, y in metres), with Euclidean distances and 1 m/s as the custom matrix of a problem. */
const xy = (x: number, y: number): LonLat => ({ lon: x / 1e4, lat: y / 1e4 });
function plane(problem: OptimizerProblem): DistanceMatrix {
  const points = matrixPoints(problem);
  const m = points.length;
  const distances = new Float64Array(m * m);
  for (let a = 0; a < m; a++)
    for (let b = 0; b < m; b++)
      distances[a * m + b] = Math.hypot((points[a].lon - points[b].lon) * 1e4, (points[a].lat - points[b].lat) * 1e4);
  return { distances, durations: distances };
}
const solvePlane = (problem: OptimizerProblem, options: OptimizerOptions = {}) =>
  solve(problem, { iterations: 400, timeBudgetMs: 60_000, ...options, distance: plane(problem) });
const used = (plan: Plan) => plan.routes.filter((r) => r.stops.length > 0);
const stopOf = (plan: Plan, tripId: string, kind: 'pickup' | 'dropoff') =>
  plan.routes.flatMap((r) => r.stops).find((s) => s.tripId === tripId && s.kind === kind)!;

describe('time-window solver', () => {
  it('serves each stop within its window, waiting when early, and leaves a trip that cannot make its window unassigned with TIME_WINDOW', () => {
    const problem: OptimizerProblem = {
      drivers: [{ id: 'd1', position: xy(0, 0), capacity: 5 }],
      trips: [
        {
          id: 'early-wait',
          pickup: xy(10, 0),
          dropoff: xy(20, 0),
          pickupAfterS: 100,
          pickupBeforeS: 200,
          deliverAfterS: 300,
          deliverBeforeS: 400,
        },
        { id: 'tight', pickup: xy(0, 10), dropoff: xy(0, 20), pickupBeforeS: 500, deliverBeforeS: 600 },
        // 1,000 m away and due after 50 s: impossible even alone
        { id: 'impossible', pickup: xy(1000, 0), dropoff: xy(1010, 0), pickupBeforeS: 50 },
      ],
    };
    const plan = solvePlane(problem);
    expect(plan.unassigned).toEqual([{ tripId: 'impossible', reason: 'TIME_WINDOW' }]);
    const pickup = stopOf(plan, 'early-wait', 'pickup');
    const dropoff = stopOf(plan, 'early-wait', 'dropoff');
    expect(pickup.arrivalOffsetS + pickup.waitS).toBeGreaterThanOrEqual(100);
    expect(pickup.arrivalOffsetS + pickup.waitS).toBeLessThanOrEqual(200);
    expect(dropoff.arrivalOffsetS + dropoff.waitS).toBeGreaterThanOrEqual(300);
    expect(dropoff.waitS).toBeGreaterThan(0);
    expect(dropoff.arrivalOffsetS + dropoff.waitS).toBeLessThanOrEqual(400);
    for (const s of used(plan).flatMap((r) => r.stops)) {
      const trip = problem.trips.find((t) => t.id === s.tripId)!;
      const start = s.arrivalOffsetS + s.waitS;
      if (s.kind === 'pickup') expect(start).toBeLessThanOrEqual(trip.pickupBeforeS ?? Infinity);
      else expect(start).toBeLessThanOrEqual(trip.deliverBeforeS ?? Infinity);
    }
  });

  it("scales each vehicle's travel times by its speed factor: the fast vehicle makes a window the slow one cannot, alone it is TIME_WINDOW", () => {
    // the bicycle starts next to the trip, the car 300 m away; the drop-off is due 700 s from now, 600 m past the pickup
    const trip = { id: 'due', pickup: xy(100, 0), dropoff: xy(700, 0), deliverBeforeS: 700 };
    const bike = { id: 'bike', position: xy(90, 0), capacity: 2, speedFactor: 0.5 };
    const car = { id: 'car', position: xy(400, 0), capacity: 8, speedFactor: 2 };
    const both = solvePlane({ drivers: [bike, car], trips: [trip] });
    expect(both.unassigned).toEqual([]);
    expect(used(both).map((r) => r.driverId)).toEqual(['car']);
    // the car covers 300 + 600 m at 2 m/s
    expect(stopOf(both, 'due', 'dropoff').arrivalOffsetS).toBeCloseTo(450, 6);
    // at 0.5 m/s the bicycle needs 20 + 1,200 s
    expect(solvePlane({ drivers: [bike], trips: [trip] }).unassigned).toEqual([{ tripId: 'due', reason: 'TIME_WINDOW' }]);
    // factor 1 everywhere is the plain solve, stop for stop
    const plain = solvePlane({ drivers: [{ ...bike, speedFactor: undefined }], trips: [{ ...trip, deliverBeforeS: 2000 }] });
    const one = solvePlane({ drivers: [{ ...bike, speedFactor: 1 }], trips: [{ ...trip, deliverBeforeS: 2000 }] });
    expect(one.routes).toEqual(plain.routes);
    expect(() => solvePlane({ drivers: [{ ...bike, speedFactor: 0 }], trips: [trip] })).toThrow(OptimizerInputError);
  });

  it('keeps every load dimension within the vehicle along the route, and a load larger than every vehicle is unassigned with CAPACITY', () => {
    const problem: OptimizerProblem = {
      drivers: [
        { id: 'van', position: xy(0, 0), capacity: 40, capacityWeightKg: 100, capacityVolumeL: 500 },
        { id: 'bike', position: xy(5, 0), capacity: 2, capacityWeightKg: 15, capacityVolumeL: 40 },
      ],
      trips: [
        { id: 'a', pickup: xy(10, 0), dropoff: xy(50, 0), units: 1, weightKg: 60, volumeL: 100 },
        { id: 'b', pickup: xy(12, 0), dropoff: xy(52, 0), units: 1, weightKg: 60, volumeL: 100 },
        { id: 'c', pickup: xy(11, 0), dropoff: xy(51, 0), units: 1, weightKg: 5, volumeL: 30 },
        { id: 'piano', pickup: xy(10, 5), dropoff: xy(20, 5), units: 1, weightKg: 300 },
      ],
    };
    const plan = solvePlane(problem, { objective: 'distance' });
    expect(plan.unassigned).toEqual([{ tripId: 'piano', reason: 'CAPACITY' }]);
    const caps = new Map(problem.drivers.map((d) => [d.id, d]));
    for (const r of used(plan)) {
      const d = caps.get(r.driverId)!;
      for (const s of r.stops) {
        expect(s.loadAfter).toBeLessThanOrEqual(d.capacity);
        expect(s.weightKgAfter!).toBeLessThanOrEqual(d.capacityWeightKg!);
        expect(s.volumeLAfter!).toBeLessThanOrEqual(d.capacityVolumeL!);
      }
    }
    // a and b (60 kg each) never ride together: 120 kg is over the van's 100
    const van = plan.routes.find((r) => r.driverId === 'van')!;
    expect(Math.max(...van.stops.map((s) => s.weightKgAfter!))).toBeLessThanOrEqual(100);
    expect(plan.totals.assigned).toBe(3);
  });

  it('starts a route at its hub no earlier than it opens, drives back there before it closes (else TIME_WINDOW), and counts the way back', () => {
    const hub = xy(0, 0);
    const problem: OptimizerProblem = {
      drivers: [{ id: 'd1', position: hub, returnTo: hub, capacity: 10, startAtS: 1000, shiftEndS: 1300 }],
      trips: [
        { id: 'near', pickup: xy(30, 0), dropoff: xy(60, 0), serviceTimePickupS: 10, serviceTimeDropoffS: 20 },
        // reachable, but not back at the hub by 1,300 s
        { id: 'far', pickup: xy(100, 0), dropoff: xy(200, 0) },
      ],
    };
    const plan = solvePlane(problem);
    expect(plan.unassigned.map((u) => u.tripId)).toEqual(['far']);
    // the hub's closing is a window of the return
    expect(plan.unassigned[0].reason).toBe('TIME_WINDOW');
    // the same end of the day without a return to a hub is a shift end
    const open = solvePlane({ ...problem, drivers: [{ ...problem.drivers[0], returnTo: undefined, shiftEndS: 1150 }] });
    expect(open.unassigned).toEqual([{ tripId: 'far', reason: 'SHIFT_END' }]);
    const [route] = used(plan);
    expect(route.stops[0].arrivalOffsetS).toBeCloseTo(1030, 6);
    expect(route.stops[0].departureOffsetS).toBeCloseTo(1040, 6);
    expect(route.stops[1].departureOffsetS).toBeCloseTo(1090, 6);
    expect(route.returnArrivalS).toBeCloseTo(1150, 6);
    expect(route.durationS).toBeCloseTo(1150, 6);
    expect(route.distanceM).toBeCloseTo(120, 6);
  });

  it('objective vehicles uses the fewest routes, where distance would use more', () => {
    const problem: OptimizerProblem = {
      drivers: [
        { id: 'west', position: xy(0, 0), capacity: 5, startAtS: 0 },
        { id: 'east', position: xy(100, 0), capacity: 5, startAtS: 0 },
      ],
      trips: [
        { id: 'w', pickup: xy(1, 0), dropoff: xy(2, 0) },
        { id: 'e', pickup: xy(101, 0), dropoff: xy(102, 0) },
      ],
    };
    expect(used(solvePlane(problem, { objective: 'distance' }))).toHaveLength(2);
    const plan = solvePlane(problem, { objective: 'vehicles' });
    expect(used(plan)).toHaveLength(1);
    expect(plan.totals.assigned).toBe(2);
    expect(plan.algorithm).toBe('pdptw-lns');
  });

  it('gives the same plan for the same seed and iterations', () => {
    const problem: OptimizerProblem = {
      drivers: Array.from({ length: 4 }, (_, i) => ({ id: `d${i}`, position: xy(0, 0), returnTo: xy(0, 0), capacity: 3 })),
      trips: Array.from({ length: 14 }, (_, i) => ({
        id: `t${i}`,
        pickup: xy((i * 37) % 100, (i * 53) % 100),
        dropoff: xy((i * 71) % 100, (i * 29) % 100),
        pickupAfterS: (i * 13) % 200,
        deliverBeforeS: 900,
      })),
    };
    const a = solvePlane(problem, { objective: 'vehicles', seed: 7, iterations: 300 });
    const b = solvePlane(problem, { objective: 'vehicles', seed: 7, iterations: 300 });
    expect({ ...a, elapsedMs: 0 }).toEqual({ ...b, elapsedMs: 0 });
    expect(a.totals.assigned).toBe(14);
  });

  it('stops each phase at its share of the time ceiling and still returns a complete, feasible plan', () => {
    const hub = xy(0, 0);
    const problem: OptimizerProblem = {
      drivers: Array.from({ length: 4 }, (_, i) => ({ id: `d${i}`, position: hub, returnTo: hub, capacity: 3 })),
      trips: Array.from({ length: 10 }, (_, i) => ({ id: `t${i}`, pickup: xy(10 * i, 5), dropoff: xy(10 * i, 15), deliverBeforeS: 2000 })),
    };
    const plan = solvePlane(problem, { objective: 'vehicles', iterations: 10_000_000, timeBudgetMs: 50 });
    expect(plan.stoppedBy).toBe('time');
    expect(plan.iterations).toBeLessThan(10_000_000);
    expect(plan.totals.assigned).toBe(10);
    for (const r of used(plan)) expect(r.returnArrivalS!).toBeGreaterThan(0);
  });

  it('the greedy baseline reads a matrix that covers the return points with the right stride', () => {
    const problem: OptimizerProblem = {
      drivers: [{ id: 'd1', position: xy(0, 0), returnTo: xy(0, 0), capacity: 2 }],
      trips: [
        { id: 'a', pickup: xy(30, 40), dropoff: xy(30, 0) },
        { id: 'b', pickup: xy(0, 10), dropoff: xy(0, 20) },
      ],
    };
    const plan = greedyNearestDriver(problem, { distance: plane(problem) });
    const legs = [50, 90, 90 + Math.sqrt(1000), 100 + Math.sqrt(1000)];
    plan.routes[0].stops.forEach((s, i) => expect(s.cumulativeDistanceM).toBeCloseTo(legs[i], 9));
  });

  it('rejects a window that ends before it starts, negative loads and a matrix of the wrong size', () => {
    const base = { id: 't', pickup: xy(0, 0), dropoff: xy(1, 1) };
    const drivers = [{ id: 'd', position: xy(0, 0), returnTo: xy(0, 0), capacity: 1 }];
    expect(() => solve({ drivers, trips: [{ ...base, pickupAfterS: 100, pickupBeforeS: 50 }] })).toThrow(OptimizerInputError);
    expect(() => solve({ drivers, trips: [{ ...base, deliverAfterS: 100, deliverBeforeS: 50 }] })).toThrow(OptimizerInputError);
    expect(() => solve({ drivers, trips: [{ ...base, weightKg: -1 }] })).toThrow(OptimizerInputError);
    // the matrix covers the return point too: 2 trip points + start + return
    const three = { distances: new Float64Array(9) };
    expect(() => solve({ drivers, trips: [base] }, { distance: three })).toThrow(OptimizerInputError);
    expect(matrixPoints({ drivers, trips: [base] })).toHaveLength(4);
  });
});
