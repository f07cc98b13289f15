import type { Actor } from '../../../platform/auth.js';
import type { AppContext } from '../../../platform/context.js';
import type { Tx } from '../../../platform/db/index.js';
import { AppError } from '../../../platform/errors.js';
import { once } from '../../../platform/idempotency.js';
import type { Assignment, CashLimitOverride } from './assignment.js';
import type { DriverService, NewDriver } from './drivers.js';
import type { FailDeliveryInput, FailedDelivery } from './failed-delivery.js';
import { releaseOpenTrips } from './lifecycle.js';
import type { GpsPointIn, LocationIngest } from './locations.js';
import { driverOut, tripOut } from './mappers.js';
import { type ApprovalAction } from './transitions.js';
import { type ApprovalStatus, type TripStatus } from '../schemas.js';
import { type DriverRow } from '../repo/drivers.js';
import { type TripRow } from '../repo/trips.js';
import { proofOut, type createProofs, type Stage, type VerifyInput } from './proofs.js';
import type { RecipientLinks } from './recipient-links.js';
import { settingsOf } from './settings.js';
import { validatePromise, validateWindow, validateWindowsLoad } from './promises.js';
import type { CreateTripOptions, NewTrip, TripCore } from './trips.js';
import { dispatchBoard, earnings, listTrips, liveMap, track, tracking, type TripListQuery } from './trip-queries.js';

/** The parts of the logistics service the requests use. */
export interface RequestParts {
  drivers: DriverService;
  core: TripCore;
  assignment: Assignment;
  proofs: ReturnType<typeof createProofs>;
  failedDelivery: FailedDelivery;
  locations: LocationIngest;
  recipientLinks: RecipientLinks;
  createTrip(tx: Tx, actor: Actor, input: NewTrip, opts?: CreateTripOptions): Promise<TripRow>;
}

type PageQuery = { limit?: number; cursor?: string };
type Location = Parameters<LocationIngest['single']>[3];
/** A request that stores GPS points and nothing else: its transaction commits asynchronously, with the ingest's last statement (see LocationIngest). */
const GPS_ONLY = { gpsOnly: true, commits: true };

/**
 * What the logistics routes ask for, one method per request: each opens the caller's tenant transaction
 * (`ctx.db.withTenant(actor, ...)`) and calls the rules in it, so routes only parse, authorize and map. The pure
 * reads (lists, one trip, nearby drivers, the live map) use `ctx.db.readTenant`: no BEGIN/COMMIT, one round
 * trip per statement, and a write there fails.
 */
