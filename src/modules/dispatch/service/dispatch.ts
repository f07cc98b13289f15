import type { Actor } from '../../../platform/auth.js';
import { recordAudit } from '../../../platform/audit.js';
import { AppError } from '../../../platform/errors.js';
import { toGeoPoint } from '../../../platform/geo.js';
import { newId } from '../../../platform/ids.js';
import { money } from '../../../platform/money.js';
import { scopeOf } from '../../../platform/scope.js';
import type { Tx } from '../../../platform/db/index.js';
import type { PlanningDriver, PlanningHub, PlanningTrip } from '../../logistics/index.js';
import type { DispatchContext } from '../context.js';
import {
  DEFAULTS,
  OptimizerInputError,
  type Objective as SolverObjective,
  type OptimizerOptions,
  type OptimizerProblem,
  type OptimizerTrip,
  type Plan,
} from '../optimizer/index.js';
import * as repo from '../repo.js';
import { LIMITS } from '../schemas.js';
import type { SolverThread } from './solver-thread.js';

/** The objectives a plan request offers: all of the solver's (`vehicles`: fewest routes, then distance). */
type Objective = SolverObjective;
/** The objectives the dispatch settings store (the default of the requests). */
type SettingsObjective = Exclude<SolverObjective, 'vehicles'>;

export interface OptimizeRequest {
  trip_ids?: string[];
  territory_id?: string;
  created_from?: string;
  created_to?: string;
  driver_ids?: string[];
  seed?: number;
  iterations?: number;
  time_budget_ms?: number;
  objective?: Objective;
  max_route_duration_s?: number;
  max_stops_per_route?: number | null;
  service_time_pickup_s?: number;
  service_time_dropoff_s?: number;
  ready_times?: { trip_id: string; ready_at: string }[];
  shift_ends?: { driver_id: string; shift_end_at: string }[];
  /** Where every route starts: the driver's position (default) or a hub. */
  start?: 'driver' | { hub_id: string };
  /** Where every route ends: at its last stop (default) or back at a hub. */
  end?: 'open' | { hub_id: string };
}

/** The hubs a plan's routes start and end at (null: the driver's position, an open end), on the plan's day. */
interface PlanHubs {
  start: PlanningHub | null;
  end: PlanningHub | null;
}

/** The constraints a plan was made with: the organization's settings, overridden by the request. */
export interface Constraints {
  objective: Objective;
  max_route_duration_s: number;
  max_stops_per_route: number | null;
  service_time_pickup_s: number;
  service_time_dropoff_s: number;
  speed_kmh: number;
  iterations: number | null;
}

export type SettingsOut = Omit<Constraints, 'speed_kmh' | 'objective'> & { objective: SettingsObjective; updated_at: Date };
export type SettingsPatch = Partial<Omit<SettingsOut, 'updated_at'>>;

/** One difference between what a plan assumed and the current state. */
export interface PlanChange {
  kind: 'plan' | 'trip' | 'driver' | 'assignment';
  id: string;
  field: string;
  expected: unknown;
  actual: unknown;
}

interface Assignment {
  trip_id: string;
  driver_id: string;
  stop_order: number;
}

interface Inputs {
  trips: { id: string; status: string; updated_at: string }[];
  drivers: { id: string; status: string; available: boolean; capacity: number; active_trips: number; planned: number }[];
}

type PlanRow = repo.PlanRecord<Inputs, PlanBody, PlanChange>;

const round1 = (x: number) => Math.round(x * 10) / 10;

const settingsOut = (r: repo.DispatchSettingsRecord): SettingsOut => ({
  objective: r.objective,
  max_route_duration_s: r.maxRouteDurationS,
  max_stops_per_route: r.maxStopsPerRoute,
  service_time_pickup_s: r.servicePickupS,
  service_time_dropoff_s: r.serviceDropoffS,
  iterations: r.iterations,
  updated_at: r.updatedAt,
});

class PlanStale extends Error {
  constructor(
    readonly planId: string,
    readonly changes: PlanChange[],
    readonly mark: 'stale' | 'expired' | null,
  ) {
    super('plan stale');
  }
  toAppError() {
    return AppError.conflict('The inputs of the plan changed since it was proposed; nothing was applied', 'PLAN_STALE', {
      plan_id: this.planId,
      changes: this.changes,
    });
  }
}

