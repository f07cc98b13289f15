import type { Actor } from '../../../platform/auth.js';
import type { LogisticsContext } from '../context.js';
import type { Tx } from '../../../platform/db/index.js';
import type { GeoPoint, LonLat } from '../../../platform/geo.js';
import type { TripDirectory, TripParticipants } from '../../storage/index.js';
import { createAssignment } from './assignment.js';
import { hook } from '../../../platform/hooks.js';
import { createEta, type EtaUpdate } from './eta.js';
import { createPromises, validateWindow } from './promises.js';
import { createExceptions } from './exceptions.js';
import { createRecipientLinks, type RecipientContact } from './recipient-links.js';
import { ON_TIME_DIMENSIONS, onTimeRows, type OnTimeDimension } from '../repo/on-time.js';

export interface OnTimeLine {
  key: string | null;
  name: string | null;
  deliveries: number;
  on_time: number;
  on_time_pct: number;
  mean_late_min: number;
  p90_late_min: number;
}
export type OnTimeReport = Record<OnTimeDimension, OnTimeLine[]>;
import { createDriverService } from './drivers.js';
import { createLocationIngest } from './locations.js';
import { createMerchantService } from './merchants.js';
import { type DriverRow, findDriver, setUnavailable } from '../repo/drivers.js';
import type { MerchantRow } from '../repo/merchants.js';
import { type TripRow, completedTripEarnings, type TripEarning } from '../repo/trips.js';
import { scopeOf } from '../../../platform/scope.js';
import {
  driversForPlanning,
  lockForPlanCommit,
  tripsForPlanning,
  type PlanningDriver,
  type PlanningTrip,
  type PlanningTripFilter,
} from './planning.js';
import { createProofs } from './proofs.js';
import { createHubService, type PlanningHub } from './hubs.js';
import { createLogisticsRequests } from './requests.js';
import { createFailedDelivery } from './failed-delivery.js';
import { getTerritory, territoryForPoint, type LogisticsSettings, type TerritoryRow } from './territories.js';
import { settingsOf } from './settings.js';
import { releaseOpenTrips } from './lifecycle.js';
import { driversAtCashLimit } from './cash-limit.js';
import { createTripCore, type CreateTripOptions, type NewTrip } from './trips.js';
import {
  driverUserIdsOfTerritory,
  listTrips,
  liveMap,
  tripReportRows,
  tripStatusCounts,
  type Period,
  type TripListQuery,
  type TripReportRow,
} from './trip-queries.js';

export type { TripEarning } from '../repo/trips.js';

