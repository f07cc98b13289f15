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
import { mulberry32 } from './prng.js';
import { bruteForceOptimum } from './testing/brute-force.js';
import { randomInstance, type RandomInstance } from './testing/random-instances.js';

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
const order = (plan: Plan, driverId: string) => plan.routes.find((r) => r.driverId === driverId)!.stops.map((s) => `${s.tripId}.${s.kind}`);

describe('solve: feasibility (property)', () => {
  it('never breaks precedence, capacity, territory, the stop limit, ready times, route duration or shift ends, and accounts for every trip', () => {
    fc.assert(
      fc.property(randomInstance({ maxTrips: 12, maxDrivers: 4 }), fc.nat(1000), ({ problem, options: constraints }, seed) => {
        const options: OptimizerOptions = { ...constraints, seed, iterations: 150, timeBudgetMs: 60_000 };
        const plan = solve(problem, options);
        expect(validatePlan(problem, plan, options)).toEqual([]);
        expect(plan.totals.assigned + plan.totals.unassigned).toBe(problem.trips.length);
        expect(validatePlan(problem, greedyNearestDriver(problem, options), options)).toEqual([]);
      }),
      runs(80),
    );
  });

  it('leaves a trip out only for a reason that holds', () => {
    fc.assert(
      fc.property(randomInstance({ maxTrips: 10, maxDrivers: 3 }), ({ problem, options }) => {
        const plan = solve(problem, { ...options, iterations: 50 });
        for (const u of plan.unassigned) {
          const trip = problem.trips.find((t) => t.id === u.tripId)!;
          // a trip that one driver alone could serve is never left out for territory, capacity, duration or shift
          const alone = problem.drivers.some((d) => solve({ drivers: [d], trips: [trip] }, options).totals.assigned === 1);
          if (alone) expect(['MAX_STOPS', 'ROUTES_FULL']).toContain(u.reason);
          else expect(['MAX_STOPS', 'ROUTES_FULL']).not.toContain(u.reason);
          if (options.maxStopsPerRoute === undefined) expect(u.reason).not.toBe('MAX_STOPS');
        }
      }),
      runs(40),
    );
  });
});

describe('solve: determinism', () => {
  it('gives the same plan for the same seed and iterations (random instances)', () => {
    fc.assert(
      fc.property(randomInstance({ maxTrips: 12, maxDrivers: 4, minTrips: 4 }), fc.nat(1000), ({ problem, options }, seed) => {
        const first = solve(problem, { ...options, seed, iterations: 120, timeBudgetMs: 60_000 });
        const second = solve(problem, { ...options, seed, iterations: 120, timeBudgetMs: 60_000 });
        expect(second.stoppedBy).not.toBe('time');
        expect(withoutTiming(second)).toEqual(withoutTiming(first));
      }),
      runs(25),
    );
  });
});

