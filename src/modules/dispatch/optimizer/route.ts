import { startNode, type Instance } from './instance.js';

/** Improvements smaller than this (cost units) are noise from floating point, not progress. */
export const EPS = 1e-6;

export const tripOf = (node: number): number => node >> 1;
export const isPickup = (node: number): boolean => (node & 1) === 0;

/**
 * Objective cost of a route (wTime · sum of drop-off arrivals + wDist · metres), simulating its
 * times: travel, waiting at a pickup until the trip is ready, service at every stop. Infinity when
 * the load exceeds the driver's room, a drop-off precedes its pickup, the route ends after the
 * driver's limit (route duration or shift end), or the cost reaches `bound` (pruning; the cost only
 * grows along the route).
 */
export function feasibleCost(inst: Instance, d: number, seq: readonly number[], len: number, scratch: Scratch, bound = Infinity): number {
  const { dist, travel, n, ready, wTime, wDist, svcPickup, svcDropoff } = inst;
  const room = inst.room[d];
  const limit = inst.limit[d] + 1e-9;
  const stamp = ++scratch.stamp;
  const seen = scratch.seen;
  let prev = startNode(inst, d);
  let cost = 0;
  let time = 0;
  let load = 0;
  for (let k = 0; k < len; k++) {
    const s = seq[k];
    time += travel[prev * n + s];
    cost += wDist * dist[prev * n + s];
    if (isPickup(s)) {
      if (++load > room) return Infinity;
      seen[tripOf(s)] = stamp;
      const r = ready[tripOf(s)];
      if (r > time) time = r;
      time += svcPickup;
    } else {
      if (seen[tripOf(s)] !== stamp) return Infinity;
      load--;
      cost += wTime * time;
      time += svcDropoff;
    }
    if (time > limit || cost >= bound) return Infinity;
    prev = s;
  }
  return cost;
}

/**
 * State after each prefix of a route (scratch.preTime, preCost, preLoad, preDrops, preDropArr at
 * index k: after its first k stops), for feasibleCostFrom, and the arrival at each stop
 * (scratch.arrAt), for the or-opt and 2-opt bounds.
 */
export function timePrefixes(inst: Instance, d: number, stops: readonly number[], scratch: Scratch): void {
  const { dist, travel, n, ready, wTime, wDist, svcPickup, svcDropoff } = inst;
  const { preTime, preCost, preLoad, preDrops, preDropArr, arrAt } = scratch;
  let prev = startNode(inst, d);
  let cost = 0;
  let time = 0;
  let load = 0;
  let drops = 0;
  let dropArr = 0;
  preTime[0] = preCost[0] = preLoad[0] = preDrops[0] = preDropArr[0] = 0;
  for (let k = 0; k < stops.length; k++) {
    const s = stops[k];
    time += travel[prev * n + s];
    cost += wDist * dist[prev * n + s];
    arrAt[k] = time;
    if (isPickup(s)) {
      load++;
      const r = ready[tripOf(s)];
      if (r > time) time = r;
      time += svcPickup;
    } else {
      load--;
      drops++;
      dropArr += time;
      cost += wTime * time;
      time += svcDropoff;
    }
    preTime[k + 1] = time;
    preCost[k + 1] = cost;
    preLoad[k + 1] = load;
    preDrops[k + 1] = drops;
    preDropArr[k + 1] = dropArr;
    prev = s;
  }
}

/**
 * feasibleCost of seq[0..len) when its first `from` stops are those of the (feasible) route whose
 * prefixes timePrefixes wrote, and scratch.pos holds that route's positions: only the changed part
 * is simulated. Same value as feasibleCost.
 */
