import fc from 'fast-check';
import type { OptimizerProblem } from '../types.js';

const coord = (center: number, spread: number) =>
  fc.integer({ min: -1000, max: 1000 }).map((v) => center + (v / 1000) * spread);
const point = fc.record({ lon: coord(-68.13, 0.05), lat: coord(-16.5, 0.05) });

export interface RandomInstance {
  problem: OptimizerProblem;
  maxStopsPerRoute?: number;
}

/** Small random problems: capacities 1..4, optional current load, territories, stop limits. */
export function randomInstance(opts: { maxTrips: number; maxDrivers: number; minTrips?: number }) {
  const territory = fc.option(fc.constantFrom('t1', 't2'), { nil: undefined });
  const driver = fc.record({
    position: point,
    capacity: fc.integer({ min: 1, max: 4 }),
    currentLoad: fc.option(fc.integer({ min: 0, max: 1 }), { nil: undefined }),
    territoryIds: fc.option(fc.subarray(['t1', 't2'], { minLength: 1 }), { nil: undefined }),
  });
  const trip = fc.record({ pickup: point, dropoff: point, territoryId: territory });
  return fc
    .record({
      drivers: fc.array(driver, { minLength: 1, maxLength: opts.maxDrivers }),
      trips: fc.array(trip, { minLength: opts.minTrips ?? 0, maxLength: opts.maxTrips }),
      maxStopsPerRoute: fc.option(fc.constantFrom(2, 4, 6), { nil: undefined, freq: 3 }),
    })
    .map(
      ({ drivers, trips, maxStopsPerRoute }): RandomInstance => ({
        problem: {
          drivers: drivers.map((d, i) => ({ id: `d${i}`, ...stripUndefined(d) })),
          trips: trips.map((t, i) => ({ id: `t${i}`, ...stripUndefined(t) })),
        },
        maxStopsPerRoute,
      }),
    );
}

function stripUndefined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}
