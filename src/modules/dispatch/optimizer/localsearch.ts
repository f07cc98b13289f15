import { MAX_EXACT_STOPS, exactRouteOrder } from './exact-route.js';
import { startNode, type Instance } from './instance.js';
import {
  EPS,
  bestInsertion,
  feasibleCostFrom,
  isPickup,
  routeCost,
  timePrefixes,
  tripOf,
  withInsertion,
  withoutTrip,
  type Insertion,
  type Scratch,
} from './route.js';
import { insertionInto, type Solution } from './solution.js';

/** Exact re-orderings remembered (by driver and stop sequence) before the memo starts over. */
const EXACT_MEMO_SIZE = 50_000;

/** Related trips tried per trip by the exchange move. */
const EXCHANGE_K = 30;

export interface SearchContext {
  inst: Instance;
  scratch: Scratch;
  /** Per trip, the most related trips (close pickups and close dropoffs), nearest first. */
  neighbors: Int32Array[];
  deadline: number;
  now: () => number;
}

/**
 * Intra-route improvement. Routes of at most `exactUpTo` stops are re-ordered optimally (dynamic
 * programming, once per route version); longer ones get a descent until no move improves: or-opt
 * (move a run of 1 to 3 consecutive stops elsewhere) and 2-opt (reverse a run), both priced in O(1)
 * and kept only if precedence and capacity still hold (O(n) check). O(n²) per scan.
 */
export function improveRoute(sol: Solution, d: number, scratch: Scratch, exactUpTo = 0): boolean {
  const inst = sol.inst;
  if (sol.routes[d].length <= exactUpTo) {
    if (sol.exact[d]) return false;
    // the same sequence keeps coming back in the search (trips removed and put back where they were)
    const key = routeKey(inst, d, sol.routes[d]);
    let order = scratch.exactOrders.get(key);
    if (order === undefined) {
      order = exactRouteOrder(inst, d, sol.routes[d], sol.cost[d]);
      if (scratch.exactOrders.size >= EXACT_MEMO_SIZE) scratch.exactOrders.clear();
      scratch.exactOrders.set(key, order);
    }
    if (order) sol.setRoute(d, order);
    sol.exact[d] = 1;
    return order !== null;
  }
  let changed = false;
  while (orOptMove(sol, d, scratch) || twoOptMove(sol, d, scratch)) changed = true;
  return changed;
}

/**
 * A string that tells (driver, stops) apart from any other, for the exact-order memo: one UTF-16
 * code unit per number when every node number fits in one (cheaper to build than decimals), else
 * the numbers in decimal.
 */
function routeKey(inst: Instance, d: number, stops: readonly number[]): string {
  return inst.n <= 0xffff ? String.fromCharCode(d, ...stops) : `${d}:${stops.join(',')}`;
}

/** Apply `seq` to route d when it is feasible and shorter; its first `from` stops are the route's (see feasibleCostFrom). */
function tryApply(sol: Solution, d: number, scratch: Scratch, len: number, from: number): boolean {
  const c = feasibleCostFrom(sol.inst, d, scratch.seq, from, len, scratch, sol.cost[d] - EPS);
  if (c === Infinity) return false;
  sol.setRoute(d, scratch.seq.slice(0, len));
  return true;
}

/**
 * Slack of the or-opt lower bound (relative to the route cost): a bound within this of the cost to
 * beat is still simulated, so floating-point rounding never skips a move the simulation would keep.
 */
const BOUND_TOLERANCE = 1e-6;

/**
 * First improving or-opt move (segment [a, e] re-inserted after stop k, without reversal).
 *
 * Under a time objective every candidate is simulated (feasibleCostFrom), unless a lower bound
 * shows that it cannot improve. The bound holds when no pickup of the route waits for its trip:
 * the route's times are then plain sums of travel and service times, and so are those of the moved
 * route when waiting is ignored; waiting only makes stops later, so the moved route's cost is at
 * least that of three blocks of stops shifted by constant amounts (O(1) with the prefix counts of
 * drop-offs). Skipped candidates are ones the simulation would reject: the same move is found.
 */
