import type { Exceptions } from './exceptions.js';
import { systemActor, type Actor } from '../../../platform/auth.js';
import { recordAudit } from '../../../platform/audit.js';
import type { LogisticsContext } from '../context.js';
import { collectsCash, driversAtCashLimit } from './cash-limit.js';
import type { Tx } from '../../../platform/db/index.js';
import { AppError } from '../../../platform/errors.js';
import { pointSql } from '../../../platform/geo.js';
import { assertTransition } from '../../../platform/state-machine.js';
import { driverOut } from './mappers.js';
import { scopeOf } from '../../../platform/scope.js';
import { TRIP_TRANSITIONS } from './transitions.js';
import { type DriverRow, candidateDrivers, circleBox, claimCapacity, findDriver, lockDriverIfFree } from '../repo/drivers.js';
import { type TripRow, hasRejected, insertRejection, lockExpiredOffer, timedOutOffers } from '../repo/trips.js';
import { settingsOf } from './settings.js';
import type { TripCore } from './trips.js';

export type IneligibleReason =
  'not_available' | 'at_capacity' | 'rejected_this_trip' | 'outside_territory' | 'current_driver' | 'cash_limit';

/** A dispatcher's explicit decision to give a cash order to a driver at or over his cash limit (audited with its reason). */
export interface CashLimitOverride {
  reason: string;
}

