import type { Actor } from '../../../platform/auth.js';
import { recordAudit } from '../../../platform/audit.js';
import type { LogisticsContext } from '../context.js';
import type { MerchantService } from './merchants.js';
import type { Tx } from '../../../platform/db/index.js';
import { AppError } from '../../../platform/errors.js';
import { parsePoint, pointSql, type LonLat } from '../../../platform/geo.js';
import { newId, randomPin } from '../../../platform/ids.js';
import { formatMoney, money } from '../../../platform/money.js';
import { assertTransition, isTerminal } from '../../../platform/state-machine.js';
import { DISPATCH_TRANSITIONS, TRIP_TRANSITIONS } from './transitions.js';
import { isStaff, tripOut } from './mappers.js';
import { scopeOf } from '../../../platform/scope.js';
import { type FailureReason, type PinLock, type ServiceMode, type SourceChannel, type TripStatus } from '../schemas.js';
import {
  type TripRow,
  findTrip,
  insertTrip,
  liveTripExists,
  resetPinAttempts,
  setPromise,
  setWindowsLoad,
  updateTripCoordinates,
  updateTripStatus,
  type TripStatusEffect,
} from '../repo/trips.js';
import { assertTerritories, territoryForPoint } from './territories.js';
import { settingsOf } from './settings.js';
import { validatePromise, validateWindow, validateWindowsLoad, type Promises } from './promises.js';
import { insertProof } from '../repo/proofs.js';
import { releaseCapacity } from '../repo/drivers.js';
import { keepTripTrack } from '../repo/locations.js';

/** What PATCH /trips/:id/promise may change (absent: unchanged; null clears). */
export interface PromiseChange {
  promised_at?: string;
  deliver_after?: string | null;
  deliver_before?: string | null;
  pickup_after?: string | null;
  pickup_before?: string | null;
  units?: number;
  weight_kg?: number | null;
  volume_l?: number | null;
  service_min?: number | null;
}

/** States before the goods are on board: the pickup window, load and service time may still change. */
const BEFORE_PICKUP: TripStatus[] = ['pending', 'assigned', 'accepted'];

export interface NewTrip {
  pickup: LonLat;
  pickup_address: string;
  dropoff: LonLat;
  dropoff_address: string;
  merchant_id?: string;
  customer_user_id?: string;
  order_id?: string;
  express_request_id?: string;
  /** A recipient without an account: where the tracking link is sent (not stored on the trip). */
  recipient_phone?: string | null;
  /** His name, for the messages he gets ({recipient_name}); kept with the link. */
  recipient_name?: string | null;
  service_mode?: ServiceMode;
  source_channel?: SourceChannel;
  territory_id?: string;
  delivery_fee?: string;
  driver_earning?: string;
  notes?: string;
  /** The promise made at checkout (trusted callers); else computed at creation: now + travel + dispatch buffer. */
  promised_at?: Date | string | null;
  /** A scheduled window (promised_at = deliver_before); validated. */
  deliver_after?: Date | string | null;
  deliver_before?: Date | string | null;
  /** The pickup window and the load (validated: validateWindowsLoad). */
  pickup_after?: Date | string | null;
  pickup_before?: Date | string | null;
  units?: number | null;
  weight_kg?: number | null;
  volume_l?: number | null;
  service_min?: number | null;
}

/**
 * Options of a trusted caller (another module's service, never an HTTP body). `pricedBy: 'tariff'`: the caller
 * priced delivery_fee and driver_earning from the territory tariff (commerce orders and express requests), so a
 * merchant actor may create the trip with them; over HTTP (POST /trips) a merchant still may not set them.
 */
export interface CreateTripOptions {
  pricedBy?: 'tariff';
}

