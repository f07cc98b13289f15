import { withDeps, type Api, type AppContext, type ModuleContext } from '../../platform/context.js';
import type { OrganizationService } from '../organizations/index.js';
import type { DeviceService, NotificationService, PushGateway } from '../notifications/index.js';
import { createMobileService } from './service.js';
import { createSyncService, type SyncRegistry } from './sync.js';
import { registerMobileSync } from './providers.js';
import { mobileRoutes } from './routes.js';

export { createSyncRegistry, withSyncXid, lastPosition } from './sync.js';
export type { SyncProvider, SyncOperationHandler, SyncRegistry, SyncChanges, SyncOutcome, SyncPage, SyncWindow } from './sync.js';

export type MobileContext = ModuleContext<{
  organizations: OrganizationService;
  /** The offline sync registry (the composition root creates it; logistics and commerce add to it too). */
  sync: SyncRegistry;
  devices: DeviceService;
  notifications: NotificationService;
  pushGateway: PushGateway | null;
  realtime: { readonly connectionCount: number };
}>;

export function createMobileModule(ctx: AppContext, deps: MobileContext['deps']) {
  const mctx: MobileContext = withDeps(ctx, deps);
  /** Bootstrap, contract, builds, health; `registerHealthSection(name, fn)` for storage/integrations. */
  const service = createMobileService(mctx);
  const sync = createSyncService(ctx, {
    entityLimit: ctx.config.settings.SYNC_ENTITY_LIMIT,
    registry: deps.sync,
  });
  registerMobileSync(mctx, deps.sync);
  return {
    name: 'mobile',
    service,
    routes: (app: Api) => mobileRoutes(app, ctx, service, sync),
    async seed(demo: { organizationId: string }) {
      await ctx.db.withSystem((tx) => service.seedBuilds(tx, demo.organizationId));
    },
  };
}
