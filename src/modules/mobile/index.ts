import type { Module } from '../../platform/context.js';
import { createMobileService, type MobileService } from './service.js';
import { createSyncService, syncRegistry, type SyncService } from './sync.js';
import { registerMobileSync } from './providers.js';
import { mobileRoutes } from './routes.js';

export { syncRegistry, withSyncXid, lastPosition } from './sync.js';
export type { SyncProvider, SyncOperationHandler, SyncRegistry, SyncChanges, SyncOutcome, SyncPage, SyncWindow } from './sync.js';

declare module '../../platform/context.js' {
  interface ServiceRegistry {
    /** Bootstrap, contract, builds, health; `registerHealthSection(name, fn)` for storage/integrations. */
    mobile: MobileService;
    mobileSync: SyncService;
  }
}

export const mobileModule: Module = {
  name: 'mobile',
  init(ctx) {
    ctx.services.mobile = createMobileService(ctx);
    const raw = ctx.config.raw;
    ctx.services.mobileSync = createSyncService(ctx, {
      entityLimit: Number(raw.SYNC_ENTITY_LIMIT) > 0 ? Number(raw.SYNC_ENTITY_LIMIT) : 1000,
    });
    registerMobileSync(ctx, syncRegistry(ctx));
  },
  routes: mobileRoutes,
  async seed(ctx, demo) {
    await ctx.db.withSystem((tx) => ctx.services.mobile.seedBuilds(tx, demo.organizationId));
  },
};