function orOptMove(sol: Solution, d: number, scratch: Scratch): boolean {
  const inst = sol.inst;
  const { dist, travel, n: N, wTime, wDist } = inst;
  const stops = sol.routes[d];
  const n = stops.length;
  const s0 = startNode(inst, d);
  const node = (k: number) => (k < 0 ? s0 : stops[k]);
  const seq = scratch.seq;
  const pos = scratch.pos;
  for (let x = 0; x < n; x++) pos[stops[x]] = x;
  timePrefixes(inst, d, stops, scratch);
  // preTime[x + 1]: the departure from stop x (0 for the start, x = -1)
  const { preTime, preDrops, arrAt } = scratch;
  const bounded = wTime > 0 && sol.wait[d] === 0;
  const bound = sol.cost[d] - EPS;
  const slack = BOUND_TOLERANCE * Math.max(1, Math.abs(bound));
  for (let len = 1; len <= 3; len++) {
    for (let a = 0; a + len <= n; a++) {
      const e = a + len - 1;
      // precedence bounds on k: before the dropoffs, after the pickups of the segment's trips
      let lo = -1;
      let hi = n - 1;
      for (let x = a; x <= e; x++) {
        const mate = pos[stops[x] ^ 1];
        if (isPickup(stops[x])) {
          if (mate > e) hi = Math.min(hi, mate - 1);
        } else if (mate < a) lo = Math.max(lo, mate);
      }
      const first = stops[a];
      const last = stops[e];
      const prev = node(a - 1);
      const gain =
        e + 1 < n ? dist[prev * N + first] + dist[last * N + stops[e + 1]] - dist[prev * N + stops[e + 1]] : dist[prev * N + first];
      const segDrops = preDrops[e + 1] - preDrops[a];
      // the stops after the segment, once it is taken out: their shift
      const closed = e + 1 < n ? preTime[a] + travel[prev * N + stops[e + 1]] - arrAt[e + 1] : 0;
      for (let k = lo; k <= hi; k++) {
        if (k >= a - 1 && k <= e) continue;
        const u = node(k);
        const added = k + 1 < n ? dist[u * N + first] + dist[last * N + stops[k + 1]] - dist[u * N + stops[k + 1]] : dist[u * N + first];
        // priced by distance alone: a filter only when the objective is the distance
        if (wTime === 0 && added >= gain - EPS) continue;
        if (bounded) {
          // the segment's shift, then that of the stops after its new place, then of the rest
          let dTime: number;
          if (k > e) {
            const segShift = preTime[k + 1] + closed + travel[u * N + first] - arrAt[a];
            dTime = closed * (preDrops[k + 1] - preDrops[e + 1]) + segShift * segDrops;
            if (k + 1 < n)
              dTime += (preTime[e + 1] + segShift + travel[last * N + stops[k + 1]] - arrAt[k + 1]) * (preDrops[n] - preDrops[k + 1]);
          } else {
            const segShift = preTime[k + 1] + travel[u * N + first] - arrAt[a];
            const between = preTime[e + 1] + segShift + travel[last * N + stops[k + 1]] - arrAt[k + 1];
            dTime = segShift * segDrops + between * (preDrops[a] - preDrops[k + 1]);
            if (e + 1 < n)
              dTime += (preTime[a] + between + travel[prev * N + stops[e + 1]] - arrAt[e + 1]) * (preDrops[n] - preDrops[e + 1]);
          }
          if (sol.cost[d] + wTime * dTime + wDist * (added - gain) > bound + slack) continue;
        }
        let w = 0;
        if (k < a) {
          for (let x = 0; x <= k; x++) seq[w++] = stops[x];
          for (let x = a; x <= e; x++) seq[w++] = stops[x];
          for (let x = k + 1; x < n; x++) if (x < a || x > e) seq[w++] = stops[x];
        } else {
          for (let x = 0; x <= k; x++) if (x < a || x > e) seq[w++] = stops[x];
          for (let x = a; x <= e; x++) seq[w++] = stops[x];
          for (let x = k + 1; x < n; x++) seq[w++] = stops[x];
        }
        if (tryApply(sol, d, scratch, n, Math.min(a, k + 1))) return true;
      }
    }
  }
  return false;
}

