import type { AccessClaims, SubadminScope } from '../../../platform/auth.js';
import { SUBADMIN_PERMISSION_KEYS } from '../../../platform/auth.js';
import { createCache, invalidateOn } from '../../../platform/cache.js';
import type { AppContext } from '../../../platform/context.js';
import type { Tx } from '../../../platform/db/index.js';
import { notifyScopeChanged, parentChain } from '../repo.js';
import { cents, fillPermissions } from './permissions.js';

/** At most this many levels of parent sub-administrators are followed (cycles are refused at write time). */
const MAX_DEPTH = 16;

/**
 * The effective scope of a sub-administrator: his own profile narrowed by every ancestor's, so a
 * sub-user never holds more than his parent even after the parent lost a territory or a permission:
 * active only if the whole chain is active, territories = intersection, permissions = AND, commission
 * bounds = the narrowest. null when the user has no profile.
 */
export async function effectiveScope(tx: Tx, organizationId: string, userId: string): Promise<SubadminScope | null> {
  const rows = await parentChain(tx, organizationId, userId, MAX_DEPTH);
  if (!rows[0]) return null;
  let territories = new Set(rows[0].territory_ids);
  const permissions = fillPermissions(rows[0].permissions);
  let min = rows[0].commission_min_percent;
  let max = rows[0].commission_max_percent;
  let active = true;
  for (const r of rows) {
    active &&= r.active;
    if (r.depth === 0) continue;
    territories = new Set(r.territory_ids.filter((t) => territories.has(t)));
    const theirs = fillPermissions(r.permissions);
    for (const k of SUBADMIN_PERMISSION_KEYS) permissions[k] &&= theirs[k];
    if (min !== null && r.commission_min_percent !== null && cents(r.commission_min_percent) > cents(min)) min = r.commission_min_percent;
    if (max !== null && r.commission_max_percent !== null && cents(r.commission_max_percent) < cents(max)) max = r.commission_max_percent;
  }
  return { territoryIds: [...territories].sort(), permissions, commissionMinPercent: min, commissionMaxPercent: max, active };
}

const CACHE_MS = 3_000;
const CHANNEL = 'subadmin_changed';

/**
 * The loader the auth hook calls for every request of a sub-administrator, cached a few seconds per
 * user. Changes made through this module clear the cache at once on this instance and, through
 * NOTIFY at commit, on every other instance.
 */
export function createScopeLoader(ctx: AppContext) {
  const cache = createCache<string, SubadminScope | null>({ ttlMs: CACHE_MS });
  invalidateOn(ctx, CHANNEL, cache);

  return {
    async load(claims: AccessClaims): Promise<SubadminScope | null> {
      return cache.get(`${claims.org}:${claims.sub}`, () =>
        ctx.db.withTenant({ organizationId: claims.org, userId: claims.sub }, (tx) => effectiveScope(tx, claims.org, claims.sub)),
      );
    },
    /** In the transaction of a change: every instance drops its cache when it commits; this one right away (and after commit). */
    async changed(tx: Tx): Promise<void> {
      await notifyScopeChanged(tx, CHANNEL);
      cache.clear();
    },
    clear: () => cache.clear(),
  };
}

export type ScopeLoader = ReturnType<typeof createScopeLoader>;
