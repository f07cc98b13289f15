import { haversineMeters } from '../../../platform/geo.js';
import {
  OptimizerInputError,
  type DistanceMatrix,
  type LonLat,
  type OptimizerDriver,
  type OptimizerTrip,
  type OptimizerOptions,
  type Objective,
  type OptimizerProblem,
  type UnassignedReason,
} from './types.js';

/**
 * The problem compiled into flat arrays. Node numbering (also the matrix order): trip t has its
 * pickup at 2t and its dropoff at 2t+1; driver d starts at 2T+d.
 */
export interface Instance {
  readonly problem: OptimizerProblem;
  readonly tripCount: number;
  readonly driverCount: number;
  /** Matrix side: 2T + D. */
  readonly n: number;
  readonly dist: Float64Array;
  readonly dur: Float64Array | null;
  /** Travel seconds between points (the duration matrix, or distance / speed). */
  readonly travel: Float64Array;
  /**
   * The distances and travel times obey the triangle inequality (great-circle distances built here,
   * times proportional to them): going through an extra stop never arrives earlier nor drives less.
   * bestInsertion then prunes positions by lower bounds; a custom distance function or matrix (road
   * times) is not assumed to, and gets the full scan.
   */
  readonly metric: boolean;
  /**
   * Both matrices are symmetric, exactly (the great-circle ones built here are): bestInsertion then
   * reads "x to p" as "p to x", the same numbers from a row instead of a column (cache locality).
   */
  readonly symmetric: boolean;
  readonly speedMps: number;
  /** Per trip: earliest pickup, seconds from the start. */
  readonly ready: Float64Array;
  /** Per driver: latest end of the route (min of maxRouteDurationS and the shift end), seconds. */
  readonly limit: Float64Array;
  readonly maxRouteDurationS: number;
  readonly svcPickup: number;
  readonly svcDropoff: number;
  readonly objective: Objective;
  /** Objective weights: cost per second of drop-off arrival, and per metre. */
  readonly wTime: number;
  readonly wDist: number;
  /** Per driver: capacity left for planned trips (capacity - currentLoad; may be <= 0). */
  readonly room: Int32Array;
  /** compat[t * D + d] = 1 when driver d may serve trip t (territories). */
  readonly compat: Uint8Array;
  /** Per driver: the stop limit of its route (min of maxStopsPerRoute and the driver's maxStops). */
  readonly maxStops: Float64Array;
}

/**
 * Chains of the search: one on small instances, CHAINS from CHAINS_FROM trips. Each chain is a ruin-and-recreate walk
 * of its own (its own random stream, current and best solution); every epoch (see lns.ts), all take the best of
 * them as their current and best. Two chains of 0.75 × the iterations each end as well as one chain of all of them
 * (500 × 60, means of 4 seeds × 4 instances: 1,607.0 trips in all against 1,607.25; 100 × 20: 388.25 against
 * 387.25), and they can run at once on two threads (see ChainHandle): the default budget is 1.5× for them (see
 * DEFAULTS.iterations). Which chain runs where never changes the plan: the count, the seeds and the epochs do not
 * depend on the machine.
 */
export const CHAINS = 2;
export const CHAINS_FROM = 50;
export const chainCount = (tripCount: number): number => (tripCount >= CHAINS_FROM ? CHAINS : 1);

export const DEFAULTS = {
  seed: 1,
  timeBudgetMs: 10_000,
  speedKmh: 25,
  roadFactor: 1.3,
  objective: 'time' as Objective,
  /**
   * Default iteration budget for T trips, all chains together (see OptimizerOptions.iterations): 2,500 + 15 per trip
   * up to 20,000 for one chain, 1.5× that for two (see CHAINS).
   */
  iterations: (tripCount: number) =>
    Math.round((chainCount(tripCount) > 1 ? 1.5 : 1) * Math.min(20_000, Math.round(2500 + 15 * tripCount))),
};

export const startNode = (inst: Instance, d: number): number => 2 * inst.tripCount + d;

