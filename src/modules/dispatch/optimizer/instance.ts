import { haversineMeters } from '../../../platform/geo.js';
import {
  OptimizerInputError,
  type DistanceMatrix,
  type LonLat,
  type OptimizerDriver,
  type OptimizerTrip,
  type OptimizerOptions,
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
  readonly speedMps: number;
  /** Per driver: capacity left for planned trips (capacity - currentLoad; may be <= 0). */
  readonly room: Int32Array;
  /** compat[t * D + d] = 1 when driver d may serve trip t (territories). */
  readonly compat: Uint8Array;
  /** Per driver: the stop limit of its route (min of maxStopsPerRoute and the driver's maxStops). */
  readonly maxStops: Float64Array;
}

export const DEFAULTS = { seed: 1, timeBudgetMs: 2000, speedKmh: 25, roadFactor: 1.3, maxIterations: 200_000 };

export const startNode = (inst: Instance, d: number): number => 2 * inst.tripCount + d;

/** The points in matrix order (pickup, dropoff of each trip, then the drivers), for a routing engine. */
export function matrixPoints(problem: OptimizerProblem): LonLat[] {
  const points: LonLat[] = [];
  for (const t of problem.trips) points.push(t.pickup, t.dropoff);
  for (const d of problem.drivers) points.push(d.position);
  return points;
}

const validPoint = (p: LonLat | undefined) =>
  !!p && Number.isFinite(p.lon) && Number.isFinite(p.lat) && Math.abs(p.lat) <= 90 && Math.abs(p.lon) <= 180;

function validate(problem: OptimizerProblem, options: OptimizerOptions): void {
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
    if (d.maxStops !== undefined && (!Number.isInteger(d.maxStops) || d.maxStops < 0)) fail(`driver ${d.id}: maxStops must be an integer >= 0`);
  }
  const tripIds = new Set<string>();
  for (const t of problem.trips) {
    if (tripIds.has(t.id)) fail(`duplicate trip id ${t.id}`);
    tripIds.add(t.id);
    if (!validPoint(t.pickup) || !validPoint(t.dropoff)) fail(`trip ${t.id}: invalid pickup or dropoff`);
  }
  const positive = (v: number | undefined, name: string) => {
    if (v !== undefined && !(Number.isFinite(v) && v > 0)) fail(`${name} must be a positive number`);
  };
  positive(options.speedKmh, 'speedKmh');
  positive(options.roadFactor, 'roadFactor');
  positive(options.timeBudgetMs, 'timeBudgetMs');
  positive(options.maxStopsPerRoute, 'maxStopsPerRoute');
}

function buildMatrix(points: LonLat[], options: OptimizerOptions): DistanceMatrix {
  const n = points.length;
  const { distance } = options;
  if (distance && typeof distance !== 'function') {
    if (distance.distances.length !== n * n) throw new OptimizerInputError(`distance matrix must be ${n}x${n}`);
    if (distance.durations && distance.durations.length !== n * n)
      throw new OptimizerInputError(`duration matrix must be ${n}x${n}`);
    return distance;
  }
  const m = new Float64Array(n * n);
  if (distance) {
    for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) if (i !== j) m[i * n + j] = distance(points[i], points[j]);
    return { distances: m };
  }
  const factor = options.roadFactor ?? DEFAULTS.roadFactor;
  for (let i = 0; i < n; i++)
    for (let j = i + 1; j < n; j++) m[i * n + j] = m[j * n + i] = haversineMeters(points[i], points[j]) * factor;
  return { distances: m };
}

/** Territory rule: both sides must have territories for it to restrict. */
const compatible = (tripTerritory: string | undefined, driverTerritories: readonly string[] | undefined) =>
  !tripTerritory || !driverTerritories || driverTerritories.length === 0 || driverTerritories.includes(tripTerritory);

/** A driver may serve a trip: territories agree and the driver is not excluded for the trip. */
export const mayServe = (t: OptimizerTrip, d: OptimizerDriver) => compatible(t.territoryId, d.territoryIds) && !t.excludedDriverIds?.includes(d.id);

export function compile(problem: OptimizerProblem, options: OptimizerOptions): Instance {
  validate(problem, options);
  const T = problem.trips.length;
  const D = problem.drivers.length;
  const matrix = buildMatrix(matrixPoints(problem), options);
  const room = new Int32Array(D);
  problem.drivers.forEach((d, i) => (room[i] = d.capacity - (d.currentLoad ?? 0)));
  const compat = new Uint8Array(T * D);
  problem.trips.forEach((t, ti) =>
    problem.drivers.forEach((d, di) => (compat[ti * D + di] = mayServe(t, d) ? 1 : 0)),
  );
  return {
    problem,
    tripCount: T,
    driverCount: D,
    n: 2 * T + D,
    dist: matrix.distances,
    dur: matrix.durations ?? null,
    speedMps: ((options.speedKmh ?? DEFAULTS.speedKmh) * 1000) / 3600,
    room,
    compat,
    maxStops: Float64Array.from(problem.drivers, (d) => Math.min(options.maxStopsPerRoute ?? Infinity, d.maxStops ?? Infinity)),
  };
}

/** Why trip t could not be planned, given that the solver left it out. */
export function unassignedReason(inst: Instance, t: number): UnassignedReason {
  const D = inst.driverCount;
  if (D === 0) return 'NO_DRIVERS';
  let inTerritory = false;
  for (let d = 0; d < D; d++) {
    if (!inst.compat[t * D + d]) continue;
    inTerritory = true;
    if (inst.room[d] >= 1) return 'MAX_STOPS';
  }
  return inTerritory ? 'CAPACITY' : 'NO_DRIVER_IN_TERRITORY';
}
