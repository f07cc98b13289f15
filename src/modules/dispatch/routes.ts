import { actorOf, type RouteAuth } from '../../platform/auth.js';
import type { Api } from '../../platform/context.js';
import { DispatchSettingsOut, LIMITS, OptimizeBody, PlanIdParams, PlanOut, SettingsPatch } from './schemas.js';
import type { DispatchService } from './service/dispatch.js';

const OPTIMIZE_DESCRIPTION =
  `Selects trips by trip_ids (at most ${LIMITS.maxTrips}; non-pending or unknown ones are reported in unassigned), or all pending trips of territory_id and/or ` +
  `created in [created_from, created_to) (oldest ${LIMITS.maxTrips}). Drivers: approved, available, with a last position (optionally only driver_ids); each may take ` +
  'at most his free capacity (capacity − active trips) in the plan, never a trip he rejected, only trips of his territories when he has territory links. ' +
  'Every route starts now (planned_at) at the driver position, or at a hub (start, end: see their fields); constraints: capacity, max_route_duration_s, max_stops_per_route, the service times, ' +
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
          params: PlanIdParams,
          response: { 200: PlanOut },
        },
      },
      async (req) => svc.commit(actorOf(req), req.params.planId),
    );
  }
}