/** Seconds from the plan's start to an instant (ISO), or undefined. */
const offsetS = (plannedAt: Date, at: string | undefined) =>
  at === undefined ? undefined : (new Date(at).getTime() - plannedAt.getTime()) / 1000;

/** Whether a driver could serve a trip but for cash: his territories allow it and he did not reject it. */
const servesTrip = (d: PlanningDriver, t: PlanningTrip) =>
  !t.rejected_driver_ids.includes(d.id) && (d.territory_ids.length === 0 || !t.territory_id || d.territory_ids.includes(t.territory_id));

/** Seconds from the plan's start to an instant, or undefined. */
const secondsTo = (plannedAt: Date, at: Date | null) => (at === null ? undefined : (at.getTime() - plannedAt.getTime()) / 1000);

/**
 * The solver's instance: every trip with its windows (seconds from the plan's start; a bound already past is open at
 * its start, a closed one leaves the trip out with TIME_WINDOW), its load and service time; every driver with his
 * capacities. Loads, windows and per-trip service times are given only where they differ from the instant-delivery
 * defaults, so a plan without them stays on that model (see docs/OPTIMIZER.md).
 */
function toProblem(
  trips: PlanningTrip[],
  drivers: PlanningDriver[],
  plannedAt: Date,
  body: OptimizeRequest,
  hubs: PlanHubs,
): { problem: OptimizerProblem; closed: { trip_id: string; reason: string }[] } {
  const ready = new Map((body.ready_times ?? []).map((r) => [r.trip_id, r.ready_at]));
  // Cash on delivery: a driver at his cash limit is planned no cash trip.
  const atCashLimit = drivers.filter((d) => d.at_cash_limit).map((d) => d.id);
  const shiftEnd = new Map((body.shift_ends ?? []).map((r) => [r.driver_id, r.shift_end_at]));
  const heavy = trips.some((t) => t.weight_kg !== null);
  const bulky = trips.some((t) => t.volume_l !== null);
  const closed: { trip_id: string; reason: string }[] = [];
  const planned: OptimizerTrip[] = [];
  for (const t of trips) {
    // a trip is created when its order is ready: ready now unless the request says otherwise
    const readyAtS = Math.max(0, offsetS(plannedAt, ready.get(t.id)) ?? 0);
    const opens = (s: number | undefined) => (s !== undefined && s > 0 ? s : undefined);
    const pickupAfterS = opens(secondsTo(plannedAt, t.pickup_after));
    const deliverAfterS = opens(secondsTo(plannedAt, t.deliver_after));
    const pickupBeforeS = secondsTo(plannedAt, t.pickup_before);
    const deliverBeforeS = secondsTo(plannedAt, t.deliver_before);
    if (
      (pickupBeforeS !== undefined && pickupBeforeS < Math.max(readyAtS, pickupAfterS ?? 0)) ||
      (deliverBeforeS !== undefined && deliverBeforeS < (deliverAfterS ?? 0))
    ) {
      closed.push({ trip_id: t.id, reason: 'TIME_WINDOW' });
      continue;
    }
    const serviceS = t.service_min === null ? undefined : t.service_min * 60;
    planned.push({
      id: t.id,
      pickup: t.pickup,
      dropoff: t.dropoff,
      territoryId: t.territory_id ?? undefined,
      excludedDriverIds: money(t.cash_to_collect).gt(0) ? [...new Set([...t.rejected_driver_ids, ...atCashLimit])] : t.rejected_driver_ids,
      readyAtS,
      ...(pickupAfterS !== undefined ? { pickupAfterS } : {}),
      ...(pickupBeforeS !== undefined ? { pickupBeforeS } : {}),
      ...(deliverAfterS !== undefined ? { deliverAfterS } : {}),
      ...(deliverBeforeS !== undefined ? { deliverBeforeS } : {}),
      ...(t.units !== 1 ? { units: t.units } : {}),
      ...(t.weight_kg !== null ? { weightKg: t.weight_kg } : {}),
      ...(t.volume_l !== null ? { volumeL: t.volume_l } : {}),
      ...(serviceS !== undefined ? { serviceTimePickupS: serviceS, serviceTimeDropoffS: serviceS } : {}),
    });
  }
  // A route from a hub leaves it no earlier than it opens; one back to a hub arrives by its closing (the solver's depot).
  const opensS = hubs.start ? secondsTo(plannedAt, hubs.start.opens_at) : undefined;
  const closesS = hubs.end ? secondsTo(plannedAt, hubs.end.closes_at) : undefined;
  return {
    closed,
    problem: {
      trips: planned,
      drivers: drivers.map((d) => {
        const room = Math.max(0, d.capacity - d.active_trips);
        const shiftEndS = offsetS(plannedAt, shiftEnd.get(d.id));
        // Every planned trip takes one of his concurrent trips at commit (active_trips), so a route holds at most `room`
        // trips; what is on board at once is bounded by his vehicle's units, each trip he already carries counting one.
        return {
          id: d.id,
          position: hubs.start?.position ?? d.position!,
          capacity: d.capacity_units,
          currentLoad: Math.min(d.active_trips, d.capacity_units),
          territoryIds: d.territory_ids,
          maxStops: 2 * room,
          shiftEndS: closesS === undefined ? shiftEndS : Math.min(closesS, shiftEndS ?? Infinity),
          ...(opensS !== undefined && opensS > 0 ? { startAtS: opensS } : {}),
          ...(hubs.end ? { returnTo: hubs.end.position } : {}),
          ...(heavy ? { capacityWeightKg: d.capacity_weight_kg } : {}),
          ...(bulky ? { capacityVolumeL: d.capacity_volume_l } : {}),
          ...(d.speed_factor !== 1 ? { speedFactor: d.speed_factor } : {}),
        };
      }),
    },
  };
}

