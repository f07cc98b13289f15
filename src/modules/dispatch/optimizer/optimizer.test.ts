import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { haversineMeters, type LonLat } from '../../../platform/geo.js';
import {
  OptimizerInputError,
  greedyNearestDriver,
  matrixPoints,
  solve,
  validatePlan,
  type OptimizerOptions,
  type OptimizerProblem,
  type Plan,
} from './index.js';
import { bruteForceOptimum } from './testing/brute-force.js';
import { randomInstance } from './testing/random-instances.js';

// Fixed fast-check seed so CI is reproducible; FUZZ_RUNS=n explores n fresh random instances.
const fuzzRuns = process.env.FUZZ_RUNS ? Number(process.env.FUZZ_RUNS) : undefined;
const runs = (n: number) => ({ numRuns: fuzzRuns ?? n, ...(fuzzRuns ? {} : { seed: 20_260_101 }) });

/** A point `east` and `north` metres from the La Paz reference point. */
const at = (east: number, north: number): LonLat => ({
  lon: -68.1193 + east / (111_320 * Math.cos((16.4897 * Math.PI) / 180)),
  lat: -16.4897 + north / 111_320,
});
const road = (a: LonLat, b: LonLat) => haversineMeters(a, b) * 1.3;
const sameDistance = (a: number, b: number) => Math.abs(a - b) <= 1e-6 * Math.max(1, a, b);
const withoutTiming = (plan: Plan) => ({ ...plan, elapsedMs: 0 });
const order = (plan: Plan, driverId: string) =>
  plan.routes.find((r) => r.driverId === driverId)!.stops.map((s) => `${s.tripId}.${s.kind}`);

describe('solve: feasibility (property)', () => {
  it('never breaks precedence, capacity, territory or the stop limit, and accounts for every trip', () => {
    fc.assert(
      fc.property(randomInstance({ maxTrips: 12, maxDrivers: 4 }), fc.nat(1000), ({ problem, maxStopsPerRoute }, seed) => {
        const options: OptimizerOptions = { seed, maxStopsPerRoute, maxIterations: 150, timeBudgetMs: 5000 };
        const plan = solve(problem, options);
        expect(validatePlan(problem, plan, options)).toEqual([]);
        expect(plan.totals.assigned + plan.totals.unassigned).toBe(problem.trips.length);
        expect(validatePlan(problem, greedyNearestDriver(problem, options), options)).toEqual([]);
      }),
      runs(80),
    );
  });

  it('assigns every trip when some compatible driver has room and there is no stop limit', () => {
    fc.assert(
      fc.property(randomInstance({ maxTrips: 10, maxDrivers: 3 }), ({ problem }) => {
        const plan = solve(problem, { maxIterations: 50 });
        for (const u of plan.unassigned) expect(['CAPACITY', 'NO_DRIVER_IN_TERRITORY']).toContain(u.reason);
      }),
      runs(40),
    );
  });
});

describe('solve: optimality on small instances (exact brute force)', () => {
  const check = ({ problem, maxStopsPerRoute }: { problem: OptimizerProblem; maxStopsPerRoute?: number }) => {
    const plan = solve(problem, { seed: 7, maxStopsPerRoute, timeBudgetMs: 30_000 });
    const optimum = bruteForceOptimum(problem, { maxStopsPerRoute });
    expect(validatePlan(problem, plan, { maxStopsPerRoute })).toEqual([]);
    expect(plan.totals.assigned).toBe(optimum.assigned);
    expect(
      sameDistance(plan.totals.distanceM, optimum.distanceM),
      `solver ${plan.totals.distanceM} m, optimum ${optimum.distanceM} m with ${JSON.stringify(optimum.assignment)}`,
    ).toBe(true);
  };

  it('matches the optimum on random instances of up to 5 trips and 3 drivers', () => {
    fc.assert(fc.property(randomInstance({ maxTrips: 5, maxDrivers: 3, minTrips: 1 }), check), runs(50));
  });

  it('matches the optimum on random instances of 6 to 7 trips and 3 drivers', () => {
    fc.assert(fc.property(randomInstance({ maxTrips: 7, maxDrivers: 3, minTrips: 6 }), check), runs(6));
  });

  it('interleaves trips when capacity allows it, and cannot when capacity is 1', () => {
    const problem = (capacity: number): OptimizerProblem => ({
      drivers: [{ id: 'd', position: at(0, 0), capacity }],
      trips: [
        { id: 'a', pickup: at(100, 0), dropoff: at(5000, 0) },
        { id: 'b', pickup: at(150, 0), dropoff: at(5050, 0) },
      ],
    });
    const batched = solve(problem(2));
    expect(order(batched, 'd')).toEqual(['a.pickup', 'b.pickup', 'a.dropoff', 'b.dropoff']);
    expect(batched.totals.distanceM).toBeCloseTo(bruteForceOptimum(problem(2)).distanceM, 6);
    const single = solve(problem(1));
    expect(single.routes[0].stops.map((s) => s.loadAfter)).toEqual([1, 0, 1, 0]);
    expect(single.totals.distanceM).toBeGreaterThan(batched.totals.distanceM + 9000);
  });
});