/**
 * The points in matrix order (pickup, dropoff of each trip, then the drivers' positions, then the `returnTo` of the
 * drivers that have one, in driver order), for a routing engine.
 */
export function matrixPoints(problem: OptimizerProblem): LonLat[] {
  const points: LonLat[] = [];
  for (const t of problem.trips) points.push(t.pickup, t.dropoff);
  for (const d of problem.drivers) points.push(d.position);
  for (const d of problem.drivers) if (d.returnTo) points.push(d.returnTo);
  return points;
}

const validPoint = (p: LonLat | undefined) =>
  !!p && Number.isFinite(p.lon) && Number.isFinite(p.lat) && Math.abs(p.lat) <= 90 && Math.abs(p.lon) <= 180;

export function validate(problem: OptimizerProblem, options: OptimizerOptions): void {
  const fail = (msg: string) => {
    throw new OptimizerInputError(msg);
  };
  const driverIds = new Set<string>();
  for (const d of problem.drivers) {
    if (driverIds.has(d.id)) fail(`duplicate driver id ${d.id}`);
    driverIds.add(d.id);
    if (!validPoint(d.position)) fail(`driver ${d.id}: invalid position`);
    if (!Number.isInteger(d.capacity) || d.capacity < 0) fail(`driver ${d.id}: capacity must be an integer >= 0`);
    if (d.currentLoad !== undefined && (!Number.isInteger(d.currentLoad) || d.currentLoad < 0))
      fail(`driver ${d.id}: currentLoad must be an integer >= 0`);
    if (d.maxStops !== undefined && (!Number.isInteger(d.maxStops) || d.maxStops < 0))
      fail(`driver ${d.id}: maxStops must be an integer >= 0`);
    if (d.shiftEndS !== undefined && !Number.isFinite(d.shiftEndS)) fail(`driver ${d.id}: shiftEndS must be a finite number`);
    if (d.startAtS !== undefined && !(Number.isFinite(d.startAtS) && d.startAtS >= 0))
      fail(`driver ${d.id}: startAtS must be a number >= 0`);
    if (d.returnTo !== undefined && !validPoint(d.returnTo)) fail(`driver ${d.id}: invalid returnTo`);
    for (const [v, name] of [
      [d.capacityWeightKg, 'capacityWeightKg'],
      [d.capacityVolumeL, 'capacityVolumeL'],
    ] as const)
      if (v !== undefined && !(Number.isFinite(v) && v >= 0)) fail(`driver ${d.id}: ${name} must be a number >= 0`);
    if (d.speedFactor !== undefined && !(Number.isFinite(d.speedFactor) && d.speedFactor > 0))
      fail(`driver ${d.id}: speedFactor must be a positive number`);
  }
  const tripIds = new Set<string>();
  for (const t of problem.trips) {
    if (tripIds.has(t.id)) fail(`duplicate trip id ${t.id}`);
    tripIds.add(t.id);
    if (!validPoint(t.pickup) || !validPoint(t.dropoff)) fail(`trip ${t.id}: invalid pickup or dropoff`);
    if (t.readyAtS !== undefined && !(Number.isFinite(t.readyAtS) && t.readyAtS >= 0)) fail(`trip ${t.id}: readyAtS must be a number >= 0`);
    for (const [v, name] of [
      [t.pickupAfterS, 'pickupAfterS'],
      [t.pickupBeforeS, 'pickupBeforeS'],
      [t.deliverAfterS, 'deliverAfterS'],
      [t.deliverBeforeS, 'deliverBeforeS'],
      [t.units, 'units'],
      [t.weightKg, 'weightKg'],
      [t.volumeL, 'volumeL'],
      [t.serviceTimePickupS, 'serviceTimePickupS'],
      [t.serviceTimeDropoffS, 'serviceTimeDropoffS'],
    ] as const)
      if (v !== undefined && !(Number.isFinite(v) && v >= 0)) fail(`trip ${t.id}: ${name} must be a number >= 0`);
    if ((t.pickupBeforeS ?? Infinity) < Math.max(t.pickupAfterS ?? 0, t.readyAtS ?? 0))
      fail(`trip ${t.id}: the pickup window ends before it starts`);
    if ((t.deliverBeforeS ?? Infinity) < (t.deliverAfterS ?? 0)) fail(`trip ${t.id}: the delivery window ends before it starts`);
  }
  const positive = (v: number | undefined, name: string) => {
    if (v !== undefined && !(Number.isFinite(v) && v > 0)) fail(`${name} must be a positive number`);
  };
  positive(options.speedKmh, 'speedKmh');
  positive(options.roadFactor, 'roadFactor');
  positive(options.timeBudgetMs, 'timeBudgetMs');
  positive(options.maxStopsPerRoute, 'maxStopsPerRoute');
  positive(options.maxRouteDurationS, 'maxRouteDurationS');
  if (options.iterations !== undefined && !(Number.isInteger(options.iterations) && options.iterations >= 0))
    fail('iterations must be an integer >= 0');
  for (const [v, name] of [
    [options.serviceTimePickupS, 'serviceTimePickupS'],
    [options.serviceTimeDropoffS, 'serviceTimeDropoffS'],
  ] as const) {
    if (v !== undefined && !(Number.isFinite(v) && v >= 0)) fail(`${name} must be a number >= 0`);
  }
  if (options.objective !== undefined && !['time', 'balanced', 'distance', 'vehicles'].includes(options.objective))
    fail('objective must be time, balanced, distance or vehicles');
}

