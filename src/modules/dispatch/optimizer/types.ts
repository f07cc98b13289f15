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
  /**
   * End of the driver's shift, in seconds from the start of the plan: his route (service at the last
   * stop included) must end by then. Absent = no shift end (only maxRouteDurationS applies).
   */
  shiftEndS?: number;
  /**
   * Earliest departure from `position`, seconds from the start of the plan (e.g. a hub's opening time; default 0).
   * Setting it (or any time-window field below) plans with the time-window solver (see index.ts).
   */
  startAtS?: number;
  /**
   * Where the route ends (e.g. the hub it started from): the driver drives back there after the last stop and
   * `shiftEndS` / `maxRouteDurationS` then bound the arrival there; `shiftEndS` is then the place's closing, a window
   * (a trip that cannot be served and brought back by it is TIME_WINDOW). Absent = the route ends at its last stop.
   */
  returnTo?: LonLat;
  /** Capacity in kilograms and litres (absent = unlimited). `capacity` is the capacity in units. */
  capacityWeightKg?: number;
  capacityVolumeL?: number;
  /**
   * This vehicle's speed against the plan's (`speedKmh` or the duration matrix): its travel times are the base ones
   * divided by it (0.6: a bicycle takes 1 / 0.6 of the time). Default 1; another value plans with the time-window
   * solver.
   */
  speedFactor?: number;
}