describe('solve: objective and reasons', () => {
  it('prefers more assigned trips over a shorter total distance', () => {
    // Route limit of one trip each. Nearest-driver thinking gives trip x to driver "any" and leaves
    // trip y (territory north) unassigned; the optimum sends "south-only" far away to take x.
    const problem: OptimizerProblem = {
      drivers: [
        { id: 'any', position: at(0, 0), capacity: 1, territoryIds: ['south', 'north'] },
        { id: 'south-only', position: at(8000, 0), capacity: 1, territoryIds: ['south'] },
      ],
      trips: [
        { id: 'x', pickup: at(100, 0), dropoff: at(200, 0), territoryId: 'south' },
        { id: 'y', pickup: at(0, 6000), dropoff: at(0, 6500), territoryId: 'north' },
      ],
    };
    const options = { maxStopsPerRoute: 2 };
    const plan = solve(problem, options);
    expect(plan.totals.assigned).toBe(2);
    expect(order(plan, 'any')).toEqual(['y.pickup', 'y.dropoff']);
    expect(order(plan, 'south-only')).toEqual(['x.pickup', 'x.dropoff']);
    const shortestWithOne = road(at(0, 0), at(100, 0)) + road(at(100, 0), at(200, 0));
    expect(plan.totals.distanceM).toBeGreaterThan(shortestWithOne);
    expect(greedyNearestDriver(problem, options).totals.assigned).toBe(1);
    expect(bruteForceOptimum(problem, options).assigned).toBe(2);
  });

  it('gives the reason a trip is left out', () => {
    const trip = (id: string, territoryId?: string) => ({ id, pickup: at(0, 100), dropoff: at(0, 900), territoryId });
    expect(solve({ drivers: [], trips: [trip('t')] }).unassigned).toEqual([{ tripId: 't', reason: 'NO_DRIVERS' }]);

    const plan = solve(
      {
        drivers: [
          { id: 'full', position: at(0, 0), capacity: 2, currentLoad: 2, territoryIds: ['full-zone'] },
          { id: 'open', position: at(50, 0), capacity: 3, territoryIds: ['open-zone'] },
        ],
        trips: [trip('nowhere', 'elsewhere'), trip('capacity', 'full-zone'), trip('one', 'open-zone'), trip('two', 'open-zone')],
      },
      { maxStopsPerRoute: 2 },
    );
    const reasons = Object.fromEntries(plan.unassigned.map((u) => [u.tripId, u.reason]));
    expect(plan.totals.assigned).toBe(1);
    expect(reasons.nowhere).toBe('NO_DRIVER_IN_TERRITORY');
    expect(reasons.capacity).toBe('CAPACITY');
    expect(Object.values(reasons).filter((r) => r === 'MAX_STOPS')).toHaveLength(1);
    expect(plan.totals.unassigned).toBe(3);
  });

  it('counts the load already on board against capacity', () => {
    const problem: OptimizerProblem = {
      drivers: [{ id: 'd', position: at(0, 0), capacity: 2, currentLoad: 1 }],
      trips: [
        { id: 'a', pickup: at(100, 0), dropoff: at(5000, 0) },
        { id: 'b', pickup: at(150, 0), dropoff: at(5050, 0) },
      ],
    };
    const plan = solve(problem);
    expect(plan.routes[0].stops.map((s) => s.loadAfter)).toEqual([2, 1, 2, 1]);
    expect(validatePlan(problem, plan)).toEqual([]);
  });
});