export function buildMatrix(points: LonLat[], options: OptimizerOptions): DistanceMatrix {
  const n = points.length;
  const { distance } = options;
  if (distance && typeof distance !== 'function') {
    if (distance.distances.length !== n * n) throw new OptimizerInputError(`distance matrix must be ${n}x${n}`);
    if (distance.durations && distance.durations.length !== n * n) throw new OptimizerInputError(`duration matrix must be ${n}x${n}`);
    return distance;
  }
  const m = new Float64Array(n * n);
  if (distance) {
    for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) if (i !== j) m[i * n + j] = distance(points[i], points[j]);
    return { distances: m };
  }
  const factor = options.roadFactor ?? DEFAULTS.roadFactor;
  for (let i = 0; i < n; i++) for (let j = i + 1; j < n; j++) m[i * n + j] = m[j * n + i] = haversineMeters(points[i], points[j]) * factor;
  return { distances: m };
}

/** The top-left n × n part of a matrix (itself when it is n × n). */
function leading(matrix: DistanceMatrix, n: number): DistanceMatrix {
  const m = Math.round(Math.sqrt(matrix.distances.length));
  if (m === n) return matrix;
  const cut = (a: Float64Array) => {
    const out = new Float64Array(n * n);
    for (let i = 0; i < n; i++) out.set(a.subarray(i * m, i * m + n), i * n);
    return out;
  };
  return { distances: cut(matrix.distances), durations: matrix.durations && cut(matrix.durations) };
}

/** m[i][j] === m[j][i] for every pair (an n × n row-major matrix): bit for bit, so either can be read. */
function isSymmetric(m: Float64Array, n: number): boolean {
  for (let i = 0; i < n; i++) for (let j = i + 1; j < n; j++) if (!Object.is(m[i * n + j], m[j * n + i])) return false;
  return true;
}

/** Territory rule: both sides must have territories for it to restrict. */
const compatible = (tripTerritory: string | undefined, driverTerritories: readonly string[] | undefined) =>
  !tripTerritory || !driverTerritories || driverTerritories.length === 0 || driverTerritories.includes(tripTerritory);

/** A driver may serve a trip: territories agree and the driver is not excluded for the trip. */
export const mayServe = (t: OptimizerTrip, d: OptimizerDriver) =>
  compatible(t.territoryId, d.territoryIds) && !t.excludedDriverIds?.includes(d.id);

