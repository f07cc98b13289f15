/**
 * The time-window solver (see pdptw-model.ts): regret insertion to start, then large neighbourhood search (ruin
 * and recreate of whole trips, i.e. pickup-and-delivery pairs), in two phases for the objective `vehicles`:
 *
 * 1. Route elimination: take the route with the fewest trips out, its trips in a bank, and search with the routes
 *    left (no new route may open) to empty the bank: the candidate is judged by the summed weights of the trips left
 *    out (each iteration a trip stays out its weight grows, so hard trips get in first), then by distance. An empty
 *    bank is a solution with one route less; a bank that does not empty within its share of the iterations ends
 *    the phase (the last complete solution stays).
 * 2. Distance: simulated annealing over ruin and recreate with the vehicles used so far (again no route opens).
 *
 * Other objectives run phase 2 only, with every vehicle available, and minimise (trips left out, objective cost).
 * Ruins: random trips, related trips (Shaw: distance of the pickups and drop-offs, windows, loads), worst trips
 * (largest saving), strings (a stretch of stops of a route and of routes nearby), a whole route. Recreates:
 * regret-2 and greedy in a random or sorted order, both with insertion-cost noise. Counted, not timed: a seed and an
 * iteration budget give the same plan anywhere (the time budget is only a ceiling).
 */
import { mulberry32, randInt, shuffle, type Rng } from './prng.js';
import {
  DIMS,
  TOL,
  TwSolution,
  bestPairInsertion,
  compileTw,
  endOf,
  makeRoute,
  startOf,
  stopsWith,
  stopsWithout,
  type PairInsertion,
  type TwInstance,
  type TwRoute,
} from './pdptw-model.js';
import { DEFAULTS } from './instance.js';
import type { OptimizerOptions, OptimizerProblem, Plan, PlannedRoute, PlannedStop, UnassignedReason } from './types.js';

/** Related trips kept per trip. */
const RELATED = 40;
/** Insertion noise: a share of the longest distance of the instance. */
const NOISE = 0.025;
/** Simulated annealing: the temperature falls from START to END (shares of the start cost) over the phase. */
const TEMP_START = 0.01;
const TEMP_END = 0.0002;
/**
 * Objective vehicles: share of the iterations for a first annealing by distance alone, every vehicle available, before
 * route elimination. Eliminating routes from the construction left long-horizon instances (few long routes, wide
 * windows) in a corner the distance phase with the routes fixed could not leave: 20-30 % over the best known distance
 * on lr209 and lrc203 at the same vehicle count, against 0.0 % when elimination starts from a distance-optimised plan.
 */
const DISTANCE_FIRST = 0.2;
/** Share of a phase's time before the time may set its temperature (see annealing). */
const TIME_SLACK = 0.1;
/** Share of the time ceiling kept for building the plan after the search. */
const PLAN_SHARE = 0.02;
/** Share of the iterations route elimination may use at most (objective vehicles). */
const ELIMINATION_SHARE = 0.5;
/** Iterations one elimination attempt may take without emptying its bank: this many per trip of the instance, at least ELIM_MIN. */
const ELIM_PER_TRIP = 40;
const ELIM_MIN = 1500;

/** Default iteration budget of the time-window solver for T trips. */
export const twIterations = (T: number, objective: string | undefined) =>
  objective === 'vehicles' ? Math.round(Math.min(60_000, 8000 + 200 * T)) : Math.round(Math.min(20_000, 2500 + 15 * T));

interface Ctx {
  inst: TwInstance;
  rng: Rng;
  related: Int32Array[];
  noise: number;
  now: () => number;
  ins: PairInsertion;
}

