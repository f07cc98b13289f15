import { Type, type Static } from '@sinclair/typebox';
import { GeoPoint } from '../../platform/geo.js';
import { Id, Literals, Nullable, Strict, Timestamp } from '../../platform/schemas.js';
import { StopKindSchema } from '../logistics/index.js';
import { STOP_REASONS, type Objective as SolverObjective } from './optimizer/index.js';
import { OBJECTIVES, PLAN_STATUSES } from './tables.js';

/** The bounds the interface states: request sizes and budgets, a plan's lifetime, the solves one instance queues. */
export const LIMITS = {
  maxTrips: 500,
  maxDrivers: 500,
  planTtlMs: 10 * 60_000,
  /** The time budget is a ceiling only (the iteration budget decides the plan). */
  defaultBudgetMs: 10_000,
  maxBudgetMs: 30_000,
  maxIterations: 100_000,
  maxRouteDurationS: 24 * 3600,
  maxServiceTimeS: 3600,
  /** Optimizations waiting or running on one instance's solver thread; more get 503 OPTIMIZER_BUSY. */
  maxQueuedSolves: 4,
};

export const PlanStatusSchema = Literals(
  PLAN_STATUSES,
  'proposed → committed (commit applied), or → stale / expired (commit refused with 409 PLAN_STALE); terminal except proposed',
);
export type PlanStatus = Static<typeof PlanStatusSchema>;

const UnassignedReason = Type.String({
  description:
    'The first rule that rules out every driver: NO_DRIVERS, NO_DRIVER_IN_TERRITORY (no available driver may serve it: territory, or he rejected the trip), ' +
    'CASH_LIMIT (a cash order, and the drivers who could serve it hold cash at or over their cash limit), ' +
    "CAPACITY (every compatible driver is full, or his free capacity is taken by the plan, or the trip's load, units, weight_kg or volume_l, is larger than " +
    'every compatible vehicle: not an error), ROUTE_DURATION (even alone, no compatible driver could finish it within ' +
    'max_route_duration_s: too far, or ready too late), SHIFT_END (alone it would fit, but the shifts of the compatible drivers end too early), ' +
    'MAX_STOPS (the routes that could take it reached max_stops_per_route), ROUTES_FULL (it fits alone, but the routes that could take it have no time left), ' +
    'TIME_WINDOW (no compatible driver can reach its pickup and drop-off within their windows, pickup_after/pickup_before and deliver_after/deliver_before, even alone; ' +
    "or a window already closed; or, with end: {hub_id}, it cannot be served and brought back to the hub by the hub's closing), " +
    'NOT_PENDING (a requested trip is not pending), NOT_FOUND (a requested trip is unknown or outside your territories)',
});

const ObjectiveSchema = Literals(
  OBJECTIVES,
  'What the plan minimises once the number of assigned trips is maximal. time (the default for food delivery): the sum of the drop-off times, ' +
    "distance only as a tie-breaker (1 km weighs as 1 s); balanced: the sum of the drop-off times plus the drivers' driving time; distance: the total distance of the routes.",
);

/** A request may also ask for the solver's `vehicles` objective, which the settings do not store. */
const PLAN_OBJECTIVES = [...OBJECTIVES, 'vehicles'] as const satisfies readonly SolverObjective[];
const PlanObjectiveSchema = Literals(
  PLAN_OBJECTIVES,
  'What the plan minimises once the number of assigned trips is maximal. time (the default for food delivery): the sum of the drop-off times, ' +
    "distance only as a tie-breaker (1 km weighs as 1 s); balanced: the sum of the drop-off times plus the drivers' driving time; distance: the total distance of the routes; " +
    'vehicles: the fewest routes (drivers used), then the total distance (cost is then the distance). The settings store time, balanced or distance; a request may ask for vehicles.',
);

const maxRouteDuration = Type.Integer({
  minimum: 60,
  maximum: LIMITS.maxRouteDurationS,
  description:
    'Seconds from the plan to the end of the service at the last stop of a route; a trip that cannot fit is left unassigned (ROUTE_DURATION, ROUTES_FULL).',
});
const maxStops = Type.Integer({
  minimum: 2,
  maximum: 2 * LIMITS.maxTrips,
  description: 'Cap on the stops of a route (2 per trip); each driver is also limited to 2 × his free capacity.',
});
const servicePickup = Type.Integer({
  minimum: 0,
  maximum: LIMITS.maxServiceTimeS,
  description: 'Seconds spent at each pickup (after the trip is ready).',
});
const serviceDropoff = Type.Integer({ minimum: 0, maximum: LIMITS.maxServiceTimeS, description: 'Seconds spent at each drop-off.' });
const iterations = Type.Integer({
  minimum: 0,
  maximum: LIMITS.maxIterations,
  description:
    'Search budget in iterations; the same seed and iterations give the same plan on any machine at any load. Default: 2,500 + 15 × trips (at most 20,000), ' +
    '1.5× that from 50 trips, where the search runs as two chains that meet every 500 iterations of each (on two threads; the plan does not depend on it); ' +
    'extended by a quarter at a time (up to 2.75×) while the last half budget still assigned a trip more or improved the plan by more than 0.5 %. ' +
    "On this service's 2-core reference machine the default takes about 0.4–0.7 s for 100 trips × 20 drivers and 6–7 s for 500 × 60 (up to 1.5× that when the host is busy); `time_budget_ms` caps it.",
});

