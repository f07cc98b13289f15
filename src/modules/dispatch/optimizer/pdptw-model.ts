/**
 * The time-window model of the optimizer (pickup and delivery with time windows, PDPTW): hard windows at both stops
 * of a trip, loads in three dimensions (units, kilograms, litres) on board from pickup to drop-off, service time per
 * stop, routes that start at the driver's position or a hub no earlier than its opening and may end back at a hub
 * (arrival within its hours). Routes are kept with their service start times and latest feasible start times
 * (forward time slack), so a pair insertion is checked in O(1) per position pair after an O(length) walk.
 */
import { DEFAULTS, buildMatrix, matrixPoints, mayServe, validate } from './instance.js';
import type { Objective, OptimizerOptions, OptimizerProblem } from './types.js';

/** Load dimensions: units, kilograms, litres. */
export const DIMS = 3;
/** Times and loads within this are equal (floating point). */
export const TOL = 1e-7;

/**
 * The problem compiled into flat arrays. Nodes: trip t has its pickup at 2t and its drop-off at 2t + 1; vehicle
 * (driver) v starts at 2T + v and ends at 2T + D + v (an open route's end is reached from anywhere at no distance).
 */
export interface TwInstance {
  readonly problem: OptimizerProblem;
  readonly T: number;
  readonly D: number;
  readonly n: number;
  readonly dist: Float64Array;
  /** Travel seconds at the plan's speed. */
  readonly travel: Float64Array;
  /** Per vehicle: its travel seconds (`travel` divided by its speed factor; the same array for factor 1). */
  readonly travelOf: readonly Float64Array[];
  /** Per node: earliest and latest start of service, service time. */
  readonly early: Float64Array;
  readonly late: Float64Array;
  readonly svc: Float64Array;
  /** Per node and dimension (node · DIMS + k): the load change (pickup +, drop-off −). */
  readonly dem: Float64Array;
  /** Per vehicle and dimension: capacity (units: capacity − currentLoad). */
  readonly cap: Float64Array;
  /** Per vehicle: ends at a hub (1) or at its last stop (0). */
  readonly closed: Uint8Array;
  /** compat[t · D + v] = 1 when vehicle v may serve trip t. */
  readonly compat: Uint8Array;
  /** Per vehicle: most trips in its route (from the stop limits). */
  readonly maxTrips: Float64Array;
  /** Per vehicle: its class (vehicles of a class are interchangeable: same start, end, capacities, limits, trips). */
  readonly twin: Int32Array;
  readonly objective: Objective;
  readonly wDist: number;
  readonly wTime: number;
  /** Cost of a used vehicle (objective `vehicles`: above any distance, so fewer routes always win), else 0. */
  readonly vehicleCost: number;
  /** Some trip carries kilograms or litres (the plan then reports them). */
  readonly heavy: boolean;
  readonly maxRouteDurationS: number;
}

export const startOf = (inst: TwInstance, v: number) => 2 * inst.T + v;
export const endOf = (inst: TwInstance, v: number) => 2 * inst.T + inst.D + v;

/** Whether the problem needs the time-window solver: windows, loads, hubs, per-trip service times or objective `vehicles`. */
export function needsTimeWindows(problem: OptimizerProblem, options: OptimizerOptions): boolean {
  if (options.objective === 'vehicles') return true;
  return (
    problem.trips.some(
      (t) =>
        t.pickupAfterS !== undefined ||
        t.pickupBeforeS !== undefined ||
        t.deliverAfterS !== undefined ||
        t.deliverBeforeS !== undefined ||
        t.units !== undefined ||
        t.weightKg !== undefined ||
        t.volumeL !== undefined ||
        t.serviceTimePickupS !== undefined ||
        t.serviceTimeDropoffS !== undefined,
    ) ||
    problem.drivers.some(
      (d) =>
        d.startAtS !== undefined ||
        d.returnTo !== undefined ||
        d.capacityWeightKg !== undefined ||
        d.capacityVolumeL !== undefined ||
        (d.speedFactor !== undefined && d.speedFactor !== 1),
    )
  );
}