function relatedTrips(inst: TwInstance): Int32Array[] {
  const { T, dist, n, early, late, dem } = inst;
  let maxD = 1e-9;
  let horizon = 1e-9;
  let maxQ = 1e-9;
  for (let t = 0; t < T; t++) {
    for (const x of [2 * t, 2 * t + 1]) horizon = Math.max(horizon, early[x], Number.isFinite(late[x]) ? late[x] : 0);
    maxQ = Math.max(maxQ, dem[2 * t * DIMS]);
  }
  for (let a = 0; a < 2 * T; a++) for (let b = 0; b < 2 * T; b++) maxD = Math.max(maxD, dist[a * n + b]);
  const rel = new Float64Array(T);
  const all = Array.from({ length: T }, (_, t) => t);
  return Array.from({ length: T }, (_, a) => {
    for (let b = 0; b < T; b++) {
      const pa = 2 * a;
      const pb = 2 * b;
      rel[b] =
        (9 * (dist[pa * n + pb] + dist[(pa + 1) * n + pb + 1])) / maxD +
        (3 * (Math.abs(early[pa] - early[pb]) + Math.abs(early[pa + 1] - early[pb + 1]))) / horizon +
        (2 * Math.abs(dem[pa * DIMS] - dem[pb * DIMS])) / maxQ;
    }
    return Int32Array.from(
      all
        .filter((b) => b !== a)
        .sort((x, y) => rel[x] - rel[y] || x - y)
        .slice(0, RELATED),
    );
  });
}

/**
 * Which vehicles may receive trips: `allowed[v]` (all when null); of the empty allowed ones, only the first of each
 * twin class is priced (the others would give the same answer).
 */
function receivers(sol: TwSolution, allowed: Uint8Array | null): Uint8Array {
  const inst = sol.inst;
  const out = new Uint8Array(inst.D);
  const seen = new Set<number>();
  for (let v = 0; v < inst.D; v++) {
    if (allowed && !allowed[v]) continue;
    if (sol.routes[v].nodes.length > 2) out[v] = 1;
    else if (!seen.has(inst.twin[v])) {
      seen.add(inst.twin[v]);
      out[v] = 1;
    }
  }
  return out;
}

/** The next empty vehicle of v's twin class that may receive trips, or -1. */
function nextTwin(sol: TwSolution, v: number, allowed: Uint8Array | null, open: Uint8Array): number {
  const inst = sol.inst;
  for (let w = 0; w < inst.D; w++) {
    if (w === v || open[w] || (allowed && !allowed[w])) continue;
    if (inst.twin[w] === inst.twin[v] && sol.routes[w].nodes.length === 2) return w;
  }
  return -1;
}

function insertTrip(sol: TwSolution, v: number, t: number, ins: PairInsertion): void {
  sol.setRoute(v, makeRoute(sol.inst, v, stopsWith(sol.routes[v], t, ins)));
}

/** Regret-2 insertion of `pending` into the vehicles `allowed` (null: all); trips with no feasible place stay out. */
function regretInsert(sol: TwSolution, pending: readonly number[], ctx: Ctx, allowed: Uint8Array | null, noisy: boolean): void {
  const inst = sol.inst;
  const D = inst.D;
  const k = pending.length;
  if (k === 0) return;
  const open = receivers(sol, allowed);
  const cost = new Float64Array(k * D).fill(Infinity);
  const pi = new Int32Array(k * D);
  const pj = new Int32Array(k * D);
  const ins = ctx.ins;
  const price = (a: number, v: number) => {
    const c = bestPairInsertion(inst, v, sol.routes[v], pending[a], ins);
    cost[a * D + v] = c === Infinity ? c : c + (noisy ? ctx.noise * (2 * ctx.rng() - 1) : 0);
    pi[a * D + v] = ins.i;
    pj[a * D + v] = ins.j;
  };
  for (let a = 0; a < k; a++) for (let v = 0; v < D; v++) if (open[v]) price(a, v);
  const alive = new Uint8Array(k).fill(1);
  for (let left = k; left > 0; left--) {
    let pick = -1;
    let pickV = -1;
    let pickRegret = -Infinity;
    let pickCost = Infinity;
    for (let a = 0; a < k; a++) {
      if (!alive[a]) continue;
      let c1 = Infinity;
      let c2 = Infinity;
      let v1 = -1;
      for (let v = 0; v < D; v++) {
        const c = cost[a * D + v];
        if (c < c1) {
          c2 = c1;
          c1 = c;
          v1 = v;
        } else if (c < c2) c2 = c;
      }
      if (v1 < 0) continue;
      const regret = c2 === Infinity ? 1e30 - c1 : c2 - c1;
      if (regret > pickRegret || (regret === pickRegret && c1 < pickCost)) {
        pick = a;
        pickV = v1;
        pickRegret = regret;
        pickCost = c1;
      }
    }
    if (pick < 0) return;
    alive[pick] = 0;
    const wasEmpty = sol.routes[pickV].nodes.length === 2;
    insertTrip(sol, pickV, pending[pick], { cost: 0, i: pi[pick * D + pickV], j: pj[pick * D + pickV] });
    for (let a = 0; a < k; a++) if (alive[a]) price(a, pickV);
    if (wasEmpty) {
      const w = nextTwin(sol, pickV, allowed, open);
      if (w >= 0) {
        open[w] = 1;
        for (let a = 0; a < k; a++) if (alive[a]) price(a, w);
      }
    }
  }
}