export const DispatchSettingsOut = Type.Object({
  objective: ObjectiveSchema,
  max_route_duration_s: maxRouteDuration,
  max_stops_per_route: Nullable(maxStops),
  service_time_pickup_s: servicePickup,
  service_time_dropoff_s: serviceDropoff,
  iterations: Nullable(iterations),
  updated_at: Timestamp,
});

export const SettingsPatch = Strict(
  {
    objective: Type.Optional(ObjectiveSchema),
    max_route_duration_s: Type.Optional(maxRouteDuration),
    max_stops_per_route: Type.Optional(Nullable(maxStops)),
    service_time_pickup_s: Type.Optional(servicePickup),
    service_time_dropoff_s: Type.Optional(serviceDropoff),
    iterations: Type.Optional(Nullable(iterations)),
  },
  { minProperties: 1 },
);

export const PlanOut = Type.Object({
  plan_id: Type.String(),
  status: PlanStatusSchema,
  territory_ids: Nullable(Type.Array(Type.String(), { description: 'sub-administrator plans: the territories they were confined to' })),
  created_at: Timestamp,
  expires_at: Timestamp,
  committed_at: Nullable(Timestamp),
  routes: Type.Array(
    Type.Object({
      driver_id: Type.String(),
      stop_count: Type.Integer(),
      stops: Type.Array(
        Type.Object({
          trip_id: Type.String(),
          kind: StopKindSchema,
          position: GeoPoint,
          arrival_offset_s: Type.Number({
            description: 'seconds from planned_at (the start of every route, from the driver position) to the arrival at the stop',
          }),
          eta: Type.String({ format: 'date-time', description: 'planned_at + arrival_offset_s' }),
          wait_s: Type.Number({ description: 'waiting for the trip to be ready (pickups)' }),
          departure_offset_s: Type.Number({ description: 'arrival + wait + service time' }),
          cumulative_distance_m: Type.Number({ description: 'metres from the driver position' }),
          load_after: Type.Integer({
            description: 'units on board after the stop (a trip is 1 unit unless it says more; including the trips already active)',
          }),
          weight_kg_after: Type.Optional(
            Type.Number({ description: 'kilograms on board after the stop, when a planned trip has weight_kg' }),
          ),
          volume_l_after: Type.Optional(Type.Number({ description: 'litres on board after the stop, when a planned trip has volume_l' })),
        }),
      ),
      start_hub: Nullable(
        Type.Object(
          {
            hub_id: Type.String(),
            name: Type.String(),
            position: GeoPoint,
            departure_offset_s: Type.Number({ description: 'the route leaves the hub now, or when it opens if later' }),
            etd: Type.String({ format: 'date-time' }),
          },
          { description: 'the hub the route starts from (start: {hub_id}); null: from the driver position' },
        ),
      ),
      end_hub: Nullable(
        Type.Object(
          {
            hub_id: Type.String(),
            name: Type.String(),
            position: GeoPoint,
            arrival_offset_s: Type.Number({ description: "arrival back at the hub after the last stop, by the hub's closing" }),
            eta: Type.String({ format: 'date-time' }),
          },
          { description: 'the hub the route ends at, after its last stop (end: {hub_id}); null: the route ends at its last stop' },
        ),
      ),
      distance_m: Type.Number({ description: 'including the way back to end_hub' }),
      duration_s: Type.Number({ description: 'seconds from planned_at to the departure from the last stop, or the arrival at end_hub' }),
      ends_at: Type.String({ format: 'date-time' }),
    }),
  ),
  unassigned: Type.Array(Type.Object({ trip_id: Type.String(), reason: UnassignedReason })),
  assignments: Type.Array(
    Type.Object({
      trip_id: Type.String(),
      driver_id: Type.String(),
      stop_order: Type.Integer({ description: '1-based position of the pickup in the route' }),
    }),
    { description: 'what a commit applies' },
  ),
  totals: Type.Object({
    assigned: Type.Integer(),
    unassigned: Type.Integer(),
    distance_m: Type.Number(),
    duration_s: Type.Number({ description: 'sum of the route durations' }),
    sum_dropoff_s: Type.Number({ description: "sum of the drop-off arrival offsets (the customers' waiting from now)" }),
    mean_dropoff_s: Type.Number(),
    max_dropoff_s: Type.Number({ description: 'the latest drop-off' }),
  }),
  baseline: Type.Object(
    { algorithm: Type.String(), assigned: Type.Integer(), distance_m: Type.Number(), mean_dropoff_s: Type.Number() },
    { description: 'greedy nearest-driver plan on the same input and constraints, for comparison' },
  ),
  planned_at: Type.String({ format: 'date-time', description: 'the start of every route: the time offsets count from here' }),
  constraints: Type.Object(
    {
      objective: PlanObjectiveSchema,
      max_route_duration_s: Type.Integer(),
      max_stops_per_route: Nullable(Type.Integer()),
      service_time_pickup_s: Type.Integer(),
      service_time_dropoff_s: Type.Integer(),
      speed_kmh: Type.Number({ description: 'average speed (logistics settings)' }),
      iterations: Nullable(Type.Integer({ description: 'null: the default for the number of trips' })),
    },
    { description: 'what the plan was made with: the dispatch settings, overridden by the request' },
  ),
  solver: Type.Object({
    algorithm: Type.String(),
    objective: PlanObjectiveSchema,
    cost: Type.Number({ description: 'the objective value' }),
    seed: Type.Integer(),
    iterations: Type.Integer({ description: 'iterations run' }),
    iteration_budget: Type.Integer(),
    stopped_by: Literals(
      STOP_REASONS,
      'iterations: the budget (with its extensions) was spent; converged: no better plan for long; time: the time_budget_ms ceiling cut the search (the plan may then differ between runs)',
    ),
    elapsed_ms: Type.Integer(),
  }),
});