export function compileTw(problem: OptimizerProblem, options: OptimizerOptions): TwInstance {
  validate(problem, options);
  const T = problem.trips.length;
  const D = problem.drivers.length;
  const n = 2 * T + 2 * D;
  const points = matrixPoints(problem);
  const matrix = buildMatrix(points, options);
  const m = points.length;
  const speedMps = ((options.speedKmh ?? DEFAULTS.speedKmh) * 1000) / 3600;
  // node → matrix point (-1: an open route's end)
  const ext = new Int32Array(n);
  for (let x = 0; x < 2 * T + D; x++) ext[x] = x;
  let returns = 2 * T + D;
  problem.drivers.forEach((d, v) => (ext[2 * T + D + v] = d.returnTo ? returns++ : -1));
  const dist = new Float64Array(n * n);
  const travel = new Float64Array(n * n);
  for (let a = 0; a < n; a++) {
    const ea = ext[a];
    if (ea < 0) continue;
    for (let b = 0; b < n; b++) {
      const eb = ext[b];
      if (eb < 0 || a === b) continue;
      const dd = matrix.distances[ea * m + eb];
      dist[a * n + b] = dd;
      travel[a * n + b] = matrix.durations ? matrix.durations[ea * m + eb] : dd / speedMps;
    }
  }
  // one matrix per speed factor: vehicles of factor 1 read the base one itself, so their times are the base times exactly
  const bySpeed = new Map<number, Float64Array>([[1, travel]]);
  const travelOf = problem.drivers.map((d) => {
    const f = d.speedFactor ?? 1;
    let own = bySpeed.get(f);
    if (!own) {
      own = travel.map((x) => x / f);
      bySpeed.set(f, own);
    }
    return own;
  });
  const maxRouteDurationS = options.maxRouteDurationS ?? Infinity;
  const early = new Float64Array(n);
  const late = new Float64Array(n).fill(Infinity);
  const svc = new Float64Array(n);
  const dem = new Float64Array(n * DIMS);
  problem.trips.forEach((t, i) => {
    const p = 2 * i;
    const q = p + 1;
    early[p] = Math.max(t.readyAtS ?? 0, t.pickupAfterS ?? 0);
    late[p] = t.pickupBeforeS ?? Infinity;
    early[q] = t.deliverAfterS ?? 0;
    late[q] = t.deliverBeforeS ?? Infinity;
    svc[p] = t.serviceTimePickupS ?? options.serviceTimePickupS ?? 0;
    svc[q] = t.serviceTimeDropoffS ?? options.serviceTimeDropoffS ?? 0;
    const load = [t.units ?? 1, t.weightKg ?? 0, t.volumeL ?? 0];
    for (let k = 0; k < DIMS; k++) {
      dem[p * DIMS + k] = load[k];
      dem[q * DIMS + k] = -load[k];
    }
  });
  const cap = new Float64Array(D * DIMS);
  const closed = new Uint8Array(D);
  problem.drivers.forEach((d, v) => {
    const s = 2 * T + v;
    const e = 2 * T + D + v;
    early[s] = d.startAtS ?? 0;
    late[s] = Infinity;
    early[e] = 0;
    late[e] = Math.min(maxRouteDurationS, d.shiftEndS ?? Infinity);
    closed[v] = d.returnTo ? 1 : 0;
    cap[v * DIMS] = d.capacity - (d.currentLoad ?? 0);
    cap[v * DIMS + 1] = d.capacityWeightKg ?? Infinity;
    cap[v * DIMS + 2] = d.capacityVolumeL ?? Infinity;
  });
  const compat = new Uint8Array(T * D);
  problem.trips.forEach((t, ti) => problem.drivers.forEach((d, v) => (compat[ti * D + v] = mayServe(t, d) ? 1 : 0)));
  const maxTrips = Float64Array.from(problem.drivers, (d) =>
    Math.floor(Math.min(options.maxStopsPerRoute ?? Infinity, d.maxStops ?? Infinity) / 2),
  );
  const objective = options.objective ?? DEFAULTS.objective;
  const weights = { time: [1, 0.001], balanced: [1, 1 / speedMps], distance: [0, 1], vehicles: [0, 1] }[objective];
  let maxDist = 0;
  for (const x of dist) if (x > maxDist) maxDist = x;
  const twin = twins(problem, points, cap, early, late, compat, maxTrips, T, D);
  return {
    problem,
    T,
    D,
    n,
    dist,
    travel,
    travelOf,
    early,
    late,
    svc,
    dem,
    cap,
    closed,
    compat,
    maxTrips,
    twin,
    objective,
    wDist: weights[1],
    wTime: weights[0],
    vehicleCost: objective === 'vehicles' ? Math.max(1, 2 * n * maxDist) : 0,
    heavy: problem.trips.some((t) => (t.weightKg ?? 0) > 0 || (t.volumeL ?? 0) > 0),
    maxRouteDurationS,
  };
}