/** Greedy insertion in the given order: each trip at its cheapest feasible place (with noise when asked). */
function greedyInsert(sol: TwSolution, order: readonly number[], ctx: Ctx, allowed: Uint8Array | null, noisy: boolean): void {
  const inst = sol.inst;
  const open = receivers(sol, allowed);
  const ins = ctx.ins;
  const best: PairInsertion = { cost: Infinity, i: 0, j: 0 };
  for (const t of order) {
    let bv = -1;
    best.cost = Infinity;
    for (let v = 0; v < inst.D; v++) {
      if (!open[v]) continue;
      let c = bestPairInsertion(inst, v, sol.routes[v], t, ins);
      if (c === Infinity) continue;
      if (noisy) c += ctx.noise * (2 * ctx.rng() - 1);
      if (c < best.cost) {
        best.cost = c;
        best.i = ins.i;
        best.j = ins.j;
        bv = v;
      }
    }
    if (bv < 0) continue;
    const wasEmpty = sol.routes[bv].nodes.length === 2;
    insertTrip(sol, bv, t, best);
    if (wasEmpty) {
      const w = nextTwin(sol, bv, allowed, open);
      if (w >= 0) open[w] = 1;
    }
  }
}

/** Takes the trips marked in `gone` out of their routes. */
function removeTrips(sol: TwSolution, removed: readonly number[]): void {
  const gone = new Uint8Array(sol.inst.T);
  const touched = new Set<number>();
  for (const t of removed) {
    gone[t] = 1;
    if (sol.routeOf[t] >= 0) touched.add(sol.routeOf[t]);
  }
  for (const v of touched) sol.setRoute(v, makeRoute(sol.inst, v, stopsWithout(sol.routes[v], gone)));
}

function assignedTrips(sol: TwSolution): number[] {
  const out: number[] = [];
  for (let t = 0; t < sol.inst.T; t++) if (sol.routeOf[t] >= 0) out.push(t);
  return out;
}

/** Distance saved by taking trip t out of its route (its two stops bridged). */
function removalSaving(sol: TwSolution, t: number): number {
  const inst = sol.inst;
  const { dist, n } = inst;
  const r = sol.routes[sol.routeOf[t]];
  const nodes = r.nodes;
  let ip = -1;
  let iq = -1;
  for (let k = 1; k < nodes.length - 1; k++) {
    if (nodes[k] === 2 * t) ip = k;
    else if (nodes[k] === 2 * t + 1) iq = k;
  }
  if (iq === ip + 1) {
    const a = nodes[ip - 1];
    const b = nodes[iq + 1];
    return dist[a * n + nodes[ip]] + dist[nodes[ip] * n + nodes[iq]] + dist[nodes[iq] * n + b] - dist[a * n + b];
  }
  const bridge = (k: number) =>
    dist[nodes[k - 1] * n + nodes[k]] + dist[nodes[k] * n + nodes[k + 1]] - dist[nodes[k - 1] * n + nodes[k + 1]];
  return bridge(ip) + bridge(iq);
}

