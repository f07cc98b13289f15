import { tenantOf, type Actor } from '../../platform/auth.js';
import { recordAudit } from '../../platform/audit.js';
import type { AppContext } from '../../platform/context.js';
import type { Tx } from '../../platform/db/index.js';
import { AppError } from '../../platform/errors.js';
import { toGeoPoint } from '../../platform/geo.js';
import { newId } from '../../platform/ids.js';
import type { LogisticsApi, PlanningDriver, PlanningTrip } from '../logistics/index.js';
import { greedyNearestDriver, OptimizerInputError, solve, type OptimizerOptions, type OptimizerProblem, type Plan } from './optimizer/index.js';

export const LIMITS = { maxTrips: 500, maxDrivers: 500, planTtlMs: 10 * 60_000, defaultBudgetMs: 1000, maxBudgetMs: 10_000 };

export type PlanStatus = 'proposed' | 'committed' | 'expired' | 'stale';

export interface OptimizeRequest {
  trip_ids?: string[];
  territory_id?: string;
  created_from?: string;
  created_to?: string;
  driver_ids?: string[];
  seed?: number;
  time_budget_ms?: number;
  max_stops_per_route?: number;
}

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

interface PlanRow {
  id: string;
  status: PlanStatus;
  territory_ids: string[] | null;
  inputs: Inputs;
  result: PlanBody;
  changes: PlanChange[] | null;
  expires_at: Date;
  committed_at: Date | null;
  created_at: Date;
}

const round1 = (x: number) => Math.round(x * 10) / 10;
import { scopeOf } from '../../platform/scope.js';

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

function toProblem(trips: PlanningTrip[], drivers: PlanningDriver[]): OptimizerProblem {
  return {
    trips: trips.map((t) => ({
      id: t.id,
      pickup: t.pickup,
      dropoff: t.dropoff,
      territoryId: t.territory_id ?? undefined,
      excludedDriverIds: t.rejected_driver_ids,
    })),
    drivers: drivers.map((d) => {
      const room = Math.max(0, d.capacity - d.active_trips);
      // Every planned trip takes a unit of capacity at commit (active_trips), so a route holds at most `room` trips.
      return { id: d.id, position: d.position!, capacity: d.capacity, currentLoad: Math.min(d.active_trips, d.capacity), territoryIds: d.territory_ids, maxStops: 2 * room };
    }),
  };
}

/** The plan's routes (drivers with stops), and the assignments a commit applies: each trip with the 1-based position of its pickup in the route. */
function planBody(plan: Plan, baseline: Plan, skipped: { trip_id: string; reason: string }[], capped: boolean) {
  const routes = plan.routes
    .filter((r) => r.stops.length > 0)
    .map((r) => ({
      driver_id: r.driverId,
      stops: r.stops.map((s) => ({
        trip_id: s.tripId,
        kind: s.kind,
        position: toGeoPoint(s.position)!,
        arrival_offset_s: round1(s.arrivalOffsetS),
        cumulative_distance_m: round1(s.cumulativeDistanceM),
        load_after: s.loadAfter,
      })),
      distance_m: round1(r.distanceM),
      duration_s: round1(r.durationS),
    }));
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
    totals: { assigned: plan.totals.assigned, unassigned: unassigned.length, distance_m: round1(plan.totals.distanceM), duration_s: round1(plan.totals.durationS) },
    baseline: { algorithm: baseline.algorithm, assigned: baseline.totals.assigned, distance_m: round1(baseline.totals.distanceM) },
    solver: { algorithm: plan.algorithm, seed: plan.seed, iterations: plan.iterations, elapsed_ms: Math.round(plan.elapsedMs) },
  };
}

type PlanBody = ReturnType<typeof planBody>;

const planOut = (row: PlanRow) => ({
  plan_id: row.id,
  status: row.status,
  territory_ids: row.territory_ids,
  created_at: row.created_at,
  expires_at: row.expires_at,
  committed_at: row.committed_at,
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
    else if (t.updated_at.toISOString() !== s.updated_at) changes.push({ kind: 'trip', id: s.id, field: 'updated_at', expected: s.updated_at, actual: t.updated_at.toISOString() });
  }
  for (const s of inputs.drivers) {
    if (s.planned === 0) continue;
    const d = drivers.get(s.id);
    if (!d || d.status !== 'approved') changes.push({ kind: 'driver', id: s.id, field: 'status', expected: 'approved', actual: d?.status ?? null });
    else if (!d.available) changes.push({ kind: 'driver', id: s.id, field: 'available', expected: true, actual: false });
    else if (d.capacity - d.active_trips < s.planned)
      changes.push({ kind: 'driver', id: s.id, field: 'free_capacity', expected: s.planned, actual: Math.max(0, d.capacity - d.active_trips) });
  }
  return changes;
}

