import { chainCount, startNode, type Instance } from './instance.js';
import { regretInsert, sequentialInsert, type Noise } from './insertion.js';
import { improveRoute, localSearch, relocatePass, type SearchContext } from './localsearch.js';
import { mulberry32, randInt, type Rng } from './prng.js';
import { EPS, tripOf } from './route.js';
import { Solution, betterValue, isBetter } from './solution.js';
import type { StopReason } from './types.js';

/** Related trips kept per trip (ruin and exchange). */
const NEIGHBORS = 30;
/** Exact re-ordering inside the loop only for short routes (2^10 · 10² steps). */
const LNS_EXACT_STOPS = 8;
/** Insertion-cost noise: amplitude as a share of the longest leg, and how often it is used. */
const NOISE = 0.025;
const NOISE_P = 0.5;
/** Share of the iterations that recreate by packing (insertions priced by how much longer the route gets): more trips assigned. */
const PACKING_P = 0.3;
/** Record-to-record acceptance: a candidate may be this much longer than the best. */
const DEVIATION = 0.01;
/** Iterations without a new best before stopping (at least; 40 per trip on larger problems). */
const MIN_PATIENCE = 1000;
/** Share of the time ceiling kept for the final local search. */
export const FINAL_SHARE = 0.15;
/**
 * Past the budget: extend by a quarter of it at a time while the last half of the budget's worth of iterations
 * assigned a trip more or lowered the best cost by more than EXTEND_GAIN, up to MAX_EXTENSION × the budget. Half,
 * not a quarter: on crowded instances the count climbs in steps with plateaus of a few thousand iterations, and a
 * quarter-long look stopped runs on a plateau while they still gained a trip every few hundred iterations overall.
 * 2.75×, not 3×: on 500 × 60 the last quarter of a 3× run cost 8 % of its CPU (clustered #1 took 10.3 s, over the
 * 10 s target) and assigned no trip more on 15 of 16 seed × instance runs (one lost a trip: 394 instead of 395).
 */
const EXTEND_GAIN = 0.005;
const EXTEND_LOOKBACK = 0.5;
const MAX_EXTENSION = 2.75;

/**
 * Granular insertion in the search loop: the drivers nearest to a trip's pickup, the routes of its nearest related
 * trips, and, on crowded instances, the routes of the trips with the stops nearest to its pickup and to its drop-off.
 */
const NEAR_DRIVERS = 10;
const NEAR_TRIPS = 15;
const NEAR_STOPS = 10;

/** Per trip, the NEAR_DRIVERS drivers whose start is nearest to its pickup. */
export function nearDrivers(inst: Instance, k = NEAR_DRIVERS): Int32Array[] {
  const { dist, n } = inst;
  const drivers = Array.from({ length: inst.driverCount }, (_, d) => d);
  return Array.from({ length: inst.tripCount }, (_, t) => {
    const p = 2 * t;
    const key = (d: number) => dist[startNode(inst, d) * n + p];
    return Int32Array.from(
      drivers
        .slice()
        .sort((a, b) => key(a) - key(b) || a - b)
        .slice(0, k),
    );
  });
}

/**
 * Per trip, the trips that own the NEAR_STOPS stops nearest to its pickup and the NEAR_STOPS nearest to its drop-off
 * (pickups and drop-offs alike; ties by node number): their routes pass close by, wherever their drivers started.
 */
export function nearStops(inst: Instance, k = NEAR_STOPS): Int32Array[] {
  const { dist, n } = inst;
  const T = inst.tripCount;
  const m = Math.max(0, Math.min(k, 2 * T - 2));
  const bestD = new Float64Array(m);
  const bestX = new Int32Array(m);
  return Array.from({ length: T }, (_, t) => {
    const out = new Set<number>();
    for (const from of [2 * t, 2 * t + 1]) {
      // the m nearest stops by (distance, node), kept sorted: insertion into a short list
      let size = 0;
      for (let x = 0; x < 2 * T; x++) {
        if (x >> 1 === t) continue;
        const v = dist[from * n + x];
        if (size === m && !(v < bestD[m - 1])) continue;
        let at = size < m ? size++ : m - 1;
        while (at > 0 && bestD[at - 1] > v) {
          bestD[at] = bestD[at - 1];
          bestX[at] = bestX[at - 1];
          at--;
        }
        bestD[at] = v;
        bestX[at] = x;
      }
      for (let i = 0; i < size; i++) out.add(bestX[i] >> 1);
    }
    return Int32Array.from(out);
  });
}