export function createLogisticsRequests(ctx: AppContext, svc: RequestParts) {
  const { drivers, core } = svc;
  /** The caller's own driver profile (404 DRIVER_PROFILE_NOT_FOUND without one) and the work done as him, in one transaction. */
  const asDriver = <T>(actor: Actor, fn: (tx: Tx, d: DriverRow) => Promise<T>) =>
    ctx.db.withTenant(actor, async (tx) => fn(tx, await drivers.self(tx, actor)));

  const trips = {
    list: (actor: Actor, q: TripListQuery) => ctx.db.readTenant(actor, (tx) => listTrips(tx, actor, q)),
    get: (actor: Actor, id: string) => ctx.db.readTenant(actor, (tx) => core.getScoped(tx, actor, id)),
    /** POST /trips: with an Idempotency-Key, a repeat returns the first response (`once`, in the same transaction). */
    create: (actor: Actor, input: NewTrip, idempotency: { key: string; hash: string } | null) =>
      ctx.db.withTenant(actor, (tx) => {
        // A promise given over HTTP must be in the future (a trusted caller's may have passed: a late order).
        if (input.promised_at) validatePromise(input.promised_at, new Date());
        const window = validateWindow(input.deliver_after ?? null, input.deliver_before ?? null, new Date());
        validateWindowsLoad(input, window.before, new Date());
        const work = async () => ({ status: 201, body: tripOut(await svc.createTrip(tx, actor, input), actor) });
        return idempotency
          ? once(tx, { organizationId: actor.organizationId, scope: `trips.create:${actor.userId}`, ...idempotency }, work)
          : work();
      }),
    assign: (actor: Actor, id: string, driverId: string, cashLimitOverride?: CashLimitOverride) =>
      ctx.db.withTenant(actor, (tx) => svc.assignment.assignDriver(tx, actor, id, driverId, { cashLimitOverride })),
    dispatchStatus: (actor: Actor, id: string, body: Parameters<TripCore['dispatchStatus']>[3]) =>
      ctx.db.withTenant(actor, (tx) => core.dispatchStatus(tx, actor, id, body)),
    changePromise: (actor: Actor, id: string, body: Parameters<TripCore['changePromise']>[3]) =>
      ctx.db.withTenant(actor, (tx) => core.changePromise(tx, actor, id, body)),
    updateCoordinates: (actor: Actor, id: string, body: Parameters<TripCore['updateCoordinates']>[3]) =>
      ctx.db.withTenant(actor, (tx) => core.updateCoordinates(tx, actor, id, body)),
    candidates: (actor: Actor, id: string, q: { radius_m?: number; limit?: number }) =>
      ctx.db.withTenant(actor, async (tx) => {
        const t = await core.getScoped(tx, actor, id);
        const radius = q.radius_m ?? (await settingsOf(ctx, tx, actor.organizationId)).auto_assign_radius_m;
        return {
          trip_id: t.id,
          radius_m: radius,
          data: await svc.assignment.candidates(tx, actor, t, { radius_m: radius, limit: q.limit }),
        };
      }),
    autoAssign: (actor: Actor, id: string) => ctx.db.withTenant(actor, (tx) => svc.assignment.autoAssign(tx, actor, id)),
    tracking: (actor: Actor, id: string) => ctx.db.readTenant(actor, async (tx) => tracking(tx, await core.getScoped(tx, actor, id))),
    track: (actor: Actor, id: string, q: { after?: string; limit?: number }) =>
      ctx.db.readTenant(actor, async (tx) => track(tx, await core.getScoped(tx, actor, id), q)),
    proofs: (actor: Actor, id: string) =>
      ctx.db.withTenant(actor, async (tx) => {
        const t = await core.getScoped(tx, actor, id);
        return { data: (await svc.proofs.list(tx, t.id)).map(proofOut) };
      }),
    /** A wrong PIN is committed (it counts) and returned as the outcome's error, which the route throws. */
    verify: (actor: Actor, id: string, stage: Stage, input: VerifyInput) =>
      asDriver(actor, (tx, d) => svc.proofs.verify(tx, actor, d, id, stage, input)),
    recipientLink: (actor: Actor, id: string) =>
      ctx.db.withTenant(actor, async (tx) => {
        const t = await core.getScoped(tx, actor, id);
        const link = await svc.recipientLinks.current(tx, t.id);
        if (!link) throw AppError.notFound('Recipient link');
        return svc.recipientLinks.linkOut(link, t);
      }),
    /** The live link (kept, or created when there is none), or a new one when `reissue`; `created` tells which. */
    issueRecipientLink: (actor: Actor, id: string, recipientPhone: string | null, reissue: boolean) =>
      ctx.db.withTenant(actor, async (tx) => {
        const t = await core.getScoped(tx, actor, id, true);
        if (t.customer_user_id)
          throw AppError.unprocessable('The recipient has an account and follows the trip in the app', 'RECIPIENT_HAS_ACCOUNT');
        if (t.completed_at || t.cancelled_at)
          throw AppError.conflict(`The trip is ${t.status}`, 'INVALID_STATE', { current_status: t.status });
        const { link, created } = await svc.recipientLinks.ensure(tx, actor, t, recipientPhone, reissue);
        return { created, link: svc.recipientLinks.linkOut(link, t) };
      }),
    revokeRecipientLink: (actor: Actor, id: string) =>
      ctx.db.withTenant(actor, async (tx) => {
        const t = await core.getScoped(tx, actor, id, true);
        if (!(await svc.recipientLinks.revoke(tx, actor, t))) throw AppError.notFound('Recipient link');
      }),
  };

  const staff = {
    listDrivers: (actor: Actor, q: PageQuery & { status?: ApprovalStatus; available?: boolean; territory_id?: string }) =>
      ctx.db.readTenant(actor, (tx) => drivers.list(tx, actor, q)),
    createDriver: (actor: Actor, input: NewDriver) => ctx.db.withTenant(actor, (tx) => drivers.create(tx, actor, input)),
    nearbyDrivers: (actor: Actor, q: Parameters<DriverService['nearby']>[2]) =>
      ctx.db.readTenant(actor, (tx) => drivers.nearby(tx, actor, q)),
    /** A suspended driver also gives back the trips he has not picked up. */
    decideDriver: (actor: Actor, id: string, action: ApprovalAction, reason?: string) =>
      ctx.db.withTenant(actor, async (tx) => {
        const d = await drivers.decide(tx, actor, id, action, reason);
        if (action !== 'suspend') return d;
        await releaseOpenTrips(tx, actor, { core }, d.id, `driver suspended${reason ? `: ${reason}` : ''}`);
        return (await drivers.load(tx, d.id))!;
      }),
    /** Unlock first when asked, then lock (the driver goes unavailable) or set availability. */
    setDriverAvailability: (actor: Actor, id: string, body: { available: boolean; locked?: boolean; reason?: string }) =>
      ctx.db.withTenant(actor, async (tx) => {
        let d = await drivers.getScoped(tx, actor, id);
        if (body.locked === false && d.availability_locked) d = await drivers.setAvailabilityLock(tx, actor, d, false);
        if (body.locked === true) return drivers.setAvailabilityLock(tx, actor, d, true, body.reason);
        return drivers.setAvailability(tx, actor, d, body.available);
      }),
    updateDriver: (actor: Actor, id: string, input: Parameters<DriverService['update']>[3]) =>
      ctx.db.withTenant(actor, (tx) => drivers.update(tx, actor, id, input)),
    recordDriverLocation: (actor: Actor, id: string, body: Location) =>
      ctx.db.withTenant(actor, async (tx) => svc.locations.single(tx, actor, await drivers.getScoped(tx, actor, id), body, GPS_ONLY)),
    dispatchBoard: (actor: Actor) =>
      ctx.db.withTenant(actor, async (tx) => dispatchBoard(tx, actor, await settingsOf(ctx, tx, actor.organizationId))),
    liveMap: (actor: Actor) => ctx.db.readTenant(actor, (tx) => liveMap(tx, actor)),
  };

  const driverApp = {
    me: (actor: Actor) =>
      asDriver(actor, async (tx, d) => {
        const s = await settingsOf(ctx, tx, actor.organizationId);
        return { ...driverOut(d), geofence_radius_m: s.geofence_radius_m, acceptance_timeout_s: s.acceptance_timeout_s };
      }),
    trips: (actor: Actor, q: PageQuery & { status?: TripStatus }) =>
      asDriver(actor, (tx, d) => listTrips(tx, actor, { ...q, driver_id: d.id })),
    setAvailability: (actor: Actor, available: boolean) => asDriver(actor, (tx, d) => drivers.setAvailability(tx, actor, d, available)),
    // The driver is found by the batch's first statement (404 DRIVER_PROFILE_NOT_FOUND without a profile).
    location: (actor: Actor, body: Location) =>
      ctx.db.withTenant(actor, (tx) => svc.locations.single(tx, actor, { userId: actor.userId }, body, GPS_ONLY)),
    locations: (actor: Actor, points: GpsPointIn[]) =>
      ctx.db.withTenant(actor, (tx) => svc.locations.ingest(tx, actor, { userId: actor.userId }, points, GPS_ONLY)),
    accept: (actor: Actor, id: string) => asDriver(actor, (tx, d) => svc.assignment.accept(tx, actor, d, id)),
    reject: (actor: Actor, id: string, reason?: string) => asDriver(actor, (tx, d) => svc.assignment.reject(tx, actor, d, id, reason)),
    startDelivery: (actor: Actor, id: string) => asDriver(actor, (tx, d) => svc.assignment.startDelivery(tx, actor, d, id)),
    failDelivery: (actor: Actor, id: string, input: FailDeliveryInput) =>
      asDriver(actor, (tx, d) => svc.failedDelivery.fail(tx, actor, d, id, input)),
    /** A wrong PIN is committed (it counts) and returned as the outcome's error, which the route throws. */
    confirmReturn: (actor: Actor, id: string, pin: string) =>
      asDriver(actor, (tx, d) => svc.failedDelivery.confirmReturn(tx, actor, d, id, pin)),
    earnings: (actor: Actor, q: PageQuery & { from?: string; to?: string }) =>
      asDriver(actor, async (tx, d) => earnings(tx, d, await settingsOf(ctx, tx, d.organization_id), q)),
  };

  return { trips, staff, driverApp };
}

export type LogisticsRequests = ReturnType<typeof createLogisticsRequests>;
