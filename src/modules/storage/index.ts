import type { Api, AppContext } from '../../platform/context.js';
import type { ObjectLinker, ObjectReadGrant, StorageContext } from './context.js';
import type { Tx } from '../../platform/db/index.js';
import { driversFromConfig } from './service/drivers.js';
import { limitsFromConfig } from './service/policy.js';
import { createStorageService, slotJanitor } from './service/objects.js';
import { storageRoutes } from './routes.js';
import { usageByPurpose } from './repo.js';

/**
 * The `storage` section of GET /admin/mobile-health, for the caller's organization: stored objects and bytes per
 * purpose, and upload slots still open (not used, not expired).
 */
async function storageHealth(tx: Tx): Promise<Record<string, unknown>> {
  const { byPurpose: rows, openSlots } = await usageByPurpose(tx);
  return {
    status: 'ok',
    objects: rows.reduce((n, r) => n + r.objects, 0),
    bytes: rows.reduce((n, r) => n + Number(r.bytes), 0),
    by_purpose: rows.map((r) => ({ purpose: r.purpose, objects: r.objects, bytes: Number(r.bytes) })),
    open_slots: openSlots,
  };
}

export type { LinkTarget, ObjectLinker, ObjectReadGrant, TripDirectory, TripParticipants } from './context.js';
export { STORAGE_PURPOSES, type StoragePurpose } from './schemas.js';
export { assertObjectLink } from './service/links.js';

/** Private storage. Other modules see only the ObjectLinker (`linker`); `addReadGrant` is called by the composition root. */
export function createStorageModule(ctx: AppContext, deps: StorageContext['deps']) {
  const readGrants: ObjectReadGrant[] = [];
  const drivers = driversFromConfig(ctx.config);
  const svc = createStorageService(ctx, {
    ...drivers,
    limits: limitsFromConfig(ctx.config.settings),
    quotaBytes: ctx.config.settings.STORAGE_QUOTA_BYTES_PER_ORGANIZATION,
    trips: deps.trips,
    readGrants,
  });
  ctx.workers.push(slotJanitor(svc));
  return {
    name: 'storage',
    linker: svc as ObjectLinker,
    /** The `storage` section of GET /admin/mobile-health. */
    health: storageHealth,
    addReadGrant: (grant: ObjectReadGrant) => void readGrants.push(grant),
    routes: (app: Api) => storageRoutes(app, svc),
  };
}