describe('solve: optimality on small instances (exact brute force)', () => {
  const check = ({ problem, options }: RandomInstance) => {
    const plan = solve(problem, { ...options, seed: 7, iterations: 1000, timeBudgetMs: 60_000 });
    const optimum = bruteForceOptimum(problem, options);
    expect(validatePlan(problem, plan, options)).toEqual([]);
    expect(plan.totals.assigned, `optimum ${JSON.stringify(optimum.assignment)}`).toBe(optimum.assigned);
    expect(
      sameDistance(plan.cost, optimum.cost),
      `solver ${plan.cost} (${plan.objective}), optimum ${optimum.cost} with ${JSON.stringify(optimum.assignment)}`,
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
    const plan = solve(problem, { timeBudgetMs: 300, objective: 'distance', iterations: 100_000 });
    // The budget, not the iteration count, ended it (how long that took is the bench's business, not a test's).
    expect(plan.stoppedBy).toBe('time');
    expect(plan.iterations).toBeLessThan(100_000);
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
    const plan = solve(problem, { distance: manhattan, objective: 'distance' });
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
    const fromMatrix = solve(problem, { distance: { distances, durations }, objective: 'distance' });
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

describe('solve: times, limits and objectives', () => {
  const one = (extra: Partial<OptimizerProblem['trips'][number]> = {}): OptimizerProblem => ({
    drivers: [{ id: 'd', position: at(0, 0), capacity: 2 }],
    trips: [{ id: 'a', pickup: at(1000, 0), dropoff: at(1000, 2000), ...extra }],
  });

  it('waits at the pickup until the trip is ready, and adds the service times', () => {
    const options: OptimizerOptions = { speedKmh: 36, serviceTimePickupS: 120, serviceTimeDropoffS: 60 };
    const plan = solve(one({ readyAtS: 600 }), options);
    const [pickup, dropoff] = plan.routes[0].stops;
    const leg1 = road(at(0, 0), at(1000, 0)) / 10;
    const leg2 = road(at(1000, 0), at(1000, 2000)) / 10;
    expect(pickup.arrivalOffsetS).toBeCloseTo(leg1, 6);
    expect(pickup.waitS).toBeCloseTo(600 - leg1, 6);
    expect(pickup.departureOffsetS).toBeCloseTo(720, 6);
    expect(dropoff.arrivalOffsetS).toBeCloseTo(720 + leg2, 6);
    expect(plan.routes[0].durationS).toBeCloseTo(780 + leg2, 6);
    expect(plan.totals.sumDropoffS).toBeCloseTo(720 + leg2, 6);
    expect(validatePlan(one({ readyAtS: 600 }), plan, options)).toEqual([]);
    // the validator catches a pickup before the trip is ready
    const early = structuredClone(plan);
    early.routes[0].stops[0].waitS = 0;
    expect(validatePlan(one({ readyAtS: 600 }), early, options).join()).toMatch(/before it is ready/);
  });

  it('leaves out what cannot fit the route duration (ROUTE_DURATION) or the shift (SHIFT_END), with the reason', () => {
    const leg = (road(at(0, 0), at(1000, 0)) + road(at(1000, 0), at(1000, 2000))) / ((25 * 1000) / 3600);
    expect(solve(one(), { maxRouteDurationS: leg - 1 }).unassigned).toEqual([{ tripId: 'a', reason: 'ROUTE_DURATION' }]);
    expect(solve(one({ readyAtS: 3600 }), { maxRouteDurationS: 3600 }).unassigned).toEqual([{ tripId: 'a', reason: 'ROUTE_DURATION' }]);
    expect(solve(one(), { maxRouteDurationS: leg + 1 }).totals.assigned).toBe(1);
    const shift = (end: number): OptimizerProblem => ({ ...one(), drivers: [{ ...one().drivers[0], shiftEndS: end }] });
    expect(solve(shift(leg - 1), { maxRouteDurationS: 3600 }).unassigned).toEqual([{ tripId: 'a', reason: 'SHIFT_END' }]);
    expect(solve(shift(-60)).unassigned).toEqual([{ tripId: 'a', reason: 'SHIFT_END' }]);
    const ok = solve(shift(leg + 1));
    expect(ok.totals.assigned).toBe(1);
    // two trips, time for one: the other is ROUTES_FULL
    const two: OptimizerProblem = { ...one(), trips: [...one().trips, { id: 'b', pickup: at(-1000, 0), dropoff: at(-1000, -2000) }] };
    const plan = solve(two, { maxRouteDurationS: leg + 60 });
    expect(plan.totals.assigned).toBe(1);
    expect(plan.unassigned[0].reason).toBe('ROUTES_FULL');
    expect(validatePlan(two, plan, { maxRouteDurationS: leg + 60 })).toEqual([]);
    expect(validatePlan(two, plan, { maxRouteDurationS: leg - 60 }).join()).toMatch(/exceeds the maximum/);
  });

  it('time puts the customers first; distance takes the shortest routes', () => {
    // two trips from one restaurant going opposite ways. The driver at the restaurant can take both
    // (9 km, the second customer served at ~9 km); a second driver 4 km away makes 10 km in all but
    // serves that customer at ~7 km.
    const problem: OptimizerProblem = {
      drivers: [
        { id: 'near', position: at(0, 0), capacity: 2 },
        { id: 'far', position: at(0, 4000), capacity: 2 },
      ],
      trips: [
        { id: 'a', pickup: at(100, 0), dropoff: at(3000, 0) },
        { id: 'b', pickup: at(150, 0), dropoff: at(-3000, 0) },
      ],
    };
    const time = solve(problem, { objective: 'time' });
    const distance = solve(problem, { objective: 'distance' });
    // time: the far driver comes too; distance: one driver does both
    expect(time.routes.filter((r) => r.stops.length > 0)).toHaveLength(2);
    expect(distance.routes.filter((r) => r.stops.length > 0)).toHaveLength(1);
    expect(time.totals.sumDropoffS).toBeLessThan(distance.totals.sumDropoffS);
    expect(distance.totals.distanceM).toBeLessThan(time.totals.distanceM);
    for (const objective of ['time', 'balanced', 'distance'] as const) {
      const plan = solve(problem, { objective });
      expect(plan.objective).toBe(objective);
      expect(plan.cost).toBeCloseTo(bruteForceOptimum(problem, { objective }).cost, 6);
    }
  });

  it('counts iterations, reports the budget, the stop reason and a decreasing improvement curve', () => {
    const problem: OptimizerProblem = {
      drivers: Array.from({ length: 4 }, (_, i) => ({ id: `d${i}`, position: at(i * 900, -i * 700), capacity: 3 })),
      trips: Array.from({ length: 16 }, (_, i) => ({
        id: `t${i}`,
        pickup: at((i * 613) % 3000, (i * 377) % 2000),
        dropoff: at((i * 1231) % 5000, -((i * 911) % 4000)),
      })),
    };
    const plan = solve(problem, { iterations: 200, seed: 3 });
    expect(plan.iterationBudget).toBe(200);
    expect(plan.iterations).toBeGreaterThanOrEqual(200);
    expect(plan.iterations).toBeLessThanOrEqual(600);
    expect(['iterations', 'converged']).toContain(plan.stoppedBy);
    for (let k = 1; k < plan.curve.length; k++) {
      const [a, b] = [plan.curve[k - 1], plan.curve[k]];
      expect(b.assigned > a.assigned || (b.assigned === a.assigned && b.cost < a.cost)).toBe(true);
    }
    expect(solve(problem, { iterations: 0 }).iterations).toBe(0);
  });

  it('goes on past the budget a quarter at a time, up to 2.75×, only while the last half budget gained a trip or more than 0.5 %', () => {
    // crowded: 60 trips over 8 km, 10 drivers, a 40-minute cap: some trips stay out and the count climbs in steps
    const crowded = (seed: number): OptimizerProblem => {
      const rng = mulberry32(seed);
      const p = () => at((rng() - 0.5) * 8000, (rng() - 0.5) * 8000);
      return {
        drivers: Array.from({ length: 10 }, (_, i) => ({ id: `d${i}`, position: p(), capacity: 3 })),
        trips: Array.from({ length: 60 }, (_, i) => ({ id: `t${i}`, pickup: p(), dropoff: p() })),
      };
    };
    let extended = 0;
    let stoppedEarly = 0;
    for (const seed of [1, 2, 3]) {
      for (const budget of [120, 240]) {
        const plan = solve(crowded(seed), {
          seed,
          iterations: budget,
          maxRouteDurationS: 2400,
          serviceTimePickupS: 60,
          serviceTimeDropoffS: 60,
        });
        const quarter = Math.ceil(budget / 4);
        const half = Math.ceil(budget / 2);
        const bestAt = (it: number) => plan.curve.filter((c) => c.iteration <= it).at(-1)!;
        const improving = (it: number) =>
          bestAt(it).assigned > bestAt(it - half).assigned || bestAt(it).cost < bestAt(it - half).cost * (1 - 0.005);
        expect(plan.iterations).toBeLessThanOrEqual(2.75 * budget);
        if (plan.stoppedBy !== 'iterations') continue;
        expect((plan.iterations - budget) % quarter).toBe(0);
        // every extension was earned, and the run stopped because the last one was not (or at 2.75×)
        for (let it = budget; it < plan.iterations; it += quarter) expect(improving(it)).toBe(true);
        if (plan.iterations + quarter <= 2.75 * budget) expect(improving(plan.iterations)).toBe(false);
        if (plan.iterations > budget) extended++;
        if (plan.iterations < 2.75 * budget) stoppedEarly++;
      }
    }
    expect(extended).toBeGreaterThan(0);
    expect(stoppedEarly).toBeGreaterThan(0);
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
    expect(edit((p) => (routeWith(p).stops = routeWith(p).stops.filter((s) => s.tripId !== 'a'))).join()).toMatch(/trip a is missing/);
    expect(edit((p) => (p.totals.distanceM += 1)).join()).toMatch(/totals.distanceM/);
    expect(validatePlan(problem, plan, { maxStopsPerRoute: 1 }).join()).toMatch(/exceed 1/);
  });
});