export function createTripCore(
  ctx: LogisticsContext,
  merchants: Pick<MerchantService, 'merchantOfUser' | 'getMerchant'>,
  promises: Promises,
) {
  /** The users who handle exceptions: administrators and dispatchers (their notification inbox). */
  /** Who is told of an exception: the organization's administrators and dispatchers, and the sub-administrators of its territories. */
  async function staffAudience(tx: Tx, organizationId: string, territoryIds: (string | null)[]): Promise<string[]> {
    const out = await ctx.deps.identity.userIdsByKind(tx, ['administrator', 'dispatch']);
    for (const id of new Set(territoryIds))
      if (id) out.push(...(await ctx.deps.subadmins.subadminUserIdsOfTerritory(tx, organizationId, id)));
    return [...new Set(out)];
  }

  type Audience = 'participants' | 'staff' | 'all';
  const emitter =
    (current: boolean) =>
    (
      tx: Tx,
      actor: Pick<Actor, 'userId'> | null,
      type: string,
      t: TripRow,
      extra: Record<string, unknown> = {},
      to: Audience = 'participants',
    ) =>
      record(tx, actor, type, t, extra, to, current);
  /**
   * Records a trip event in the caller's transaction, addressed to the trip's driver, merchant owner and customer;
   * `to: 'staff'` (exceptions) addresses the organization's administrators and dispatchers instead, `'all'` both. For
   * the staff an exception is an alert: their inbox keeps one unread alert per type (the participants get each one).
   */
  const emit = emitter(false);
  /**
   * `emit` of the row `move` just returned, unchanged since: the event carries it (EventInput.current), so its hooks
   * (an outbound webhook's resource) do not read the trip again.
   */
  const emitMoved = emitter(true);

  async function record(
    tx: Tx,
    actor: Pick<Actor, 'userId'> | null,
    type: string,
    t: TripRow,
    extra: Record<string, unknown>,
    to: Audience,
    current: boolean,
  ) {
    const participants = to === 'staff' ? [] : [t.driver_user_id, t.merchant_user_id, t.customer_user_id].filter((u): u is string => !!u);
    const staff =
      to === 'participants' ? [] : (await staffAudience(tx, t.organization_id, [t.territory_id])).filter((u) => !participants.includes(u));
    const audience = [...participants, ...staff];
    await ctx.events.record(tx, t.organization_id, {
      type,
      entityType: 'trip',
      entityId: t.id,
      territoryId: t.territory_id,
      actorUserId: actor?.userId ?? null,
      audienceUserIds: [
        ...new Set([
          ...audience,
          ...((extra.previous_driver_user_id as string | undefined) ? [extra.previous_driver_user_id as string] : []),
        ]),
      ],
      alertUserIds: staff,
      payload: { trip_id: t.id, status: t.status, order_id: t.order_id, driver_id: t.driver_id, merchant_id: t.merchant_id, ...extra },
      ...(current ? { current: t } : {}),
    });
  }

  /** A trip by id; `lock`: FOR NO KEY UPDATE (serializes its state changes without blocking foreign-key checks). */
  const load = (tx: Tx, id: string, lock = false): Promise<TripRow | null> => findTrip(tx, id, lock);

  /** Who may see a trip: staff (sub-administrators within their territories), its merchant owner, its customer, its driver. */
  function visibleTo(t: TripRow, actor: Actor): boolean {
    if (actor.kind === 'subadmin') return !!t.territory_id && scopeOf(actor)!.includes(t.territory_id);
    if (isStaff(actor)) return true;
    if (actor.kind === 'comercio') return t.merchant_user_id === actor.userId;
    if (actor.kind === 'delivery') return t.customer_user_id === actor.userId;
    if (actor.kind === 'repartidor') return t.driver_user_id === actor.userId;
    return false;
  }

  async function getScoped(tx: Tx, actor: Actor, id: string, lock = false): Promise<TripRow> {
    const t = await load(tx, id, lock);
    if (!t || !visibleTo(t, actor)) throw AppError.notFound('Trip');
    return t;
  }

  async function releaseDriver(tx: Tx, driverId: string | null) {
    if (driverId) await releaseCapacity(tx, driverId);
  }

  /**
   * Ids a trip links to are checked before anything is written: an order must be of the trip's merchant, `ready`
   * and without a trip (commerce creates that trip when the order becomes ready), and its customer is the trip's;
   * an express request must be of the trip's merchant, still `requested` and without a trip. Anything else is
   * 422 ORDER_NOT_FOUND / EXPRESS_REQUEST_NOT_FOUND (also for another merchant's, so nothing is revealed),
   * 409 ORDER_NOT_READY_FOR_TRIP / ORDER_HAS_TRIP / EXPRESS_REQUEST_HAS_TRIP, or 422 CUSTOMER_MISMATCH.
   */
  async function checkLinks(
    tx: Tx,
    input: NewTrip,
    merchantId: string | null,
  ): Promise<{ merchantId: string | null; customerUserId: string | null; cashToCollect: string }> {
    let customerUserId = input.customer_user_id ?? null;
    let cashToCollect = '0.00';
    const liveTrip = (column: 'order_id' | 'express_request_id', id: string) => liveTripExists(tx, column, id);
    if (input.order_id) {
      const o = await ctx.deps.orders.getOrderFacts(tx, input.order_id);
      if (!o || (merchantId && o.merchantId !== merchantId)) {
        throw AppError.unprocessable('Unknown order', 'ORDER_NOT_FOUND', [{ field: 'order_id', message: 'not an order of this merchant' }]);
      }
      if (o.tripId || (await liveTrip('order_id', o.orderId)))
        throw AppError.conflict('The order already has a trip', 'ORDER_HAS_TRIP', { current_status: o.status });
      if (o.status !== 'ready')
        throw AppError.conflict('Only a ready order gets a trip', 'ORDER_NOT_READY_FOR_TRIP', { current_status: o.status });
      if (customerUserId && customerUserId !== o.customerUserId) {
        throw AppError.unprocessable("customer_user_id must be the order's customer", 'CUSTOMER_MISMATCH', [
          { field: 'customer_user_id', message: "not the order's customer" },
        ]);
      }
      merchantId = o.merchantId;
      customerUserId = o.customerUserId;
      // Cash on delivery: the driver collects the order total at the door when the platform's driver collects it.
      if (o.paymentDestination === 'cash' && o.collectedBy === 'driver') cashToCollect = o.total;
    }
    if (input.express_request_id) {
      const e = await ctx.deps.orders.getExpressFacts(tx, input.express_request_id);
      if (!e || (merchantId && e.merchantId !== merchantId)) {
        throw AppError.unprocessable('Unknown express request', 'EXPRESS_REQUEST_NOT_FOUND', [
          { field: 'express_request_id', message: 'not an express request of this merchant' },
        ]);
      }
      if (e.tripId || e.status !== 'requested' || (await liveTrip('express_request_id', input.express_request_id))) {
        throw AppError.conflict('The express request already has a trip', 'EXPRESS_REQUEST_HAS_TRIP', { current_status: e.status });
      }
      merchantId = e.merchantId;
    }
    return { merchantId, customerUserId, cashToCollect };
  }

  async function create(tx: Tx, actor: Actor, input: NewTrip, opts: CreateTripOptions = {}): Promise<TripRow> {
    const pickup = parsePoint({ type: 'Point', coordinates: [input.pickup.lon, input.pickup.lat] }, 'pickup');
    const dropoff = parsePoint({ type: 'Point', coordinates: [input.dropoff.lon, input.dropoff.lat] }, 'dropoff');
    let merchantId = input.merchant_id ?? null;
    if (actor.kind === 'comercio') {
      const own = await merchants.merchantOfUser(tx, actor.userId);
      if (!own) throw new AppError(404, 'MERCHANT_PROFILE_NOT_FOUND', 'You have no merchant profile');
      if (merchantId && merchantId !== own.id) throw AppError.forbidden('A merchant may only create trips for himself');
      merchantId = own.id;
      if (opts.pricedBy !== 'tariff' && (input.delivery_fee !== undefined || input.driver_earning !== undefined)) {
        throw AppError.forbidden('delivery_fee and driver_earning come from the tariffs, not from the merchant', 'FIELD_NOT_ALLOWED');
      }
    }
    const links = await checkLinks(tx, input, merchantId);
    merchantId = links.merchantId;
    const customerUserId = links.customerUserId;
    if (merchantId) {
      const m = await merchants.getMerchant(tx, merchantId);
      if (!m) throw AppError.unprocessable('Unknown merchant', 'MERCHANT_NOT_FOUND', [{ field: 'merchant_id', message: 'unknown' }]);
      if (m.status !== 'approved') throw AppError.unprocessable('The merchant is not approved', 'MERCHANT_NOT_APPROVED');
    }
    if (customerUserId && !(await ctx.deps.identity.userExists(tx, customerUserId, 'delivery'))) {
      throw AppError.unprocessable('customer_user_id must be a customer (delivery) user', 'CUSTOMER_NOT_FOUND', [
        { field: 'customer_user_id', message: 'unknown' },
      ]);
    }
    let territoryId = input.territory_id ?? null;
    if (territoryId) await assertTerritories(tx, actor, [territoryId]);
    else territoryId = await territoryForPoint(tx, pickup);
    const scope = scopeOf(actor);
    if (scope && (!territoryId || !scope.includes(territoryId)))
      throw AppError.unprocessable('The pickup is outside your territories', 'OUTSIDE_TERRITORY');
    const settings = await settingsOf(ctx, tx, actor.organizationId);
    const fee = (v: string | undefined, dflt: string, field: string) => {
      if (v === undefined) return dflt;
      if (money(v).isNegative()) throw AppError.badRequest(`${field} must be >= 0`, [{ field, message: 'must be >= 0' }]);
      return formatMoney(v);
    };
    const now = new Date();
    // A promise given by a trusted caller (an order's, made at checkout) is kept as it is, window included; else the
    // window is validated and its end is the promise, or the promise is estimated now.
    const given = input.promised_at
      ? {
          after: input.deliver_after ? new Date(input.deliver_after) : null,
          before: input.deliver_before ? new Date(input.deliver_before) : null,
        }
      : null;
    const window = given ?? validateWindow(input.deliver_after ?? null, input.deliver_before ?? null, now);
    const extras = validateWindowsLoad(input, window.before, given ? null : now);
    const promised = input.promised_at
      ? new Date(input.promised_at)
      : (window.before ??
        (await promises.estimate(tx, actor.organizationId, { territoryId, pickup, dropoff, start: now, preparationMin: 0 })));
    const id = newId();
    await insertTrip(tx, {
      promisedAt: promised,
      deliverAfter: window.after,
      deliverBefore: window.before,
      ...extras,
      organizationId: actor.organizationId,
      id,
      serviceMode: input.service_mode ?? 'marketplace',
      sourceChannel: input.source_channel ?? (isStaff(actor) ? 'admin' : 'core'),
      territoryId,
      merchantId,
      customerUserId,
      orderId: input.order_id ?? null,
      expressRequestId: input.express_request_id ?? null,
      pickup: pointSql(pickup),
      pickupAddress: input.pickup_address,
      dropoff: pointSql(dropoff),
      dropoffAddress: input.dropoff_address,
      notes: input.notes ?? null,
      deliveryFee: fee(input.delivery_fee, settings.default_delivery_fee, 'delivery_fee'),
      driverEarning: fee(input.driver_earning, settings.driver_flat_fee, 'driver_earning'),
      cashToCollect: links.cashToCollect,
      currency: settings.currency,
      pickupPin: randomPin(4),
      deliveryPin: randomPin(4),
      createdByUserId: actor.userId,
    });
    const t = (await load(tx, id))!;
    await emit(tx, actor, 'trip.created', t, { service_mode: t.service_mode, source_channel: t.source_channel });
    return t;
  }

  /** Moves a locked trip to `to` along the trip machine, stamping the stage column (and `effect`); returns the fresh row. */
  async function move(
    tx: Tx,
    t: TripRow,
    to: TripStatus,
    opts: { reason?: string | null; effect?: TripStatusEffect; keepTrackLater?: boolean } = {},
  ): Promise<TripRow> {
    assertTransition('Trip', TRIP_TRANSITIONS, t.status, to);
    const after = await updateTripStatus(tx, t.id, to, opts.reason ?? null, opts.effect);
    // The end of a trip with a driver keeps its route with it (GET /trips/{id}/track), before retention drops the days;
    // `keepTrackLater`: the caller does it last, with releaseDriverAndKeepTrack.
    if (isTerminal(TRIP_TRANSITIONS, to) && !opts.keepTrackLater) await keepTrack(tx, after, false);
    return after;
  }

  /** Copies the ended trip's points into its kept track; `driverRowHeld`: this transaction already holds the driver's row. */
  async function keepTrack(tx: Tx, after: TripRow, driverRowHeld: boolean) {
    const since = after.accepted_at ?? after.assigned_at;
    if (!after.driver_id || !since) return;
    await keepTripTrack(
      tx,
      { organizationId: after.organization_id, tripId: after.id, driverId: after.driver_id, since, until: after.updated_at },
      driverRowHeld,
    );
  }

  /**
   * The last statements of a trip's end that takes the driver's row (the hot row: every GPS batch updates it), so the
   * row is held for them and the COMMIT only: his capacity back (the UPDATE takes the row, waiting for a GPS batch of
   * his being stored), then the trip's track, read after that batch committed. Deadlock-free with the GPS batch: the
   * batch takes the driver's row first and waits for nothing this transaction holds (it skips a trip another
   * transaction holds); nothing else takes the driver's row and then waits on the order, the ledger or the driver's
   * cash lock this transaction took before it.
   */
  async function releaseDriverAndKeepTrack(tx: Tx, after: TripRow) {
    if (!after.driver_id) return;
    await releaseCapacity(tx, after.driver_id);
    await keepTrack(tx, after, true);
  }

  /** Cancels a trip (no-op when it is already completed or cancelled); frees the driver's capacity. */
  async function cancel(tx: Tx, actor: Actor, tripId: string, reason: string): Promise<TripRow | null> {
    const t = await load(tx, tripId, true);
    if (!t) throw AppError.notFound('Trip');
    if (isTerminal(TRIP_TRANSITIONS, t.status)) return null;
    const after = await move(tx, t, 'cancelled', { reason });
    if (t.status !== 'pending') await releaseDriver(tx, t.driver_id);
    await emitMoved(tx, actor, 'trip.cancelled', after, { previous_status: t.status, reason });
    return after;
  }

  /** Back to pending without a driver (dispatch unassign or driver reject). */
  async function unassign(
    tx: Tx,
    actor: Actor,
    t: TripRow,
    reason: string | null,
    type: 'trip.rejected' | 'trip.unassigned' | 'trip.offer_expired',
    extra: Record<string, unknown> = {},
  ): Promise<TripRow> {
    const after = await move(tx, t, 'pending', { reason, effect: { unassign: true } });
    await releaseDriver(tx, t.driver_id);
    await emitMoved(tx, actor, type, after, {
      previous_status: t.status,
      previous_driver_id: t.driver_id,
      previous_driver_user_id: t.driver_user_id,
      reason,
      ...extra,
    });
    return after;
  }

  /**
   * POST /trips/:id/status: dispatch may unassign (→ pending) or cancel, with a reason, and may reset a
   * PIN lock (`reset_pin_lock`); any other move is 409 INVALID_TRANSITION.
   */
  async function dispatchStatus(
    tx: Tx,
    actor: Actor,
    tripId: string,
    body: { status?: TripStatus; reason: string; reset_pin_lock?: PinLock; failure_reason?: FailureReason },
  ) {
    const t = await getScoped(tx, actor, tripId, true);
    if ((body.status === 'cancelled' || body.status === 'pending') && actor.kind === 'subadmin') {
      const key = body.status === 'cancelled' ? 'trips_cancel' : 'trips_reassign';
      if (!actor.subadmin?.permissions[key]) throw AppError.forbidden(`Missing permission '${key}'`, 'PERMISSION_DENIED');
    }
    let after = t;
    if (body.status) {
      assertTransition('Trip', DISPATCH_TRANSITIONS, t.status, body.status);
      const failing = body.status === 'returning' || body.status === 'failed';
      if (failing && !body.failure_reason)
        throw AppError.badRequest('failure_reason is required for a failed delivery', [{ field: 'failure_reason', message: 'required' }]);
      const self = { emitMoved, move, releaseDriver };
      if (body.status === 'cancelled') after = (await cancel(tx, actor, t.id, body.reason))!;
      else if (body.status === 'pending') after = await unassign(tx, actor, t, body.reason, 'trip.unassigned');
      else if (body.status === 'returned') after = await recordReturn(self, tx, actor, t, 'dispatch');
      else
        after = await recordFailure(self, tx, actor, t, body.status as 'returning' | 'failed', {
          reason: body.failure_reason!,
          note: body.reason,
          by: 'dispatch',
          policy: 'dispatch',
        });
    }
    if (body.reset_pin_lock) {
      await resetPinAttempts(tx, t.id, body.reset_pin_lock);
      after = (await load(tx, t.id))!;
    }
    await recordAudit(tx, actor, {
      action: 'trip.status_changed',
      entityType: 'trip',
      entityId: t.id,
      before: {
        status: t.status,
        driver_id: t.driver_id,
        pickup_pin_attempts: t.pickup_pin_attempts,
        delivery_pin_attempts: t.delivery_pin_attempts,
      },
      after: {
        status: after.status,
        driver_id: after.driver_id,
        pickup_pin_attempts: after.pickup_pin_attempts,
        delivery_pin_attempts: after.delivery_pin_attempts,
        reason: body.reason,
        ...(body.failure_reason ? { failure_reason: body.failure_reason } : {}),
      },
    });
    return after;
  }

  /**
   * PATCH /trips/:id/coordinates: the pickup may change until it is picked up, the dropoff until the trip
   * ends (else 409 INVALID_STATE). A new pickup re-derives the territory unless one is fixed in the body.
   */
  async function updateCoordinates(
    tx: Tx,
    actor: Actor,
    tripId: string,
    body: { pickup_location?: unknown; pickup_address?: string; dropoff_location?: unknown; dropoff_address?: string },
  ) {
    const t = await getScoped(tx, actor, tripId, true);
    const pickupChange = body.pickup_location !== undefined || body.pickup_address !== undefined;
    if (pickupChange && !['pending', 'assigned', 'accepted'].includes(t.status)) {
      throw AppError.conflict(`The pickup cannot change once the trip is ${t.status}`, 'INVALID_STATE', { current_status: t.status });
    }
    if (isTerminal(TRIP_TRANSITIONS, t.status))
      throw AppError.conflict(`The trip is ${t.status}`, 'INVALID_STATE', { current_status: t.status });
    const pickup = body.pickup_location !== undefined ? parsePoint(body.pickup_location, 'pickup_location') : null;
    const dropoff = body.dropoff_location !== undefined ? parsePoint(body.dropoff_location, 'dropoff_location') : null;
    let territoryId = t.territory_id;
    if (pickup) {
      // The oldest active territory covering the new pickup; none covers it: no territory (not the old one).
      territoryId = await territoryForPoint(tx, pickup);
      const scope = scopeOf(actor);
      if (scope && (!territoryId || !scope.includes(territoryId)))
        throw AppError.unprocessable('The pickup is outside your territories', 'OUTSIDE_TERRITORY');
    }
    await updateTripCoordinates(tx, t.id, {
      pickup: pickup ? pointSql(pickup) : null,
      pickupAddress: body.pickup_address ?? null,
      dropoff: dropoff ? pointSql(dropoff) : null,
      dropoffAddress: body.dropoff_address ?? null,
      territoryId,
    });
    const after = (await load(tx, t.id))!;
    const view = (r: TripRow) => ({
      pickup: [r.pickup_lon, r.pickup_lat],
      pickup_address: r.pickup_address,
      dropoff: [r.dropoff_lon, r.dropoff_lat],
      dropoff_address: r.dropoff_address,
      territory_id: r.territory_id,
    });
    await recordAudit(tx, actor, {
      action: 'trip.coordinates_updated',
      entityType: 'trip',
      entityId: t.id,
      before: view(t),
      after: view(after),
    });
    await emit(tx, actor, 'trip.updated', after, { changed: Object.keys(body) });
    return after;
  }

  /**
   * PATCH /trips/:id/promise (staff): a new promise and/or delivery window, pickup window, load and service time. A
   * delivery window must end after it starts and in the future (422 WINDOW_INVALID, PROMISE_IN_PAST), and then
   * promised_at is its end; promised_at alone moves the promise (422 PROMISE_IN_PAST when in the past). The pickup
   * window and the load follow a new trip's rules (validateWindowsLoad: 422 WINDOW_INVALID, LOAD_INVALID with the
   * field) and change only before the pickup (after it, 409 INVALID_STATE: the goods are on board). A trip that ended
   * is 409 INVALID_STATE. Audited; trip.updated; a moved promise starts the delay alert over.
   */
  async function changePromise(tx: Tx, actor: Actor, tripId: string, body: PromiseChange) {
    const t = await getScoped(tx, actor, tripId, true);
    if (isTerminal(TRIP_TRANSITIONS, t.status))
      throw AppError.conflict(`The trip is ${t.status}`, 'INVALID_STATE', { current_status: t.status });
    const loadKeys = (['pickup_after', 'pickup_before', 'units', 'weight_kg', 'volume_l', 'service_min'] as const).filter(
      (k) => body[k] !== undefined,
    );
    if (loadKeys.length && !BEFORE_PICKUP.includes(t.status))
      throw AppError.conflict(
        `The trip is ${t.status}: its pickup window, load and service time are fixed once picked up`,
        'INVALID_STATE',
        { current_status: t.status },
      );
    const now = new Date();
    const windowChange = body.deliver_after !== undefined || body.deliver_before !== undefined;
    const window = windowChange
      ? validateWindow(
          body.deliver_after === undefined ? t.deliver_after : body.deliver_after,
          body.deliver_before === undefined ? t.deliver_before : body.deliver_before,
          now,
        )
      : { after: t.deliver_after, before: t.deliver_before };
    const keep = <K extends (typeof loadKeys)[number]>(k: K) => (body[k] === undefined ? t[k] : body[k]);
    // an unchanged pickup window that has passed stays as it is; a new one must be in the future
    const pickupChange = body.pickup_after !== undefined || body.pickup_before !== undefined;
    const extras = validateWindowsLoad(
      {
        pickup_after: keep('pickup_after'),
        pickup_before: keep('pickup_before'),
        units: keep('units'),
        weight_kg: keep('weight_kg'),
        volume_l: keep('volume_l'),
        service_min: keep('service_min'),
      },
      window.before,
      pickupChange ? now : null,
    );
    const promiseChange = windowChange || body.promised_at !== undefined;
    if (promiseChange) {
      let promised: Date;
      if (body.promised_at !== undefined) {
        promised = validatePromise(body.promised_at, now);
        if (windowChange && window.before && promised.getTime() !== window.before.getTime()) {
          throw AppError.unprocessable('With a window, the promise is its end (deliver_before)', 'WINDOW_INVALID', [
            { field: 'promised_at', message: 'must equal deliver_before' },
          ]);
        }
      } else if (window.before) promised = window.before;
      else if (t.promised_at) promised = new Date(t.promised_at);
      else
        throw AppError.unprocessable('Give promised_at or deliver_before', 'WINDOW_INVALID', [
          { field: 'promised_at', message: 'required' },
        ]);
      await setPromise(tx, t.id, { promisedAt: promised, deliverAfter: window.after, deliverBefore: window.before });
    }
    if (loadKeys.length) await setWindowsLoad(tx, t.id, extras);
    const after = (await load(tx, t.id))!;
    const view = (r: TripRow) => ({
      promised_at: r.promised_at,
      deliver_after: r.deliver_after,
      deliver_before: r.deliver_before,
      ...(loadKeys.length
        ? {
            pickup_after: r.pickup_after,
            pickup_before: r.pickup_before,
            units: r.units,
            weight_kg: r.weight_kg,
            volume_l: r.volume_l,
            service_min: r.service_min,
          }
        : {}),
    });
    await recordAudit(tx, actor, {
      action: loadKeys.length ? 'trip.windows_load_changed' : 'trip.promise_changed',
      entityType: 'trip',
      entityId: t.id,
      before: view(t),
      after: view(after),
    });
    await emit(tx, actor, 'trip.updated', after, { changed: Object.keys(body), ...view(after) });
    return after;
  }

  return {
    /** The organization's logistics settings, cached (see `settingsOf`). */
    settings: (tx: Tx, organizationId: string) => settingsOf(ctx, tx, organizationId),
    changePromise,
    emit,
    emitMoved,
    staffAudience,
    load,
    visibleTo,
    getScoped,
    releaseDriver,
    releaseDriverAndKeepTrack,
    create,
    move,
    cancel,
    unassign,
    dispatchStatus,
    updateCoordinates,
    tripOut,
  };
}

