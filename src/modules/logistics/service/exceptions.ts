import type { Actor } from '../../../platform/auth.js';
import type { AppContext, Worker } from '../../../platform/context.js';
import type { Tx } from '../../../platform/db/index.js';
import { encodeCursor, pageRequest } from '../../../platform/pagination.js';
import { PIN_MAX_ATTEMPTS } from './transitions.js';
import { scopeOf } from '../../../platform/scope.js';
import { tripOut } from './mappers.js';
import { type TripRow, activeTripsOfDriver, tripsByIds } from '../repo/trips.js';
import {
  claimOverdueTrip,
  claimStaleDriver,
  dueOverdueTrips,
  dueStaleDrivers,
  exceptionCounts,
  openExceptions,
  rejectionCount,
  type ExceptionKind,
} from '../repo/exceptions.js';
import { findDriver } from '../repo/drivers.js';
import { settingsOf } from './settings.js';
import type { TripCore } from './trips.js';
import type { PinStage } from '../schemas.js';

/**
 * Exceptions: what a dispatcher must see. Each is an event to the SSE streams, the outbound webhooks and the
 * administrators' and dispatchers' notification inbox (trip.delayed, trip.location_stale, trip.rejected_repeatedly,
 * trip.pin_locked, and trip.delivery_failed / trip.returned), and `GET /exceptions` lists the open ones with counts.
 */
export function createExceptions(ctx: AppContext, core: Pick<TripCore, 'emit' | 'staffAudience'>) {
  /**
   * After a driver's rejection: the one that brings the trip's rejections to the organization's threshold raises
   * trip.rejected_repeatedly, once per trip (further rejections show in GET /exceptions' count, not as new alerts).
   */
  async function afterRejection(tx: Tx, actor: Pick<Actor, 'userId'> | null, t: TripRow, reason: string | null) {
    const [n, settings] = [await rejectionCount(tx, t.id), await settingsOf(ctx, tx, t.organization_id)];
    if (n === settings.rejections_alert_threshold) {
      await core.emit(
        tx,
        actor,
        'trip.rejected_repeatedly',
        t,
        { rejections: n, threshold: settings.rejections_alert_threshold, last_reason: reason },
        'staff',
      );
    }
  }

  /** A wrong PIN that just locked a verification (the attempts reached the limit): trip.pin_locked, once per lock. */
  async function pinLocked(tx: Tx, actor: Pick<Actor, 'userId'> | null, t: TripRow, stage: PinStage) {
    await core.emit(tx, actor, 'trip.pin_locked', t, { stage, attempts: PIN_MAX_ATTEMPTS }, 'staff');
  }

  /** GET /exceptions: the open ones in the caller's scope, newest first, with counts per kind. */
  function list(actor: Actor, q: { kind?: ExceptionKind; limit?: number; cursor?: string }) {
    const page = pageRequest(q);
    return ctx.db.withTenant(actor, async (tx) => {
      const settings = await settingsOf(ctx, tx, actor.organizationId);
      const base = { scope: scopeOf(actor), threshold: settings.rejections_alert_threshold, pinMax: PIN_MAX_ATTEMPTS };
      const counts = await exceptionCounts(tx, base);
      const rows = await openExceptions(tx, { ...base, kind: q.kind ?? null, after: page.after, limit: page.limit + 1 });
      const more = rows.length > page.limit;
      const slice = more ? rows.slice(0, page.limit) : rows;
      const trips = new Map(
        (
          await tripsByIds(
            tx,
            slice.map((r) => r.trip_id).filter((id): id is string => !!id),
          )
        ).map((t) => [t.id, t]),
      );
      return {
        counts,
        items: slice.map((r) => ({
          kind: r.kind,
          trip_id: r.trip_id,
          driver_id: r.driver_id,
          since: r.since,
          detail: r.detail,
          trip: r.trip_id && trips.has(r.trip_id) ? tripOut(trips.get(r.trip_id)!, actor) : null,
        })),
        next_cursor: more ? encodeCursor(slice[slice.length - 1]!.id) : null,
      };
    });
  }

  /**
   * One round across organizations: on-duty drivers whose last fix is older than `location_stale_after_s` raise
   * trip.location_stale (one per active trip, or one for the driver when he carries none), and unfinished trips whose
   * promise plus the grace passed without an ETA saying so raise trip.delayed. Each is claimed by a conditional update
   * of its marker in its own tenant transaction, so several instances never raise one twice.
   */
  async function tick(now = new Date(), batch = 100): Promise<number> {
    let raised = 0;
    const stale = await ctx.db.withSystem((tx) => dueStaleDrivers(tx, batch));
    for (const d of stale) {
      const done = await ctx.db.withTenant({ organizationId: d.organization_id, userId: null }, async (tx) => {
        if (!(await claimStaleDriver(tx, d.id))) return false;
        const driver = (await findDriver(tx, d.id))!;
        const extra = { driver_id: driver.id, last_location_at: driver.last_location_at, available: driver.available };
        const trips = await activeTripsOfDriver(tx, driver.id);
        for (const t of trips) await core.emit(tx, null, 'trip.location_stale', t, extra, 'staff');
        if (trips.length === 0) {
          const staff = await core.staffAudience(tx, d.organization_id, driver.territory_ids);
          await ctx.events.record(tx, d.organization_id, {
            type: 'trip.location_stale',
            entityType: 'driver',
            entityId: driver.id,
            territoryId: driver.territory_ids[0] ?? null,
            actorUserId: null,
            audienceUserIds: staff,
            alertUserIds: staff,
            payload: { ...extra, trip_id: null },
          });
        }
        return true;
      });
      if (done) raised++;
    }
    const overdue = await ctx.db.withSystem((tx) => dueOverdueTrips(tx, now, batch));
    for (const r of overdue) {
      const done = await ctx.db.withTenant({ organizationId: r.organization_id, userId: null }, async (tx) => {
        if (!(await claimOverdueTrip(tx, r.id, now))) return false;
        const [t] = await tripsByIds(tx, [r.id]);
        const settings = await settingsOf(ctx, tx, r.organization_id);
        await core.emit(
          tx,
          null,
          'trip.delayed',
          t!,
          {
            promised_at: t!.promised_at,
            eta_dropoff_at: t!.eta_dropoff_at,
            late_by_s: Math.round((now.getTime() - new Date(t!.promised_at!).getTime()) / 1000),
            grace_min: settings.delay_grace_min,
            source: 'overdue',
          },
          'staff',
        );
        return true;
      });
      if (done) raised++;
    }
    return raised;
  }

  const worker: Worker = { name: 'trip-exceptions', intervalMs: 15_000, tick: () => tick() };
  return { afterRejection, pinLocked, list, tick, worker };
}

export type Exceptions = ReturnType<typeof createExceptions>;
