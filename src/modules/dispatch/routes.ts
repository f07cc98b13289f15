import { Type } from '@sinclair/typebox';
import { actorOf, type RouteAuth } from '../../platform/auth.js';
import type { Api } from '../../platform/context.js';
import { GeoPoint } from '../../platform/geo.js';
import { Id, Nullable, Strict, Timestamp } from '../../platform/schemas.js';
import { LIMITS, type DispatchService } from './service/dispatch.js';

const PlanStatus = Type.Union(
  ['proposed', 'committed', 'expired', 'stale'].map((s) => Type.Literal(s)),
  {
    description:
      'proposed → committed (commit applied), or → stale / expired (commit refused with 409 PLAN_STALE); terminal except proposed',
  },
);

const UnassignedReason = Type.String({
  description:
    'The first rule that rules out every driver: NO_DRIVERS, NO_DRIVER_IN_TERRITORY (no available driver may serve it: territory, or he rejected the trip), ' +
    'CASH_LIMIT (a cash order, and the drivers who could serve it hold cash at or over their cash limit), ' +
    "CAPACITY (every compatible driver is full, or his free capacity is taken by the plan, or the trip's load, units, weight_kg or volume_l, is larger than " +
    'every compatible vehicle: not an error), ROUTE_DURATION (even alone, no compatible driver could finish it within ' +
    'max_route_duration_s: too far, or ready too late), SHIFT_END (alone it would fit, but the shifts of the compatible drivers end too early), ' +
    'MAX_STOPS (the routes that could take it reached max_stops_per_route), ROUTES_FULL (it fits alone, but the routes that could take it have no time left), ' +
    'TIME_WINDOW (no compatible driver can reach its pickup and drop-off within their windows, pickup_after/pickup_before and deliver_after/deliver_before, even alone; ' +
    'or a window already closed), ' +
    'NOT_PENDING (a requested trip is not pending), NOT_FOUND (a requested trip is unknown or outside your territories)',
});

const ObjectiveSchema = Type.Union([Type.Literal('time'), Type.Literal('balanced'), Type.Literal('distance')], {
  description:
    'What the plan minimises once the number of assigned trips is maximal. time (the default for food delivery): the sum of the drop-off times, ' +
    "distance only as a tie-breaker (1 km weighs as 1 s); balanced: the sum of the drop-off times plus the drivers' driving time; distance: the total distance of the routes.",
});

const PlanObjectiveSchema = Type.Union(
  [Type.Literal('time'), Type.Literal('balanced'), Type.Literal('distance'), Type.Literal('vehicles')],
  {
    description:
      'What the plan minimises once the number of assigned trips is maximal. time (the default for food delivery): the sum of the drop-off times, ' +
      "distance only as a tie-breaker (1 km weighs as 1 s); balanced: the sum of the drop-off times plus the drivers' driving time; distance: the total distance of the routes; " +
      'vehicles: the fewest routes (drivers used), then the total distance (cost is then the distance). The settings store time, balanced or distance; a request may ask for vehicles.',
  },
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

const SettingsPatch = Strict(
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
  status: PlanStatus,
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
          kind: Type.Union([Type.Literal('pickup'), Type.Literal('dropoff')]),
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
      distance_m: Type.Number(),
      duration_s: Type.Number({ description: 'seconds from planned_at to the departure from the last stop' }),
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
    stopped_by: Type.Union(
      ['iterations', 'converged', 'time'].map((s) => Type.Literal(s)),
      {
        description:
          'iterations: the budget (with its extensions) was spent; converged: no better plan for long; time: the time_budget_ms ceiling cut the search (the plan may then differ between runs)',
      },
    ),
    elapsed_ms: Type.Integer(),
  }),
});

const OptimizeBody = Strict({
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
  shift_ends: Type.Optional(
    Type.Array(Strict({ driver_id: Id, shift_end_at: Type.String({ format: 'date-time' }) }), {
      maxItems: LIMITS.maxDrivers,
      description:
        "A driver's shift end: his route must end by then (a shift already over gives him no trips). Default: none, only max_route_duration_s applies.",
    }),
  ),
});

