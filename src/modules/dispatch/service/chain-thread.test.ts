import { describe, expect, it } from 'vitest';
import { helperChain } from './chain-thread.js';
import { DEFAULTS, solve, validatePlan, type OptimizerProblem, type Plan } from '../optimizer/index.js';
import { seededInstance } from '../optimizer/testing/random-instances.js';

/** Every third trip ready in 10 minutes, capacities 2 to 4. */
const instance = (trips: number, drivers: number, seed: number) =>
  seededInstance(trips, drivers, seed, { readyAtS: (i) => (i % 3 === 0 ? 600 : undefined), capacity: (i) => 2 + (i % 3) });
const withoutTiming = (plan: Plan) => ({ ...plan, elapsedMs: 0 });
const request = (problem: OptimizerProblem, options = {}) => ({
  problem,
  options,
  seed: 5,
  chains: 2,
  start: problem.drivers.map(() => []),
  remainingMs: 60_000,
});

describe('the second chain on a helper thread', () => {
  it('gives the plan of the same solve on one thread: same seed and iterations, whatever runs where', () => {
    for (const [trips, drivers, seed, iterations] of [
      [60, 8, 1, 1500],
      [120, 15, 2, 2200],
      [90, 6, 3, 3000],
    ]) {
      const problem = instance(trips, drivers, seed);
      const options = { seed, iterations, timeBudgetMs: 60_000, maxRouteDurationS: 2700, serviceTimePickupS: 60, serviceTimeDropoffS: 60 };
      const alone = solve(problem, options);
      const helped = solve(problem, options, { chain: helperChain });
      expect(withoutTiming(helped)).toEqual(withoutTiming(alone));
      expect(helped.iterations).toBeGreaterThan(iterations - 1);
      expect(validatePlan(problem, helped, options)).toEqual([]);
    }
  });

  it('serves one search at a time; a distance function stays on the calling thread', () => {
    const problem = instance(60, 8, 4);
    const first = helperChain(request(problem));
    expect(first).not.toBeNull();
    expect(helperChain(request(problem))).toBeNull();
    first!.close();
    const again = helperChain(request(problem));
    expect(again).not.toBeNull();
    again!.close();
    expect(helperChain(request(problem, { distance: () => 1000 }))).toBeNull();
  });

  it('answers epochs in order, adopting routes it is sent', () => {
    const problem = instance(60, 8, 5);
    const chain = helperChain(request(problem))!;
    try {
      chain.begin({ count: 40 });
      const first = chain.end();
      expect(first.ran).toBe(40);
      expect(first.best?.flat().length).toBeGreaterThan(0);
      // taking an empty plan as its best: its next best starts from nothing again
      chain.begin({ count: 0, adopt: problem.drivers.map(() => []) });
      const adopted = chain.end();
      expect(adopted.ran).toBe(0);
      expect(adopted.best?.flat()).toEqual([]);
    } finally {
      chain.close();
    }
  });

  it('drops the answer to an epoch of a search abandoned mid-epoch (a solve that failed on its own thread)', () => {
    const problem = instance(60, 8, 7);
    const abandoned = helperChain(request(problem))!;
    abandoned.begin({ count: 400 });
    abandoned.close();
    const next = helperChain(request(problem))!;
    try {
      next.begin({ count: 7 });
      expect(next.end().ran).toBe(7);
      next.begin({ count: 3 });
      expect(next.end().ran).toBe(3);
    } finally {
      next.close();
    }
  });

  it('stops at the time ceiling with a valid plan', () => {
    const problem = instance(300, 30, 6);
    const options = { seed: 1, iterations: 1_000_000, timeBudgetMs: 400 };
    const plan = solve(problem, options, { chain: helperChain });
    expect(plan.stoppedBy).toBe('time');
    expect(plan.iterations).toBeLessThan(1_000_000);
    expect(DEFAULTS.iterations(300)).toBe(10_500);
    expect(validatePlan(problem, plan, options)).toEqual([]);
  });

  it('gives up on a helper that has not answered by the ceiling plus the grace, ends it, and the next search gets a new one', () => {
    // no time left and no grace: the solving thread looks once, at once. The helper must first build its copy of a
    // 1,500-trip problem (about a second), so the epoch just sent cannot have been answered by then; on a small
    // problem a warm helper could answer first on a loaded machine (it did once in CI)
    const stalled = helperChain({ ...request(instance(1500, 60, 8)), remainingMs: 0 }, 0)!;
    expect(stalled).not.toBeNull();
    stalled.begin({ count: 10 });
    expect(() => stalled.end()).toThrow('optimizer helper thread did not answer');
    stalled.close();
    // the ended helper is forgotten (not left busy): a new one serves the next search
    const problem = instance(60, 8, 8);
    const next = helperChain(request(problem))!;
    expect(next).not.toBeNull();
    try {
      next.begin({ count: 10 });
      expect(next.end().ran).toBe(10);
    } finally {
      next.close();
    }
    const options = { seed: 3, iterations: 1200, timeBudgetMs: 60_000 };
    expect(withoutTiming(solve(problem, options, { chain: helperChain }))).toEqual(withoutTiming(solve(problem, options)));
  });
});
