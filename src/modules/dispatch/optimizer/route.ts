import { startNode, type Instance } from './instance.js';

/** Improvements smaller than this (metres) are noise from floating point, not progress. */
export const EPS = 1e-6;

export const tripOf = (node: number): number => node >> 1;
export const isPickup = (node: number): boolean => (node & 1) === 0;

/** Length of the open route: driver position, then every stop in order. */
export function routeCost(inst: Instance, d: number, stops: readonly number[]): number {
  const { dist, n } = inst;
  let prev = startNode(inst, d);
  let cost = 0;
  for (let k = 0; k < stops.length; k++) {
    cost += dist[prev * n + stops[k]];
    prev = stops[k];
  }
  return cost;
}

export interface Insertion {
  /** Added metres. */
  cost: number;
  /** The pickup goes before stops[i], the dropoff before stops[j] (i <= j; index = length means the end). */
  i: number;
  j: number;
}

/** Reusable scratch buffers, sized for the longest possible route. */
export class Scratch {
  readonly load: Int32Array;
  readonly seq: number[] = [];
  readonly seen: Int32Array;
  /** Index of a node in the route being improved. */
  readonly pos: Int32Array;
  stamp = 0;
  constructor(inst: Instance) {
    this.pos = new Int32Array(2 * inst.tripCount);
    this.load = new Int32Array(2 * inst.tripCount + 3);
    this.seen = new Int32Array(inst.tripCount);
  }
}

/**
 * Cheapest feasible insertion of trip t into driver d's route: every pickup position, and for each
 * every later dropoff position while the load stays within the driver's room. O(n²) worst case.
 * Writes into `out` and returns the cost (Infinity when no position is feasible).
 */
export function bestInsertion(
  inst: Instance,
  d: number,
  stops: readonly number[],
  t: number,
  scratch: Scratch,
  out: Insertion,
): number {
  out.cost = Infinity;
  const D = inst.driverCount;
  const len = stops.length;
  const room = inst.room[d];
  if (!inst.compat[t * D + d] || room < 1 || len + 2 > inst.maxStops[d]) return Infinity;
  const { dist, n } = inst;
  const load = scratch.load;
  load[0] = 0;
  for (let k = 0; k < len; k++) load[k + 1] = load[k] + (isPickup(stops[k]) ? 1 : -1);
  const p = 2 * t;
  const q = p + 1;
  const dpq = dist[p * n + q];
  const s0 = startNode(inst, d);
  let best = Infinity;
  let bi = -1;
  let bj = -1;
  for (let i = 0; i <= len; i++) {
    if (load[i] + 1 > room) continue;
    const prev = i === 0 ? s0 : stops[i - 1];
    if (i === len) {
      const c = dist[prev * n + p] + dpq;
      if (c < best) {
        best = c;
        bi = bj = i;
      }
      break;
    }
    const next = stops[i];
    const base = dist[prev * n + next];
    const adjacent = dist[prev * n + p] + dpq + dist[q * n + next] - base;
    if (adjacent < best) {
      best = adjacent;
      bi = bj = i;
    }
    const dp = dist[prev * n + p] + dist[p * n + next] - base;
    for (let j = i + 1; j <= len; j++) {
      if (load[j] + 1 > room) break;
      const a = stops[j - 1];
      const dq = j === len ? dist[a * n + q] : dist[a * n + q] + dist[q * n + stops[j]] - dist[a * n + stops[j]];
      if (dp + dq < best) {
        best = dp + dq;
        bi = i;
        bj = j;
      }
    }
  }
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

/**
 * Cost of a candidate sequence when it keeps every pickup before its dropoff and the load within
 * the driver's room; Infinity when infeasible or when the cost reaches `bound` (pruning).
 */
export function feasibleCost(
  inst: Instance,
  d: number,
  seq: readonly number[],
  len: number,
  scratch: Scratch,
  bound = Infinity,
): number {
  const { dist, n } = inst;
  const room = inst.room[d];
  const stamp = ++scratch.stamp;
  const seen = scratch.seen;
  let prev = startNode(inst, d);
  let cost = 0;
  let load = 0;
  for (let k = 0; k < len; k++) {
    const s = seq[k];
    if (isPickup(s)) {
      if (++load > room) return Infinity;
      seen[tripOf(s)] = stamp;
    } else {
      if (seen[tripOf(s)] !== stamp) return Infinity;
      load--;
    }
    cost += dist[prev * n + s];
    if (cost >= bound) return Infinity;
    prev = s;
  }
  return cost;
}