/** Picks the trips to take out of `sol` (`q` of them, fewer when fewer are assigned). */
function chooseRuin(sol: TwSolution, ctx: Ctx, q: number): number[] {
  const { rng, inst } = ctx;
  const assigned = assignedTrips(sol);
  if (assigned.length === 0) return [];
  q = Math.min(q, assigned.length);
  const out = new Set<number>();
  const kind = rng();
  if (kind < 0.3) {
    // related (Shaw): around a random seed, from its and the removed trips' related lists
    out.add(assigned[randInt(rng, assigned.length)]);
    let guard = 0;
    while (out.size < q && guard++ < 50 * q) {
      const from = [...out][randInt(rng, out.size)];
      const list = ctx.related[from].filter((b) => sol.routeOf[b] >= 0 && !out.has(b));
      if (list.length === 0) break;
      out.add(list[Math.floor(Math.pow(rng(), 4) * list.length)]);
    }
  } else if (kind < 0.5) {
    // strings: a stretch of stops of the seed's route and of the routes of its related trips
    const seed = assigned[randInt(rng, assigned.length)];
    const routes = [sol.routeOf[seed]];
    for (const b of ctx.related[seed]) {
      const v = sol.routeOf[b];
      if (v >= 0 && !routes.includes(v)) routes.push(v);
      if (routes.length >= 1 + randInt(rng, 4)) break;
    }
    const per = Math.max(1, Math.round(q / routes.length));
    for (const v of routes) {
      const nodes = sol.routes[v].nodes;
      const stops = nodes.length - 2;
      const len = Math.min(stops, 2 * per);
      const from = 1 + randInt(rng, stops - len + 1);
      for (let k = from; k < from + len && out.size < q; k++) out.add(nodes[k] >> 1);
    }
  } else if (kind < 0.65) {
    // worst: the trips whose removal saves the most, randomised
    const saving = new Float64Array(inst.T);
    for (const t of assigned) saving[t] = removalSaving(sol, t);
    const sorted = assigned.slice().sort((a, b) => saving[b] - saving[a] || a - b);
    while (out.size < q) out.add(sorted.splice(Math.floor(Math.pow(rng(), 3) * sorted.length), 1)[0]);
  } else if (kind < 0.72) {
    // a whole route, the shorter ones more likely
    const used = sol.routes.map((r, v) => ({ v, trips: r.trips })).filter((x) => x.trips > 0);
    used.sort((a, b) => a.trips - b.trips || a.v - b.v);
    const pick = used[Math.floor(Math.pow(rng(), 2) * used.length)];
    const nodes = sol.routes[pick.v].nodes;
    for (let k = 1; k < nodes.length - 1; k++) out.add(nodes[k] >> 1);
  }
  while (out.size < q) out.add(assigned[randInt(rng, assigned.length)]);
  return [...out];
}

/** Recreate: regret-2 or greedy (random order, or by earliest pickup, or farthest first), with or without noise. */
function recreate(sol: TwSolution, pending: number[], ctx: Ctx, allowed: Uint8Array | null, priority?: Float64Array): void {
  const { rng, inst } = ctx;
  const noisy = rng() < 0.5;
  const how = rng();
  if (priority) {
    // the heaviest trips (left out the longest) first
    pending.sort((a, b) => priority[b] - priority[a] || a - b);
    if (how < 0.5) {
      greedyInsert(sol, pending, ctx, allowed, noisy);
      return;
    }
  }
  if (how < 0.5) regretInsert(sol, pending, ctx, allowed, noisy);
  else {
    const order = shuffle(rng, pending.slice());
    const sortBy = rng();
    if (sortBy < 0.3) order.sort((a, b) => inst.early[2 * a] - inst.early[2 * b]);
    else if (sortBy < 0.5) order.sort((a, b) => inst.late[2 * a] - inst.early[2 * a] - (inst.late[2 * b] - inst.early[2 * b]));
    else if (sortBy < 0.7) {
      const far = (t: number) => inst.dist[startOf(inst, 0) * inst.n + 2 * t];
      order.sort((a, b) => far(b) - far(a));
    }
    greedyInsert(sol, order, ctx, allowed, noisy);
  }
}

const ruinSize = (T: number, rng: Rng) => {
  const hi = Math.max(1, Math.min(T, Math.max(4, Math.min(40, Math.round(0.3 * T)))));
  const lo = Math.min(hi, 2);
  return lo + randInt(rng, hi - lo + 1);
};

export interface PhaseResult {
  iterations: number;
  /** The time ceiling cut the phase or, running ahead of the iterations, set its temperature: no longer reproducible. */
  timedOut: boolean;
}

interface Curve {
  iteration: number;
  assigned: number;
  cost: number;
}

/**
 * Phase 2: simulated annealing over ruin and recreate from `start` for `budget` iterations, vehicles `allowed`
 * (null: all). Returns the best (most trips, then the lowest cost).
 */