/** The plan's routes (drivers with stops), and the assignments a commit applies: each trip with the 1-based position of its pickup in the route. */
function planBody(
  plan: Plan,
  baseline: Plan,
  skipped: { trip_id: string; reason: string }[],
  constraints: Constraints,
  plannedAt: Date,
  hubs: PlanHubs,
) {
  const at = (s: number) => new Date(plannedAt.getTime() + Math.round(s * 1000)).toISOString();
  const departS = Math.max(0, (hubs.start && secondsTo(plannedAt, hubs.start.opens_at)) ?? 0);
  const routes = plan.routes
    .filter((r) => r.stops.length > 0)
    .map((r) => ({
      driver_id: r.driverId,
      stop_count: r.stops.length,
      stops: r.stops.map((s) => ({
        trip_id: s.tripId,
        kind: s.kind,
        position: toGeoPoint(s.position)!,
        arrival_offset_s: round1(s.arrivalOffsetS),
        eta: at(s.arrivalOffsetS),
        wait_s: round1(s.waitS),
        departure_offset_s: round1(s.departureOffsetS),
        cumulative_distance_m: round1(s.cumulativeDistanceM),
        load_after: s.loadAfter,
        ...(s.weightKgAfter !== undefined ? { weight_kg_after: round1(s.weightKgAfter) } : {}),
        ...(s.volumeLAfter !== undefined ? { volume_l_after: round1(s.volumeLAfter) } : {}),
      })),
      start_hub: hubs.start
        ? {
            hub_id: hubs.start.id,
            name: hubs.start.name,
            position: toGeoPoint(hubs.start.position)!,
            departure_offset_s: round1(departS),
            etd: at(departS),
          }
        : null,
      end_hub:
        hubs.end && r.returnArrivalS !== undefined
          ? {
              hub_id: hubs.end.id,
              name: hubs.end.name,
              position: toGeoPoint(hubs.end.position)!,
              arrival_offset_s: round1(r.returnArrivalS),
              eta: at(r.returnArrivalS),
            }
          : null,
      distance_m: round1(r.distanceM),
      duration_s: round1(r.durationS),
      ends_at: at(r.durationS),
    }));
  const capped = constraints.max_stops_per_route !== null;
  const assignments: Assignment[] = routes.flatMap((r) =>
    r.stops.flatMap((s, i) => (s.kind === 'pickup' ? [{ trip_id: s.trip_id, driver_id: r.driver_id, stop_order: i + 1 }] : [])),
  );
  // Without a global stop cap, the only stop limit is the driver's free capacity: report it as such.
  const reasonOf = (r: string) => (r === 'MAX_STOPS' && !capped ? 'CAPACITY' : r);
  const unassigned = [...plan.unassigned.map((u) => ({ trip_id: u.tripId, reason: reasonOf(u.reason) })), ...skipped];
  return {
    routes,
    unassigned,
    assignments,
    totals: {
      assigned: plan.totals.assigned,
      unassigned: unassigned.length,
      distance_m: round1(plan.totals.distanceM),
      duration_s: round1(plan.totals.durationS),
      sum_dropoff_s: round1(plan.totals.sumDropoffS),
      mean_dropoff_s: plan.totals.assigned > 0 ? round1(plan.totals.sumDropoffS / plan.totals.assigned) : 0,
      max_dropoff_s: round1(plan.totals.maxDropoffS),
    },
    baseline: {
      algorithm: baseline.algorithm,
      assigned: baseline.totals.assigned,
      distance_m: round1(baseline.totals.distanceM),
      mean_dropoff_s: baseline.totals.assigned > 0 ? round1(baseline.totals.sumDropoffS / baseline.totals.assigned) : 0,
    },
    planned_at: plannedAt.toISOString(),
    constraints,
    solver: {
      algorithm: plan.algorithm,
      objective: plan.objective,
      cost: Math.round(plan.cost * 1000) / 1000,
      seed: plan.seed,
      iterations: plan.iterations,
      iteration_budget: plan.iterationBudget,
      stopped_by: plan.stoppedBy,
      elapsed_ms: Math.round(plan.elapsedMs),
    },
  };
}