describe('solve: determinism, time budget, distances', () => {
  const city = (trips: number, drivers: number): OptimizerProblem => ({
    trips: Array.from({ length: trips }, (_, i) => ({
      id: `t${i}`,
      pickup: at(((i * 7919) % 3000) - 1500, ((i * 104729) % 2000) - 1000),
      dropoff: at(((i * 3571) % 9000) - 4500, ((i * 7561) % 8000) - 4000),
    })),
    drivers: Array.from({ length: drivers }, (_, i) => ({
      id: `d${i}`,
      position: at(((i * 2713) % 8000) - 4000, ((i * 6151) % 8000) - 4000),
      capacity: 2 + (i % 3),
    })),
  });

  it('gives the same plan for the same seed (a converging instance)', () => {
    const problem = city(20, 4);
    const first = solve(problem, { seed: 42, timeBudgetMs: 60_000 });
    const second = solve(problem, { seed: 42, timeBudgetMs: 60_000 });
    expect(withoutTiming(second)).toEqual(withoutTiming(first));
    expect(first.seed).toBe(42);
    expect(first.iterations).toBeGreaterThan(0);
    expect(first.iterations).toBeLessThan(200_000);
  });

  it('stops at the time budget on a large instance and still returns a valid plan', () => {
    const problem = city(300, 30);
    const started = performance.now();
    const plan = solve(problem, { timeBudgetMs: 300 });
    expect(performance.now() - started).toBeLessThan(300 + 1500);
    expect(validatePlan(problem, plan)).toEqual([]);
    expect(plan.totals.assigned).toBe(300);
    expect(plan.totals.distanceM).toBeLessThan(greedyNearestDriver(problem).totals.distanceM);
  });

  it('starts each route at the driver and reports cumulative distance and arrival offsets', () => {
    const problem: OptimizerProblem = {
      drivers: [{ id: 'd', position: at(0, 0), capacity: 1 }],
      trips: [{ id: 'a', pickup: at(1000, 0), dropoff: at(1000, 2000) }],
    };
    const plan = solve(problem, { speedKmh: 36 });
    const [pickup, dropoff] = plan.routes[0].stops;
    const first = road(at(0, 0), at(1000, 0));
    const second = road(at(1000, 0), at(1000, 2000));
    expect(pickup.cumulativeDistanceM).toBeCloseTo(first, 6);
    expect(pickup.arrivalOffsetS).toBeCloseTo(first / 10, 6);
    expect(dropoff.cumulativeDistanceM).toBeCloseTo(first + second, 6);
    expect(plan.routes[0].durationS).toBeCloseTo((first + second) / 10, 6);
    expect(plan.totals.distanceM).toBeCloseTo(first + second, 6);
  });

  it('uses a pluggable distance function or a precomputed matrix with durations', () => {
    const problem = city(6, 2);
    const manhattan = (a: LonLat, b: LonLat) => (Math.abs(a.lon - b.lon) + Math.abs(a.lat - b.lat)) * 100_000;
    const plan = solve(problem, { distance: manhattan });
    for (const route of plan.routes) {
      let prev = problem.drivers.find((d) => d.id === route.driverId)!.position;
      let sum = 0;
      for (const stop of route.stops) {
        sum += manhattan(prev, stop.position);
        prev = stop.position;
      }
      expect(route.distanceM).toBeCloseTo(sum, 6);
    }

    const points = matrixPoints(problem);
    const n = points.length;
    const distances = new Float64Array(n * n);
    const durations = new Float64Array(n * n);
    points.forEach((a, i) =>
      points.forEach((b, j) => {
        distances[i * n + j] = manhattan(a, b);
        durations[i * n + j] = i === j ? 0 : 60;
      }),
    );
    const fromMatrix = solve(problem, { distance: { distances, durations } });
    expect(fromMatrix.totals.distanceM).toBeCloseTo(plan.totals.distanceM, 6);
    for (const route of fromMatrix.routes) expect(route.durationS).toBe(60 * route.stops.length);
    expect(() => solve(problem, { distance: { distances: new Float64Array(4) } })).toThrow(OptimizerInputError);
  });

  it('refuses malformed problems', () => {
    const trip = { id: 't', pickup: at(0, 0), dropoff: at(10, 0) };
    const driver = { id: 'd', position: at(0, 0), capacity: 1 };
    expect(() => solve({ drivers: [driver], trips: [trip, trip] })).toThrow(/duplicate trip id/);
    expect(() => solve({ drivers: [driver, driver], trips: [] })).toThrow(/duplicate driver id/);
    expect(() => solve({ drivers: [{ ...driver, capacity: 1.5 }], trips: [] })).toThrow(/capacity/);
    expect(() => solve({ drivers: [driver], trips: [{ ...trip, pickup: { lon: 200, lat: 0 } }] })).toThrow(/invalid/);
    expect(() => solve({ drivers: [driver], trips: [] }, { speedKmh: 0 })).toThrow(/speedKmh/);
  });
});