/** Classes of interchangeable vehicles (same speed included; an empty route of a class is priced once, for its first empty vehicle). */
function twins(
  problem: OptimizerProblem,
  points: readonly { lon: number; lat: number }[],
  cap: Float64Array,
  early: Float64Array,
  late: Float64Array,
  compat: Uint8Array,
  maxTrips: Float64Array,
  T: number,
  D: number,
): Int32Array {
  const keys = new Map<string, number>();
  return Int32Array.from(problem.drivers, (d, v) => {
    const s = points[2 * T + v];
    let column = '';
    for (let t = 0; t < T; t++) column += compat[t * D + v];
    const key = JSON.stringify([
      s.lon,
      s.lat,
      d.returnTo?.lon ?? null,
      d.returnTo?.lat ?? null,
      [...cap.subarray(v * DIMS, (v + 1) * DIMS)].map(String),
      d.speedFactor ?? 1,
      early[2 * T + v],
      String(late[2 * T + D + v]),
      String(maxTrips[v]),
      column,
    ]);
    if (!keys.has(key)) keys.set(key, keys.size);
    return keys.get(key)!;
  });
}

/**
 * A route: its nodes (start, stops, end), the start of service at each (after any wait), the latest start at each
 * that keeps the rest feasible, the load after each (position · DIMS + k), distance and objective cost. Never
 * changed once built (solutions share them).
 */
export class TwRoute {
  constructor(
    readonly nodes: Int32Array,
    readonly start: Float64Array,
    readonly latest: Float64Array,
    readonly load: Float64Array,
    readonly dist: number,
    readonly cost: number,
    /** False when the stops break a window, a capacity or a limit (then cost is Infinity). */
    readonly feasible: boolean,
  ) {}
  get trips(): number {
    return (this.nodes.length - 2) >> 1;
  }
}

/** The route of vehicle v through `stops` (node ids, without start and end), with its times; infeasible ones say so. */
export function makeRoute(inst: TwInstance, v: number, stops: ArrayLike<number>): TwRoute {
  const { dist, n, early, late, svc, dem, cap } = inst;
  const travel = inst.travelOf[v];
  const m = stops.length + 2;
  const nodes = new Int32Array(m);
  nodes[0] = startOf(inst, v);
  for (let k = 0; k < stops.length; k++) nodes[k + 1] = stops[k];
  nodes[m - 1] = endOf(inst, v);
  const start = new Float64Array(m);
  const latest = new Float64Array(m);
  const load = new Float64Array(m * DIMS);
  let feasible = stops.length / 2 <= inst.maxTrips[v];
  let d = 0;
  let drops = 0;
  start[0] = early[nodes[0]];
  for (let k = 1; k < m; k++) {
    const a = nodes[k - 1];
    const b = nodes[k];
    d += dist[a * n + b];
    const arrival = start[k - 1] + svc[a] + travel[a * n + b];
    if (b < 2 * inst.T && (b & 1) === 1) drops += arrival;
    start[k] = Math.max(arrival, early[b]);
    // an unused vehicle goes nowhere: its end (a hub it could not reach in time) binds only a route with stops
    if (start[k] > late[b] + TOL && m > 2) feasible = false;
    for (let x = 0; x < DIMS; x++) {
      const l = load[(k - 1) * DIMS + x] + dem[b * DIMS + x];
      load[k * DIMS + x] = l;
      if (l > cap[v * DIMS + x] + TOL) feasible = false;
    }
  }
  latest[m - 1] = late[nodes[m - 1]];
  for (let k = m - 2; k >= 0; k--) {
    const a = nodes[k];
    latest[k] = Math.min(late[a], latest[k + 1] - travel[a * n + nodes[k + 1]] - svc[a]);
  }
  const cost = feasible ? inst.wDist * d + inst.wTime * drops + (m > 2 ? inst.vehicleCost : 0) : Infinity;
  return new TwRoute(nodes, start, latest, load, d, cost, feasible);
}

