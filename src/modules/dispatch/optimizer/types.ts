import type { LonLat } from '../../../platform/geo.js';

export type { LonLat };

export interface OptimizerDriver {
  id: string;
  position: LonLat;
  /** Maximum number of trips on board at the same time. */
  capacity: number;
  /** Territories the driver may serve; absent or empty = unrestricted. */
  territoryIds?: readonly string[];
  /**
   * Trips already on board that are not part of this problem. Their dropoffs are not planned, so
   * they occupy capacity for the whole route (conservative).
   */
  currentLoad?: number;
  /** Maximum number of stops in this driver's route (combined with maxStopsPerRoute: the smaller wins). */
  maxStops?: number;
}

export interface OptimizerTrip {
  id: string;
  pickup: LonLat;
  dropoff: LonLat;
  /** Territory of the trip; absent = any driver may serve it. */
  territoryId?: string;
  /** Drivers that may not serve this trip (e.g. they rejected it). */
  excludedDriverIds?: readonly string[];
}

export interface OptimizerProblem {
  drivers: readonly OptimizerDriver[];
  trips: readonly OptimizerTrip[];
}

/** Metres between two points (may be asymmetric). */
export type DistanceFn = (a: LonLat, b: LonLat) => number;

/**
 * A precomputed square matrix over `matrixPoints(problem)` (row-major, from row to column), e.g. the
 * answer of a routing engine's table service. Durations in seconds; when absent they are derived
 * from the distances and `speedKmh`.
 */
export interface DistanceMatrix {
  distances: Float64Array;
  durations?: Float64Array;
}

export interface OptimizerOptions {
  /** PRNG seed: the same seed on the same problem gives the same plan (unless the time budget cuts). */
  seed?: number;
  /** Wall-clock budget for the whole solve, in milliseconds (default 2000). */
  timeBudgetMs?: number;
  /** Average speed used for durations when the matrix has none (default 25 km/h). */
  speedKmh?: number;
  /** Multiplier on great-circle distance (default 1.3). Ignored when `distance` is given. */
  roadFactor?: number;
  /** A distance function or a precomputed matrix replacing great-circle (e.g. OSRM). */
  distance?: DistanceFn | DistanceMatrix;
  /** Maximum number of stops (pickups + dropoffs) in one route (default unlimited). */
  maxStopsPerRoute?: number;
  /** Upper bound on local-search iterations (default 200 000; the time budget usually cuts first). */
  maxIterations?: number;
}

export type StopKind = 'pickup' | 'dropoff';

export interface PlannedStop {
  tripId: string;
  kind: StopKind;
  position: LonLat;
  /** Seconds from the start of the route to the arrival at this stop. */
  arrivalOffsetS: number;
  /** Metres driven from the driver's position up to this stop. */
  cumulativeDistanceM: number;
  /** Trips on board after this stop (including the driver's currentLoad). */
  loadAfter: number;
}

export interface PlannedRoute {
  driverId: string;
  stops: PlannedStop[];
  distanceM: number;
  durationS: number;
}

export type UnassignedReason =
  /** The problem has no drivers at all. */
  | 'NO_DRIVERS'
  /** No driver serves the trip's territory (or every one of them is excluded for this trip). */
  | 'NO_DRIVER_IN_TERRITORY'
  /** Every compatible driver is already full (currentLoad >= capacity). */
  | 'CAPACITY'
  /** Compatible drivers had room, but their routes reached maxStopsPerRoute. */
  | 'MAX_STOPS';

export interface UnassignedTrip {
  tripId: string;
  reason: UnassignedReason;
}

export interface Plan {
  algorithm: 'regret-insertion+lns' | 'greedy-nearest-driver';
  /** One route per driver, in the problem's driver order (idle drivers have no stops). */
  routes: PlannedRoute[];
  unassigned: UnassignedTrip[];
  totals: { assigned: number; unassigned: number; distanceM: number; durationS: number };
  seed: number;
  iterations: number;
  /** Wall-clock time of the solve (the only field that varies between identical runs). */
  elapsedMs: number;
}

export class OptimizerInputError extends Error {
  override name = 'OptimizerInputError';
}