describe('validatePlan', () => {
  const problem: OptimizerProblem = {
    drivers: [
      { id: 'd', position: at(0, 0), capacity: 1, territoryIds: ['z'] },
      { id: 'e', position: at(10, 0), capacity: 2 },
    ],
    trips: [
      { id: 'a', pickup: at(100, 0), dropoff: at(900, 0), territoryId: 'z' },
      { id: 'b', pickup: at(120, 0), dropoff: at(950, 0), territoryId: 'z' },
    ],
  };
  const plan = solve(problem);
  const edit = (change: (p: Plan) => void): string[] => {
    const copy = structuredClone(plan);
    change(copy);
    return validatePlan(problem, copy);
  };
  const routeWith = (p: Plan) => p.routes.find((r) => r.stops.length > 0)!;

  it('accepts the solver plan', () => {
    expect(plan.totals.assigned).toBe(2);
    expect(validatePlan(problem, plan)).toEqual([]);
  });

  it('reports a dropoff before its pickup', () => {
    expect(edit((p) => routeWith(p).stops.reverse()).join()).toMatch(/dropped off before its pickup/);
  });

  it('reports a load over capacity', () => {
    const errors = edit((p) => {
      const stops = p.routes.flatMap((r) => r.stops);
      const stop = (tripId: string, kind: string) => stops.find((s) => s.tripId === tripId && s.kind === kind)!;
      for (const route of p.routes) route.stops = [];
      // both trips on board of "d" (capacity 1) at once
      p.routes.find((r) => r.driverId === 'd')!.stops = [
        stop('a', 'pickup'),
        stop('b', 'pickup'),
        stop('a', 'dropoff'),
        stop('b', 'dropoff'),
      ];
    });
    expect(errors.join()).toMatch(/driver d: load 2 over capacity 1/);
  });

  it('reports a trip outside the driver territories, a missing trip and wrong totals', () => {
    const dFull: OptimizerProblem = { ...problem, drivers: [{ ...problem.drivers[0], currentLoad: 1 }, problem.drivers[1]] };
    const allOnE = solve(dFull);
    expect(order(allOnE, 'e')).toHaveLength(4);
    const eElsewhere = { ...dFull, drivers: [dFull.drivers[0], { ...dFull.drivers[1], territoryIds: ['other'] }] };
    expect(validatePlan(eElsewhere, allOnE).join()).toMatch(/trip a \(territory z\) outside the territories of driver e/);
    expect(edit((p) => (routeWith(p).stops = routeWith(p).stops.filter((s) => s.tripId !== 'a'))).join()).toMatch(
      /trip a is missing/,
    );
    expect(edit((p) => (p.totals.distanceM += 1)).join()).toMatch(/totals.distanceM/);
    expect(validatePlan(problem, plan, { maxStopsPerRoute: 1 }).join()).toMatch(/exceed 1/);
  });
});