function annealing(
  start: TwSolution,
  ctx: Ctx,
  budget: number,
  allowed: Uint8Array | null,
  curve: Curve[],
  base: number,
  distanceOnly: boolean,
  phaseEnd: number,
): { best: TwSolution } & PhaseResult {
  const { rng, inst } = ctx;
  const phaseStart = ctx.now();
  const span = Math.max(1e-9, phaseEnd - phaseStart);
  const value = (s: TwSolution) => (distanceOnly ? s.cost - inst.vehicleCost * s.used : s.cost);
  let current = start;
  let best = start;
  const scale = Math.max(1e-9, start.cost - inst.vehicleCost * start.used);
  const t0 = TEMP_START * scale;
  const t1 = TEMP_END * scale;
  let it = 0;
  let timedOut = false;
  for (; it < budget; it++) {
    // The temperature falls with the iterations; only when the phase's time runs out faster (its share of the
    // time, past a tenth kept as slack, ahead of its share of the iterations) with the time, and the run is then
    // no longer reproducible.
    let progress = it / Math.max(1, budget);
    const elapsed = (ctx.now() - phaseStart) / span;
    if (elapsed >= 1) {
      timedOut = true;
      break;
    }
    const byTime = (elapsed - TIME_SLACK) / (1 - TIME_SLACK);
    if (byTime > progress) {
      timedOut = true;
      progress = byTime;
    }
    const temp = t0 * Math.pow(t1 / t0, progress);
    const cand = current.clone();
    const removed = chooseRuin(cand, ctx, ruinSize(inst.T, rng));
    removeTrips(cand, removed);
    const pending = [...new Set([...removed, ...unassigned(cand)])];
    recreate(cand, pending, ctx, allowed);
    if (cand.assigned < current.assigned) continue;
    if (cand.assigned > current.assigned || value(cand) < value(current) - temp * Math.log(rng())) current = cand;
    if (cand.assigned > best.assigned || (cand.assigned === best.assigned && value(cand) < value(best) - TOL)) {
      best = cand;
      curve.push({ iteration: base + it + 1, assigned: best.assigned, cost: best.cost });
    }
  }
  return { best, iterations: it, timedOut };
}

function unassigned(sol: TwSolution): number[] {
  const out: number[] = [];
  for (let t = 0; t < sol.inst.T; t++) if (sol.routeOf[t] < 0) out.push(t);
  return out;
}

/**
 * Phase 1 (objective vehicles): removes routes one at a time while the search can place their trips elsewhere,
 * within `budget` iterations. Returns the complete solution with the fewest routes found.
 */
function eliminateRoutes(
  start: TwSolution,
  ctx: Ctx,
  budget: number,
  curve: Curve[],
  phaseEnd: number,
): { best: TwSolution } & PhaseResult {
  const { inst, rng } = ctx;
  let best = start;
  let used = 0;
  let timedOut = false;
  const attemptCap = Math.max(ELIM_MIN, ELIM_PER_TRIP * inst.T);
  const weight = new Float64Array(inst.T);
  while (used < budget && best.used > 1 && !timedOut) {
    // the route with the fewest trips (then the shortest) goes; its vehicle may not be used again
    let drop = -1;
    for (let v = 0; v < inst.D; v++) {
      const r = best.routes[v];
      if (r.nodes.length === 2) continue;
      if (drop < 0 || r.trips < best.routes[drop].trips || (r.trips === best.routes[drop].trips && r.dist < best.routes[drop].dist))
        drop = v;
    }
    let current = best.clone();
    current.setRoute(drop, makeRoute(inst, drop, []));
    const allowed = new Uint8Array(inst.D);
    for (let v = 0; v < inst.D; v++) allowed[v] = current.routes[v].nodes.length > 2 ? 1 : 0;
    weight.fill(1);
    const score = (s: TwSolution) => {
      let w = 0;
      for (let t = 0; t < inst.T; t++) if (s.routeOf[t] < 0) w += weight[t];
      return w;
    };
    regretInsert(current, unassigned(current), ctx, allowed, false);
    let success = current.assigned === inst.T;
    const limit = Math.min(attemptCap, budget - used);
    let it = 0;
    for (; it < limit && !success; it++) {
      if ((it & 7) === 0 && ctx.now() > phaseEnd) {
        timedOut = true;
        break;
      }
      for (let t = 0; t < inst.T; t++) if (current.routeOf[t] < 0) weight[t] += 1;
      const cand = current.clone();
      const removed = chooseRuin(cand, ctx, ruinSize(inst.T, rng));
      removeTrips(cand, removed);
      const pending = [...new Set([...removed, ...unassigned(cand)])];
      recreate(cand, pending, ctx, allowed, weight);
      const sc = score(cand);
      const sCur = score(current);
      if (sc < sCur || (sc === sCur && cand.cost <= current.cost + TOL)) current = cand;
      success = current.assigned === inst.T;
    }
    used += it;
    if (!success) break;
    best = current;
    curve.push({ iteration: used, assigned: best.assigned, cost: best.cost });
  }
  return { best, iterations: used, timedOut };
}

