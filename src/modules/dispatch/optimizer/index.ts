/**
 * Batch dispatch optimizer: a pickup-and-delivery problem with open routes (each route starts at
 * the driver's position and ends at its last dropoff), capacity in concurrent trips, territory
 * compatibility, and times: travel (matrix durations or distance / speed), service time at every
 * pickup and drop-off, waiting at a pickup until the trip is ready (its earliest pickup), and a
 * latest end per route (maximum route duration, or the driver's shift end when earlier), plus a
 * stop limit per route. Pure functions: no HTTP, no SQL.
 *
 * Objective, lexicographic: first the number of assigned trips (more is better), then the cost of
 * the chosen `Objective` (default `time`: the sum of drop-off times, distance as tie-breaker).
 *
 * Algorithm (T trips, D drivers, n = stops in a route, N = 2T + D points):
 * 1. Distance and travel-time matrices, Float64Array N×N: great-circle × roadFactor, a custom
 *    DistanceFn, or a precomputed matrix over `matrixPoints(problem)` (e.g. from OSRM). O(N²).
 * 2. Construction by cheapest insertion with regret-2 ordering, twice: insertions priced by the
 *    objective, and by packing (how much longer the route gets); the better start is kept. An
 *    insertion is priced exactly, times included: the stops between pickup and drop-off are re-timed
 *    incrementally and the delay of the rest is priced in O(1) unless a downstream wait absorbs part
 *    of it. O(T·D·n²). On great-circle instances (triangle inequality) pickup positions that cannot
 *    be feasible or cannot beat the best so far are skipped by lower bounds, a route with less time
 *    left than the two service times is rejected in O(1), and answers are remembered per (trip,
 *    route version): the same answers as the full scan, far fewer of them.
 * 3. Local search to a local optimum: insert or eject-and-insert unassigned trips; relocate a trip;
 *    exchange two related trips between routes; within a route, the exact best order by dynamic
 *    programming over (visited stops, last stop) with Pareto labels (time, cost) up to 12 stops,
 *    else or-opt and 2-opt. Every move keeps precedence, capacity, territories, the stop limit and
 *    the time limit.
 * 4. Large neighbourhood search (ruin and recreate) from the construction, counted in iterations
 *    (see OptimizerOptions.iterations; default DEFAULTS.iterations(T)), then step 3 on the best. From 50 trips it
 *    runs as two chains (own random streams) that meet every 500 iterations of each and go on from the better one;
 *    the caller may run the second on another thread (SolveEnv.chain, e.g. dispatch/chain-thread.ts): same plan.
 *    30 % of the recreates insert by packing, to assign more trips. Insertions are priced in a trip's candidate
 *    routes first (granular): the drivers nearest to its pickup and the routes of its related trips, and when 20 or
 *    more trips are left out, of the trips with stops near its own too; a trip with no room there is priced in every
 *    route, except, when 20 or more are left out, a left-out trip retried in the iteration.
 *
 * Deterministic for a seed and an iteration budget (mulberry32; nothing depends on the clock). The
 * time budget is only a ceiling: when it cuts, `stoppedBy` says 'time'.
 *
 * Problems with time windows, loads in kilograms or litres (or units per trip), hubs (start time, return point),
 * per-trip service times or the objective `vehicles` are planned by the time-window solver instead (pdptw-model.ts,
 * pdptw-search.ts; docs/OPTIMIZER.md), on the calling thread.
 */
import { DEFAULTS, chainCount, compile } from './instance.js';
import { regretInsert } from './insertion.js';
import { FINAL_SHARE, chainSeed, largeNeighborhoodSearch, localChain, relatedTrips, type ChainHandle } from './lns.js';
import type { SearchContext } from './localsearch.js';
import { toPlan } from './plan.js';
import { Scratch } from './route.js';
import { Solution, isBetter } from './solution.js';
import type { OptimizerOptions, OptimizerProblem, Plan } from './types.js';
import { needsTimeWindows } from './pdptw-model.js';
import { solveTimeWindows } from './pdptw-search.js';