/**
 * Marks the routes worth pricing for trip t (see RecreateOptions.candidates): those of the drivers nearest to its
 * pickup, of its most related trips and, given `close`, of the trips with stops near its own; all of them on small
 * problems.
 */
function granular(ctx: SearchContext, near: Int32Array[], close: Int32Array[] | null) {
  // per trip, its NEAR_TRIPS most related trips and the trips with stops near its own, once each
  const nearby = ctx.neighbors.map((r, t) => Int32Array.from(new Set([...r.subarray(0, NEAR_TRIPS), ...(close?.[t] ?? [])])));
  return (sol: Solution, t: number, into: Uint8Array) => {
    if (into.length <= NEAR_DRIVERS) {
      into.fill(1);
      return;
    }
    into.fill(0);
    const drivers = near[t];
    for (let x = 0; x < drivers.length; x++) into[drivers[x]] = 1;
    const trips = nearby[t];
    const routeOf = sol.routeOf;
    for (let x = 0; x < trips.length; x++) {
      const r = routeOf[trips[x]];
      if (r >= 0) into[r] = 1;
    }
  };
}

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
  const cap = T <= 12 ? assigned.length : Math.min(assigned.length, Math.max(4, Math.min(RUIN_MAX, Math.round(0.15 * T))));
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
  for (const d of byRoute)
    sol.setRoute(
      d,
      sol.routes[d].filter((s) => !removed.has(tripOf(s))),
    );
  return { removed: [...removed], banned };
}

/** Most trips removed per iteration (15 % of the trips up to this). */
const RUIN_MAX = 15;

/**
 * Left-out trips (besides the removed ones) from which an iteration is crowded: up to this many, every one of them is
 * re-tried; past it, UNASSIGNED_TRIES of them.
 */
const CROWDED = 20;

/**
 * Left-out trips re-tried per crowded iteration: related to the removed first, then random. 15, not 20 (the crowded
 * line): on 500 × 60, 1,604.5 and 1,605.5 trips (sums of the means of 4 solver seeds over the four instances, seeds
 * 1–4 and 5–8) against 1,602.75 and 1,606.0, for 10–12 % fewer insertion pricings (135.3 M → 122.0 M over 16 runs;
 * the dearest run 9.98 M → 8.81 M). Pricing is about 60 % of a crowded solve's CPU (profile), so about 6 % less CPU;
 * timed runs on this machine cannot tell that from its drift. 10 gave 1,595.5.
 */
const UNASSIGNED_TRIES = 15;

/**
 * Which of the trips left out so far this iteration tries to insert: all of them when at most CROWDED, else those
 * related to the removed trips, then random ones, UNASSIGNED_TRIES in all (on a crowded instance re-trying hundreds
 * of left-out trips every iteration would cost more than the rest). `crowded`: CROWDED or more were waiting.
 */
function unassignedToTry(sol: Solution, removed: readonly number[], ctx: SearchContext, rng: Rng): { retried: number[]; crowded: boolean } {
  const out = new Set<number>();
  const removedSet = new Set(removed);
  const waiting = sol.unassignedTrips().filter((t) => !removedSet.has(t));
  const crowded = waiting.length >= CROWDED;
  if (waiting.length <= CROWDED) return { retried: waiting, crowded };
  for (const t of removed) {
    for (const b of ctx.neighbors[t]) {
      if (out.size >= UNASSIGNED_TRIES / 2) break;
      if (sol.routeOf[b] < 0 && !removedSet.has(b)) out.add(b);
    }
  }
  while (out.size < UNASSIGNED_TRIES) out.add(waiting[randInt(rng, waiting.length)]);
  return { retried: [...out], crowded };
}

/** Record-to-record travel: as many trips as the best, at most DEVIATION dearer. */
const withinRecord = (cand: Solution, best: Solution) =>
  cand.assigned >= best.assigned && cand.total() <= best.total() * (1 + DEVIATION) + EPS;