type PlanBody = ReturnType<typeof planBody>;

const planOut = (row: PlanRow) => ({
  plan_id: row.id,
  status: row.status,
  territory_ids: row.territoryIds,
  created_at: row.createdAt,
  expires_at: row.expiresAt,
  committed_at: row.committedAt,
  ...row.result,
});
export type PlanOut = ReturnType<typeof planOut>;

/** What changed between the plan's snapshot and the locked current state of its assigned trips and drivers. */
function changesSince(inputs: Inputs, assignments: Assignment[], now: { trips: PlanningTrip[]; drivers: PlanningDriver[] }): PlanChange[] {
  const changes: PlanChange[] = [];
  const trips = new Map(now.trips.map((t) => [t.id, t]));
  const drivers = new Map(now.drivers.map((d) => [d.id, d]));
  const planned = new Set(assignments.map((a) => a.trip_id));
  for (const s of inputs.trips) {
    if (!planned.has(s.id)) continue;
    const t = trips.get(s.id);
    if (!t) changes.push({ kind: 'trip', id: s.id, field: 'status', expected: 'pending', actual: null });
    else if (t.status !== 'pending') changes.push({ kind: 'trip', id: s.id, field: 'status', expected: 'pending', actual: t.status });
    else if (t.updated_at.toISOString() !== s.updated_at)
      changes.push({ kind: 'trip', id: s.id, field: 'updated_at', expected: s.updated_at, actual: t.updated_at.toISOString() });
  }
  for (const s of inputs.drivers) {
    if (s.planned === 0) continue;
    const d = drivers.get(s.id);
    if (!d || d.status !== 'approved')
      changes.push({ kind: 'driver', id: s.id, field: 'status', expected: 'approved', actual: d?.status ?? null });
    else if (!d.available) changes.push({ kind: 'driver', id: s.id, field: 'available', expected: true, actual: false });
    else if (d.capacity - d.active_trips < s.planned)
      changes.push({
        kind: 'driver',
        id: s.id,
        field: 'free_capacity',
        expected: s.planned,
        actual: Math.max(0, d.capacity - d.active_trips),
      });
  }
  return changes;
}