export function feasibleCostFrom(
  inst: Instance,
  d: number,
  seq: readonly number[],
  from: number,
  len: number,
  scratch: Scratch,
  bound = Infinity,
): number {
  const { dist, travel, n, ready, wTime, wDist, svcPickup, svcDropoff } = inst;
  const room = inst.room[d];
  const limit = inst.limit[d] + 1e-9;
  const stamp = ++scratch.stamp;
  const { seen, pos } = scratch;
  let prev = from === 0 ? startNode(inst, d) : seq[from - 1];
  let cost = scratch.preCost[from];
  let time = scratch.preTime[from];
  let load = scratch.preLoad[from];
  if (from > 0 && cost >= bound) return Infinity; // as feasibleCost would have found at stop from - 1
  for (let k = from; k < len; k++) {
    const s = seq[k];
    time += travel[prev * n + s];
    cost += wDist * dist[prev * n + s];
    if (isPickup(s)) {
      if (++load > room) return Infinity;
      seen[tripOf(s)] = stamp;
      const r = ready[tripOf(s)];
      if (r > time) time = r;
      time += svcPickup;
    } else {
      // its pickup is in the unchanged prefix, or earlier in the changed part
      if (seen[tripOf(s)] !== stamp && pos[s - 1] >= from) return Infinity;
      load--;
      cost += wTime * time;
      time += svcDropoff;
    }
    if (time > limit || cost >= bound) return Infinity;
    prev = s;
  }
  return cost;
}

/** Times of a route, written by routeCost when asked: its end (departure from the last stop) and its total wait at pickups. */
export interface RouteTimes {
  end: number;
  wait: number;
}

/** Objective cost of a route known to respect precedence (Infinity when over capacity or time). */
export function routeCost(inst: Instance, d: number, stops: readonly number[], times?: RouteTimes): number {
  const { dist, travel, n, ready, wTime, wDist, svcPickup, svcDropoff } = inst;
  const room = inst.room[d];
  let prev = startNode(inst, d);
  let cost = 0;
  let time = 0;
  let load = 0;
  let wait = 0;
  for (let k = 0; k < stops.length; k++) {
    const s = stops[k];
    time += travel[prev * n + s];
    cost += wDist * dist[prev * n + s];
    if (isPickup(s)) {
      if (++load > room) return Infinity;
      const r = ready[tripOf(s)];
      if (r > time) {
        wait += r - time;
        time = r;
      }
      time += svcPickup;
    } else {
      load--;
      cost += wTime * time;
      time += svcDropoff;
    }
    prev = s;
  }
  if (times) {
    times.end = time;
    times.wait = wait;
  }
  return time > inst.limit[d] + 1e-9 ? Infinity : cost;
}

export interface Insertion {
  /** Added cost. */
  cost: number;
  /** The pickup goes before stops[i], the dropoff before stops[j] (i <= j; index = length means the end). */
  i: number;
  j: number;
}

/**
 * Slack of the pruning bounds of bestInsertion (cost units): a bound within this of the best is
 * still explored, so floating-point rounding never prunes a position that the full scan would pick.
 */
const PRUNE_TOLERANCE = 1e-6;

/** Packing insertion cost: the seconds the route gets longer, plus this share of the objective's added cost (tie-break). */
export const PACKING_TIE = 1e-3;

export interface InsertionCache {
  version: Float64Array;
  cost: Float64Array;
  i: Int32Array;
  j: Int32Array;
}

/**
 * The times of one route as bestInsertion needs them (see routeTiming), remembered per driver:
 * the stops array they were computed for (routes are never changed in place, so the same array
 * has the same times), the load before each stop, the arrival at each stop, the departure from
 * the stop before it, the waits and drop-offs from each stop to the end, the distance and travel
 * time of the leg into each stop (from the previous stop, or the start), and the route's end.
 */
export class RouteTiming {
  stops: readonly number[] | null = null;
  inst: Instance | null = null;
  end = 0;
  load = new Int32Array(0);
  arr = new Float64Array(0);
  depBefore = new Float64Array(0);
  waitFrom = new Float64Array(0);
  dropsFrom = new Int32Array(0);
  legDist = new Float64Array(0);
  legTravel = new Float64Array(0);

  /** Room for a route of `len` stops (arrays grow by doubling; their content is rewritten by routeTiming). */
  reserve(len: number): void {
    if (this.arr.length > len) return;
    const m = Math.max(16, 2 * (len + 1));
    this.load = new Int32Array(m);
    this.arr = new Float64Array(m);
    this.depBefore = new Float64Array(m);
    this.waitFrom = new Float64Array(m);
    this.dropsFrom = new Int32Array(m);
    this.legDist = new Float64Array(m);
    this.legTravel = new Float64Array(m);
  }
}