/** What other modules (commerce, money, storage, realtime, sub-administration, optimizer) call; every function takes the caller's transaction. */
export interface LogisticsApi {
  territoryForPoint(tx: Tx, p: LonLat): Promise<string | null>;
  /**
   * The delivery promise of an order placed now: a scheduled window's end (validated: 422 WINDOW_INVALID, PROMISE_IN_PAST),
   * else now + the branch's preparation + travel pickup → dropoff at the learned speed + the dispatch buffer.
   */
  promiseFor(
    tx: Tx,
    organizationId: string,
    q: {
      territoryId: string | null;
      pickup: LonLat;
      dropoff: LonLat;
      preparationMin: number;
      deliverAfter?: Date | string | null;
      deliverBefore?: Date | string | null;
    },
  ): Promise<{ promised_at: Date; deliver_after: Date | null; deliver_before: Date | null }>;
  getTerritory(tx: Tx, id: string): Promise<TerritoryRow | null>;
  getMerchant(tx: Tx, merchantId: string): Promise<MerchantRow | null>;
  /** The user who owns a merchant of the organization (null: none visible); an owner never changes, so it is cached. */
  merchantOwner(tx: Tx, organizationId: string, merchantId: string): Promise<string | null>;
  merchantOfUser(tx: Tx, userId: string): Promise<MerchantRow | null>;
  setMerchantCommission(tx: Tx, actor: Actor, merchantId: string, percent: string): Promise<MerchantRow>;
  driverOfUser(tx: Tx, userId: string): Promise<DriverRow | null>;
  getDriver(tx: Tx, driverId: string): Promise<DriverRow | null>;
  /** A driver the actor may see (sub-administrators: drivers linked to their territories), or null. */
  getDriverInScope(tx: Tx, actor: Actor, driverId: string): Promise<DriverRow | null>;
  /** `opts.pricedBy: 'tariff'` (trusted callers only): delivery_fee and driver_earning come from the caller's tariff pricing, also for a merchant actor. */
  createTrip(tx: Tx, actor: Actor, input: NewTrip, opts?: CreateTripOptions): Promise<TripRow>;
  /** The live recipient tracking link of a trip (absolute when PUBLIC_BASE_URL is set), or null. */
  recipientLinkUrl(tx: Tx, tripId: string): Promise<string | null>;
  /** The phone, name and tracking address of a trip's recipient without an account (its live link), or null. */
  recipientContact(tx: Tx, tripId: string): Promise<RecipientContact | null>;
  /** The organization, trip and phone behind a valid recipient link token (own transaction), or null. */
  resolveRecipientToken(token: string): Promise<{ organizationId: string; tripId: string; phone: string | null } | null>;
  /** No-op when the trip is already completed or cancelled. */
  cancelTrip(tx: Tx, actor: Actor, tripId: string, reason: string): Promise<void>;
  /** PATCH /trips/:id/coordinates's rule for a caller who may see the trip (audited, trip.updated). */
  updateTripCoordinates(
    tx: Tx,
    actor: Actor,
    tripId: string,
    body: { dropoff_location?: GeoPoint; dropoff_address?: string },
  ): Promise<TripRow>;
  assignDriver(
    tx: Tx,
    actor: Actor,
    tripId: string,
    driverId: string,
    opts?: { stopOrder?: number; dropoffOrder?: number; planId?: string },
  ): Promise<TripRow>;
  getTrip(tx: Tx, id: string): Promise<TripRow | null>;
  /**
   * The earnings of a driver's completed trips (and failed deliveries, closed or returned; completed_at is then when they ended) with completed_at <= upTo, oldest first (what money settles;
   * money leaves out the trips it has already settled).
   */
  completedTripEarnings(tx: Tx, driverId: string, upTo: Date): Promise<TripEarning[]>;
  settings(tx: Tx, organizationId: string): Promise<LogisticsSettings>;
  /** GeoJSON of approved drivers' last positions and active trips the actor may see (sub-administrators: their territories). */
  liveMap(tx: Tx, actor: Actor): ReturnType<typeof liveMap>;
  /** GET /trips's list for the actor (sub-administrators: their territories). */
  listTrips(tx: Tx, actor: Actor, q: TripListQuery): ReturnType<typeof listTrips>;
  /** Trips per status in the territories (null = organization), created in [from, to). */
  tripStatusCounts(tx: Tx, territoryIds: string[] | null, period?: Period): Promise<Record<string, number>>;
  /** One row per trip (with territory, merchant and driver names) for report exports. */
  tripReportRows(tx: Tx, territoryIds: string[] | null, period?: Period, limit?: number): Promise<TripReportRow[]>;
  /** On-time delivery per territory, merchant, driver and hour of the promise, completed in [from, to), in the actor's scope. */
  onTimeReport(tx: Tx, actor: Actor, period: Period): Promise<OnTimeReport>;
  /** Users of the drivers linked to a territory through driver_territory. */
  driverUserIdsOfTerritory(tx: Tx, territoryId: string): Promise<string[]>;
  /** Batch planning: trips by ids (any status) or the pending ones of a territory / creation window, within the actor's scope. */
  tripsForPlanning(tx: Tx, actor: Actor, filter: PlanningTripFilter): Promise<PlanningTrip[]>;
  /** Batch planning: approved, available drivers with a position, within the actor's scope. */
  driversForPlanning(tx: Tx, actor: Actor, filter: { driverIds?: string[]; limit: number }): Promise<PlanningDriver[]>;
  /** A user was deactivated: his driver profile (if any) goes unavailable and gives back the trips he has not picked up. */
  userDeactivated(tx: Tx, actor: Actor, userId: string): Promise<void>;
  /**
   * Batch planning: a hub the actor may see (sub-administrators: of their territories), with its opening and closing
   * on the organization's local day of `at`; null when unknown or out of scope.
   */
  hubForPlanning(tx: Tx, actor: Actor, hubId: string, at: Date): Promise<PlanningHub | null>;
  /** Batch commit: locks trips then drivers (id order) FOR NO KEY UPDATE and returns their current state. */
  lockForPlanCommit(tx: Tx, tripIds: string[], driverIds: string[]): Promise<{ trips: PlanningTrip[]; drivers: PlanningDriver[] }>;
}

