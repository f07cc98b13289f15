import type { Instance } from './instance.js';
import { regretInsert, sequentialInsert, type Noise } from './insertion.js';
import { improveRoute, localSearch, relocatePass, type SearchContext } from './localsearch.js';
import { randInt, type Rng } from './prng.js';
import { EPS, tripOf } from './route.js';
import { Solution, isBetter } from './solution.js';

/** Related trips kept per trip (ruin and exchange). */
const NEIGHBORS = 30;
/** Exact re-ordering inside the loop only for short routes (2^10 · 10² steps). */
const LNS_EXACT_STOPS = 10;
/** Insertion-cost noise: amplitude as a share of the longest leg, and how often it is used. */
const NOISE = 0.025;
const NOISE_P = 0.5;
/** Record-to-record acceptance: a candidate may be this much longer than the best. */
const DEVIATION = 0.01;
/** Iterations without a new best before stopping (at least; 40 per trip on larger problems). */
const MIN_PATIENCE = 1000;
/** Share of the time budget kept for the final local search. */
const FINAL_SHARE = 0.15;

/** Per trip, the other trips sorted by pickup-to-pickup plus dropoff-to-dropoff distance. */
export function relatedTrips(inst: Instance, k = NEIGHBORS): Int32Array[] {
  const T = inst.tripCount;
  const { dist, n } = inst;
  const out: Int32Array[] = [];
  const others = Array.from({ length: T }, (_, t) => t);
  const rel = new Float64Array(T);
  for (let a = 0; a < T; a++) {
    for (let b = 0; b < T; b++) rel[b] = dist[2 * a * n + 2 * b] + dist[(2 * a + 1) * n + 2 * b + 1];
    const sorted = others.filter((b) => b !== a).sort((x, y) => rel[x] - rel[y] || x - y);
    out.push(Int32Array.from(sorted.slice(0, k)));
  }
  return out;
}

/**
 * Take k trips out: related to a random seed trip, uniformly random, or a whole route, which is
 * then banned from the re-insertion so that its trips move (this is how idle drivers get used).
 */
function ruin(sol: Solution, ctx: SearchContext, rng: Rng): { removed: number[]; banned?: Uint8Array } {
  const T = ctx.inst.tripCount;
  const assigned: number[] = [];
  for (let t = 0; t < T; t++) if (sol.routeOf[t] >= 0) assigned.push(t);
  if (assigned.length === 0) return { removed: [] };
  const cap = T <= 12 ? assigned.length : Math.min(assigned.length, Math.max(4, Math.min(40, Math.round(0.15 * T))));
  const k = 1 + randInt(rng, cap);
  const removed = new Set<number>();
  const strategy = rng();
  let banned: Uint8Array | undefined;
  if (strategy < 0.2) {
    const routes = sol.routes.map((_, d) => d).filter((d) => sol.routes[d].length > 0);
    const emptied = routes[randInt(rng, routes.length)];
    for (const s of sol.routes[emptied]) removed.add(tripOf(s));
    // ban the emptied route and, half of the time, a random share of the others
    banned = new Uint8Array(sol.routes.length);
    banned[emptied] = 1;
    const share = rng() < 0.5 ? 0 : rng();
    for (const d of routes) if (rng() < share) banned[d] = 1;
  }
  if (strategy < 0.7) {
    const seed = assigned[randInt(rng, assigned.length)];
    removed.add(seed);
    for (const b of ctx.neighbors[seed]) {
      if (removed.size >= k) break;
      if (sol.routeOf[b] >= 0 && rng() < 0.8) removed.add(b);
    }
  }
  while (removed.size < k) removed.add(assigned[randInt(rng, assigned.length)]);
  const byRoute = new Set<number>();
  for (const t of removed) byRoute.add(sol.routeOf[t]);
  for (const d of byRoute) sol.setRoute(d, sol.routes[d].filter((s) => !removed.has(tripOf(s))));
  return { removed: [...removed], banned };
}

/** Record-to-record travel: as many trips as the best, at most DEVIATION longer. */
const withinRecord = (cand: Solution, best: Solution) =>
  cand.assigned >= best.assigned && cand.distance() <= best.distance() * (1 + DEVIATION) + EPS;

export interface LnsResult {
  best: Solution;
  iterations: number;
}

/**
 * Ruin and recreate from the construction: each iteration removes a few trips, re-inserts them
 * (with every unassigned trip) by regret or by random-order cheapest insertion, polishes the touched
 * routes (relocate of their trips, then or-opt/2-opt or exact re-ordering), and keeps the candidate
 * when it is not worse than the current solution or within DEVIATION of the best (record-to-record
 * travel). Stops at maxIterations, after `patience` iterations without a new best, or at the
 * deadline minus the share kept for the full local search that ends the run.
 */
export function largeNeighborhoodSearch(
  start: Solution,
  ctx: SearchContext,
  rng: Rng,
  { maxIterations, budgetMs }: { maxIterations: number; budgetMs: number },
): LnsResult {
  const T = ctx.inst.tripCount;
  let current = start;
  let best = start.clone();
  const patience = Math.max(MIN_PATIENCE, 40 * T);
  const loopDeadline = ctx.deadline - FINAL_SHARE * budgetMs;
  let iterations = 0;
  let sinceBest = 0;
  let maxDist = 0;
  for (const v of ctx.inst.dist) if (v > maxDist) maxDist = v;
  const noise: Noise = { rng, amplitude: NOISE * maxDist };
  while (iterations < maxIterations && sinceBest < patience && T > 0) {
    if ((iterations & 7) === 0 && ctx.now() > loopDeadline) break;
    iterations++;
    const cand = current.clone();
    const before = cand.routes.map((r) => r.length);
    const { removed, banned } = ruin(cand, ctx, rng);
    const pending = [...new Set([...removed, ...cand.unassignedTrips()])];
    const options = { noise: rng() < NOISE_P ? noise : undefined, banned };
    if (rng() < 0.5) regretInsert(cand, pending, ctx.scratch, options);
    else sequentialInsert(cand, pending, ctx.scratch, rng, options);
    if (banned) regretInsert(cand, cand.unassignedTrips(), ctx.scratch);
    const touched = cand.routes.map((r, d) => r.length !== before[d] || removed.some((t) => cand.routeOf[t] === d));
    const moved: number[] = [];
    for (let t = 0; t < T; t++) if (cand.routeOf[t] >= 0 && touched[cand.routeOf[t]]) moved.push(t);
    relocatePass(cand, ctx, moved);
    cand.routes.forEach((_, d) => {
      if (touched[d] || !cand.exact[d]) improveRoute(cand, d, ctx.scratch, LNS_EXACT_STOPS);
    });
    if (!isBetter(current, cand) || withinRecord(cand, best)) current = cand;
    if (isBetter(cand, best)) {
      best = cand.clone();
      sinceBest = 0;
    } else sinceBest++;
  }
  localSearch(best, ctx);
  return { best, iterations };
}
