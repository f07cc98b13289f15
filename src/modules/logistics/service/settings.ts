import type { AppContext } from '../../../platform/context.js';
import type { Tx } from '../../../platform/db/index.js';
import { createAnnouncedCache, type AnnouncedCache } from '../../../platform/cache.js';
import { getSettings, type LogisticsSettings } from '../repo/settings.js';
import { ORGANIZATION_SETTINGS_CHANGED } from '../../organizations/index.js';

/** Announced (NOTIFY, payload the organization id) when an organization's logistics settings change. */
export const LOGISTICS_SETTINGS_CHANGED = 'logistics_settings_changed';

const caches = new WeakMap<AppContext['db'], AnnouncedCache<LogisticsSettings>>();

/** The app's one cache of logistics settings (per database handle: one per app, whatever builds on it). */
function cacheOf(ctx: Pick<AppContext, 'db' | 'onClose'>): AnnouncedCache<LogisticsSettings> {
  let cache = caches.get(ctx.db);
  if (!cache)
    caches.set(
      ctx.db,
      (cache = createAnnouncedCache<LogisticsSettings>(ctx, LOGISTICS_SETTINGS_CHANGED, {
        // The settings carry the organization's currency (organization settings).
        alsoOn: [ORGANIZATION_SETTINGS_CHANGED],
      })),
    );
  return cache;
}

/**
 * The organization's logistics settings as the rules read them (GPS batches, assignment, ETAs, trip creation): cached on
 * each instance and read in the caller's transaction on a miss; a change (`settingsChanged`) reaches every instance at
 * its commit. A change's own "before" and the settings route read the table (`getSettings`).
 */
export function settingsOf(ctx: Pick<AppContext, 'db' | 'onClose'>, tx: Tx, organizationId: string): Promise<LogisticsSettings> {
  return cacheOf(ctx).get(organizationId, () => getSettings(tx, organizationId));
}

/** In the transaction that changes the organization's logistics settings (or the currency they carry). */
export function settingsChanged(ctx: Pick<AppContext, 'db' | 'onClose'>, tx: Tx, organizationId: string): Promise<void> {
  return cacheOf(ctx).changed(tx, organizationId);
}