export function createDispatchService(ctx: AppContext, deps: { logistics: LogisticsApi }) {
  const inTx = <T>(actor: Actor, fn: (tx: Tx) => Promise<T>) => ctx.db.withTenant(tenantOf(actor), fn);
  const logistics = () => deps.logistics;

  function selection(body: OptimizeRequest) {
    const byWindow = body.territory_id !== undefined || body.created_from !== undefined || body.created_to !== undefined;
    if (body.trip_ids && byWindow) throw AppError.badRequest('trip_ids cannot be combined with territory_id, created_from or created_to', [{ field: 'trip_ids', message: 'exclusive' }]);
    if (!body.trip_ids && !byWindow) throw AppError.badRequest('Select trips by trip_ids, territory_id or created_from/created_to', [{ field: 'trip_ids', message: 'required' }], 'SELECTION_REQUIRED');
    const from = body.created_from ? new Date(body.created_from) : undefined;
    const to = body.created_to ? new Date(body.created_to) : undefined;
    if (from && to && from >= to) throw AppError.badRequest('created_from must be before created_to', [{ field: 'created_to', message: 'before created_from' }]);
    if (body.trip_ids && new Set(body.trip_ids).size !== body.trip_ids.length) throw AppError.badRequest('trip_ids has duplicates', [{ field: 'trip_ids', message: 'duplicates' }]);
    return { from, to };
  }

  /** Reads the pending trips and available drivers in the actor's scope, solves outside any transaction, stores the plan (status proposed). */
  async function optimize(actor: Actor, body: OptimizeRequest): Promise<PlanOut> {
    const { from, to } = selection(body);
    const scope = scopeOf(actor);
    const { trips, drivers } = await inTx(actor, async (tx) => {
      if (body.territory_id && (!(await logistics().getTerritory(tx, body.territory_id)) || (scope && !scope.includes(body.territory_id)))) {
        throw AppError.notFound('Territory');
      }
      return {
        trips: await logistics().tripsForPlanning(tx, actor, { tripIds: body.trip_ids, territoryId: body.territory_id, createdFrom: from, createdTo: to, limit: LIMITS.maxTrips }),
        drivers: await logistics().driversForPlanning(tx, actor, { driverIds: body.driver_ids, limit: LIMITS.maxDrivers }),
      };
    });
    const found = new Set(trips.map((t) => t.id));
    const skipped = [
      ...(body.trip_ids ?? []).filter((id) => !found.has(id)).map((id) => ({ trip_id: id, reason: 'NOT_FOUND' })),
      ...trips.filter((t) => t.status !== 'pending').map((t) => ({ trip_id: t.id, reason: 'NOT_PENDING' })),
    ];
    const pending = trips.filter((t) => t.status === 'pending');
    const problem = toProblem(pending, drivers);
    const options: OptimizerOptions = { seed: body.seed ?? 1, timeBudgetMs: body.time_budget_ms ?? LIMITS.defaultBudgetMs, maxStopsPerRoute: body.max_stops_per_route };
    let plan: Plan;
    let baseline: Plan;
    try {
      plan = solve(problem, options);
      baseline = greedyNearestDriver(problem, options);
    } catch (err) {
      if (err instanceof OptimizerInputError) throw AppError.unprocessable(err.message, 'OPTIMIZER_INPUT_INVALID');
      throw err;
    }
    const result = planBody(plan, baseline, skipped, body.max_stops_per_route !== undefined);
    const plannedPerDriver = new Map<string, number>();
    for (const a of result.assignments) plannedPerDriver.set(a.driver_id, (plannedPerDriver.get(a.driver_id) ?? 0) + 1);
    const inputs: Inputs = {
      trips: pending.map((t) => ({ id: t.id, status: t.status, updated_at: t.updated_at.toISOString() })),
      drivers: drivers.map((d) => ({ id: d.id, status: d.status, available: d.available, capacity: d.capacity, active_trips: d.active_trips, planned: plannedPerDriver.get(d.id) ?? 0 })),
    };
    return inTx(actor, async (tx) => {
      const { rows } = await tx.query<PlanRow>(
        `INSERT INTO dispatch_plan (organization_id, id, status, created_by_user_id, territory_ids, request, inputs, result, expires_at)
         VALUES ($1, $2, 'proposed', $3, $4, $5::jsonb, $6::jsonb, $7::jsonb, now() + make_interval(secs => $8::int))
         RETURNING id, status, territory_ids, inputs, result, changes, expires_at, committed_at, created_at`,
        [actor.organizationId, newId(), actor.userId, scope, JSON.stringify(body), JSON.stringify(inputs), JSON.stringify(result), LIMITS.planTtlMs / 1000],
      );
      return planOut(rows[0]);
    });
  }

  /**
   * Applies a plan atomically: locks the plan, then its trips and drivers, verifies the snapshot, and
   * assigns every trip as planned, or nothing (409 PLAN_STALE, the plan marked stale or expired).
   * A committed plan is returned as it is (idempotent).
   */
  async function commit(actor: Actor, planId: string): Promise<PlanOut> {
    try {
      return await inTx(actor, async (tx) => {
        const { rows } = await tx.query<PlanRow>(
          'SELECT id, status, territory_ids, inputs, result, changes, expires_at, committed_at, created_at FROM dispatch_plan WHERE id = $1 FOR UPDATE',
          [planId],
        );
        const plan = rows[0];
        const scope = scopeOf(actor);
        // Sub-administrators commit only plans made within their territories.
        if (!plan || (scope && (!plan.territory_ids || !plan.territory_ids.every((id) => scope.includes(id))))) throw AppError.notFound('Plan');
        if (plan.status === 'committed') return planOut(plan);
        if (plan.status !== 'proposed') throw new PlanStale(plan.id, plan.changes ?? [], null);
        if (plan.expires_at.getTime() <= Date.now()) {
          throw new PlanStale(plan.id, [{ kind: 'plan', id: plan.id, field: 'expires_at', expected: 'not expired', actual: plan.expires_at.toISOString() }], 'expired');
        }
        const assignments = plan.result.assignments;
        const driverIds = [...new Set(assignments.map((a) => a.driver_id))];
        const current = await logistics().lockForPlanCommit(tx, assignments.map((a) => a.trip_id), driverIds);
        const changes = changesSince(plan.inputs, assignments, current);
        if (changes.length > 0) throw new PlanStale(plan.id, changes, 'stale');
        for (const a of assignments) {
          try {
            await logistics().assignDriver(tx, actor, a.trip_id, a.driver_id, { stopOrder: a.stop_order, planId: plan.id });
          } catch (err) {
            if (err instanceof AppError && err.status < 500) {
              throw new PlanStale(plan.id, [{ kind: 'assignment', id: a.trip_id, field: 'driver_id', expected: a.driver_id, actual: err.code }], 'stale');
            }
            throw err;
          }
        }
        const updated = await tx.query<PlanRow>(
          `UPDATE dispatch_plan SET status = 'committed', committed_at = now(), committed_by_user_id = $2, updated_at = now() WHERE id = $1
           RETURNING id, status, territory_ids, inputs, result, changes, expires_at, committed_at, created_at`,
          [plan.id, actor.userId],
        );
        await recordAudit(tx, actor, {
          action: 'dispatch_plan.committed',
          entityType: 'dispatch_plan',
          entityId: plan.id,
          before: { status: plan.status },
          after: { status: 'committed', trips: assignments.length, drivers: driverIds.length },
        });
        return planOut(updated.rows[0]);
      });
    } catch (err) {
      if (!(err instanceof PlanStale)) throw err;
      if (err.mark) {
        // The refusal is recorded after the rollback, so nothing of the attempted commit remains.
        await inTx(actor, (tx) =>
          tx.query(`UPDATE dispatch_plan SET status = $2, changes = $3::jsonb, updated_at = now() WHERE id = $1 AND status = 'proposed'`, [planId, err.mark, JSON.stringify(err.changes)]),
        );
      }
      throw err.toAppError();
    }
  }

  return { optimize, commit };
}

export type DispatchService = ReturnType<typeof createDispatchService>;