/** `solver`: where plans are solved (the module's solver thread, so a long solve never stalls other requests). */
export function createDispatchService(ctx: DispatchContext, solver: SolverThread) {
  const logistics = () => ctx.deps.logistics;

  function selection(body: OptimizeRequest) {
    const byWindow = body.territory_id !== undefined || body.created_from !== undefined || body.created_to !== undefined;
    if (body.trip_ids && byWindow)
      throw AppError.badRequest('trip_ids cannot be combined with territory_id, created_from or created_to', [
        { field: 'trip_ids', message: 'exclusive' },
      ]);
    if (!body.trip_ids && !byWindow)
      throw AppError.badRequest(
        'Select trips by trip_ids, territory_id or created_from/created_to',
        [{ field: 'trip_ids', message: 'required' }],
        'SELECTION_REQUIRED',
      );
    const from = body.created_from ? new Date(body.created_from) : undefined;
    const to = body.created_to ? new Date(body.created_to) : undefined;
    if (from && to && from >= to)
      throw AppError.badRequest('created_from must be before created_to', [{ field: 'created_to', message: 'before created_from' }]);
    if (body.trip_ids && new Set(body.trip_ids).size !== body.trip_ids.length)
      throw AppError.badRequest('trip_ids has duplicates', [{ field: 'trip_ids', message: 'duplicates' }]);
    if (body.ready_times && new Set(body.ready_times.map((r) => r.trip_id)).size !== body.ready_times.length)
      throw AppError.badRequest('ready_times names a trip twice', [{ field: 'ready_times', message: 'duplicates' }]);
    if (body.shift_ends && new Set(body.shift_ends.map((r) => r.driver_id)).size !== body.shift_ends.length)
      throw AppError.badRequest('shift_ends names a driver twice', [{ field: 'shift_ends', message: 'duplicates' }]);
    return { from, to };
  }

  /** The hub a plan names for its routes' start or end, with today's hours: unknown or out of scope 404, inactive or closed today 422. */
  async function hubOf(tx: Tx, actor: Actor, ref: OptimizeRequest['start'] | OptimizeRequest['end'], field: 'start' | 'end') {
    if (ref === undefined || typeof ref === 'string') return null;
    const hub = await logistics().hubForPlanning(tx, actor, ref.hub_id, new Date());
    if (!hub) throw AppError.notFound('Hub');
    if (!hub.active)
      throw AppError.unprocessable('The hub is inactive', 'HUB_INACTIVE', [{ field: `${field}.hub_id`, message: 'inactive hub' }]);
    if (hub.closed)
      throw AppError.unprocessable('The hub has no opening hours today', 'HUB_CLOSED', [
        { field: `${field}.hub_id`, message: 'closed today' },
      ]);
    return hub;
  }

  /** The organization's settings with the request's overrides. */
  function constraintsOf(settings: repo.DispatchSettingsRecord, speedKmh: number, body: OptimizeRequest): Constraints {
    return {
      objective: body.objective ?? settings.objective,
      max_route_duration_s: body.max_route_duration_s ?? settings.maxRouteDurationS,
      max_stops_per_route: body.max_stops_per_route !== undefined ? body.max_stops_per_route : settings.maxStopsPerRoute,
      service_time_pickup_s: body.service_time_pickup_s ?? settings.servicePickupS,
      service_time_dropoff_s: body.service_time_dropoff_s ?? settings.serviceDropoffS,
      speed_kmh: speedKmh,
      iterations: body.iterations ?? settings.iterations,
    };
  }

  async function getSettings(actor: Actor): Promise<SettingsOut> {
    return ctx.db.withTenant(actor, async (tx) => settingsOut(await repo.settingsOf(tx, actor.organizationId)));
  }

  async function updateSettings(actor: Actor, patch: SettingsPatch): Promise<SettingsOut> {
    return ctx.db.withTenant(actor, async (tx) => {
      const before = settingsOut(await repo.settingsOf(tx, actor.organizationId));
      const after = settingsOut(
        await repo.updateSettings(tx, actor.organizationId, actor.userId, {
          objective: patch.objective,
          maxRouteDurationS: patch.max_route_duration_s,
          maxStopsPerRoute: patch.max_stops_per_route,
          servicePickupS: patch.service_time_pickup_s,
          serviceDropoffS: patch.service_time_dropoff_s,
          iterations: patch.iterations,
        }),
      );
      await recordAudit(tx, actor, {
        action: 'dispatch_settings.updated',
        entityType: 'dispatch_settings',
        entityId: actor.organizationId,
        before: { ...before },
        after: { ...after },
      });
      return after;
    });
  }

  /** Reads the pending trips and available drivers in the actor's scope, solves on the solver thread outside any transaction, stores the plan (status proposed). */
  async function optimize(actor: Actor, body: OptimizeRequest): Promise<PlanOut> {
    const { from, to } = selection(body);
    const scope = scopeOf(actor);
    const { trips, drivers, constraints, hubs } = await ctx.db.withTenant(actor, async (tx) => {
      if (
        body.territory_id &&
        (!(await logistics().getTerritory(tx, body.territory_id)) || (scope && !scope.includes(body.territory_id)))
      ) {
        throw AppError.notFound('Territory');
      }
      const speedKmh = (await logistics().settings(tx, actor.organizationId)).average_speed_kmh;
      return {
        trips: await logistics().tripsForPlanning(tx, actor, {
          tripIds: body.trip_ids,
          territoryId: body.territory_id,
          createdFrom: from,
          createdTo: to,
          limit: LIMITS.maxTrips,
        }),
        drivers: await logistics().driversForPlanning(tx, actor, { driverIds: body.driver_ids, limit: LIMITS.maxDrivers }),
        constraints: constraintsOf(await repo.settingsOf(tx, actor.organizationId), speedKmh, body),
        hubs: { start: await hubOf(tx, actor, body.start, 'start'), end: await hubOf(tx, actor, body.end, 'end') },
      };
    });
    const found = new Set(trips.map((t) => t.id));
    const skipped = [
      ...(body.trip_ids ?? []).filter((id) => !found.has(id)).map((id) => ({ trip_id: id, reason: 'NOT_FOUND' })),
      ...trips.filter((t) => t.status !== 'pending').map((t) => ({ trip_id: t.id, reason: 'NOT_PENDING' })),
    ];
    const pending = trips.filter((t) => t.status === 'pending');
    const plannedAt = new Date();
    const { problem, closed } = toProblem(pending, drivers, plannedAt, body, hubs);
    skipped.push(...closed);
    const options: OptimizerOptions = {
      seed: body.seed ?? DEFAULTS.seed,
      iterations: constraints.iterations ?? undefined,
      timeBudgetMs: body.time_budget_ms ?? LIMITS.defaultBudgetMs,
      objective: constraints.objective,
      maxRouteDurationS: constraints.max_route_duration_s,
      maxStopsPerRoute: constraints.max_stops_per_route ?? undefined,
      serviceTimePickupS: constraints.service_time_pickup_s,
      serviceTimeDropoffS: constraints.service_time_dropoff_s,
      speedKmh: constraints.speed_kmh,
    };
    let plan: Plan;
    let baseline: Plan;
    try {
      ({ plan, baseline } = await solver.solve(problem, options));
    } catch (err) {
      if (err instanceof OptimizerInputError) throw AppError.unprocessable(err.message, 'OPTIMIZER_INPUT_INVALID');
      throw err;
    }
    const result = planBody(plan, baseline, skipped, constraints, plannedAt, hubs);
    // A cash trip no driver could take only because the drivers who could serve it are at their cash limit: say so.
    const byId = new Map(pending.map((t) => [t.id, t]));
    for (const u of result.unassigned) {
      const t = byId.get(u.trip_id);
      if (
        t &&
        u.reason === 'NO_DRIVER_IN_TERRITORY' &&
        money(t.cash_to_collect).gt(0) &&
        drivers.some((d) => d.at_cash_limit && servesTrip(d, t))
      )
        u.reason = 'CASH_LIMIT';
    }
    const plannedPerDriver = new Map<string, number>();
    for (const a of result.assignments) plannedPerDriver.set(a.driver_id, (plannedPerDriver.get(a.driver_id) ?? 0) + 1);
    const inputs: Inputs = {
      trips: pending.map((t) => ({ id: t.id, status: t.status, updated_at: t.updated_at.toISOString() })),
      drivers: drivers.map((d) => ({
        id: d.id,
        status: d.status,
        available: d.available,
        capacity: d.capacity,
        active_trips: d.active_trips,
        planned: plannedPerDriver.get(d.id) ?? 0,
      })),
    };
    return ctx.db.withTenant(actor, async (tx) =>
      planOut(
        await repo.insertPlan<Inputs, PlanBody, PlanChange>(tx, {
          organizationId: actor.organizationId,
          id: newId(),
          createdByUserId: actor.userId,
          territoryIds: scope,
          request: body,
          inputs,
          result,
          ttlS: LIMITS.planTtlMs / 1000,
        }),
      ),
    );
  }

  /**
   * Applies a plan atomically: locks the plan, then its trips and drivers, verifies the snapshot, and
   * assigns every trip as planned, or nothing (409 PLAN_STALE, the plan marked stale or expired).
   * A committed plan is returned as it is (idempotent).
   */
  async function commit(actor: Actor, planId: string): Promise<PlanOut> {
    try {
      return await ctx.db.withTenant(actor, async (tx) => {
        const plan = await repo.lockPlan<Inputs, PlanBody, PlanChange>(tx, planId);
        const scope = scopeOf(actor);
        // Sub-administrators commit only plans made within their territories.
        if (!plan || (scope && (!plan.territoryIds || !plan.territoryIds.every((id) => scope.includes(id)))))
          throw AppError.notFound('Plan');
        if (plan.status === 'committed') return planOut(plan);
        if (plan.status !== 'proposed') throw new PlanStale(plan.id, plan.changes ?? [], null);
        if (plan.expiresAt.getTime() <= Date.now()) {
          throw new PlanStale(
            plan.id,
            [{ kind: 'plan', id: plan.id, field: 'expires_at', expected: 'not expired', actual: plan.expiresAt.toISOString() }],
            'expired',
          );
        }
        const assignments = plan.result.assignments;
        const driverIds = [...new Set(assignments.map((a) => a.driver_id))];
        const current = await logistics().lockForPlanCommit(
          tx,
          assignments.map((a) => a.trip_id),
          driverIds,
        );
        const changes = changesSince(plan.inputs, assignments, current);
        if (changes.length > 0) throw new PlanStale(plan.id, changes, 'stale');
        // Each dropoff's position in its route: the live ETAs follow the committed order of every stop.
        const dropoffOrder = new Map(
          plan.result.routes.flatMap((r) => r.stops.flatMap((s, i) => (s.kind === 'dropoff' ? [[s.trip_id, i + 1] as const] : []))),
        );
        for (const a of assignments) {
          try {
            await logistics().assignDriver(tx, actor, a.trip_id, a.driver_id, {
              stopOrder: a.stop_order,
              dropoffOrder: dropoffOrder.get(a.trip_id),
              planId: plan.id,
            });
          } catch (err) {
            if (err instanceof AppError && err.status < 500) {
              throw new PlanStale(
                plan.id,
                [{ kind: 'assignment', id: a.trip_id, field: 'driver_id', expected: a.driver_id, actual: err.code }],
                'stale',
              );
            }
            throw err;
          }
        }
        const updated = await repo.markCommitted<Inputs, PlanBody, PlanChange>(tx, plan.id, actor.userId);
        await recordAudit(tx, actor, {
          action: 'dispatch_plan.committed',
          entityType: 'dispatch_plan',
          entityId: plan.id,
          before: { status: plan.status },
          after: { status: 'committed', trips: assignments.length, drivers: driverIds.length },
        });
        return planOut(updated);
      });
    } catch (err) {
      if (!(err instanceof PlanStale)) throw err;
      if (err.mark) {
        // The refusal is recorded after the rollback, so nothing of the attempted commit remains.
        const { mark, changes } = err;
        await ctx.db.withTenant(actor, (tx) => repo.markRefused(tx, planId, mark, changes));
      }
      throw err.toAppError();
    }
  }

  return { optimize, commit, getSettings, updateSettings };
}

export type DispatchService = ReturnType<typeof createDispatchService>;
