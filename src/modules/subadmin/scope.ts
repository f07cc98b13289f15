import type { AccessClaims, SubadminScope } from '../../platform/auth.js';
import type { AppContext } from '../../platform/context.js';
import type { Tx } from '../../platform/db/index.js';
import { SUBADMIN_PERMISSION_KEYS } from '../../platform/auth.js';
import { cents, fillPermissions, type Permissions } from './model.js';
import { createCache, invalidateOn } from '../../platform/cache.js';

interface ChainRow {
  user_id: string;
  active: boolean;
  permissions: Partial<Permissions>;
  commission_min_percent: string | null;
  commission_max_percent: string | null;
  territory_ids: string[];
  depth: number;
}

/** At most this many levels of parent sub-administrators are followed (cycles are refused at write time). */
const MAX_DEPTH = 16;

/**
 * The effective scope of a sub-administrator: his own profile narrowed by every ancestor's, so a
 * sub-user never holds more than his parent even after the parent lost a territory or a permission:
 * active only if the whole chain is active, territories = intersection, permissions = AND, commission
 * bounds = the narrowest. null when the user has no profile.
 */
export async function effectiveScope(tx: Tx, organizationId: string, userId: string): Promise<SubadminScope | null> {
  const { rows } = await tx.query<ChainRow>(
    `WITH RECURSIVE chain AS (
       SELECT user_id, parent_subadmin_user_id, active, permissions, commission_min_percent, commission_max_percent, 0 AS depth
         FROM subadmin_profile WHERE organization_id = $1 AND user_id = $2
       UNION ALL
       SELECT p.user_id, p.parent_subadmin_user_id, p.active, p.permissions, p.commission_min_percent, p.commission_max_percent, c.depth + 1
         FROM subadmin_profile p JOIN chain c ON p.organization_id = $1 AND p.user_id = c.parent_subadmin_user_id
        WHERE c.depth < ${MAX_DEPTH})
     SELECT c.user_id, c.active, c.permissions, c.commission_min_percent::text, c.commission_max_percent::text, c.depth,
            COALESCE((SELECT array_agg(ut.territory_id ORDER BY ut.territory_id) FROM user_territory ut
                       WHERE ut.organization_id = $1 AND ut.user_id = c.user_id), '{}') AS territory_ids
       FROM chain c ORDER BY c.depth`,
    [organizationId, userId],
  );
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
      await tx.query(`SELECT pg_notify('${CHANNEL}', '')`);
      cache.clear();
    },
    clear: () => cache.clear(),
  };
}

export type ScopeLoader = ReturnType<typeof createScopeLoader>;
