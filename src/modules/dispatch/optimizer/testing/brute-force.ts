/**
 * Exact oracle for tests: the optimum of a tiny problem (up to ~7 trips, 3 drivers), by exhaustive
 * search that shares no code with the optimizer. For every driver and every subset of trips, the
 * shortest precedence- and capacity-feasible stop order is found by dynamic programming over
 * (visited stops, last stop), which covers every order a plain enumeration would; then every
 * assignment of trips to drivers (or to nobody) is enumerated and compared lexicographically.
 */
import { haversineMeters, type LonLat } from '../../../../platform/geo.js';
import type { OptimizerProblem } from '../types.js';

export interface ExactOptimum {
  assigned: number;
  distanceM: number;
  /** Trip ids per driver in one optimal plan (for failure messages). */
  assignment: string[][];
}

interface ExactOptions {
  roadFactor?: number;
  maxStopsPerRoute?: number;
}

function shortestOrder(
  start: LonLat,
  stops: { at: LonLat; trip: number; pickup: boolean }[],
  room: number,
  metres: (a: LonLat, b: LonLat) => number,
): number {
  const m = stops.length;
  if (m === 0) return 0;
  const full = (1 << m) - 1;
  const dp = new Float64Array((full + 1) * m).fill(Infinity);
  const pickupIndex = stops.map((s) => stops.findIndex((o) => o.pickup && o.trip === s.trip));
  const load = (mask: number) => stops.reduce((l, s, i) => (mask & (1 << i) ? l + (s.pickup ? 1 : -1) : l), 0);
  stops.forEach((s, i) => {
    if (s.pickup && room >= 1) dp[(1 << i) * m + i] = metres(start, s.at);
  });
  for (let mask = 1; mask <= full; mask++) {
    const l = load(mask);
    for (let last = 0; last < m; last++) {
      const here = dp[mask * m + last];
      if (here === Infinity) continue;
      for (let x = 0; x < m; x++) {
        if (mask & (1 << x)) continue;
        const s = stops[x];
        if (s.pickup ? l + 1 > room : !(mask & (1 << pickupIndex[x]))) continue;
        const next = (mask | (1 << x)) * m + x;
        const c = here + metres(stops[last].at, s.at);
        if (c < dp[next]) dp[next] = c;
      }
    }
  }
  let best = Infinity;
  for (let last = 0; last < m; last++) best = Math.min(best, dp[full * m + last]);
  return best;
}

export function bruteForceOptimum(problem: OptimizerProblem, options: ExactOptions = {}): ExactOptimum {
  const factor = options.roadFactor ?? 1.3;
  const metres = (a: LonLat, b: LonLat) => haversineMeters(a, b) * factor;
  const { trips, drivers } = problem;
  const T = trips.length;
  const maxStops = options.maxStopsPerRoute ?? Infinity;
  // cost[d][subset]
  const cost = drivers.map((driver) => {
    const room = driver.capacity - (driver.currentLoad ?? 0);
    const territories = driver.territoryIds ?? [];
    return Array.from({ length: 1 << T }, (_, subset) => {
      const chosen = trips.filter((_, t) => subset & (1 << t));
      if (chosen.length === 0) return 0;
      if (2 * chosen.length > maxStops) return Infinity;
      if (chosen.some((t) => t.territoryId && territories.length > 0 && !territories.includes(t.territoryId)))
        return Infinity;
      const stops = chosen.flatMap((t, i) => [
        { at: t.pickup, trip: i, pickup: true },
        { at: t.dropoff, trip: i, pickup: false },
      ]);
      return shortestOrder(driver.position, stops, room, metres);
    });
  });
  let best: ExactOptimum = { assigned: 0, distanceM: 0, assignment: drivers.map(() => []) };
  const D = drivers.length;
  const choice = new Array<number>(T).fill(0); // 0 = unassigned, d + 1 = driver d
  const total = (D + 1) ** T;
  for (let code = 0; code < total; code++) {
    let c = code;
    for (let t = 0; t < T; t++) {
      choice[t] = c % (D + 1);
      c = Math.floor(c / (D + 1));
    }
    let distanceM = 0;
    let assigned = 0;
    for (let d = 0; d < D && distanceM < Infinity; d++) {
      let subset = 0;
      for (let t = 0; t < T; t++) if (choice[t] === d + 1) subset |= 1 << t;
      distanceM += cost[d][subset];
    }
    if (distanceM === Infinity) continue;
    for (let t = 0; t < T; t++) if (choice[t] > 0) assigned++;
    if (assigned > best.assigned || (assigned === best.assigned && distanceM < best.distanceM)) best = {
        assigned,
        distanceM,
        assignment: drivers.map((_, d) => trips.filter((_, t) => choice[t] === d + 1).map((t) => t.id)),
      };
  }
  return best;
}
