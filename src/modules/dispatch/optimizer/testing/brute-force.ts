/**
 * Exact oracle for tests: the optimum of a tiny problem (up to ~7 trips, 3 drivers), by exhaustive
 * search that shares no code with the optimizer. For every driver and every subset of trips, the
 * cheapest stop order that keeps precedence, capacity, ready times, the stop limit and the time
 * limit (route duration, shift end) is found by dynamic programming over (visited stops, last
 * stop) with every non-dominated (time, cost, distance) label, which covers every order a plain
 * enumeration would; then every assignment of trips to drivers (or to nobody) is enumerated and
 * compared lexicographically (assigned trips, then cost).
 */
import { haversineMeters, type LonLat } from '../../../../platform/geo.js';
import type { Objective, OptimizerProblem } from '../types.js';

export interface ExactOptimum {
  assigned: number;
  /** The objective value (see Objective), and the total distance of that optimal plan. */
  cost: number;
  distanceM: number;
  /** Trip ids per driver in one optimal plan (for failure messages). */
  assignment: string[][];
}

interface ExactOptions {
  roadFactor?: number;
  speedKmh?: number;
  maxStopsPerRoute?: number;
  maxRouteDurationS?: number;
  serviceTimePickupS?: number;
  serviceTimeDropoffS?: number;
  objective?: Objective;
}

interface Stop {
  at: LonLat;
  trip: number;
  pickup: boolean;
  ready: number;
}

/**
 * The cheapest feasible order of one driver's stops: every order is a path through (visited set,
 * last stop) states; a state keeps every partial order that no other beats on both time and cost
 * (a later time can never make the rest cheaper), so the optimum is never discarded.
 */
function cheapestOrder(
  start: LonLat,
  stops: Stop[],
  room: number,
  limit: number,
  o: Required<Omit<ExactOptions, 'maxStopsPerRoute' | 'maxRouteDurationS'>>,
) {
  const m = stops.length;
  if (m === 0) return { cost: 0, distanceM: 0 };
  const metres = (a: LonLat, b: LonLat) => haversineMeters(a, b) * o.roadFactor;
  const speed = (o.speedKmh * 1000) / 3600;
  const [wTime, wDist] = { time: [1, 0.001], balanced: [1, 1 / speed], distance: [0, 1], vehicles: [0, 1] }[o.objective];
  type Label = { time: number; cost: number; metres: number };
  const labels = new Map<number, Label[]>();
  const pickupIndex = stops.map((s) => stops.findIndex((x) => x.pickup && x.trip === s.trip));
  const load = (mask: number) => stops.reduce((l, s, i) => (mask & (1 << i) ? l + (s.pickup ? 1 : -1) : l), 0);
  const push = (key: number, l: Label) => {
    const list = labels.get(key) ?? [];
    if (list.some((x) => x.time <= l.time && x.cost <= l.cost && x.metres <= l.metres)) return;
    labels.set(key, [...list.filter((x) => !(l.time <= x.time && l.cost <= x.cost && l.metres <= x.metres)), l]);
  };
  const step = (from: LonLat, l: Label, mask: number, x: number) => {
    const s = stops[x];
    const leg = metres(from, s.at);
    const arrive = l.time + leg / speed;
    const time = s.pickup ? Math.max(arrive, s.ready) + o.serviceTimePickupS : arrive + o.serviceTimeDropoffS;
    if (time > limit + 1e-9) return;
    push((mask | (1 << x)) * m + x, { time, cost: l.cost + wDist * leg + (s.pickup ? 0 : wTime * arrive), metres: l.metres + leg });
  };
  if (room >= 1) stops.forEach((s, x) => s.pickup && step(start, { time: 0, cost: 0, metres: 0 }, 0, x));
  const full = (1 << m) - 1;
  for (let mask = 1; mask < full; mask++) {
    const l0 = load(mask);
    for (let last = 0; last < m; last++) {
      for (const l of labels.get(mask * m + last) ?? []) {
        for (let x = 0; x < m; x++) {
          if (mask & (1 << x)) continue;
          if (stops[x].pickup ? l0 + 1 > room : !(mask & (1 << pickupIndex[x]))) continue;
          step(stops[last].at, l, mask, x);
        }
      }
    }
  }
  let best = { cost: Infinity, distanceM: Infinity };
  for (let last = 0; last < m; last++)
    for (const l of labels.get(full * m + last) ?? []) if (l.cost < best.cost) best = { cost: l.cost, distanceM: l.metres };
  return best;
}

export function bruteForceOptimum(problem: OptimizerProblem, options: ExactOptions = {}): ExactOptimum {
  const o = {
    roadFactor: options.roadFactor ?? 1.3,
    speedKmh: options.speedKmh ?? 25,
    serviceTimePickupS: options.serviceTimePickupS ?? 0,
    serviceTimeDropoffS: options.serviceTimeDropoffS ?? 0,
    objective: options.objective ?? 'time',
  };
  const { trips, drivers } = problem;
  const T = trips.length;
  const maxStops = options.maxStopsPerRoute ?? Infinity;
  // best[d][subset]
  const best = drivers.map((driver) => {
    const room = driver.capacity - (driver.currentLoad ?? 0);
    const territories = driver.territoryIds ?? [];
    const limit = Math.min(options.maxRouteDurationS ?? Infinity, driver.shiftEndS ?? Infinity);
    return Array.from({ length: 1 << T }, (_, subset) => {
      const chosen = trips.filter((_, t) => subset & (1 << t));
      if (chosen.length === 0) return { cost: 0, distanceM: 0 };
      const none = { cost: Infinity, distanceM: Infinity };
      if (2 * chosen.length > Math.min(maxStops, driver.maxStops ?? Infinity)) return none;
      if (chosen.some((t) => t.excludedDriverIds?.includes(driver.id))) return none;
      if (chosen.some((t) => t.territoryId && territories.length > 0 && !territories.includes(t.territoryId))) return none;
      const stops = chosen.flatMap((t, i) => [
        { at: t.pickup, trip: i, pickup: true, ready: t.readyAtS ?? 0 },
        { at: t.dropoff, trip: i, pickup: false, ready: 0 },
      ]);
      return cheapestOrder(driver.position, stops, room, limit, o);
    });
  });
  let optimum: ExactOptimum = { assigned: 0, cost: 0, distanceM: 0, assignment: drivers.map(() => []) };
  const D = drivers.length;
  const choice = new Array<number>(T).fill(0); // 0 = unassigned, d + 1 = driver d
  const total = (D + 1) ** T;
  for (let code = 0; code < total; code++) {
    let c = code;
    for (let t = 0; t < T; t++) {
      choice[t] = c % (D + 1);
      c = Math.floor(c / (D + 1));
    }
    let cost = 0;
    let distanceM = 0;
    let assigned = 0;
    for (let d = 0; d < D && cost < Infinity; d++) {
      let subset = 0;
      for (let t = 0; t < T; t++) if (choice[t] === d + 1) subset |= 1 << t;
      cost += best[d][subset].cost;
      distanceM += best[d][subset].distanceM;
    }
    if (cost === Infinity) continue;
    for (let t = 0; t < T; t++) if (choice[t] > 0) assigned++;
    if (assigned > optimum.assigned || (assigned === optimum.assigned && cost < optimum.cost))
      optimum = {
        assigned,
        cost,
        distanceM,
        assignment: drivers.map((_, d) => trips.filter((_, t) => choice[t] === d + 1).map((t) => t.id)),
      };
  }
  return optimum;
}
