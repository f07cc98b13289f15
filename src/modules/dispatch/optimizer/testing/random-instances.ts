import fc from 'fast-check';
import { mulberry32 } from '../prng.js';
import type { Objective, OptimizerOptions, OptimizerProblem } from '../types.js';

const coord = (center: number, spread: number) => fc.integer({ min: -1000, max: 1000 }).map((v) => center + (v / 1000) * spread);
const point = (spread: number) => fc.record({ lon: coord(-68.13, spread), lat: coord(-16.5, spread) });

export interface RandomInstance {
  problem: OptimizerProblem;
  /** The constraints and objective of the instance (also what validatePlan and the brute force need). */
  options: Pick<OptimizerOptions, 'maxStopsPerRoute' | 'maxRouteDurationS' | 'serviceTimePickupS' | 'serviceTimeDropoffS' | 'objective'>;
}

/**
 * Small random problems in a city (points within about `spread` degrees, default 0.03 ≈ 3 km):
 * capacities 1..4, optional current load, territories, rejected drivers, ready times, shift ends,
 * and, per instance, optional stop limit, route duration cap, service times and any objective.
 */
export function randomInstance(opts: { maxTrips: number; maxDrivers: number; minTrips?: number; spread?: number }) {
  const spread = opts.spread ?? 0.03;
  const territory = fc.option(fc.constantFrom('t1', 't2'), { nil: undefined });
  const driver = fc.record({
    position: point(spread),
    capacity: fc.integer({ min: 1, max: 4 }),
    currentLoad: fc.option(fc.integer({ min: 0, max: 1 }), { nil: undefined }),
    territoryIds: fc.option(fc.subarray(['t1', 't2'], { minLength: 1 }), { nil: undefined }),
    shiftEndS: fc.option(fc.integer({ min: 300, max: 3600 }), { nil: undefined, freq: 3 }),
  });
  const trip = fc.record({
    pickup: point(spread),
    dropoff: point(spread),
    territoryId: territory,
    readyAtS: fc.option(fc.integer({ min: 0, max: 1500 }), { nil: undefined, freq: 2 }),
    excludesFirstDriver: fc.integer({ min: 0, max: 9 }).map((v) => v === 0),
  });
  return fc
    .record({
      drivers: fc.array(driver, { minLength: 1, maxLength: opts.maxDrivers }),
      trips: fc.array(trip, { minLength: opts.minTrips ?? 0, maxLength: opts.maxTrips }),
      maxStopsPerRoute: fc.option(fc.constantFrom(2, 4, 6), { nil: undefined, freq: 3 }),
      maxRouteDurationS: fc.option(fc.constantFrom(900, 1800, 3600), { nil: undefined, freq: 3 }),
      serviceTimePickupS: fc.option(fc.constantFrom(60, 180), { nil: undefined }),
      serviceTimeDropoffS: fc.option(fc.constantFrom(60, 120), { nil: undefined }),
      objective: fc.option(fc.constantFrom<Objective>('time', 'balanced', 'distance'), { nil: undefined }),
    })
    .map(({ drivers, trips, ...options }): RandomInstance => ({
      problem: {
        drivers: drivers.map((d, i) => ({ id: `d${i}`, ...stripUndefined(d) })),
        trips: trips.map(({ excludesFirstDriver, ...t }, i) => ({
          id: `t${i}`,
          ...stripUndefined(t),
          ...(excludesFirstDriver ? { excludedDriverIds: ['d0'] } : {}),
        })),
      },
      options: stripUndefined(options),
    }));
}

function stripUndefined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}

/**
 * A seeded problem over a 10 km square of La Paz, for solves compared between threads: `trips` trips and `drivers`
 * drivers, capacity 3 unless `capacity` says per driver, ready now unless `readyAtS` says per trip.
 */
export function seededInstance(
  trips: number,
  drivers: number,
  seed: number,
  shape: { capacity?: (i: number) => number; readyAtS?: (i: number) => number | undefined } = {},
): OptimizerProblem {
  const rng = mulberry32(seed);
  const at = () => ({ lon: -68.17 + rng() * 0.09, lat: -16.54 + rng() * 0.09 });
  return {
    trips: Array.from({ length: trips }, (_, i) => ({ id: `t${i}`, pickup: at(), dropoff: at(), readyAtS: shape.readyAtS?.(i) })),
    drivers: Array.from({ length: drivers }, (_, i) => ({ id: `d${i}`, position: at(), capacity: shape.capacity?.(i) ?? 3 })),
  };
}
