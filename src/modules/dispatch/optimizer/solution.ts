import type { Instance } from './instance.js';
import { EPS, routeCost, tripOf } from './route.js';

/** Routes as node sequences, with per-route cost and the route of each trip (-1 = unassigned). */
export class Solution {
  readonly routes: number[][];
  readonly cost: Float64Array;
  readonly routeOf: Int32Array;
  /** exact[d] = 1 when route d's order is known optimal (reset by setRoute). */
  readonly exact: Uint8Array;
  assigned = 0;

  constructor(
    readonly inst: Instance,
    from?: Solution,
  ) {
    if (from) {
      this.routes = from.routes.map((r) => r.slice());
      this.cost = from.cost.slice();
      this.routeOf = from.routeOf.slice();
      this.exact = from.exact.slice();
      this.assigned = from.assigned;
    } else {
      this.routes = Array.from({ length: inst.driverCount }, () => []);
      this.cost = new Float64Array(inst.driverCount);
      this.routeOf = new Int32Array(inst.tripCount).fill(-1);
      this.exact = new Uint8Array(inst.driverCount);
    }
  }

  clone(): Solution {
    return new Solution(this.inst, this);
  }

  /** Replace route d; trips that appear in or leave the route are re-indexed. */
  setRoute(d: number, stops: number[]): void {
    for (const s of this.routes[d]) {
      if (this.routeOf[tripOf(s)] === d && (s & 1) === 0) {
        this.routeOf[tripOf(s)] = -1;
        this.assigned--;
      }
    }
    for (const s of stops) {
      if ((s & 1) === 0) {
        this.routeOf[tripOf(s)] = d;
        this.assigned++;
      }
    }
    this.routes[d] = stops;
    this.exact[d] = 0;
    this.cost[d] = routeCost(this.inst, d, stops);
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
  if (a.assigned !== b.assigned) return a.assigned > b.assigned;
  return a.total() < b.total() - EPS * Math.max(1, b.total() * 1e-3);
}