/** Reusable scratch buffers, sized for the longest possible route. */
export class Scratch {
  readonly seq: number[] = [];
  readonly seen: Int32Array;
  /** Index of a node in the route being improved. */
  readonly pos: Int32Array;
  /** Per prefix of the route being improved: time, cost, load, drop-offs and sum of their arrivals after it, and per stop its arrival (timePrefixes). */
  readonly preTime: Float64Array;
  readonly preCost: Float64Array;
  readonly preLoad: Int32Array;
  readonly preDrops: Int32Array;
  readonly preDropArr: Float64Array;
  readonly arrAt: Float64Array;
  /** Remembered insertions per (trip, driver), with the version of the route they were priced in (see insertionInto). */
  readonly insertions: InsertionCache;
  /** The same for packing insertions. */
  readonly packings: InsertionCache;
  /** exactRouteOrder's answers by driver and stop sequence (a pure function of both; improveRoute). */
  readonly exactOrders = new Map<string, number[] | null>();
  /**
   * Per driver, the times of the last route priced for it (bestInsertion): a route priced for many
   * trips, or again after the search came back to it, is timed once.
   */
  readonly timings: RouteTiming[];
  private regret: RegretBuffers | null = null;
  stamp = 0;
  /** Out values of `shift`. */
  shiftSum = 0;
  shiftEnd = 0;
  constructor(inst: Instance) {
    const m = 2 * inst.tripCount + 3;
    this.pos = new Int32Array(2 * inst.tripCount);
    this.seen = new Int32Array(inst.tripCount);
    this.preTime = new Float64Array(m);
    this.preCost = new Float64Array(m);
    this.preLoad = new Int32Array(m);
    this.preDrops = new Int32Array(m);
    this.preDropArr = new Float64Array(m);
    this.arrAt = new Float64Array(m);
    const k = inst.tripCount * inst.driverCount;
    const cache = (): InsertionCache => ({
      version: new Float64Array(k).fill(-1),
      cost: new Float64Array(k),
      i: new Int32Array(k),
      j: new Int32Array(k),
    });
    this.insertions = cache();
    this.packings = cache();
    this.timings = Array.from({ length: inst.driverCount }, () => new RouteTiming());
  }

  /** regretInsert's buffers for k pending trips and D routes (grown when too small; contents left over). */
  regretBuffers(k: number, D: number): RegretBuffers {
    const r = this.regret;
    if (r && r.cost.length >= k * D && r.widened.length >= k && r.draws.length >= D) return r;
    const size = Math.max(k * D, 2 * (r?.cost.length ?? 0));
    const trips = Math.max(k, 2 * (r?.widened.length ?? 0));
    this.regret = {
      cost: new Float64Array(size),
      posI: new Int32Array(size),
      posJ: new Int32Array(size),
      allowed: new Uint8Array(size),
      widened: new Uint8Array(trips),
      draws: new Float64Array(D),
      c1: new Float64Array(trips),
      c2: new Float64Array(trips),
      d1: new Int32Array(trips),
    };
    return this.regret;
  }
}

/**
 * regretInsert's arrays: per (pending trip, route) the insertion cost and positions and whether the
 * route is a candidate; per pending trip whether it was widened to every route and its best two
 * costs and best route; per route a noise draw.
 */
export interface RegretBuffers {
  cost: Float64Array;
  posI: Int32Array;
  posJ: Int32Array;
  allowed: Uint8Array;
  widened: Uint8Array;
  draws: Float64Array;
  c1: Float64Array;
  c2: Float64Array;
  d1: Int32Array;
}

/**
 * The times of driver d's route `stops` (see RouteTiming), from scratch.timings unless that holds
 * another route: the same route priced for every pending trip, or again in a later iteration (the
 * solutions share their unchanged route arrays), is timed once.
 */