export interface CurvePoint {
  iteration: number;
  assigned: number;
  cost: number;
}

export interface LnsResult {
  best: Solution;
  iterations: number;
  stoppedBy: StopReason;
  curve: CurvePoint[];
}

/**
 * Iterations of each chain between two meetings (where the others take the best). On 500 × 60 at 1× the iterations,
 * 500 and 2,000 ended alike (1,596.25 and 1,599.75 trips over the 4 × 4 runs; spread of one seed ±3).
 */
export const EPOCH = 500;

/** Chain c's random stream: chain 0's is the seed's own (a one-chain search is the same as before chains). */
export const chainSeed = (seed: number, c: number): number => (c === 0 ? seed : (Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) + c) >>> 0);

/** One epoch's order to a chain: run `count` iterations, after taking `adopt` (routes per driver) as its current and best. */
export interface EpochOrder {
  count: number;
  adopt?: number[][];
}

/** What a chain did in an epoch. */
export interface EpochReport {
  /** Iterations run (fewer than ordered when it converged or reached the time ceiling). */
  ran: number;
  /** Its best solution's routes when they changed in the epoch (or were adopted), else null. */
  best: number[][] | null;
  /** Each new best of the epoch: iteration within the epoch (0-based), assigned trips, cost. */
  improved: { at: number; assigned: number; cost: number }[];
  converged: boolean;
  timedOut: boolean;
}

/** A chain run here or on another thread: `begin` starts an epoch, `end` waits for its report. */
export interface ChainHandle {
  begin(order: EpochOrder): void;
  end(): EpochReport;
}

/** What every chain of a search shares (built once per thread): candidate routes of each trip and the noise amplitude. */
interface SearchPrep {
  wide: ReturnType<typeof granular>;
  narrow: ReturnType<typeof granular>;
  amplitude: number;
}

function prepare(ctx: SearchContext): SearchPrep {
  let maxDist = 0;
  let maxTravel = 0;
  for (const v of ctx.inst.dist) if (v > maxDist) maxDist = v;
  for (const v of ctx.inst.travel) if (v > maxTravel) maxTravel = v;
  const drivers = nearDrivers(ctx.inst);
  return {
    wide: granular(ctx, drivers, nearStops(ctx.inst)),
    narrow: granular(ctx, drivers, null),
    amplitude: NOISE * (ctx.inst.wDist * maxDist + ctx.inst.wTime * maxTravel),
  };
}

/** Patience of each of `chains` chains (see MIN_PATIENCE): the search has converged when every chain has waited this long. */
const chainPatience = (tripCount: number, chains: number) => Math.ceil(Math.max(MIN_PATIENCE, 40 * tripCount) / chains);

/**
 * One chain of the search, run on this thread. `deadline`: the ceiling of its loop (ctx.now() time). Ruin and
 * recreate: each iteration removes a few trips, re-inserts them (with every unassigned trip) by regret or by
 * random-order cheapest insertion, polishes the touched routes (relocate of their trips, then or-opt/2-opt or exact
 * re-ordering), and keeps the candidate when it is not worse than the current solution or within DEVIATION of the
 * best (record-to-record travel).
 */
export function localChain(
  ctx: SearchContext,
  start: Solution,
  seed: number,
  chains: number,
  deadline: number,
  prep = prepare(ctx),
): ChainHandle {
  const rng = mulberry32(seed);
  const noise: Noise = { rng, amplitude: prep.amplitude };
  const patience = chainPatience(ctx.inst.tripCount, chains);
  let current = start;
  let best = start.clone();
  let sinceBest = 0;
  let order: EpochOrder = { count: 0 };
  return {
    begin(o) {
      order = o;
    },
    end() {
      const report: EpochReport = { ran: 0, best: null, improved: [], converged: false, timedOut: false };
      if (order.adopt) {
        best = Solution.of(ctx.inst, order.adopt);
        current = best.clone();
        report.best = best.routes;
      }
      for (let it = 0; it < order.count; it++) {
        if (sinceBest >= patience) {
          report.converged = true;
          break;
        }
        if ((it & 7) === 0 && ctx.now() > deadline) {
          report.timedOut = true;
          break;
        }
        report.ran++;
        const cand = iterate(current, ctx, prep, rng, noise);
        if (!cand) {
          sinceBest++;
          continue;
        }
        if (!isBetter(current, cand) || withinRecord(cand, best)) current = cand;
        if (isBetter(cand, best)) {
          best = cand.clone();
          report.best = best.routes;
          report.improved.push({ at: it, assigned: best.assigned, cost: best.total() });
          sinceBest = 0;
        } else sinceBest++;
      }
      return report;
    },
  };
}