export interface PairInsertion {
  cost: number;
  /** The pickup goes after position i, the drop-off after position j (j >= i; j = i: right after the pickup). */
  i: number;
  j: number;
}

/** Sum of the drop-off arrivals of route `r` with trip t's pickup after position i and drop-off after j (the time objective). */
function dropArrivalsWith(inst: TwInstance, v: number, r: TwRoute, t: number, i: number, j: number): number {
  const { n, early, svc } = inst;
  const travel = inst.travelOf[v];
  const nodes = r.nodes;
  let prev = nodes[0];
  let time = r.start[0];
  let sum = 0;
  const visit = (b: number) => {
    const arrival = time + svc[prev] + travel[prev * n + b];
    if (b < 2 * inst.T && (b & 1) === 1) sum += arrival;
    time = Math.max(arrival, early[b]);
    prev = b;
  };
  for (let k = 1; k < nodes.length; k++) {
    if (k - 1 === i) visit(2 * t);
    if (k - 1 === j) visit(2 * t + 1);
    visit(nodes[k]);
  }
  return sum;
}

/** The old sum of drop-off arrivals of vehicle v's route. */
function dropArrivals(inst: TwInstance, v: number, r: TwRoute): number {
  const { n, svc } = inst;
  const travel = inst.travelOf[v];
  let sum = 0;
  for (let k = 1; k < r.nodes.length; k++) {
    const b = r.nodes[k];
    if (b < 2 * inst.T && (b & 1) === 1) {
      const a = r.nodes[k - 1];
      sum += r.start[k - 1] + svc[a] + travel[a * n + b];
    }
  }
  return sum;
}

/** The load after position k of r plus trip t's load fits vehicle v in every dimension. */
function fits(inst: TwInstance, r: TwRoute, k: number, p: number, v: number): boolean {
  for (let x = 0; x < DIMS; x++) if (r.load[k * DIMS + x] + inst.dem[p * DIMS + x] > inst.cap[v * DIMS + x] + TOL) return false;
  return true;
}

/**
 * Cheapest feasible insertion of trip t into vehicle v's route r (windows, loads, the route's end), written into
 * `out`; returns its added cost (Infinity when none). The stops between the two new ones are re-timed as the
 * drop-off position moves on; the rest of the route is checked in O(1) by its latest start times.
 */
export function bestPairInsertion(inst: TwInstance, v: number, r: TwRoute, t: number, out: PairInsertion): number {
  out.cost = Infinity;
  if (!r.feasible || !inst.compat[t * inst.D + v] || r.trips + 1 > inst.maxTrips[v]) return Infinity;
  const { dist, n, early, late, svc } = inst;
  const travel = inst.travelOf[v];
  const p = 2 * t;
  const q = p + 1;
  const { nodes, start, latest } = r;
  const m = nodes.length;
  const timeObjective = inst.wTime > 0;
  const oldDrops = timeObjective ? dropArrivals(inst, v, r) : 0;
  const fixed = m === 2 ? inst.vehicleCost : 0;
  const lateP = late[p] + TOL;
  const lateQ = late[q] + TOL;
  let best = Infinity;
  let bi = -1;
  let bj = -1;
  // (no closures in here: this is the solver's innermost loop)
  for (let i = 0; i < m - 1; i++) {
    const a = nodes[i];
    const b = nodes[i + 1];
    const depA = start[i] + svc[a];
    if (depA > lateP) break;
    if (!fits(inst, r, i, p, v)) continue;
    const stP = Math.max(depA + travel[a * n + p], early[p]);
    if (stP > lateP) continue;
    const depP = stP + svc[p];
    // the drop-off right after the pickup
    const stQ = Math.max(depP + travel[p * n + q], early[q]);
    if (stQ <= lateQ && stQ + svc[q] + travel[q * n + b] <= latest[i + 1] + TOL) {
      let c = inst.wDist * (dist[a * n + p] + dist[p * n + q] + dist[q * n + b] - dist[a * n + b]) + fixed;
      if (timeObjective) c += inst.wTime * (dropArrivalsWith(inst, v, r, t, i, i) - oldDrops);
      if (c < best) {
        best = c;
        bi = bj = i;
      }
    }
    // the drop-off later: re-time the stops in between
    let cur = Math.max(depP + travel[p * n + b], early[b]);
    if (cur > latest[i + 1] + TOL) continue;
    const base = dist[a * n + p] + dist[p * n + b] - dist[a * n + b];
    for (let j = i + 1; j < m - 1; j++) {
      if (!fits(inst, r, j, p, v)) break;
      const x = nodes[j];
      const y = nodes[j + 1];
      const depX = cur + svc[x];
      if (depX > lateQ) break;
      const sq = Math.max(depX + travel[x * n + q], early[q]);
      if (sq <= lateQ && sq + svc[q] + travel[q * n + y] <= latest[j + 1] + TOL) {
        let c = inst.wDist * (base + dist[x * n + q] + dist[q * n + y] - dist[x * n + y]) + fixed;
        if (timeObjective) c += inst.wTime * (dropArrivalsWith(inst, v, r, t, i, j) - oldDrops);
        if (c < best) {
          best = c;
          bi = i;
          bj = j;
        }
      }
      cur = Math.max(depX + travel[x * n + y], early[y]);
      if (cur > latest[j + 1] + TOL) break;
    }
  }
  if (bi < 0) return Infinity;
  out.cost = best;
  out.i = bi;
  out.j = bj;
  return best;
}