function routeTiming(inst: Instance, d: number, stops: readonly number[], scratch: Scratch): RouteTiming {
  const tm = scratch.timings[d];
  if (tm.stops === stops && tm.inst === inst) return tm;
  const { dist, travel, n, ready, svcPickup, svcDropoff } = inst;
  const len = stops.length;
  tm.reserve(len);
  const { load, arr, depBefore, waitFrom, dropsFrom, legDist, legTravel } = tm;
  load[0] = 0;
  let time = 0;
  let prev = startNode(inst, d);
  for (let k = 0; k < len; k++) {
    const s = stops[k];
    load[k + 1] = load[k] + (isPickup(s) ? 1 : -1);
    depBefore[k] = time;
    const leg = travel[prev * n + s];
    legTravel[k] = leg;
    legDist[k] = dist[prev * n + s];
    time += leg;
    arr[k] = time;
    if (isPickup(s)) {
      const r = ready[tripOf(s)];
      if (r > time) time = r;
      time += svcPickup;
    } else time += svcDropoff;
    prev = s;
  }
  depBefore[len] = time;
  waitFrom[len] = 0;
  dropsFrom[len] = 0;
  for (let k = len - 1; k >= 0; k--) {
    const s = stops[k];
    const pickup = isPickup(s);
    waitFrom[k] = waitFrom[k + 1] + (pickup ? Math.max(0, ready[tripOf(s)] - arr[k]) : 0);
    dropsFrom[k] = dropsFrom[k + 1] + (pickup ? 0 : 1);
  }
  tm.stops = stops;
  tm.inst = inst;
  tm.end = time;
  return tm;
}

/**
 * The stops from index j on arrive `delta` seconds later (earlier when negative): the change of the
 * sum of their drop-off arrivals (scratch.shiftSum) and of the route end (scratch.shiftEnd). A wait
 * at a pickup absorbs a delay. O(1) when nothing waits downstream, else up to O(n - j).
 */
function shift(inst: Instance, stops: readonly number[], tm: RouteTiming, j: number, delta: number, s: Scratch): void {
  const len = stops.length;
  if (delta >= 0 && tm.waitFrom[j] === 0) {
    s.shiftSum = delta * tm.dropsFrom[j];
    s.shiftEnd = delta;
    return;
  }
  let sum = 0;
  let dl = delta;
  for (let k = j; k < len && dl !== 0; k++) {
    const node = stops[k];
    if (isPickup(node)) {
      const r = inst.ready[tripOf(node)];
      const a = tm.arr[k];
      dl = Math.max(a + dl, r) - Math.max(a, r);
    } else sum += dl;
  }
  s.shiftSum = sum;
  s.shiftEnd = dl;
}

/**
 * Cheapest feasible insertion of trip t into driver d's route: every pickup position, and for each
 * every later dropoff position while the load stays within the driver's room and the route within
 * its time limit. The stops between the two new ones are re-timed incrementally and the shift of the
 * rest is priced by `shift`, so O(n²) in the usual case. Writes into `out` and returns the added
 * cost (Infinity when no position is feasible). `packing`: the cost is how much longer the route
 * gets (time it can no longer give to other trips), the objective only breaking ties: the insertion
 * that leaves the most room, to assign more trips.
 */
