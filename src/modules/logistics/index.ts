import type { Actor } from '../../platform/auth.js';
import { withDeps, type Api, type AppContext, type DemoSeed } from '../../platform/context.js';
import type { LogisticsContext } from './context.js';
import { createLogisticsService, type LogisticsService } from './service/logistics.js';
import { createTerritory } from './service/territories.js';
import { territoryRoutes } from './routes/territories.js';
import { merchantRoutes } from './routes/merchants.js';
import { driverRoutes } from './routes/drivers.js';
import { createGpsDevices } from './service/gps-devices.js';
import { gpsDeviceRoutes } from './routes/gps-devices.js';
import { tripRoutes } from './routes/trips.js';
import { recipientLinkRoutes } from './routes/recipient-links.js';
import { driverAppRoutes } from './routes/driver-app.js';
import { exceptionRoutes } from './routes/exceptions.js';
import { hubRoutes } from './routes/hubs.js';
import { scopeOf } from '../../platform/scope.js';
import { logisticsCounts } from './repo/dashboard.js';
import { registerLogisticsSync } from './service/sync.js';
import { registerDriverTripSync } from './service/driver-sync.js';
import { locationHistoryWorker, offerTimeoutWorker } from './worker.js';

export type { LogisticsContext, UsersPort, OrganizationPort, OrderFactsPort, CashInHandPort, TerritorySubadminsPort } from './context.js';
export type { LogisticsApi } from './service/logistics.js';
export type { EtaUpdate } from './service/eta.js';
export type { OnTimeReport, OnTimeLine } from './service/logistics.js';
export type { TripRow } from './repo/trips.js';
export type { DriverRow } from './repo/drivers.js';
export type { MerchantRow } from './repo/merchants.js';
export type { TripStatus } from './schemas.js';
export type { TripReportRow, Period, TripListQuery } from './service/trip-queries.js';
export type { PlanningTrip, PlanningDriver, PlanningTripFilter } from './service/planning.js';
export type { PlanningHub } from './service/hubs.js';
export {
  ApprovalStatusSchema,
  MerchantOut,
  ServiceModeSchema,
  StopKindSchema,
  TripOutSchema,
  TripStatusSchema,
  TripWindowsLoadIn,
} from './schemas.js';
/** The rules of a trip's windows and load, for the orders and express requests whose trips carry them. */
export { validateWindow, validateWindowsLoad, type WindowsLoadInput } from './service/promises.js';
export type { ApprovalStatus, ServiceMode, SourceChannel } from './schemas.js';
export { merchantOut, tripOut } from './service/mappers.js';

/** A polygon over central La Paz, Bolivia (the demo territory). */
export const DEMO_TERRITORY = {
  type: 'Polygon' as const,
  coordinates: [
    [
      [-68.17, -16.54],
      [-68.09, -16.54],
      [-68.09, -16.47],
      [-68.17, -16.47],
      [-68.17, -16.54],
    ] as [number, number][],
  ],
};

export function createLogisticsModule(base: AppContext, deps: LogisticsContext['deps']) {
  const ctx: LogisticsContext = withDeps(base, deps);
  const service = createLogisticsService(ctx);
  registerLogisticsSync(ctx);
  registerDriverTripSync(ctx, service);
  ctx.workers.push(offerTimeoutWorker(ctx, service), service.exceptions.worker, locationHistoryWorker(ctx));
  ctx.dashboard.set('logistics', (tx, actor) => logisticsCounts(tx, scopeOf(actor)));
  return {
    name: 'logistics',
    /** What other modules call. */
    api: service.api,
    /**
     * Hooks other modules subscribe to in the composition root (each runs in the transaction that fired it):
     * `etaUpdated(tx, { tripId, organizationId, status, etaPickupAt, etaDropoffAt, promisedAt })`,
     * `recipientLinkIssued(tx, { organizationId, tripId, reissued })`.
     */
    on: { ...service.on, recipientLinkIssued: service.recipientLinks.on.recipientLinkIssued },
    /** Trip participants, for storage and realtime. */
    directory: service.directory,
    /** The whole service (tests drive its timed jobs directly). */
    service,
    routes: (app: Api) => logisticsRoutes(app, ctx, service),
    seed: (demo: DemoSeed) => seedLogistics(ctx, service, demo),
  };
}

function logisticsRoutes(app: Api, ctx: LogisticsContext, svc: LogisticsService) {
  territoryRoutes(app, ctx);
  merchantRoutes(app, ctx, svc.merchants);
  driverRoutes(app, ctx, svc);
  tripRoutes(app, ctx, svc);
  recipientLinkRoutes(app, ctx, svc);
  driverAppRoutes(app, ctx, svc);
  exceptionRoutes(app, svc);
  gpsDeviceRoutes(app, createGpsDevices(ctx, svc));
  hubRoutes(app, svc.hubs.requests);
}

/** Demo: a territory over central La Paz, the demo driver approved and available there, the demo merchant approved. */
async function seedLogistics(ctx: AppContext, svc: LogisticsService, demo: DemoSeed) {
  const actor: Actor = {
    userId: demo.users.admin,
    organizationId: demo.organizationId,
    role: 'administrator',
    kind: 'administrator',
    sessionId: 'seed',
    requestId: 'seed',
    subadmin: null,
  };
  await ctx.db.withTenant({ organizationId: demo.organizationId, userId: demo.users.admin }, async (tx) => {
    const territory = await createTerritory(ctx, tx, actor, { name: 'La Paz Centro', geometry: DEMO_TERRITORY });
    const driver = await svc.drivers.create(tx, actor, {
      user_id: demo.users.driver,
      vehicle_type: 'motorcycle',
      territory_ids: [territory.id],
    });
    await svc.drivers.decide(tx, actor, driver.id, 'approve', 'demo');
    await svc.drivers.setAvailability(tx, actor, (await svc.drivers.load(tx, driver.id))!, true);
    await svc.locations.single(
      tx,
      actor,
      { id: driver.id },
      {
        location: { type: 'Point', coordinates: [-68.13, -16.5] },
        client_point_id: 'seed-1',
      },
    );
    const merchant = await svc.merchants.create(tx, actor, {
      owner_user_id: demo.users.merchant,
      name: 'Demo Store',
      address: 'Av. 16 de Julio 1490, La Paz',
      location: { type: 'Point', coordinates: [-68.1335, -16.499] },
    });
    await svc.merchants.decide(tx, actor, merchant.id, 'approve', 'demo');
  });
}
