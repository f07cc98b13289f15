/**
 * Batch dispatch optimizer: a pickup-and-delivery problem with open routes (each route starts at
 * the driver's position and ends at its last dropoff), capacity in concurrent trips, and territory
 * compatibility. Pure functions: no HTTP, no SQL.
 *
 * Objective, lexicographic: first the number of assigned trips (more is better), then the total
 * distance (less is better).
 *
 * Algorithm (T trips, D drivers, n = stops in a route, N = 2T + D points):
 * 1. Distance matrix, Float64Array N×N: great-circle × roadFactor, a custom DistanceFn, or a
 *    precomputed matrix over `matrixPoints(problem)` (e.g. from OSRM). O(N²).
 * 2. Construction by cheapest insertion with regret-2 ordering: each trip's cheapest feasible
 *    (pickup, dropoff) positions in every route are cached; the trip that would lose the most by
 *    not getting its best route goes first. O(T·D·n²) + O(T²·n²).
 * 3. Local search to a local optimum (the neighbourhoods; the full descent ends the run): insert
 *    or eject-and-insert unassigned trips; relocate a trip (pickup + dropoff pair) to its cheapest
 *    positions in any route, O(T·D·n²) per pass; exchange two related trips between routes,
 *    O(T·K·n²), K = 30; within a route, the exact best order by dynamic programming over (visited
 *    stops, last stop) up to 12 stops, O(2^n·n²), else or-opt of 1–3 consecutive stops and 2-opt
 *    reversals priced in O(1) each, O(n²) per scan. Every move keeps each pickup before its dropoff,
 *    the load within capacity, territories and the stop limit.
 * 4. Large neighbourhood search (ruin and recreate), from the construction: remove 1..min(40, 15% of
 *    T) trips (related to a seed trip, uniformly random, or a whole route that is then banned from
 *    the re-insertion, which is how idle drivers get used); re-insert them and every unassigned trip
 *    by regret or by random-order cheapest insertion, with cost noise half of the time; relocate the
 *    trips of the touched routes; re-order the touched routes (exact DP up to 10 stops, otherwise
 *    or-opt/2-opt). Acceptance: not worse than the current solution, or within 1% of the best
 *    (record-to-record travel). About O(k·D·n²) per iteration. Ends at maxIterations, after
 *    max(1000, 40·T) iterations without a new best, or at 85% of the time budget; then step 3 runs
 *    on the best solution (exact DP up to 12 stops) with the rest of the budget.
 *
 * Memory: the matrix is 8·(2T + D)² bytes (about 9 MB for 500 trips and 60 drivers).
 *
 * Deterministic for a seed (mulberry32): the clock is only read to stop at the time budget, so a
 * run that converges within the budget (small instances) does not depend on timing.
 */
import { DEFAULTS, compile } from './instance.js';
import { regretInsert } from './insertion.js';
import { largeNeighborhoodSearch, relatedTrips } from './lns.js';
import { toPlan } from './plan.js';
import { mulberry32 } from './prng.js';
import { Scratch } from './route.js';
import { Solution } from './solution.js';
import type { OptimizerOptions, OptimizerProblem, Plan } from './types.js';

export * from './types.js';
export { greedyNearestDriver } from './greedy.js';
export { validatePlan } from './validate.js';
export { matrixPoints } from './instance.js';

export function solve(problem: OptimizerProblem, options: OptimizerOptions = {}): Plan {
  const now = () => performance.now();
  const started = now();
  const seed = options.seed ?? DEFAULTS.seed;
  const inst = compile(problem, options);
  const budgetMs = options.timeBudgetMs ?? DEFAULTS.timeBudgetMs;
  const ctx = {
    inst,
    scratch: new Scratch(inst),
    neighbors: relatedTrips(inst),
    deadline: started + budgetMs,
    now,
  };
  const start = new Solution(inst);
  regretInsert(
    start,
    Array.from({ length: inst.tripCount }, (_, t) => t),
    ctx.scratch,
  );
  const { best, iterations } = largeNeighborhoodSearch(start, ctx, mulberry32(seed), {
    maxIterations: options.maxIterations ?? DEFAULTS.maxIterations,
    budgetMs,
  });
  return toPlan(inst, best.routes, { algorithm: 'regret-insertion+lns', seed, iterations, elapsedMs: now() - started });
}
