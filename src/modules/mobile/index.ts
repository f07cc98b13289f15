import { withDeps, type Api, type AppContext } from '../../platform/context.js';
import type { MobileContext } from './context.js';
import { createMobileService } from './service/apps.js';
import { createSyncService } from './service/sync.js';
import { registerMobileSync } from './service/inbox-sync.js';
import { mobileRoutes } from './routes.js';

export { createSyncRegistry, withSyncXid, lastPosition } from './service/sync.js';
export type { SyncProvider, SyncOperationHandler, SyncRegistry, SyncChanges, SyncOutcome, SyncPage, SyncWindow } from './service/sync.js';

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