const OPTIMIZE_DESCRIPTION =
  `Selects trips by trip_ids (at most ${LIMITS.maxTrips}; non-pending or unknown ones are reported in unassigned), or all pending trips of territory_id and/or ` +
  `created in [created_from, created_to) (oldest ${LIMITS.maxTrips}). Drivers: approved, available, with a last position (optionally only driver_ids); each may take ` +
  'at most his free capacity (capacity − active trips) in the plan, never a trip he rejected, only trips of his territories when he has territory links. ' +
  'Every route starts now (planned_at) at the driver position; constraints: capacity, max_route_duration_s, max_stops_per_route, the service times, ' +
  "each trip's ready time and each driver's shift end; each trip's windows (pickup_after, pickup_before, deliver_after, deliver_before: hard, waiting allowed, " +
  "lateness not), its load (units, weight_kg, volume_l: within each vehicle's capacity, capacity_weight_kg, capacity_volume_l, along the whole route) and its " +
  'service_min (else the service times); from the dispatch settings (GET /admin/dispatch-settings) unless the request overrides them; trips that cannot be ' +
  'served within them are listed in unassigned with a reason. The same seed and iterations on the same input give the same plan. ' +
  `The plan is stored with status proposed and expires ${LIMITS.planTtlMs / 60_000} minutes after creation. 400 on an empty or contradictory selection; 404 for an unknown territory. ` +
  `The solve runs on the instance's optimizer thread (other requests are served meanwhile); at most ${LIMITS.maxQueuedSolves} optimizations wait or run there at once, ` +
  'beyond that 503 OPTIMIZER_BUSY with Retry-After.';

const COMMIT_DESCRIPTION =
  'Assigns every planned trip to its driver (stop_order = position of the pickup in the route, plan_id on the trip, a trip.assigned event each), or nothing: ' +
  'when a planned trip is no longer pending or changed, a driver is no longer approved/available or lacks free capacity, or the plan expired, the answer is ' +
  '409 PLAN_STALE with `changes` [{kind, id, field, expected, actual}] and the plan becomes stale (or expired). Committing a committed plan returns it again (200, nothing applied twice).';

export function dispatchRoutes(app: Api, svc: DispatchService) {
  const routes: { prefix: string; auth: RouteAuth; idSuffix: string; who: string }[] = [
    {
      prefix: '/admin',
      auth: { roles: ['administrator', 'dispatch'] },
      idSuffix: '',
      who: 'Administrators and dispatch; organization-wide.',
    },
    {
      prefix: '/subadmin',
      auth: { roles: ['subadmin'], permission: 'trips_reassign' },
      idSuffix: 'Subadmin',
      who: "Sub-administrators with trips_reassign; only trips of their territories and drivers linked to them; they commit only their own territories' plans (others 404).",
    },
  ];
  app.get(
    '/admin/dispatch-settings',
    {
      config: { auth: { roles: ['administrator', 'dispatch'] } },
      schema: {
        operationId: 'getDispatchSettings',
        tags: ['dispatch'],
        summary:
          'Optimizer settings: objective, route duration, stop cap, service times, iteration budget (defaults of every optimize request)',
        response: { 200: DispatchSettingsOut },
      },
    },
    async (req) => svc.getSettings(actorOf(req)),
  );
  app.patch(
    '/admin/dispatch-settings',
    {
      config: { auth: { roles: ['administrator'] } },
      schema: {
        operationId: 'updateDispatchSettings',
        tags: ['dispatch'],
        summary: 'Change the optimizer settings (administrators); audited',
        body: SettingsPatch,
        response: { 200: DispatchSettingsOut },
      },
    },
    async (req) => svc.updateSettings(actorOf(req), req.body),
  );
  for (const r of routes) {
    app.post(
      `${r.prefix}/dispatch-batches/optimize`,
      {
        config: { auth: r.auth },
        schema: {
          operationId: `optimizeDispatchBatch${r.idSuffix}`,
          tags: ['dispatch'],
          summary: 'Propose an optimized batch dispatch plan (status proposed)',
          description: `${r.who} ${OPTIMIZE_DESCRIPTION}`,
          body: OptimizeBody,
          response: { 201: PlanOut },
        },
      },
      async (req, reply) => {
        const plan = await svc.optimize(actorOf(req), req.body);
        return reply.code(201).send(plan);
      },
    );
    app.post(
      `${r.prefix}/dispatch-batches/optimize/:planId/commit`,
      {
        config: { auth: r.auth },
        schema: {
          operationId: `commitDispatchBatch${r.idSuffix}`,
          tags: ['dispatch'],
          summary: 'Commit a proposed plan atomically (idempotent)',
          description: `${r.who} ${COMMIT_DESCRIPTION}`,
          params: Strict({ planId: Id }),
          response: { 200: PlanOut },
        },
      },
      async (req) => svc.commit(actorOf(req), req.params.planId),
    );
  }
}
