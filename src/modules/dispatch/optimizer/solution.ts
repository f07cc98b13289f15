import type { Instance } from './instance.js';
import { EPS, bestInsertion, routeCost, tripOf, type Insertion, type RouteTimes, type Scratch } from './route.js';

/** Route versions: every setRoute gives its route a new one, process-wide (see insertionInto). */
let nextVersion = 1;
const times: RouteTimes = { end: 0, wait: 0 };

/** Routes as node sequences, with per-route cost and the route of each trip (-1 = unassigned). */
export class Solution {
  readonly routes: number[][];
  readonly cost: Float64Array;
  readonly routeOf: Int32Array;
  /** exact[d] = 1 when route d's order is known optimal (reset by setRoute). */
  readonly exact: Uint8Array;
  /**
   * version[d] identifies the content of route d: a new number at every setRoute, copied by
   * clone (the routes are never changed in place), 0 for the empty routes of a new solution.
   */
  readonly version: Float64Array;
  /** Per route: its end (departure from the last stop) and its total wait at pickups, seconds. */
  readonly end: Float64Array;
  readonly wait: Float64Array;
  assigned = 0;

  constructor(
    readonly inst: Instance,
    from?: Solution,
  ) {
    if (from) {
      // the route arrays are shared: they are never changed in place (setRoute replaces them)
      this.routes = from.routes.slice();
      this.cost = from.cost.slice();
      this.routeOf = from.routeOf.slice();
      this.exact = from.exact.slice();
      this.version = from.version.slice();
      this.end = from.end.slice();
      this.wait = from.wait.slice();
      this.assigned = from.assigned;
    } else {
      this.routes = Array.from({ length: inst.driverCount }, () => []);
      this.cost = new Float64Array(inst.driverCount);
      this.routeOf = new Int32Array(inst.tripCount).fill(-1);
      this.exact = new Uint8Array(inst.driverCount);
      this.version = new Float64Array(inst.driverCount);
      this.end = new Float64Array(inst.driverCount);
      this.wait = new Float64Array(inst.driverCount);
    }
  }

  clone(): Solution {
    return new Solution(this.inst, this);
  }

  /** The solution with these routes (per driver), e.g. sent from another thread: costs and times computed here. */
  static of(inst: Instance, routes: readonly number[][]): Solution {
    const sol = new Solution(inst);
    routes.forEach((stops, d) => sol.setRoute(d, stops.slice()));
    return sol;
  }

  /**
   * Replace route d; trips that appear in or leave the route are re-indexed. A trip moved here from
   * another route belongs to this one from now on (that route is expected to be replaced next).
   */
  setRoute(d: number, stops: number[]): void {
    for (const s of this.routes[d]) {
      if (this.routeOf[tripOf(s)] === d && (s & 1) === 0) {
        this.routeOf[tripOf(s)] = -1;
        this.assigned--;
      }
    }
    for (const s of stops) {
      if ((s & 1) === 0) {
        // a trip still in another route's array (a swap between two routes, half done) counts once
        if (this.routeOf[tripOf(s)] < 0) this.assigned++;
        this.routeOf[tripOf(s)] = d;
      }
    }
    this.routes[d] = stops;
    this.exact[d] = 0;
    this.version[d] = nextVersion++;
    this.cost[d] = routeCost(this.inst, d, stops, times);
    this.end[d] = times.end;
    this.wait[d] = times.wait;
  }

  /** The objective: sum of the route costs. */
  total(): number {
    let total = 0;
    for (let d = 0; d < this.cost.length; d++) total += this.cost[d];
    return total;
  }

  unassignedTrips(): number[] {
    const out: number[] = [];
    for (let t = 0; t < this.routeOf.length; t++) if (this.routeOf[t] < 0) out.push(t);
    return out;
  }
}

/** Lexicographic objective: more assigned trips first, then the lower cost (see Objective). */
export function isBetter(a: Solution, b: Solution): boolean {
  return betterValue(a.assigned, a.total(), b.assigned, b.total());
}

/** isBetter on the figures: `assigned` trips at `cost` against `bAssigned` at `bCost`. */
export function betterValue(assigned: number, cost: number, bAssigned: number, bCost: number): boolean {
  if (assigned !== bAssigned) return assigned > bAssigned;
  return cost < bCost - EPS * Math.max(1, bCost * 1e-3);
}

/**
 * bestInsertion of trip t into route d of `sol`, remembered per (trip, driver) with the route's
 * version: the same route content gives the same answer, so a route the last iterations did not
 * touch is not priced again (most of them on a large instance, and most answers are "no room").
 */
export function insertionInto(sol: Solution, d: number, t: number, scratch: Scratch, out: Insertion, packing = false): number {
  const cache = packing ? scratch.packings : scratch.insertions;
  const k = t * sol.inst.driverCount + d;
  if (cache.version[k] === sol.version[d]) {
    out.cost = cache.cost[k];
    out.i = cache.i[k];
    out.j = cache.j[k];
    return out.cost;
  }
  const inst = sol.inst;
  // Triangle inequality: the new route is no shorter, and serves two more stops; only waiting at
  // pickups can absorb that (O(1) instead of bestInsertion's O(n) at least, on routes near their limit).
  const c =
    inst.metric && sol.end[d] - sol.wait[d] + inst.svcPickup + inst.svcDropoff > inst.limit[d] + 1e-6
      ? (out.cost = Infinity)
      : bestInsertion(inst, d, sol.routes[d], t, scratch, out, packing);
  cache.version[k] = sol.version[d];
  cache.cost[k] = c;
  cache.i[k] = out.i;
  cache.j[k] = out.j;
  return c;
}