export const OptimizeBody = Strict({
  trip_ids: Type.Optional(
    Type.Array(Id, { minItems: 1, maxItems: LIMITS.maxTrips, description: 'exactly these trips (exclusive with the filters below)' }),
  ),
  territory_id: Type.Optional(Id),
  created_from: Type.Optional(Type.String({ format: 'date-time', description: 'trips created at or after' })),
  created_to: Type.Optional(Type.String({ format: 'date-time', description: 'trips created before' })),
  driver_ids: Type.Optional(
    Type.Array(Id, {
      minItems: 1,
      maxItems: LIMITS.maxDrivers,
      description: 'only these drivers (still: approved, available, with a position)',
    }),
  ),
  seed: Type.Optional(Type.Integer({ minimum: 0, maximum: 2 ** 31 - 1, default: 1 })),
  iterations: Type.Optional(iterations),
  time_budget_ms: Type.Optional(
    Type.Integer({
      minimum: 10,
      maximum: LIMITS.maxBudgetMs,
      default: LIMITS.defaultBudgetMs,
      description:
        'A ceiling on the solve time only; the plan is decided by seed and iterations unless this cuts the search (solver.stopped_by = time).',
    }),
  ),
  objective: Type.Optional(PlanObjectiveSchema),
  max_route_duration_s: Type.Optional(maxRouteDuration),
  max_stops_per_route: Type.Optional(Nullable(maxStops)),
  service_time_pickup_s: Type.Optional(servicePickup),
  service_time_dropoff_s: Type.Optional(serviceDropoff),
  ready_times: Type.Optional(
    Type.Array(Strict({ trip_id: Id, ready_at: Type.String({ format: 'date-time' }) }), {
      maxItems: LIMITS.maxTrips,
      description:
        "Earliest pickup per trip (the order's ready estimate); a driver who arrives earlier waits. Default: ready now (a trip is created when its order is ready). Entries for trips outside the plan are ignored.",
    }),
  ),
  start: Type.Optional(
    Type.Union([Type.Literal('driver'), Strict({ hub_id: Id })], {
      description:
        "Where every route starts: 'driver' (default), the driver's position now; or {hub_id}, the hub (the driver's way there is not planned), " +
        'leaving no earlier than it opens today. An unknown hub (or outside your territories) is 404; an inactive one 422 HUB_INACTIVE, one with no hours today 422 HUB_CLOSED.',
    }),
  ),
  end: Type.Optional(
    Type.Union([Type.Literal('open'), Strict({ hub_id: Id })], {
      description:
        "Where every route ends: 'open' (default), at its last stop; or {hub_id}, back at the hub, arriving by its closing today (hard: a trip that cannot be " +
        'served and brought back in time is unassigned TIME_WINDOW). Same refusals as start.',
    }),
  ),
  shift_ends: Type.Optional(
    Type.Array(Strict({ driver_id: Id, shift_end_at: Type.String({ format: 'date-time' }) }), {
      maxItems: LIMITS.maxDrivers,
      description:
        "A driver's shift end: his route must end by then (a shift already over gives him no trips). Default: none, only max_route_duration_s applies.",
    }),
  ),
});

export const PlanIdParams = Strict({ planId: Id });
