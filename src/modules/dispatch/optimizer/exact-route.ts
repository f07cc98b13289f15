import { startNode, type Instance } from './instance.js';
import { EPS, isPickup } from './route.js';

/** Routes up to this many stops can be re-ordered exactly; 12 stops = 4096 × 12 states. */
export const MAX_EXACT_STOPS = 12;

const size = (1 << MAX_EXACT_STOPS) * MAX_EXACT_STOPS;
const dp = new Float64Array(size);
const from = new Int8Array(size);
const loadOf = new Int8Array(1 << MAX_EXACT_STOPS);

/**
 * The shortest order of a route's stops that keeps precedence and capacity, by dynamic programming
 * over (set of visited stops, last stop): O(2^n · n²). Returns the new order when it is shorter
 * than `currentCost`, otherwise null.
 */
export function exactRouteOrder(inst: Instance, d: number, stops: readonly number[], currentCost: number): number[] | null {
  const m = stops.length;
  if (m < 4 || m > MAX_EXACT_STOPS) return null;
  const { dist, n } = inst;
  const room = inst.room[d];
  const full = (1 << m) - 1;
  const pickupBit = new Int32Array(m);
  for (let x = 0; x < m; x++) {
    if (isPickup(stops[x])) continue;
    const p = stops.findIndex((s) => s === stops[x] - 1);
    pickupBit[x] = 1 << p;
  }
  loadOf[0] = 0;
  for (let mask = 1; mask <= full; mask++) {
    const low = 31 - Math.clz32(mask & -mask);
    loadOf[mask] = loadOf[mask & (mask - 1)] + (isPickup(stops[low]) ? 1 : -1);
  }
  dp.fill(Infinity, 0, (full + 1) * m);
  const s0 = startNode(inst, d);
  for (let x = 0; x < m; x++) if (isPickup(stops[x]) && room >= 1) dp[(1 << x) * m + x] = dist[s0 * n + stops[x]];
  for (let mask = 1; mask < full; mask++) {
    const load = loadOf[mask];
    for (let last = 0; last < m; last++) {
      const here = dp[mask * m + last];
      if (here === Infinity) continue;
      const row = stops[last] * n;
      for (let x = 0; x < m; x++) {
        const bit = 1 << x;
        if (mask & bit) continue;
        if (pickupBit[x] === 0 ? load + 1 > room : (mask & pickupBit[x]) === 0) continue;
        const at = (mask | bit) * m + x;
        const c = here + dist[row + stops[x]];
        if (c < dp[at]) {
          dp[at] = c;
          from[at] = last;
        }
      }
    }
  }
  let best = Infinity;
  let last = -1;
  for (let x = 0; x < m; x++) {
    if (dp[full * m + x] < best) {
      best = dp[full * m + x];
      last = x;
    }
  }
  if (!(best < currentCost - EPS)) return null;
  const order = new Array<number>(m);
  for (let mask = full, k = m - 1; k >= 0; k--) {
    order[k] = stops[last];
    const prev = from[mask * m + last];
    mask &= ~(1 << last);
    last = prev;
  }
  return order;
}
