import { describe, expect, it } from 'vitest';
import { solve, validatePlan, type OptimizerProblem } from './index.js';

const at = (lon: number, lat: number) => ({ lon, lat });

describe('per-driver limits', () => {
  it('maxStops on a driver caps its route; the other driver takes the rest', () => {
    const problem: OptimizerProblem = {
      drivers: [
        { id: 'near', position: at(0, 0), capacity: 5, maxStops: 2 },
        { id: 'far', position: at(0.05, 0.05), capacity: 5 },
      ],
      trips: [0, 1, 2].map((i) => ({ id: `t${i}`, pickup: at(0.001 * i, 0), dropoff: at(0.001 * i, 0.002) })),
    };
    const plan = solve(problem, { seed: 1, timeBudgetMs: 2000 });
    expect(validatePlan(problem, plan)).toEqual([]);
    expect(plan.routes.find((r) => r.driverId === 'near')!.stops).toHaveLength(2);
    expect(plan.totals.assigned).toBe(3);
    const violating = {
      ...plan,
      routes: plan.routes.map((r) => (r.driverId === 'near' ? plan.routes.find((x) => x.driverId === 'far')! : r)),
    };
    expect(validatePlan({ ...problem, drivers: [problem.drivers[0], { ...problem.drivers[1], maxStops: 2 }] }, violating).join()).toMatch(
      /limit 2/,
    );
  });

  it('excludedDriverIds keeps a trip away from a driver (NO_DRIVER_IN_TERRITORY when no one else may serve it)', () => {
    const problem: OptimizerProblem = {
      drivers: [{ id: 'd1', position: at(0, 0), capacity: 2 }],
      trips: [
        { id: 'ok', pickup: at(0.001, 0), dropoff: at(0.002, 0) },
        { id: 'no', pickup: at(0.001, 0), dropoff: at(0.002, 0), excludedDriverIds: ['d1'] },
      ],
    };
    const plan = solve(problem, { seed: 1 });
    expect(validatePlan(problem, plan)).toEqual([]);
    expect(plan.unassigned).toEqual([{ tripId: 'no', reason: 'NO_DRIVER_IN_TERRITORY' }]);
    const forced = {
      ...plan,
      routes: [{ ...plan.routes[0], stops: plan.routes[0].stops.map((s) => ({ ...s, tripId: 'no' })) }],
      unassigned: [{ tripId: 'ok', reason: 'CAPACITY' as const }],
    };
    expect(validatePlan(problem, forced).join()).toMatch(/excluded driver d1/);
  });
});