/** One iteration: the candidate made from `current`, or null when it assigns fewer trips (rejected whatever its cost). */
function iterate(current: Solution, ctx: SearchContext, prep: SearchPrep, rng: Rng, noise: Noise): Solution | null {
  const cand = current.clone();
  const before = cand.routes.map((r) => r.length);
  const { removed, banned } = ruin(cand, ctx, rng);
  const { retried, crowded } = unassignedToTry(cand, removed, ctx, rng);
  const pending = [...new Set([...removed, ...retried])];
  const packing = rng() < PACKING_P;
  // Crowded (CROWDED or more trips left out): the candidate routes include those passing near the trip's stops, and
  // only the removed trips are priced in every route when their candidates have no room; a left-out trip retried here
  // stays out unless a route near it takes it. On 500 × 60: 0.75–2.5 more trips at the same iterations (means of 4
  // seeds) and about 1.3× less CPU per iteration. Otherwise the nearest drivers and related trips only, and every trip
  // is priced everywhere when they have no room: applied to 100 × 20, the crowded rule gave no better plans at the
  // default budget but better ones at 10×, so 20 of 24 seed × instance runs were within 2 % of their 10× run, against
  // 23 of 24 with this one.
  const options = {
    noise: !packing && rng() < NOISE_P ? noise : undefined,
    banned,
    candidates: crowded ? prep.wide : prep.narrow,
    packing,
    widen: crowded ? new Set(removed) : undefined,
  };
  if (rng() < 0.5) regretInsert(cand, pending, ctx.scratch, options);
  else sequentialInsert(cand, pending, ctx.scratch, rng, options);
  if (banned)
    regretInsert(
      cand,
      pending.filter((t) => cand.routeOf[t] < 0),
      ctx.scratch,
    );
  // Polishing never changes the count, and a candidate with fewer trips than the current solution is rejected
  // whatever its cost (the best has at least the current count): it is dropped before it is polished. Same
  // plans; on a crowded 500 × 60 about 44 % of the candidates end here.
  if (cand.assigned < current.assigned) return null;
  // the routes that changed length or now hold a removed trip
  const touched = new Uint8Array(before.length);
  for (let d = 0; d < before.length; d++) if (cand.routes[d].length !== before[d]) touched[d] = 1;
  for (const t of removed) if (cand.routeOf[t] >= 0) touched[cand.routeOf[t]] = 1;
  // with noise, the removed trips may sit at a dearer place than their best: move them back
  if (options.noise)
    relocatePass(
      cand,
      ctx,
      removed.filter((t) => cand.routeOf[t] >= 0),
    );
  cand.routes.forEach((_, d) => {
    if (touched[d]) improveRoute(cand, d, ctx.scratch, LNS_EXACT_STOPS);
  });
  return cand;
}

/**
 * After an epoch that began at iteration `base`: the chains' new bests go on the curve in iteration order (each when
 * it beats the best so far), `bests` takes each chain's reported best, and the best chain (the first on ties) is
 * returned with the chains that take its best (every one it beats; their `bests` entry is set to it).
 */
function meet(ctx: SearchContext, reports: EpochReport[], bests: Solution[], curve: CurvePoint[], base: number) {
  const K = reports.length;
  const improved = reports
    .flatMap((r, c) => r.improved.map((p) => ({ ...p, iteration: base + p.at * K + c + 1 })))
    .sort((a, b) => a.iteration - b.iteration);
  for (const p of improved) {
    const last = curve[curve.length - 1];
    if (betterValue(p.assigned, p.cost, last.assigned, last.cost))
      curve.push({ iteration: p.iteration, assigned: p.assigned, cost: p.cost });
  }
  let iterations = base;
  reports.forEach((r, c) => {
    if (r.best) bests[c] = Solution.of(ctx.inst, r.best);
    iterations += r.ran;
  });
  let best = 0;
  for (let c = 1; c < K; c++) if (isBetter(bests[c], bests[best])) best = c;
  const adopter = bests.map((b, c) => c !== best && isBetter(bests[best], b));
  adopter.forEach((yes, c) => {
    if (yes) bests[c] = bests[best];
  });
  return { best, adopter, iterations };
}