export type TripCore = ReturnType<typeof createTripCore>;

export interface FailDeliveryInput {
  reason: FailureReason;
  note?: string;
  evidence?: { type: string; storage_key: string };
}

/** The moves of the trip core a failed delivery and its return make. */
type CoreMoves = Pick<TripCore, 'emitMoved' | 'move' | 'releaseDriver'>;

/**
 * Records a failed delivery of a locked `in_transit` trip (driver or dispatch): the trip goes to `to` (returning or failed),
 * stamps failed_at and the reason, writes the delivery-stage proof (no PIN; the evidence, if any) and emits
 * trip.delivery_failed; a closed (failed) trip frees the driver's capacity.
 */
export async function recordFailure(
  core: CoreMoves,
  tx: Tx,
  actor: Actor,
  t: TripRow,
  to: 'returning' | 'failed',
  input: FailDeliveryInput & { by: 'driver' | 'dispatch'; policy: string },
) {
  const after = await core.move(tx, t, to, {
    reason: `delivery failed: ${input.reason}`,
    effect: { failure: { reason: input.reason, note: input.note ?? null } },
  });
  await insertProof(tx, {
    organizationId: t.organization_id,
    id: newId(),
    tripId: t.id,
    stage: 'delivery',
    pinVerified: false,
    evidenceType: input.evidence?.type ?? null,
    storageKey: input.evidence?.storage_key ?? null,
    driverId: t.driver_id,
    verifiedByUserId: actor.userId,
  });
  if (to === 'failed') await core.releaseDriver(tx, t.driver_id);
  await core.emitMoved(
    tx,
    actor,
    'trip.delivery_failed',
    after,
    {
      failure_reason: input.reason,
      note: input.note ?? null,
      policy: input.policy,
      recorded_by: input.by,
      evidence: input.evidence ? { type: input.evidence.type, storage_key: input.evidence.storage_key } : null,
      delivery_fee: after.delivery_fee,
      driver_earning: after.driver_earning,
    },
    'all',
  );
  return after;
}

/** returning → returned (driver with the pickup PIN, or dispatch once the merchant confirms): frees the driver's capacity, emits trip.returned. */
export async function recordReturn(core: CoreMoves, tx: Tx, actor: Actor, t: TripRow, by: 'driver' | 'dispatch') {
  const after = await core.move(tx, t, 'returned');
  await core.releaseDriver(tx, t.driver_id);
  await core.emitMoved(tx, actor, 'trip.returned', after, { failure_reason: t.failure_reason, recorded_by: by }, 'all');
  return after;
}
