import type { Api, AppContext } from '../../platform/context.js';
import type { ObjectLinker, ObjectReadGrant } from '../../platform/storage-links.js';
import type { TripDirectory } from '../../platform/trip-directory.js';
import type { Tx } from '../../platform/db/index.js';
import { driversFromConfig } from './drivers.js';
import { limitsFromConfig } from './policy.js';
import { createStorageService, slotJanitor } from './service.js';
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

export interface StorageDeps {
  /** Trip participants (logistics, built later: a forward reference from the composition root). */
  trips: TripDirectory;
}

/** Private storage. Other modules see only the ObjectLinker (`linker`); `addReadGrant` is called by the composition root. */
export function createStorageModule(ctx: AppContext, deps: StorageDeps) {
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