export interface OptimizerTrip {
  id: string;
  pickup: LonLat;
  dropoff: LonLat;
  /** Territory of the trip; absent = any driver may serve it. */
  territoryId?: string;
  /** Drivers that may not serve this trip (e.g. they rejected it). */
  excludedDriverIds?: readonly string[];
  /**
   * Earliest pickup (the order's ready estimate), in seconds from the start of the plan; a driver
   * who arrives earlier waits. Absent or 0 = ready now.
   */
  readyAtS?: number;
  /**
   * Hard time windows, seconds from the start of the plan: service at the pickup starts within
   * [pickupAfterS, pickupBeforeS] and at the drop-off within [deliverAfterS, deliverBeforeS]. Arriving early means
   * waiting; arriving late is not allowed (the trip stays unassigned with TIME_WINDOW when no route can take it).
   * `pickupAfterS` and `readyAtS` both delay the pickup (the later wins).
   */
  pickupAfterS?: number;
  pickupBeforeS?: number;
  deliverAfterS?: number;
  deliverBeforeS?: number;
  /** Load of the trip, on board from its pickup to its drop-off: units (default 1), kilograms and litres (default 0). */
  units?: number;
  weightKg?: number;
  volumeL?: number;
  /** Service times of this trip's stops, overriding the options' serviceTimePickupS / serviceTimeDropoffS. */
  serviceTimePickupS?: number;
  serviceTimeDropoffS?: number;
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

/**
 * What the search minimises (after the number of assigned trips, always first):
 * - `time`: the sum of the drop-off times (the customers' waiting), distance only as a tie-breaker
 *   (1 km weighs as 1 s);
 * - `balanced`: the sum of the drop-off times plus the drivers' driving time (distance / speed);
 * - `distance`: the total distance of the open routes.
 * - `vehicles`: the fewest routes (drivers used), then the total distance (the Li & Lim objective); the plan's `cost`
 *   is then the distance, the routes being those with stops.
 */
export type Objective = 'time' | 'balanced' | 'distance' | 'vehicles';

/** Why a search ended (a plan's `stoppedBy`). */
export const STOP_REASONS = ['iterations', 'converged', 'time'] as const;
export type StopReason = (typeof STOP_REASONS)[number];

export interface OptimizerOptions {
  /** PRNG seed: the same seed and iteration budget on the same problem give the same plan. */
  seed?: number;
  /**
   * Search budget in large-neighbourhood iterations, of all chains together (default: see DEFAULTS.iterations;
   * from CHAINS_FROM trips the search runs as CHAINS chains, see instance.ts). The run goes on
   * past it, by a quarter at a time up to 2.75×, while the last half budget's worth of iterations still
   * assigned a trip more or improved the best by more than 0.5 %; it stops earlier once every chain has gone max(1000, 40·T) / chains iterations of its own without a new best of its own. Everything is
   * counted, not timed, so the plan is the same on any machine at any load.
   */
  iterations?: number;
  /**
   * Wall-clock ceiling for the whole solve, in milliseconds (default 10 000): only a safety bound.
   * When it cuts the search, the plan reports `stoppedBy: 'time'` and is no longer reproducible.
   */
  timeBudgetMs?: number;
  /** What to minimise (default `time`). */
  objective?: Objective;
  /** Maximum duration of a route, from the start of the plan to the end of the service at its last stop, seconds (default unlimited). */
  maxRouteDurationS?: number;
  /** Service time at each pickup, seconds (default 0). */
  serviceTimePickupS?: number;
  /** Service time at each drop-off, seconds (default 0). */
  serviceTimeDropoffS?: number;
  /** Average speed used for durations when the matrix has none (default 25 km/h). */
  speedKmh?: number;
  /** Multiplier on great-circle distance (default 1.3). Ignored when `distance` is given. */
  roadFactor?: number;
  /** A distance function or a precomputed matrix replacing great-circle (e.g. OSRM). */
  distance?: DistanceFn | DistanceMatrix;
  /** Maximum number of stops (pickups + dropoffs) in one route (default unlimited). */
  maxStopsPerRoute?: number;
}

export type StopKind = 'pickup' | 'dropoff';

export interface PlannedStop {
  tripId: string;
  kind: StopKind;
  position: LonLat;
  /** Seconds from the start of the route to the arrival at this stop (the stop's ETA). */
  arrivalOffsetS: number;
  /** Seconds spent waiting for the trip to be ready (pickups only; else 0). */
  waitS: number;
  /** Seconds from the start of the route to the departure (arrival + wait + service time). */
  departureOffsetS: number;
  /** Metres driven from the driver's position up to this stop. */
  cumulativeDistanceM: number;
  /** Trips on board after this stop (including the driver's currentLoad); in units when trips carry `units`. */
  loadAfter: number;
  /** Kilograms and litres on board after this stop (time-window solver only, when some trip carries them). */
  weightKgAfter?: number;
  volumeLAfter?: number;
}

export interface PlannedRoute {
  driverId: string;
  stops: PlannedStop[];
  distanceM: number;
  /** Departure from the last stop (0 for an empty route); with `returnTo`, the arrival back there. */
  durationS: number;
  /** With the driver's `returnTo`: arrival there, seconds from the start (distanceM includes the way back). */
  returnArrivalS?: number;
}

export type UnassignedReason =
  /** The problem has no drivers at all. */
  | 'NO_DRIVERS'
  /** No driver serves the trip's territory (or every one of them is excluded for this trip). */
  | 'NO_DRIVER_IN_TERRITORY'
  /** Every compatible driver is already full (currentLoad >= capacity), or the trip's load exceeds every compatible driver's capacity. */
  | 'CAPACITY'
  /** Compatible drivers had room, but their routes reached maxStopsPerRoute. */
  | 'MAX_STOPS'
  /** Even alone, no compatible driver with room could finish it within maxRouteDurationS (too far, or ready too late). */
  | 'ROUTE_DURATION'
  /** Alone it would fit within maxRouteDurationS, but the shifts of the compatible drivers end too early. */
  | 'SHIFT_END'
  /** It fits alone, but the routes that could take it have no time left (their duration or shift limit). */
  | 'ROUTES_FULL'
  /** No compatible driver with room can serve it within its time windows, even alone. */
  | 'TIME_WINDOW';

export interface UnassignedTrip {
  tripId: string;
  reason: UnassignedReason;
}

export interface Plan {
  algorithm: 'regret-insertion+lns' | 'greedy-nearest-driver' | 'pdptw-lns';
  /** One route per driver, in the problem's driver order (idle drivers have no stops). */
  routes: PlannedRoute[];
  unassigned: UnassignedTrip[];
  totals: {
    assigned: number;
    unassigned: number;
    distanceM: number;
    durationS: number;
    /** Sum and maximum of the drop-off arrival offsets. */
    sumDropoffS: number;
    maxDropoffS: number;
  };
  objective: Objective;
  /** The objective value of the plan (see Objective). */
  cost: number;
  seed: number;
  /** Large-neighbourhood iterations run, and the budget asked for. */
  iterations: number;
  iterationBudget: number;
  /** Why the search ended: the iteration budget, no new best for long (converged), or the time ceiling. */
  stoppedBy: StopReason;
  /** Every new best: iteration and objective value (the improvement curve). */
  curve: { iteration: number; assigned: number; cost: number }[];
  /** Wall-clock time of the solve (the only field that varies between identical runs). */
  elapsedMs: number;
}

export class OptimizerInputError extends Error {
  override name = 'OptimizerInputError';
}
