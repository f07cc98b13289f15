import { startNode, type Instance } from './instance.js';
import { EPS, isPickup, tripOf } from './route.js';

/** Routes up to this many stops can be re-ordered exactly. */
export const MAX_EXACT_STOPS = 12;

/** The labels of exactRouteOrder (reused from call to call: a solve makes thousands of calls). */
class Labels {
  lt = new Float64Array(1024);
  lc = new Float64Array(1024);
  lp = new Int32Array(1024);
  lx = new Int8Array(1024);
  lnext = new Int32Array(1024);

  /** Twice the room, the labels kept. */
  grow(): void {
    const cap = 2 * this.lt.length;
    const grow = <A extends Float64Array | Int32Array | Int8Array>(a: A, b: A) => (b.set(a), b);
    this.lt = grow(this.lt, new Float64Array(cap));
    this.lc = grow(this.lc, new Float64Array(cap));
    this.lp = grow(this.lp, new Int32Array(cap));
    this.lx = grow(this.lx, new Int8Array(cap));
    this.lnext = grow(this.lnext, new Int32Array(cap));
  }
}

const labels = new Labels();
/** Per state: its first label; per set of visited stops: the load after them. */
const stateHead = new Int32Array((1 << MAX_EXACT_STOPS) * MAX_EXACT_STOPS);
const maskLoad = new Int8Array(1 << MAX_EXACT_STOPS);

/**
 * The cheapest order of a route's stops that keeps precedence, capacity and the driver's time
 * limit, by dynamic programming over (set of visited stops, last stop) with Pareto labels (time,
 * cost): a partial order is kept unless another one reaches the same state no later and no
 * dearer. Exact with waiting at pickups (the cost to go never decreases with a later time).
 * Labels dearer than `currentCost` are pruned (the cost only grows). Returns the new order when it
 * is cheaper than `currentCost`, otherwise null.
 */
export function exactRouteOrder(inst: Instance, d: number, stops: readonly number[], currentCost: number): number[] | null {
  const m = stops.length;
  if (m < 4 || m > MAX_EXACT_STOPS) return null;
  const { dist, travel, n, ready, wTime, wDist, svcPickup, svcDropoff } = inst;
  const room = inst.room[d];
  const limit = inst.limit[d] + 1e-9;
  const bound = currentCost - EPS;
  const full = (1 << m) - 1;
  const pickupBit = new Int32Array(m);
  for (let x = 0; x < m; x++) {
    if (isPickup(stops[x])) continue;
    pickupBit[x] = 1 << stops.indexOf(stops[x] - 1);
  }
  // labels: time after service, cost, parent label, last stop, next label of the same state
  const L = labels;
  let count = 0;
  // per state (visited set, last stop): its labels as a list in the order they were added, -1 = none
  const states = (full + 1) * m;
  const head = stateHead.fill(-1, 0, states);
  const loadOf = maskLoad;
  loadOf[0] = 0;
  for (let mask = 1; mask <= full; mask++) {
    const low = 31 - Math.clz32(mask & -mask);
    loadOf[mask] = loadOf[mask & (mask - 1)] + (isPickup(stops[low]) ? 1 : -1);
  }
  const add = (state: number, time: number, cost: number, parent: number, x: number) => {
    const { lt, lc } = L;
    for (let l = head[state]; l >= 0; l = L.lnext[l]) if (lt[l] <= time + 1e-9 && lc[l] <= cost + 1e-9) return;
    // drop the labels the new one dominates (the others keep their order)
    let last = -1;
    for (let l = head[state]; l >= 0; l = L.lnext[l]) {
      if (time <= lt[l] && cost <= lc[l]) {
        if (last < 0) head[state] = L.lnext[l];
        else L.lnext[last] = L.lnext[l];
      } else last = l;
    }
    if (count === L.lt.length) L.grow();
    L.lt[count] = time;
    L.lc[count] = cost;
    L.lp[count] = parent;
    L.lx[count] = x;
    L.lnext[count] = -1;
    // appended after the last label kept
    if (last < 0) head[state] = count;
    else L.lnext[last] = count;
    count++;
  };
  const extend = (from: number, time: number, cost: number, parent: number, mask: number, x: number) => {
    const s = stops[x];
    const arrive = time + travel[from * n + s];
    let t: number;
    let c = cost + wDist * dist[from * n + s];
    if (isPickup(s)) t = Math.max(arrive, ready[tripOf(s)]) + svcPickup;
    else {
      c += wTime * arrive;
      t = arrive + svcDropoff;
    }
    if (t > limit || c >= bound) return;
    add((mask | (1 << x)) * m + x, t, c, parent, x);
  };
  const s0 = startNode(inst, d);
  if (room >= 1) for (let x = 0; x < m; x++) if (isPickup(stops[x])) extend(s0, 0, 0, -1, 0, x);
  for (let mask = 1; mask < full; mask++) {
    const load = loadOf[mask];
    for (let last = 0; last < m; last++) {
      const first = head[mask * m + last];
      if (first < 0) continue;
      const from = stops[last];
      for (let x = 0; x < m; x++) {
        const bit = 1 << x;
        if (mask & bit) continue;
        if (pickupBit[x] === 0 ? load + 1 > room : (mask & pickupBit[x]) === 0) continue;
        // extend adds to a larger set's states only: this list does not change meanwhile
        for (let l = first; l >= 0; l = L.lnext[l]) extend(from, L.lt[l], L.lc[l], l, mask, x);
      }
    }
  }
  let best = Infinity;
  let bestLabel = -1;
  for (let x = 0; x < m; x++) {
    for (let l = head[full * m + x]; l >= 0; l = L.lnext[l]) {
      if (L.lc[l] < best) {
        best = L.lc[l];
        bestLabel = l;
      }
    }
  }
  if (bestLabel < 0 || !(best < bound)) return null;
  // a packed array (new Array(m) would make a holey one: routes of two element kinds deoptimize the code that reads them)
  const order: number[] = [];
  for (let l = bestLabel, k = m - 1; k >= 0; k--, l = L.lp[l]) order.push(stops[L.lx[l]]);
  return order.reverse();
}