export function compile(problem: OptimizerProblem, options: OptimizerOptions): Instance {
  validate(problem, options);
  const T = problem.trips.length;
  const D = problem.drivers.length;
  // the matrix may cover the drivers' return points too (matrixPoints): this model reads the first 2T + D of them
  const matrix = leading(buildMatrix(matrixPoints(problem), options), 2 * T + D);
  const room = new Int32Array(D);
  problem.drivers.forEach((d, i) => (room[i] = d.capacity - (d.currentLoad ?? 0)));
  const compat = new Uint8Array(T * D);
  problem.trips.forEach((t, ti) => problem.drivers.forEach((d, di) => (compat[ti * D + di] = mayServe(t, d) ? 1 : 0)));
  const speedMps = ((options.speedKmh ?? DEFAULTS.speedKmh) * 1000) / 3600;
  const dur = matrix.durations ?? null;
  const travel = dur ?? matrix.distances.map((m) => m / speedMps);
  const maxRouteDurationS = options.maxRouteDurationS ?? Infinity;
  const n = 2 * T + D;
  const objective = options.objective ?? DEFAULTS.objective;
  const weights = { time: [1, 0.001], balanced: [1, 1 / speedMps], distance: [0, 1], vehicles: [0, 1] }[objective];
  return {
    problem,
    tripCount: T,
    driverCount: D,
    n,
    dist: matrix.distances,
    dur,
    travel,
    metric: !options.distance,
    // the great-circle matrix is filled symmetrically (its times are distance / speed); a given
    // matrix or distance function is checked
    symmetric: !options.distance || (isSymmetric(matrix.distances, n) && isSymmetric(travel, n)),
    speedMps,
    ready: Float64Array.from(problem.trips, (t) => t.readyAtS ?? 0),
    limit: Float64Array.from(problem.drivers, (d) => Math.min(maxRouteDurationS, d.shiftEndS ?? Infinity)),
    maxRouteDurationS,
    svcPickup: options.serviceTimePickupS ?? 0,
    svcDropoff: options.serviceTimeDropoffS ?? 0,
    objective,
    wTime: weights[0],
    wDist: weights[1],
    room,
    compat,
    maxStops: Float64Array.from(problem.drivers, (d) => Math.min(options.maxStopsPerRoute ?? Infinity, d.maxStops ?? Infinity)),
  };
}

/** End of the route "driver d alone with trip t" (seconds), Infinity when the capacity forbids it. */
export function soloEnd(inst: Instance, d: number, t: number): number {
  if (inst.room[d] < 1) return Infinity;
  const { travel, n } = inst;
  const p = 2 * t;
  const atPickup = Math.max(travel[startNode(inst, d) * n + p], inst.ready[t]);
  return atPickup + inst.svcPickup + travel[p * n + p + 1] + inst.svcDropoff;
}

/**
 * Why trip t could not be planned, given that the solver left it out: the first rule, in this
 * order, that rules out every driver: territory (or exclusion), capacity, the route duration even
 * alone, the shift end even alone; otherwise the routes that could take it are full (stop limit)
 * or out of time.
 */
export function unassignedReason(inst: Instance, t: number, routes: readonly (readonly number[])[]): UnassignedReason {
  const D = inst.driverCount;
  if (D === 0) return 'NO_DRIVERS';
  const compatible: number[] = [];
  for (let d = 0; d < D; d++) if (inst.compat[t * D + d]) compatible.push(d);
  if (compatible.length === 0) return 'NO_DRIVER_IN_TERRITORY';
  const withRoom = compatible.filter((d) => inst.room[d] >= 1 && inst.maxStops[d] >= 2);
  if (withRoom.length === 0) return 'CAPACITY';
  const ends = withRoom.map((d) => soloEnd(inst, d, t));
  if (ends.every((e) => e > inst.maxRouteDurationS + 1e-9)) return 'ROUTE_DURATION';
  const fitting = withRoom.filter((d, i) => ends[i] <= inst.limit[d] + 1e-9);
  if (fitting.length === 0) return 'SHIFT_END';
  return fitting.every((d) => routes[d].length + 2 > inst.maxStops[d]) ? 'MAX_STOPS' : 'ROUTES_FULL';
}