/**
 * First improving 2-opt move (stops[a..b] reversed); inner costs kept both ways for asymmetric
 * matrices. Under a time objective, a route without waiting skips the runs that a lower bound
 * shows cannot improve, as orOptMove does: with waiting ignored the reversed run's drop-off times
 * and its end follow from the run one stop shorter in O(1), and the stops after it shift by a
 * constant.
 */
function twoOptMove(sol: Solution, d: number, scratch: Scratch): boolean {
  const inst = sol.inst;
  const { dist, travel, n: N, wTime, wDist, svcPickup, svcDropoff } = inst;
  const stops = sol.routes[d];
  const n = stops.length;
  const seq = scratch.seq;
  const s0 = startNode(inst, d);
  const pos = scratch.pos;
  for (let x = 0; x < n; x++) pos[stops[x]] = x;
  timePrefixes(inst, d, stops, scratch);
  const { preTime, preDrops, preDropArr, arrAt } = scratch;
  const bounded = wTime > 0 && sol.wait[d] === 0;
  const bound = sol.cost[d] - EPS;
  const slack = BOUND_TOLERANCE * Math.max(1, Math.abs(bound));
  for (let a = 0; a < n - 1; a++) {
    const prev = a === 0 ? s0 : stops[a - 1];
    let forward = 0;
    let backward = 0;
    // the reversed run, from the departure at prev: its duration, sum of drop-off arrivals, drop-offs
    const first = stops[a];
    let runEnd = travel[prev * N + first] + (isPickup(first) ? svcPickup : svcDropoff);
    let runDrops = isPickup(first) ? 0 : 1;
    let runArr = runDrops * travel[prev * N + first];
    for (let b = a + 1; b < n; b++) {
      // a trip with both ends in the run would be dropped off before its pickup
      if (!isPickup(stops[b]) && pos[stops[b] - 1] >= a) break;
      forward += dist[stops[b - 1] * N + stops[b]];
      backward += dist[stops[b] * N + stops[b - 1]];
      const next = b + 1 < n ? stops[b + 1] : -1;
      const before = dist[prev * N + stops[a]] + forward + (next >= 0 ? dist[stops[b] * N + next] : 0);
      const after = dist[prev * N + stops[b]] + backward + (next >= 0 ? dist[stops[a] * N + next] : 0);
      if (wTime === 0 && after >= before - EPS) continue;
      if (bounded) {
        // stops[b] now comes first: the rest of the run moves by `delay`
        const sb = stops[b];
        const toB = travel[prev * N + sb];
        const delay = toB + (isPickup(sb) ? svcPickup : svcDropoff) + travel[sb * N + stops[b - 1]] - travel[prev * N + stops[b - 1]];
        runArr += runDrops * delay + (isPickup(sb) ? 0 : toB);
        runDrops += isPickup(sb) ? 0 : 1;
        runEnd += delay;
        const depPrev = preTime[a];
        let dTime = runDrops * depPrev + runArr - (preDropArr[b + 1] - preDropArr[a]);
        if (next >= 0) dTime += (depPrev + runEnd + travel[stops[a] * N + next] - arrAt[b + 1]) * (preDrops[n] - preDrops[b + 1]);
        if (sol.cost[d] + wTime * dTime + wDist * (after - before) > bound + slack) continue;
      }
      for (let k = 0; k < n; k++) seq[k] = k < a || k > b ? stops[k] : stops[a + b - k];
      if (tryApply(sol, d, scratch, n, a)) return true;
    }
  }
  return false;
}

/**
 * Relocate: take each trip out (pickup and dropoff together) and put it back at its cheapest
 * feasible positions in any route, its own included, when that is shorter. O(T·D·n²) per pass.
 */