/** Why trip t could not be planned: the first rule, in this order, that rules out every vehicle alone. */
function reasonFor(inst: TwInstance, t: number, best: TwSolution): UnassignedReason {
  const D = inst.D;
  if (D === 0) return 'NO_DRIVERS';
  const compatible: number[] = [];
  for (let v = 0; v < D; v++) if (inst.compat[t * D + v]) compatible.push(v);
  if (compatible.length === 0) return 'NO_DRIVER_IN_TERRITORY';
  const p = 2 * t;
  const withRoom = compatible.filter((v) => {
    for (let k = 0; k < DIMS; k++) if (inst.dem[p * DIMS + k] > inst.cap[v * DIMS + k] + TOL) return false;
    return true;
  });
  if (withRoom.length === 0) return 'CAPACITY';
  const stops = withRoom.filter((v) => inst.maxTrips[v] >= 1);
  if (stops.length === 0) return 'MAX_STOPS';
  // alone: windows first (the return's closing, no other route end), then the route duration, then the shift end
  const alone = (v: number, end: number) => {
    const { n, early, late, svc } = inst;
    const travel = inst.travelOf[v];
    const s = startOf(inst, v);
    const stP = Math.max(early[s] + travel[s * n + p], early[p]);
    const stQ = Math.max(stP + svc[p] + travel[p * n + p + 1], early[p + 1]);
    const windows = stP <= late[p] + TOL && stQ <= late[p + 1] + TOL;
    return windows && stQ + svc[p + 1] + travel[(p + 1) * n + endOf(inst, v)] <= end + TOL;
  };
  // A route that returns to a place (a hub, a depot) must be back by its closing (shiftEndS): that closing is a window too.
  const closing = (v: number) => (inst.closed[v] ? (inst.problem.drivers[v].shiftEndS ?? Infinity) : Infinity);
  if (!stops.some((v) => alone(v, closing(v)))) return 'TIME_WINDOW';
  if (!stops.some((v) => alone(v, inst.maxRouteDurationS))) return 'ROUTE_DURATION';
  const fitting = stops.filter((v) => alone(v, inst.late[endOf(inst, v)]));
  if (fitting.length === 0) return 'SHIFT_END';
  return fitting.every((v) => best.routes[v].trips + 1 > inst.maxTrips[v]) ? 'MAX_STOPS' : 'ROUTES_FULL';
}

function toPlan(
  inst: TwInstance,
  sol: TwSolution,
  meta: Pick<Plan, 'seed' | 'iterations' | 'iterationBudget' | 'stoppedBy' | 'curve' | 'elapsedMs'>,
): Plan {
  const { problem, dist, n, svc, T } = inst;
  let sumDropoffS = 0;
  let maxDropoffS = 0;
  const routes: PlannedRoute[] = problem.drivers.map((driver, v) => {
    const r: TwRoute = sol.routes[v];
    const travel = inst.travelOf[v];
    const nodes = r.nodes;
    const m = nodes.length;
    let distanceM = 0;
    const stops: PlannedStop[] = [];
    for (let k = 1; k < m - 1; k++) {
      const a = nodes[k - 1];
      const b = nodes[k];
      distanceM += dist[a * n + b];
      const arrival = r.start[k - 1] + svc[a] + travel[a * n + b];
      const t = b >> 1;
      const trip = problem.trips[t];
      const pickup = (b & 1) === 0;
      if (!pickup) {
        sumDropoffS += arrival;
        maxDropoffS = Math.max(maxDropoffS, arrival);
      }
      const stop: PlannedStop = {
        tripId: trip.id,
        kind: pickup ? 'pickup' : 'dropoff',
        position: pickup ? trip.pickup : trip.dropoff,
        arrivalOffsetS: arrival,
        waitS: r.start[k] - arrival,
        departureOffsetS: r.start[k] + svc[b],
        cumulativeDistanceM: distanceM,
        loadAfter: r.load[k * DIMS] + (driver.currentLoad ?? 0),
      };
      if (inst.heavy) {
        stop.weightKgAfter = r.load[k * DIMS + 1];
        stop.volumeLAfter = r.load[k * DIMS + 2];
      }
      stops.push(stop);
    }
    const last = stops.length > 0 ? stops[stops.length - 1].departureOffsetS : 0;
    const route: PlannedRoute = { driverId: driver.id, stops, distanceM, durationS: last };
    if (inst.closed[v] && m > 2) {
      const a = nodes[m - 2];
      const e = nodes[m - 1];
      route.distanceM += dist[a * n + e];
      route.returnArrivalS = r.start[m - 2] + svc[a] + travel[a * n + e];
      route.durationS = route.returnArrivalS;
    }
    return route;
  });
  const unassignedTrips = [];
  for (let t = 0; t < T; t++)
    if (sol.routeOf[t] < 0) unassignedTrips.push({ tripId: problem.trips[t].id, reason: reasonFor(inst, t, sol) });
  return {
    algorithm: 'pdptw-lns',
    ...meta,
    objective: inst.objective,
    cost: sol.exactCost() - inst.vehicleCost * sol.used,
    routes,
    unassigned: unassignedTrips,
    totals: {
      assigned: T - unassignedTrips.length,
      unassigned: unassignedTrips.length,
      distanceM: routes.reduce((s, r) => s + r.distanceM, 0),
      durationS: routes.reduce((s, r) => s + r.durationS, 0),
      sumDropoffS,
      maxDropoffS,
    },
  };
}