/**
 * Large neighbourhood search from the construction `start`, over chainCount(T) chains (see CHAINS): `chains[c]` runs
 * chain c when given (e.g. on another thread, from the same start and chainSeed(seed, c)), else it runs here. The
 * chains take turns by epochs of EPOCH iterations each; after every epoch all of them go on from the best. The
 * iteration numbers are interleaved (chain c's i-th iteration of an epoch is number base + i·K + c + 1), and the
 * budget counts them all. Stops at the iteration budget (extended by a quarter at a time, up to 2.75×, while the last
 * half budget gained a trip or improved the best by more than EXTEND_GAIN), when every chain has gone its patience
 * without a new best of its own, or, as a safety ceiling only, at the deadline minus the share kept for the full local
 * search that ends the run. Everything but the ceiling is counted, so a seed and a budget give the same plan on any
 * machine, however many threads run the chains.
 */
export function largeNeighborhoodSearch(
  start: Solution,
  ctx: SearchContext,
  seed: number,
  { iterations: budget, budgetMs }: { iterations: number; budgetMs: number },
  remote: (ChainHandle | null)[] = [],
): LnsResult {
  const T = ctx.inst.tripCount;
  const K = chainCount(T);
  const loopDeadline = ctx.deadline - FINAL_SHARE * budgetMs;
  const prep = prepare(ctx);
  const chains = Array.from({ length: K }, (_, c) => remote[c] ?? localChain(ctx, start, chainSeed(seed, c), K, loopDeadline, prep));
  // the best solution of each chain, as of its last report (a chain on another thread sends its routes when they change)
  const bests = chains.map(() => start.clone());
  let best = start.clone();
  const curve: CurvePoint[] = [{ iteration: 0, assigned: best.assigned, cost: best.total() }];
  let iterations = 0;
  let limit = budget;
  let stoppedBy: LnsResult['stoppedBy'] = 'iterations';
  let adopt: number[][] | undefined;
  let adopter: boolean[] = [];
  /** The best cost as of an iteration (the curve is in iteration order). */
  const bestAt = (iteration: number) => {
    let c = curve[0];
    for (const p of curve) if (p.iteration <= iteration) c = p;
    return c;
  };
  while (T > 0) {
    if (iterations >= limit) {
      // still improving quickly: go on by a quarter of the budget (counted, so still deterministic)
      const quarter = Math.max(1, Math.ceil(budget / 4));
      const then = bestAt(iterations - Math.max(1, Math.ceil(budget * EXTEND_LOOKBACK)));
      const improving = best.assigned > then.assigned || best.total() < then.cost * (1 - EXTEND_GAIN);
      if (!improving || limit + quarter > MAX_EXTENSION * budget) break;
      limit += quarter;
    }
    const count = Math.min(EPOCH, Math.ceil((limit - iterations) / K));
    chains.forEach((ch, c) => ch.begin({ count, adopt: adopter[c] ? adopt : undefined }));
    const reports = chains.map((ch) => ch.end());
    const met = meet(ctx, reports, bests, curve, iterations);
    iterations = met.iterations;
    if (isBetter(bests[met.best], best)) best = bests[met.best].clone();
    adopter = met.adopter;
    adopt = adopter.some(Boolean) ? bests[met.best].routes : undefined;
    if (reports.some((r) => r.timedOut)) {
      stoppedBy = 'time';
      break;
    }
    if (reports.every((r) => r.converged)) {
      stoppedBy = 'converged';
      break;
    }
  }
  localSearch(best, ctx);
  if (ctx.now() > ctx.deadline) stoppedBy = 'time';
  return { best, iterations, stoppedBy, curve };
}