export function relocatePass(sol: Solution, ctx: SearchContext, only?: readonly number[]): boolean {
  const { inst, scratch } = ctx;
  const ins: Insertion = { cost: Infinity, i: 0, j: 0 };
  let improvedAny = false;
  const count = only ? only.length : inst.tripCount;
  for (let x = 0; x < count; x++) {
    const t = only ? only[x] : x;
    const r = sol.routeOf[t];
    if (r < 0) continue;
    const without = withoutTrip(sol.routes[r], t);
    const gain = sol.cost[r] - routeCost(inst, r, without);
    let bestCost = gain - EPS;
    let bestRoute = -1;
    let best: Insertion | null = null;
    for (let d = 0; d < inst.driverCount; d++) {
      const c = d === r ? bestInsertion(inst, d, without, t, scratch, ins) : insertionInto(sol, d, t, scratch, ins);
      if (c < bestCost) {
        bestCost = c;
        bestRoute = d;
        best = { ...ins };
      }
    }
    if (best) {
      sol.setRoute(r, without);
      sol.setRoute(bestRoute, withInsertion(sol.routes[bestRoute], t, best));
      improvedAny = true;
    }
    if ((x & 31) === 31 && ctx.now() > ctx.deadline) break;
  }
  return improvedAny;
}

/**
 * Exchange: swap two related trips on different routes, each re-inserted at its cheapest positions
 * in the other's route. O(T·K·n²) per pass with K neighbours per trip.
 */
export function exchangePass(sol: Solution, ctx: SearchContext): boolean {
  const { inst, scratch, neighbors } = ctx;
  const ia: Insertion = { cost: Infinity, i: 0, j: 0 };
  const ib: Insertion = { cost: Infinity, i: 0, j: 0 };
  let improvedAny = false;
  for (let a = 0; a < inst.tripCount; a++) {
    for (let x = 0; x < Math.min(EXCHANGE_K, neighbors[a].length); x++) {
      const b = neighbors[a][x];
      const ra = sol.routeOf[a];
      const rb = sol.routeOf[b];
      if (ra < 0 || rb < 0 || ra === rb) continue;
      const restA = withoutTrip(sol.routes[ra], a);
      const restB = withoutTrip(sol.routes[rb], b);
      const baseA = routeCost(inst, ra, restA);
      const baseB = routeCost(inst, rb, restB);
      const budget = sol.cost[ra] + sol.cost[rb] - baseA - baseB - EPS;
      const cb = bestInsertion(inst, ra, restA, b, scratch, ib);
      if (cb >= budget) continue;
      const ca = bestInsertion(inst, rb, restB, a, scratch, ia);
      if (cb + ca >= budget) continue;
      sol.setRoute(ra, withInsertion(restA, b, ib));
      sol.setRoute(rb, withInsertion(restB, a, ia));
      improvedAny = true;
    }
    if ((a & 31) === 31 && ctx.now() > ctx.deadline) break;
  }
  return improvedAny;
}

/**
 * Raise the assigned count: insert each unassigned trip where it fits; failing that, eject-and-insert
 * (ejectInsert over every route).
 */
export function assignMorePass(sol: Solution, ctx: SearchContext): boolean {
  const { inst, scratch } = ctx;
  const D = inst.driverCount;
  const ins: Insertion = { cost: Infinity, i: 0, j: 0 };
  const everyRoute = (_t: number, into: Uint8Array) => into.fill(1);
  const moves: Moves = new Map();
  let improvedAny = false;
  for (const u of sol.unassignedTrips()) {
    if (ctx.now() > ctx.deadline) break;
    let best = Infinity;
    let at: Insertion | null = null;
    let route = -1;
    for (let d = 0; d < D; d++) {
      const c = insertionInto(sol, d, u, scratch, ins);
      if (c < best) {
        best = c;
        route = d;
        at = { ...ins };
      }
    }
    if (at) sol.setRoute(route, withInsertion(sol.routes[route], u, at));
    if (at || ejectInsert(sol, ctx, u, everyRoute, moves)) {
      improvedAny = true;
      moves.clear();
    }
  }
  return improvedAny;
}