export function createLogisticsService(ctx: LogisticsContext) {
  const drivers = createDriverService(ctx);
  const merchants = createMerchantService(ctx);
  const promises = createPromises(ctx);
  const core = createTripCore(ctx, merchants, promises);
  /** Fired in the transaction that recomputed a trip's ETA. */
  const on = { etaUpdated: hook<[tx: Tx, update: EtaUpdate]>() };
  const eta = createEta(core, promises, on.etaUpdated);
  const exceptions = createExceptions(ctx, core);
  const assignment = createAssignment(ctx, core, exceptions);
  const proofs = createProofs(ctx, core, assignment, exceptions);
  const failedDelivery = createFailedDelivery(ctx, core, assignment, exceptions);
  const locations = createLocationIngest(core, eta);
  const recipientLinks = createRecipientLinks(ctx, core);
  const hubs = createHubService(ctx);

  const api: LogisticsApi = {
    territoryForPoint,
    async promiseFor(tx, organizationId, q) {
      const now = new Date();
      const window = validateWindow(q.deliverAfter ?? null, q.deliverBefore ?? null, now);
      const promised =
        window.before ??
        (await promises.estimate(tx, organizationId, {
          territoryId: q.territoryId,
          pickup: q.pickup,
          dropoff: q.dropoff,
          start: now,
          preparationMin: q.preparationMin,
        }));
      return { promised_at: promised, deliver_after: window.after, deliver_before: window.before };
    },
    getTerritory,
    getMerchant: merchants.getMerchant,
    merchantOwner: merchants.merchantOwner,
    merchantOfUser: merchants.merchantOfUser,
    setMerchantCommission: merchants.setMerchantCommission,
    driverOfUser: drivers.driverOfUser,
    getDriver: drivers.load,
    getDriverInScope: (tx, actor, driverId) => findDriver(tx, driverId, scopeOf(actor)),
    /** A trip whose recipient has no account gets a recipient tracking link in the same transaction. */
    async createTrip(tx, actor, input, opts) {
      const t = await core.create(tx, actor, input, opts);
      if (!t.customer_user_id) await recipientLinks.issue(tx, actor, t, input.recipient_phone ?? null, input.recipient_name ?? null);
      return t;
    },
    recipientContact: (tx, tripId) => recipientLinks.contact(tx, tripId),
    resolveRecipientToken: (token) => recipientLinks.resolve(token),
    async recipientLinkUrl(tx, tripId) {
      const t = await core.load(tx, tripId);
      const link = t ? await recipientLinks.current(tx, tripId) : null;
      return t && link ? recipientLinks.linkOut(link, t).url : null;
    },
    async cancelTrip(tx, actor, tripId, reason) {
      await core.cancel(tx, actor, tripId, reason);
    },
    updateTripCoordinates: (tx, actor, tripId, body) => core.updateCoordinates(tx, actor, tripId, body),
    assignDriver: (tx, actor, tripId, driverId, opts) => assignment.assignDriver(tx, actor, tripId, driverId, opts),
    getTrip: (tx, id) => core.load(tx, id),
    completedTripEarnings,
    settings: (tx, organizationId) => settingsOf(ctx, tx, organizationId),
    tripsForPlanning,
    /** The drivers at their cash limit are marked (at_cash_limit): plans give them no cash trip. */
    async driversForPlanning(tx, actor, f) {
      const rows = await driversForPlanning(tx, actor, f);
      const atLimit = await driversAtCashLimit(ctx, tx, actor.organizationId, rows);
      return rows.map((d) => ({ ...d, at_cash_limit: atLimit.has(d.id) }));
    },
    lockForPlanCommit,
    hubForPlanning: hubs.forPlanning,
    async userDeactivated(tx, actor, userId) {
      const d = await drivers.driverOfUser(tx, userId);
      if (!d) return;
      await setUnavailable(tx, d.id);
      await releaseOpenTrips(tx, actor, { core }, d.id, 'driver account deactivated');
    },
    liveMap,
    listTrips,
    tripStatusCounts,
    tripReportRows,
    driverUserIdsOfTerritory,
    async onTimeReport(tx, actor, period) {
      const timeZone = (await ctx.deps.organizations.settingsIn(tx)).timezone;
      const q = { scope: scopeOf(actor), from: period.from ?? null, to: period.to ?? null, timeZone };
      const out = {} as OnTimeReport;
      for (const dim of ON_TIME_DIMENSIONS) {
        out[dim] = (await onTimeRows(tx, dim, q)).map((r) => ({
          key: r.key,
          name: r.name,
          deliveries: r.deliveries,
          on_time: r.on_time,
          on_time_pct: r.deliveries ? Math.round((1000 * r.on_time) / r.deliveries) / 10 : 0,
          mean_late_min: Math.round(r.mean_late_s / 6) / 10,
          p90_late_min: Math.round(r.p90_late_s / 6) / 10,
        }));
      }
      return out;
    },
  };

  const directory: TripDirectory = {
    async tripParticipants(tx, tripId): Promise<TripParticipants | null> {
      const t = await core.load(tx, tripId);
      return t
        ? {
            id: t.id,
            status: t.status,
            territory_id: t.territory_id,
            driver_id: t.driver_id,
            driver_user_id: t.driver_user_id,
            merchant_id: t.merchant_id,
            merchant_user_id: t.merchant_user_id,
            customer_user_id: t.customer_user_id,
          }
        : null;
    },
  };

  /** The routes' requests, each in its own tenant transaction. */
  const requests = createLogisticsRequests(ctx, {
    drivers,
    core,
    assignment,
    proofs,
    failedDelivery,
    locations,
    recipientLinks,
    createTrip: api.createTrip,
  });

  return {
    ...api,
    api,
    on,
    promises,
    eta,
    exceptions,
    directory,
    drivers,
    merchants,
    core,
    assignment,
    proofs,
    failedDelivery,
    locations,
    recipientLinks,
    hubs,
    requests,
  };
}

export type LogisticsService = ReturnType<typeof createLogisticsService>;