/** The time-window solver: construction, then (objective vehicles) route elimination, then annealing. */
export function solveTimeWindows(problem: OptimizerProblem, options: OptimizerOptions = {}): Plan {
  const now = () => performance.now();
  const started = now();
  const seed = options.seed ?? DEFAULTS.seed;
  const inst = compileTw(problem, options);
  let maxDist = 0;
  for (const x of inst.dist) if (x > maxDist) maxDist = x;
  const ctx: Ctx = {
    inst,
    rng: mulberry32(seed),
    related: relatedTrips(inst),
    noise: NOISE * inst.wDist * maxDist + NOISE * inst.wTime * maxDist,
    now,
    ins: { cost: Infinity, i: 0, j: 0 },
  };
  const budget = options.iterations ?? twIterations(inst.T, options.objective);
  // each phase ends at its share of the iterations or of the time ceiling, whichever comes first
  const budgetMs = (options.timeBudgetMs ?? DEFAULTS.timeBudgetMs) * (1 - PLAN_SHARE);
  const until = (share: number) => started + share * budgetMs;
  const all = Array.from({ length: inst.T }, (_, t) => t);
  let sol = new TwSolution(inst);
  regretInsert(sol, all, ctx, null, false);
  const curve: Curve[] = [{ iteration: 0, assigned: sol.assigned, cost: sol.cost }];
  let iterations = 0;
  let timedOut = false;
  let allowed: Uint8Array | null = null;
  if (inst.objective === 'vehicles' && inst.T > 0) {
    const constructed = sol;
    const first = annealing(sol, ctx, Math.floor(DISTANCE_FIRST * budget), null, curve, 0, true, until(DISTANCE_FIRST));
    sol = first.best;
    iterations += first.iterations;
    timedOut = first.timedOut;
    if (sol.assigned === inst.T) {
      const elim = eliminateRoutes(sol, ctx, Math.floor(ELIMINATION_SHARE * budget), curve, until(DISTANCE_FIRST + ELIMINATION_SHARE));
      sol = elim.best;
      iterations += elim.iterations;
      timedOut ||= elim.timedOut;
    }
    // the distance-first phase may have opened routes that elimination did not close again
    if (constructed.assigned === sol.assigned && constructed.cost < sol.cost) sol = constructed;
    allowed = Uint8Array.from(sol.routes, (r) => (r.nodes.length > 2 || sol.assigned < inst.T ? 1 : 0));
  }
  if (inst.T > 0) {
    const sa = annealing(sol, ctx, budget - iterations, allowed, curve, iterations, false, until(1));
    sol = sa.best;
    iterations += sa.iterations;
    timedOut ||= sa.timedOut;
  }
  return toPlan(inst, sol, {
    seed,
    iterations,
    iterationBudget: budget,
    stoppedBy: timedOut ? 'time' : 'iterations',
    curve,
    elapsedMs: now() - started,
  });
}