export function createAssignment(ctx: LogisticsContext, core: TripCore, exceptions: Pick<Exceptions, 'afterRejection'>) {
  /**
   * Approved drivers with a position within the radius of the pickup, ranked: eligible first, then
   * territory match, then distance and load (order per the `assignment_strategy` setting).
   */
  async function candidates(tx: Tx, actor: Actor, t: TripRow, q: { radius_m?: number; limit?: number; eligibleOnly?: boolean } = {}) {
    const settings = await settingsOf(ctx, tx, t.organization_id);
    const radius = q.radius_m ?? settings.auto_assign_radius_m;
    const pickup = { lon: t.pickup_lon, lat: t.pickup_lat };
    const rows = await candidateDrivers(tx, {
      pickup: pointSql(pickup),
      box: circleBox(pickup, radius),
      radiusM: radius,
      tripId: t.id,
      territoryId: t.territory_id,
      scope: scopeOf(actor),
      currentDriverId: t.driver_id,
      eligibleOnly: q.eligibleOnly ?? false,
      limit: q.limit ?? 50,
      leastLoaded: settings.assignment_strategy === 'least_loaded',
    });
    // Cash on delivery: a driver at or over his cash limit is offered no cash order.
    const atLimit = collectsCash(t) ? await driversAtCashLimit(ctx, tx, t.organization_id, rows) : new Set<string>();
    return rows.map((r) => {
      const reasons: IneligibleReason[] = [];
      if (r.id === t.driver_id) reasons.push('current_driver');
      if (!r.available) reasons.push('not_available');
      if (r.active_trips >= r.capacity) reasons.push('at_capacity');
      if (r.rejected_trip) reasons.push('rejected_this_trip');
      if (t.territory_id && !r.unrestricted && !r.territory_match) reasons.push('outside_territory');
      if (atLimit.has(r.id)) reasons.push('cash_limit');
      return {
        driver: driverOut(r),
        distance_m: Math.round(Number(r.distance_m) * 10) / 10,
        active_trips: r.active_trips,
        capacity: r.capacity,
        territory_match: r.territory_match,
        eligible: r.eligible && !atLimit.has(r.id),
        reasons,
      };
    });
  }

  /**
   * Takes one unit of the driver's capacity in one conditional UPDATE (approved, available, below
   * capacity): concurrent assignments can never push a driver past his capacity.
   */
  const claimDriver = (tx: Tx, driverId: string): Promise<boolean> => claimCapacity(tx, driverId);

  async function finishAssignment(
    tx: Tx,
    actor: Actor,
    t: TripRow,
    driverId: string,
    opts: { stopOrder?: number; dropoffOrder?: number; planId?: string; auto?: boolean },
  ) {
    const after = await core.move(tx, t, 'assigned', {
      effect: {
        assign: { driverId, planId: opts.planId ?? null, stopOrder: opts.stopOrder ?? null, dropoffOrder: opts.dropoffOrder ?? null },
      },
    });
    if (t.driver_id && t.driver_id !== driverId) await core.releaseDriver(tx, t.driver_id);
    await core.emitMoved(tx, actor, 'trip.assigned', after, {
      previous_driver_id: t.driver_id,
      previous_driver_user_id: t.driver_user_id,
      auto: !!opts.auto,
      plan_id: opts.planId ?? null,
      stop_order: opts.stopOrder ?? null,
      cash_to_collect: after.cash_to_collect,
    });
    await recordAudit(tx, actor, {
      action: opts.auto ? 'trip.auto_assigned' : 'trip.assigned',
      entityType: 'trip',
      entityId: t.id,
      before: { status: t.status, driver_id: t.driver_id },
      after: { status: after.status, driver_id: driverId, plan_id: opts.planId ?? null },
    });
    return after;
  }

  /**
   * Assigns (or reassigns) a trip to a driver: the trip must be pending, assigned or accepted (409
   * INVALID_TRANSITION), the driver approved, available, below capacity (for a plan: not a rejecter of this trip) and
   * linked to the trip's territory when he has territory links (422 with the reason).
   */
  async function assignDriver(
    tx: Tx,
    actor: Actor,
    tripId: string,
    driverId: string,
    opts: { stopOrder?: number; dropoffOrder?: number; planId?: string; cashLimitOverride?: CashLimitOverride } = {},
  ) {
    const t = await core.getScoped(tx, actor, tripId, true);
    assertTransition('Trip', TRIP_TRANSITIONS, t.status, 'assigned');
    if (t.driver_id === driverId)
      throw AppError.conflict('The trip is already assigned to this driver', 'ALREADY_ASSIGNED', { current_status: t.status });
    const d = await findDriver(tx, driverId, scopeOf(actor));
    if (!d) throw AppError.unprocessable('Unknown driver', 'DRIVER_NOT_FOUND', [{ field: 'driver_id', message: 'unknown' }]);
    if (d.status !== 'approved' || !d.available)
      throw AppError.unprocessable('The driver is not approved and available', 'DRIVER_NOT_AVAILABLE');
    // A rejection (or an offer left to expire) only keeps the driver out of automatic offers and plans:
    // a dispatcher who talked to him may still assign him by hand.
    if (opts.planId) {
      if (await hasRejected(tx, t.id, driverId)) throw AppError.unprocessable('The driver rejected this trip', 'DRIVER_REJECTED_TRIP');
    }
    if (t.territory_id && d.territory_ids.length > 0 && !d.territory_ids.includes(t.territory_id)) {
      throw AppError.unprocessable('The driver does not serve the territory of this trip', 'DRIVER_OUTSIDE_TERRITORY');
    }
    // Cash on delivery: a driver at or over his cash limit gets a cash order only by a dispatcher's explicit, audited override (never from a plan).
    const overLimit = collectsCash(t) && (await driversAtCashLimit(ctx, tx, t.organization_id, [d])).has(d.id);
    if (overLimit && (!opts.cashLimitOverride || opts.planId)) {
      throw AppError.unprocessable(
        'The driver holds cash at or over his cash limit: assign him this cash order only with cash_limit_override and a reason',
        'CASH_LIMIT',
        [{ field: 'cash_limit_override', message: 'required to assign a cash order to a driver at his cash limit' }],
      );
    }
    if (!(await claimDriver(tx, driverId))) throw AppError.conflict('The driver is at capacity', 'DRIVER_AT_CAPACITY');
    const after = await finishAssignment(tx, actor, t, driverId, opts);
    if (overLimit) {
      await recordAudit(tx, actor, {
        action: 'trip.cash_limit_override',
        entityType: 'trip',
        entityId: t.id,
        after: {
          driver_id: driverId,
          cash_to_collect: t.cash_to_collect,
          cash_limit: d.cash_limit,
          reason: opts.cashLimitOverride!.reason,
        },
      });
    }
    return after;
  }

  /**
   * Picks the best eligible candidate; the capacity claim is the SQL decision, so a busy driver is skipped, never overbooked.
   * One search a call: the server keeps no queue of pending trips and retries none on its own (the acceptance timeout
   * re-offers an expired offer once, up to `acceptance_max_offers`, 50 a round). A trip with no eligible driver is
   * retried by its caller (a dispatcher, an integration); with most drivers busy such a search costs one index scan of
   * the pickup's box filtered on the drivers' own rows (`candidateDrivers` with `eligibleOnly`), about 1 ms at 2,000
   * drivers of which 1,990 are busy.
   */
  async function autoAssign(tx: Tx, actor: Actor, tripId: string) {
    const t = await core.getScoped(tx, actor, tripId, true);
    if (t.status !== 'pending') throw AppError.invalidTransition('Trip', t.status, 'assigned');
    // Many trips waiting at a peak all rank the same few free drivers first: a driver whose row another transaction
    // holds (an assignment in flight) is passed over for the next candidate instead of waited for, and waited for only
    // when every other candidate failed.
    const held: string[] = [];
    for (const c of await candidates(tx, actor, t, { eligibleOnly: true, limit: 20 })) {
      if (!c.eligible) continue; // at his cash limit
      if (!(await lockDriverIfFree(tx, c.driver.id))) held.push(c.driver.id);
      else if (await claimDriver(tx, c.driver.id)) return finishAssignment(tx, actor, t, c.driver.id, { auto: true });
    }
    for (const id of held) if (await claimDriver(tx, id)) return finishAssignment(tx, actor, t, id, { auto: true });
    throw AppError.unprocessable('No eligible driver within the auto-assign radius', 'NO_ELIGIBLE_DRIVER');
  }

  /** The calling driver's own trip, locked; another driver's trip is 409 TRIP_NOT_ASSIGNED_TO_YOU. */
  async function ownTrip(tx: Tx, driver: DriverRow, tripId: string): Promise<TripRow> {
    const t = await core.load(tx, tripId, true);
    if (!t) throw AppError.notFound('Trip');
    if (t.driver_id !== driver.id)
      throw AppError.conflict('This trip is not assigned to you', 'TRIP_NOT_ASSIGNED_TO_YOU', { current_status: t.status });
    return t;
  }

  /** assigned → accepted, by the assigned driver; a second concurrent accept finds it accepted (409). */
  async function accept(tx: Tx, actor: Actor, driver: DriverRow, tripId: string) {
    if (driver.status !== 'approved') throw AppError.unprocessable('Only an approved driver can accept trips', 'DRIVER_NOT_APPROVED');
    const t = await ownTrip(tx, driver, tripId);
    if (t.status !== 'assigned') throw AppError.invalidTransition('Trip', t.status, 'accepted');
    const after = await core.move(tx, t, 'accepted');
    await core.emitMoved(tx, actor, 'trip.accepted', after);
    return after;
  }

  /** assigned → pending, by the assigned driver: he is excluded from this trip's candidates from now on. */
  async function reject(tx: Tx, actor: Actor, driver: DriverRow, tripId: string, reason?: string) {
    const t = await ownTrip(tx, driver, tripId);
    if (t.status !== 'assigned') throw AppError.invalidTransition('Trip', t.status, 'pending');
    await insertRejection(tx, {
      organizationId: t.organization_id,
      tripId: t.id,
      driverId: driver.id,
      reason: reason ?? null,
      kind: 'rejected',
    });
    const back = await core.unassign(tx, actor, t, reason ?? null, 'trip.rejected');
    await exceptions.afterRejection(tx, actor, back, reason ?? null);
    return back;
  }

  /**
   * Acceptance timeout: with `acceptance_timeout_enabled`, an assigned trip not accepted within
   * `acceptance_timeout_s` (by `now`) is withdrawn from its driver (event trip.offer_expired; he is kept out
   * of its automatic offers like a rejecter) and offered to the next eligible candidate (trip.assigned,
   * auto); after `acceptance_max_offers` expired offers it stays pending in the dispatch queue. The trip is
   * taken with SKIP LOCKED and its state re-checked under the lock, so instances never expire one offer twice.
   */
  async function expireOffer(tx: Tx, offer: { tripId: string; assignedAt: string }, now: Date): Promise<boolean> {
    // The offer is the assignment made at `assignedAt` (full precision, as text): one already expired and re-offered is not this one.
    if (!(await lockExpiredOffer(tx, offer.tripId, offer.assignedAt, now))) return false;
    const t = (await core.load(tx, offer.tripId))!;
    const settings = await settingsOf(ctx, tx, t.organization_id);
    const actor = systemActor(t.organization_id, 'acceptance-timeout');
    await insertRejection(tx, {
      organizationId: t.organization_id,
      tripId: t.id,
      driverId: t.driver_id!,
      reason: 'acceptance_timeout',
      kind: 'timed_out',
    });
    const expired = await timedOutOffers(tx, t.id);
    const back = await core.unassign(tx, actor, t, 'acceptance_timeout', 'trip.offer_expired', {
      offers_expired: expired,
      max_offers: settings.acceptance_max_offers,
    });
    if (expired >= settings.acceptance_max_offers) return true;
    try {
      await autoAssign(tx, actor, back.id);
    } catch (err) {
      if (!(err instanceof AppError) || err.code !== 'NO_ELIGIBLE_DRIVER') throw err;
    }
    return true;
  }

  /** picked_up → in_transit, by the driver (event trip.on_the_way). */
  async function startDelivery(tx: Tx, actor: Actor, driver: DriverRow, tripId: string) {
    const t = await ownTrip(tx, driver, tripId);
    if (t.status !== 'picked_up') throw AppError.invalidTransition('Trip', t.status, 'in_transit');
    const after = await core.move(tx, t, 'in_transit');
    await core.emitMoved(tx, actor, 'trip.on_the_way', after);
    return after;
  }

  return { candidates, assignDriver, autoAssign, ownTrip, accept, reject, startDelivery, expireOffer };
}

export type Assignment = ReturnType<typeof createAssignment>;