/**
 * Where each assigned trip could move (ejectInsert): its cheapest insertion in another route, or
 * d2 = -1. A function of the solution alone (for the same `routes`), so it holds for every
 * unassigned trip until the solution changes.
 */
type Moves = Map<number, { cost: number; d2: number; at: Insertion }>;

/**
 * Eject-and-insert for the unassigned trip u: in a route that `routes` marks for u, take out one
 * trip t that has a feasible place in another route marked for t, put u where it fits best in what
 * is left, and move t to its cheapest place; of all such pairs the cheapest change of the objective
 * is applied. The assigned count rises by one, or nothing changes (false). `routes` writes the marks
 * (1 = worth trying) into its buffer, as RecreateOptions.candidates does. `moves`, when given,
 * keeps where each trip could go from one call to the next (the caller clears it whenever the
 * solution changes, and passes the same `routes`).
 */
export function ejectInsert(
  sol: Solution,
  ctx: SearchContext,
  u: number,
  routes: (t: number, into: Uint8Array) => void,
  moves?: Moves,
): boolean {
  const { inst, scratch } = ctx;
  const D = inst.driverCount;
  const forU = new Uint8Array(D);
  const forT = new Uint8Array(D);
  const ins: Insertion = { cost: Infinity, i: 0, j: 0 };
  const moved: Insertion = { cost: Infinity, i: 0, j: 0 };
  routes(u, forU);
  let best = Infinity;
  let bd = -1;
  let bd2 = -1;
  let bt = -1;
  let bestRest: number[] = [];
  const atU: Insertion = { cost: Infinity, i: 0, j: 0 };
  const atT: Insertion = { cost: Infinity, i: 0, j: 0 };
  const bestAtT: Insertion = { cost: Infinity, i: 0, j: 0 };
  for (let d = 0; d < D; d++) {
    if (!forU[d] || !inst.compat[u * D + d] || inst.room[d] < 1) continue;
    const stops = sol.routes[d];
    for (const s of stops) {
      if (!isPickup(s)) continue;
      const t = tripOf(s);
      // where t could go first: independent of u, and remembered per route version (and in `moves`
      // while the solution is the same)
      let move = moves?.get(t);
      if (!move) {
        routes(t, forT);
        let ct = Infinity;
        let d2 = -1;
        for (let r = 0; r < D; r++) {
          if (r === d || !forT[r]) continue;
          const c = insertionInto(sol, r, t, scratch, moved);
          if (c < ct) {
            ct = c;
            d2 = r;
            Object.assign(atT, moved);
          }
        }
        move = { cost: ct, d2, at: { ...atT } };
        moves?.set(t, move);
      }
      const { cost: ct, d2 } = move;
      if (d2 < 0) continue;
      Object.assign(atT, move.at);
      const rest = withoutTrip(stops, t);
      const cu = bestInsertion(inst, d, rest, u, scratch, ins);
      if (cu === Infinity) continue;
      const delta = routeCost(inst, d, rest) + cu - sol.cost[d] + ct;
      if (delta < best) {
        best = delta;
        bd = d;
        bd2 = d2;
        bt = t;
        bestRest = rest;
        Object.assign(atU, ins);
        Object.assign(bestAtT, atT);
      }
    }
  }
  if (bd < 0) return false;
  sol.setRoute(bd2, withInsertion(sol.routes[bd2], bt, bestAtT));
  sol.setRoute(bd, withInsertion(bestRest, u, atU));
  return true;
}
/** Descent over all neighbourhoods until none improves or the deadline passes. */
export function localSearch(sol: Solution, ctx: SearchContext): void {
  for (let d = 0; d < ctx.inst.driverCount; d++) improveRoute(sol, d, ctx.scratch, MAX_EXACT_STOPS);
  while (ctx.now() <= ctx.deadline) {
    let improved = assignMorePass(sol, ctx);
    improved = relocatePass(sol, ctx) || improved;
    improved = exchangePass(sol, ctx) || improved;
    for (let d = 0; d < ctx.inst.driverCount; d++) improved = improveRoute(sol, d, ctx.scratch, MAX_EXACT_STOPS) || improved;
    if (!improved) return;
  }
}