export * from './types.js';
export { greedyNearestDriver } from './greedy.js';
export { validatePlan } from './validate.js';
export { DEFAULTS, matrixPoints } from './instance.js';
export { twIterations } from './pdptw-search.js';
export type { ChainHandle, EpochOrder, EpochReport } from './lns.js';

/**
 * A chain of the search to run elsewhere (see SolveEnv.chain; plain data, structured-cloneable): the request, the
 * chain's seed, how many chains the search has, the start solution's routes, and the milliseconds left to the ceiling
 * of the search loop.
 */
export interface ChainRequest {
  problem: OptimizerProblem;
  options: OptimizerOptions;
  seed: number;
  chains: number;
  start: number[][];
  remainingMs: number;
}

/** Where solve runs the chains after the first (see CHAINS); by default on the calling thread, one epoch after the other. */
export interface SolveEnv {
  /** A handle on chain `request` run elsewhere (e.g. another thread: startChain there), or null to run it here. */
  chain?: (request: ChainRequest) => (ChainHandle & { close(): void }) | null;
}

/** The instance and search context of a request (`started`: when the time budget began). */
function searchContext(problem: OptimizerProblem, options: OptimizerOptions, now: () => number, started: number): SearchContext {
  const inst = compile(problem, options);
  return {
    inst,
    scratch: new Scratch(inst),
    neighbors: relatedTrips(inst),
    deadline: started + (options.timeBudgetMs ?? DEFAULTS.timeBudgetMs),
    now,
  };
}

/** Runs a chain sent by another thread's solve (see SolveEnv.chain): the same chain as it would have run there. */
export function startChain(request: ChainRequest): ChainHandle {
  const now = () => performance.now();
  const started = now();
  const ctx = searchContext(request.problem, request.options, now, started);
  return localChain(ctx, Solution.of(ctx.inst, request.start), request.seed, request.chains, started + request.remainingMs);
}

export function solve(problem: OptimizerProblem, options: OptimizerOptions = {}, env: SolveEnv = {}): Plan {
  // time windows, loads in several dimensions, hubs or the objective `vehicles`: the time-window solver (one thread)
  if (needsTimeWindows(problem, options)) return solveTimeWindows(problem, options);
  const now = () => performance.now();
  const started = now();
  const seed = options.seed ?? DEFAULTS.seed;
  const ctx = searchContext(problem, options, now, started);
  const { inst } = ctx;
  const budgetMs = options.timeBudgetMs ?? DEFAULTS.timeBudgetMs;
  // two constructions, by the objective and by packing (more trips when routes are short of time): the better one starts
  const all = Array.from({ length: inst.tripCount }, (_, t) => t);
  const byObjective = new Solution(inst);
  regretInsert(byObjective, all, ctx.scratch);
  const packed = new Solution(inst);
  regretInsert(packed, all, ctx.scratch, { packing: true });
  const start = isBetter(packed, byObjective) ? packed : byObjective;
  const iterationBudget = options.iterations ?? DEFAULTS.iterations(inst.tripCount);
  const chains = chainCount(inst.tripCount);
  const remainingMs = ctx.deadline - FINAL_SHARE * budgetMs - now();
  const remote = Array.from({ length: chains }, (_, c) =>
    c > 0 && env.chain ? env.chain({ problem, options, seed: chainSeed(seed, c), chains, start: start.routes, remainingMs }) : null,
  );
  try {
    const { best, iterations, stoppedBy, curve } = largeNeighborhoodSearch(
      start,
      ctx,
      seed,
      { iterations: iterationBudget, budgetMs },
      remote,
    );
    return toPlan(inst, best.routes, {
      algorithm: 'regret-insertion+lns',
      seed,
      iterations,
      iterationBudget,
      stoppedBy,
      curve,
      elapsedMs: now() - started,
    });
  } finally {
    for (const r of remote) r?.close();
  }
}
