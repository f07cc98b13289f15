import { afterAll, describe, expect, it } from 'vitest';
import { AppError } from '../../../platform/errors.js';
import { greedyNearestDriver, matrixPoints, OptimizerInputError, solve, type Plan } from '../optimizer/index.js';
import { seededInstance } from '../optimizer/testing/random-instances.js';
import { createSolverThread } from './solver-thread.js';
import { waitFor } from '../../../../test/support.js';

const withoutTiming = (plan: Plan) => ({ ...plan, elapsedMs: 0 });
const options = { seed: 7, iterations: 200, timeBudgetMs: 60_000, maxRouteDurationS: 3600 };

const thread = createSolverThread({ maxQueued: 2 });
afterAll(() => thread.close());

describe('the solver thread', () => {
  it('gives the plan and baseline of a solve on the main thread (same seed and iterations)', async () => {
    const problem = seededInstance(40, 8, 1);
    const { plan, baseline } = await thread.solve(problem, options);
    expect(withoutTiming(plan)).toEqual(withoutTiming(solve(problem, options)));
    // two chains (80 trips), the second on the solver thread's helper thread, over three epochs
    const larger = seededInstance(80, 10, 3);
    const both = { ...options, iterations: 2400 };
    expect(withoutTiming((await thread.solve(larger, both)).plan)).toEqual(withoutTiming(solve(larger, both)));
    expect(withoutTiming(baseline)).toEqual(withoutTiming(greedyNearestDriver(problem, options)));
    expect(plan.totals.assigned).toBeGreaterThan(0);
  });

  it('solves time windows with hubs and a custom matrix on the thread: the plan of the main thread, and a baseline', async () => {
    const problem = seededInstance(12, 3, 4);
    const hub = problem.drivers[0].position;
    const timed = {
      drivers: problem.drivers.map((d) => ({ ...d, position: hub, returnTo: hub, startAtS: 60, shiftEndS: 7200 })),
      trips: problem.trips.map((t, i) => ({ ...t, pickupAfterS: 30 * i, deliverBeforeS: 3600 + 60 * i, weightKg: 2 })),
    };
    // a custom matrix over every point, the hubs' return points included
    const points = matrixPoints(timed);
    const m = points.length;
    const distances = new Float64Array(m * m);
    for (let a = 0; a < m; a++)
      for (let b = 0; b < m; b++)
        distances[a * m + b] = 1000 * Math.hypot(points[a].lon - points[b].lon, points[a].lat - points[b].lat) * 111;
    const own = { ...options, objective: 'vehicles' as const, distance: { distances } };
    const { plan, baseline } = await thread.solve(timed, own);
    expect(plan.algorithm).toBe('pdptw-lns');
    expect(withoutTiming(plan)).toEqual(withoutTiming(solve(timed, own)));
    expect(plan.totals.assigned).toBeGreaterThan(6);
    expect(plan.totals.assigned + plan.unassigned.length).toBe(12);
    expect(baseline.algorithm).toBe('greedy-nearest-driver');
  });

  it('leaves the event loop free while it solves', async () => {
    let turns = 0;
    let solving = true;
    const spin = () => {
      turns++;
      if (solving) setImmediate(spin);
    };
    const done = thread.solve(seededInstance(150, 20, 2), { ...options, iterations: 600 }).finally(() => (solving = false));
    setImmediate(spin);
    const { plan } = await done;
    // On the main thread the solve would have run to its end before the first turn.
    expect(turns).toBeGreaterThan(20);
    expect(plan.totals.assigned).toBeGreaterThan(100);
  });

  it("answers the solver's input errors as OptimizerInputError (the API's 422), and keeps working", async () => {
    const bad = {
      trips: [{ id: 't', pickup: { lon: 200, lat: 0 }, dropoff: { lon: 0, lat: 0 } }],
      drivers: [{ id: 'd', position: { lon: 0, lat: 0 }, capacity: 1 }],
    };
    await expect(thread.solve(bad, options)).rejects.toBeInstanceOf(OptimizerInputError);
    expect((await thread.solve(seededInstance(5, 2, 3), options)).plan.totals.assigned).toBeGreaterThan(0);
  });

  it('refuses a solve beyond its queue with 503 OPTIMIZER_BUSY and Retry-After, and serves the queued ones', async () => {
    const queued = [thread.solve(seededInstance(60, 10, 4), options), thread.solve(seededInstance(60, 10, 5), options)];
    expect(thread.pending).toBe(2);
    const refused = await thread.solve(seededInstance(5, 2, 6), options).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(AppError);
    expect(refused).toMatchObject({ status: 503, code: 'OPTIMIZER_BUSY', extra: { retry_after: 5 } });
    for (const p of await Promise.all(queued)) expect(p.plan.totals.assigned).toBeGreaterThan(0);
    expect(thread.pending).toBe(0);
  });

  it('fails the solves it holds when closed, and a later solve starts a new thread', async () => {
    const held = thread.solve(seededInstance(100, 15, 7), { ...options, iterations: 2000 });
    await thread.close();
    await expect(held).rejects.toThrow(/closed|exited/);
    expect((await thread.solve(seededInstance(5, 2, 8), options)).plan.totals.assigned).toBeGreaterThan(0);
  });

  it('ends the thread once idle, and the next solve starts a new one', async () => {
    const quick = createSolverThread({ maxQueued: 1, idleMs: 50 });
    try {
      await quick.solve(seededInstance(5, 2, 9), options);
      expect(quick.running).toBe(true);
      await waitFor(() => !quick.running, { timeout: 10_000, message: 'the idle thread ended' });
      expect((await quick.solve(seededInstance(5, 2, 10), options)).plan.totals.assigned).toBeGreaterThan(0);
    } finally {
      await quick.close();
    }
  });
});
