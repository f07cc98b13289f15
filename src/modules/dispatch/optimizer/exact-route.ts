import { startNode, type Instance } from './instance.js';
import { EPS, isPickup, tripOf } from './route.js';

/** Routes up to this many stops can be re-ordered exactly. */
export const MAX_EXACT_STOPS = 12;

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
  // labels: time after service, cost, parent label, last stop
  let cap = 1024;
  let lt = new Float64Array(cap);
  let lc = new Float64Array(cap);
  let lp = new Int32Array(cap);
  let lx = new Int8Array(cap);
  let count = 0;
  const states: (number[] | undefined)[] = new Array((full + 1) * m);
  const loadOf = new Int8Array(full + 1);
  for (let mask = 1; mask <= full; mask++) {
    const low = 31 - Math.clz32(mask & -mask);
    loadOf[mask] = loadOf[mask & (mask - 1)] + (isPickup(stops[low]) ? 1 : -1);
  }
  const add = (state: number, time: number, cost: number, parent: number, x: number) => {
    let list = states[state];
    if (list) {
      for (const l of list) if (lt[l] <= time + 1e-9 && lc[l] <= cost + 1e-9) return;
      list = list.filter((l) => !(time <= lt[l] && cost <= lc[l]));
    } else list = [];
    if (count === cap) {
      cap *= 2;
      const grow = <A extends Float64Array | Int32Array | Int8Array>(a: A, b: A) => (b.set(a), b);
      lt = grow(lt, new Float64Array(cap));
      lc = grow(lc, new Float64Array(cap));
      lp = grow(lp, new Int32Array(cap));
      lx = grow(lx, new Int8Array(cap));
    }
    lt[count] = time;
    lc[count] = cost;
    lp[count] = parent;
    lx[count] = x;
    list.push(count++);
    states[state] = list;
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
      const list = states[mask * m + last];
      if (!list) continue;
      const from = stops[last];
      for (let x = 0; x < m; x++) {
        const bit = 1 << x;
        if (mask & bit) continue;
        if (pickupBit[x] === 0 ? load + 1 > room : (mask & pickupBit[x]) === 0) continue;
        for (const l of list) extend(from, lt[l], lc[l], l, mask, x);
      }
    }
  }
  let best = Infinity;
  let bestLabel = -1;
  for (let x = 0; x < m; x++) {
    for (const l of states[full * m + x] ?? []) {
      if (lc[l] < best) {
        best = lc[l];
        bestLabel = l;
      }
    }
  }
  if (bestLabel < 0 || !(best < bound)) return null;
  // a packed array (new Array(m) would make a holey one: routes of two element kinds deoptimize the code that reads them)
  const order: number[] = [];
  for (let l = bestLabel, k = m - 1; k >= 0; k--, l = lp[l]) order.push(stops[lx[l]]);
  return order.reverse();
}
