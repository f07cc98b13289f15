import { Type } from '@sinclair/typebox';
import { actorOf, type RouteAuth } from '../../platform/auth.js';
import type { Api } from '../../platform/context.js';
import { GeoPoint } from '../../platform/geo.js';
import { Id, Nullable, Strict, Timestamp } from '../../platform/schemas.js';
import { LIMITS, type DispatchService } from './service.js';

const PlanStatus = Type.Union(['proposed', 'committed', 'expired', 'stale'].map((s) => Type.Literal(s)), {
  description: 'proposed → committed (commit applied), or → stale / expired (commit refused with 409 PLAN_STALE); terminal except proposed',
});

const UnassignedReason = Type.String({
  description:
    'NO_DRIVERS, NO_DRIVER_IN_TERRITORY (no available driver may serve it: territory, or he rejected the trip), CAPACITY (every compatible driver is full, or his free capacity is taken by the plan), ' +
    'MAX_STOPS (routes reached max_stops_per_route), NOT_PENDING (a requested trip is not pending), NOT_FOUND (a requested trip is unknown or outside your territories)',
});

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
      stops: Type.Array(
        Type.Object({
          trip_id: Type.String(),
          kind: Type.Union([Type.Literal('pickup'), Type.Literal('dropoff')]),
          position: GeoPoint,
          arrival_offset_s: Type.Number({ description: 'seconds from the start of the route' }),
          cumulative_distance_m: Type.Number({ description: 'metres from the driver position' }),
          load_after: Type.Integer({ description: 'trips on board after the stop (including those already active)' }),
        }),
      ),
      distance_m: Type.Number(),
      duration_s: Type.Number(),
    }),
  ),
  unassigned: Type.Array(Type.Object({ trip_id: Type.String(), reason: UnassignedReason })),
  assignments: Type.Array(
    Type.Object({ trip_id: Type.String(), driver_id: Type.String(), stop_order: Type.Integer({ description: '1-based position of the pickup in the route' }) }),
    { description: 'what a commit applies' },
  ),
  totals: Type.Object({ assigned: Type.Integer(), unassigned: Type.Integer(), distance_m: Type.Number(), duration_s: Type.Number() }),
  baseline: Type.Object(
    { algorithm: Type.String(), assigned: Type.Integer(), distance_m: Type.Number() },
    { description: 'greedy nearest-driver plan on the same input, for comparison' },
  ),
  solver: Type.Object({ algorithm: Type.String(), seed: Type.Integer(), iterations: Type.Integer(), elapsed_ms: Type.Integer() }),
});

const OptimizeBody = Strict({
  trip_ids: Type.Optional(Type.Array(Id, { minItems: 1, maxItems: LIMITS.maxTrips, description: 'exactly these trips (exclusive with the filters below)' })),
  territory_id: Type.Optional(Id),
  created_from: Type.Optional(Type.String({ format: 'date-time', description: 'trips created at or after' })),
  created_to: Type.Optional(Type.String({ format: 'date-time', description: 'trips created before' })),
  driver_ids: Type.Optional(Type.Array(Id, { minItems: 1, maxItems: LIMITS.maxDrivers, description: 'only these drivers (still: approved, available, with a position)' })),
  seed: Type.Optional(Type.Integer({ minimum: 0, maximum: 2 ** 31 - 1, default: 1 })),
  time_budget_ms: Type.Optional(Type.Integer({ minimum: 10, maximum: LIMITS.maxBudgetMs, default: LIMITS.defaultBudgetMs })),
  max_stops_per_route: Type.Optional(Type.Integer({ minimum: 2, maximum: 2 * LIMITS.maxTrips, description: 'cap on stops per route; each driver is also limited to 2 × his free capacity' })),
});

const OPTIMIZE_DESCRIPTION =
  `Selects trips by trip_ids (at most ${LIMITS.maxTrips}; non-pending or unknown ones are reported in unassigned), or all pending trips of territory_id and/or ` +
  `created in [created_from, created_to) (oldest ${LIMITS.maxTrips}). Drivers: approved, available, with a last position (optionally only driver_ids); each may take ` +
  'at most his free capacity (capacity − active trips) in the plan, never a trip he rejected, only trips of his territories when he has territory links. ' +
  `The plan is stored with status proposed and expires ${LIMITS.planTtlMs / 60_000} minutes after creation. 400 on an empty or contradictory selection; 404 for an unknown territory.`;

const COMMIT_DESCRIPTION =
  'Assigns every planned trip to its driver (stop_order = position of the pickup in the route, plan_id on the trip, a trip.assigned event each), or nothing: ' +
  'when a planned trip is no longer pending or changed, a driver is no longer approved/available or lacks free capacity, or the plan expired, the answer is ' +
  '409 PLAN_STALE with `changes` [{kind, id, field, expected, actual}] and the plan becomes stale (or expired). Committing a committed plan returns it again (200, nothing applied twice).';

export function dispatchRoutes(app: Api, svc: DispatchService) {
  const routes: { prefix: string; auth: RouteAuth; idSuffix: string; who: string }[] = [
    { prefix: '/admin', auth: { roles: ['administrator', 'dispatch'] }, idSuffix: '', who: 'Administrators and dispatch; organization-wide.' },
    {
      prefix: '/subadmin',
      auth: { roles: ['subadmin'], permission: 'trips_reassign' },
      idSuffix: 'Subadmin',
      who: "Sub-administrators with trips_reassign; only trips of their territories and drivers linked to them; they commit only their own territories' plans (others 404).",
    },
  ];
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