export function bestInsertion(
  inst: Instance,
  d: number,
  stops: readonly number[],
  t: number,
  scratch: Scratch,
  out: Insertion,
  packing = false,
): number {
  out.cost = Infinity;
  const D = inst.driverCount;
  const len = stops.length;
  const room = inst.room[d];
  if (!inst.compat[t * D + d] || room < 1 || len + 2 > inst.maxStops[d]) return Infinity;
  const { dist, travel, n, ready, wTime, wDist, svcPickup, svcDropoff } = inst;
  const limit = inst.limit[d] + 1e-9;
  const s0 = startNode(inst, d);
  const tm = routeTiming(inst, d, stops, scratch);
  const { load, arr, depBefore, legDist, legTravel } = tm;
  const end = tm.end;
  const p = 2 * t;
  const q = p + 1;
  // Matrix reads: from p and q (rows p and q, contiguous), and into them. On a symmetric matrix
  // "x to p" is read as "p to x" (the same value), so every read of a call stays within the two
  // rows of its trip instead of striding down a column of a large matrix (a cache miss each).
  // The legs between consecutive stops of the route come from its timing.
  const byX = inst.symmetric ? 1 : n;
  const byP = inst.symmetric ? n : 1;
  const intoP = p * byP;
  const intoQ = q * byP;
  const readyT = ready[t];
  let best = Infinity;
  let bi = -1;
  let bj = -1;
  const metric = inst.metric;
  const pq = travel[p * n + q];
  for (let i = 0; i <= len; i++) {
    if (load[i] + 1 > room) continue;
    const before = i === 0 ? s0 : stops[i - 1];
    const depP = Math.max(depBefore[i] + travel[before * byX + intoP], readyT) + svcPickup;
    if (depP > limit) continue;
    if (metric && i < len) {
      // Lower bounds from the pickup alone before stops[i]: adding the drop-off anywhere after it only
      // delays the stops further and lengthens the route (triangle inequality), and the drop-off
      // itself arrives at least travel(p, q) after depP. Skips positions that cannot be feasible or
      // cannot beat `best`: the answer is the same as the full scan's.
      const next = stops[i];
      shift(inst, stops, tm, i, depP + travel[p * n + next] - arr[i], scratch);
      if (end + scratch.shiftEnd > limit) continue;
      const bound = wTime * (depP + pq + scratch.shiftSum) + wDist * (dist[before * byX + intoP] + dist[p * n + next] - legDist[i]);
      if ((packing ? scratch.shiftEnd + PACKING_TIE * bound : bound) > best + PRUNE_TOLERANCE) continue;
    }
    // q right after p
    {
      const aq = depP + travel[p * n + q];
      const dq = aq + svcDropoff;
      let dTime = aq;
      let newEnd = dq;
      let dDist = dist[before * byX + intoP] + dist[p * n + q];
      if (i < len) {
        const next = stops[i];
        dDist += dist[q * n + next] - legDist[i];
        shift(inst, stops, tm, i, dq + travel[q * n + next] - arr[i], scratch);
        dTime += scratch.shiftSum;
        newEnd = end + scratch.shiftEnd;
      }
      const objective = wTime * dTime + wDist * dDist;
      const c = packing ? newEnd - end + PACKING_TIE * objective : objective;
      if (newEnd <= limit && c < best) {
        best = c;
        bi = bj = i;
      }
    }
    if (i === len) break;
    // re-time stops[i..j-1] behind p, then q before stops[j]
    const dpDist = dist[before * byX + intoP] + dist[p * n + stops[i]] - legDist[i];
    let cur = depP;
    let segSum = 0;
    for (let j = i + 1; j <= len; j++) {
      const s = stops[j - 1];
      const a = cur + (j === i + 1 ? travel[p * n + s] : legTravel[j - 1]);
      if (isPickup(s)) cur = Math.max(a, ready[tripOf(s)]) + svcPickup;
      else {
        segSum += a - arr[j - 1];
        cur = a + svcDropoff;
      }
      if (cur > limit) break;
      if (load[j] + 1 > room) break;
      // the drop-off arrives after cur and nothing before it gets earlier (triangle inequality): later j are dearer still
      if (metric && !packing && wTime * (segSum + cur) + wDist * dpDist > best + PRUNE_TOLERANCE) break;
      const aq = cur + travel[s * byX + intoQ];
      const dq = aq + svcDropoff;
      let dTime = segSum + aq;
      let newEnd = dq;
      let dDist = dpDist + dist[s * byX + intoQ];
      if (j < len) {
        const next = stops[j];
        dDist += dist[q * n + next] - legDist[j];
        shift(inst, stops, tm, j, dq + travel[q * n + next] - arr[j], scratch);
        dTime += scratch.shiftSum;
        newEnd = end + scratch.shiftEnd;
      }
      const objective = wTime * dTime + wDist * dDist;
      const c = packing ? newEnd - end + PACKING_TIE * objective : objective;
      if (newEnd <= limit && c < best) {
        best = c;
        bi = i;
        bj = j;
      }
    }
  }
  if (bi < 0) return Infinity;
  out.cost = best;
  out.i = bi;
  out.j = bj;
  return best;
}

/** A copy of `stops` with trip t inserted at the given positions. */
export function withInsertion(stops: readonly number[], t: number, ins: Insertion): number[] {
  const next = stops.slice();
  next.splice(ins.j, 0, 2 * t + 1);
  next.splice(ins.i, 0, 2 * t);
  return next;
}

export const withoutTrip = (stops: readonly number[], t: number): number[] => stops.filter((s) => tripOf(s) !== t);