/** The stops of r (without start and end) with trip t inserted as `ins` says. */
export function stopsWith(r: TwRoute, t: number, ins: PairInsertion): number[] {
  const out: number[] = [];
  const m = r.nodes.length;
  for (let k = 0; k < m - 1; k++) {
    if (k > 0) out.push(r.nodes[k]);
    if (k === ins.i) out.push(2 * t);
    if (k === ins.j) out.push(2 * t + 1);
  }
  return out;
}

/** The stops of r without the trips marked in `gone` (by trip). */
export function stopsWithout(r: TwRoute, gone: Uint8Array): number[] {
  const out: number[] = [];
  for (let k = 1; k < r.nodes.length - 1; k++) if (!gone[r.nodes[k] >> 1]) out.push(r.nodes[k]);
  return out;
}

/** Routes per vehicle, the vehicle of each trip (-1: unassigned), and the totals. */
export class TwSolution {
  routes: TwRoute[];
  routeOf: Int32Array;
  assigned: number;
  cost: number;
  used: number;
  constructor(
    readonly inst: TwInstance,
    from?: TwSolution,
  ) {
    if (from) {
      this.routes = from.routes.slice();
      this.routeOf = from.routeOf.slice();
      this.assigned = from.assigned;
      this.cost = from.cost;
      this.used = from.used;
    } else {
      const empty = Array.from({ length: inst.D }, (_, v) => makeRoute(inst, v, []));
      this.routes = empty;
      this.routeOf = new Int32Array(inst.T).fill(-1);
      this.assigned = 0;
      this.cost = empty.reduce((s, r) => s + r.cost, 0);
      this.used = 0;
    }
  }
  clone(): TwSolution {
    return new TwSolution(this.inst, this);
  }
  setRoute(v: number, r: TwRoute): void {
    const old = this.routes[v];
    for (let k = 1; k < old.nodes.length - 1; k++) {
      const s = old.nodes[k];
      if ((s & 1) === 0 && this.routeOf[s >> 1] === v) {
        this.routeOf[s >> 1] = -1;
        this.assigned--;
      }
    }
    for (let k = 1; k < r.nodes.length - 1; k++) {
      const s = r.nodes[k];
      if ((s & 1) === 0) {
        if (this.routeOf[s >> 1] < 0) this.assigned++;
        this.routeOf[s >> 1] = v;
      }
    }
    this.cost += r.cost - old.cost;
    this.used += (r.nodes.length > 2 ? 1 : 0) - (old.nodes.length > 2 ? 1 : 0);
    this.routes[v] = r;
  }
  /** The cost summed afresh (the running sum drifts by rounding). */
  exactCost(): number {
    return this.routes.reduce((s, r) => s + r.cost, 0);
  }
  distance(): number {
    return this.routes.reduce((s, r) => s + r.dist, 0);
  }
}
