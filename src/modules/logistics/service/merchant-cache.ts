import type { AppContext } from '../../../platform/context.js';
import type { Tx } from '../../../platform/db/index.js';
import { createAnnouncedCache, type AnnouncedCache } from '../../../platform/cache.js';
import { merchantOfUser as readMerchantOfUser, type MerchantRow } from '../repo/merchants.js';

/** Announced (NOTIFY at commit) when merchants' rows change: payload organization:owner, empty for any number of them. */
export const MERCHANT_CHANGED = 'merchant_changed';

/** A user's entry, within his organization: only a tenant transaction reads or changes one. */
const keyOf = (tx: Tx, userId: string): string | null => (tx.organizationId ? `${tx.organizationId}:${userId}` : null);

const caches = new WeakMap<AppContext['db'], AnnouncedCache<MerchantRow | null>>();

/** The app's one cache of merchants by owner (per database handle: one per app, whatever builds on it). */
function cacheOf(ctx: Pick<AppContext, 'db' | 'onClose'>): AnnouncedCache<MerchantRow | null> {
  let cache = caches.get(ctx.db);
  if (!cache) caches.set(ctx.db, (cache = createAnnouncedCache<MerchantRow | null>(ctx, MERCHANT_CHANGED)));
  return cache;
}

/**
 * The merchant of a user, read by every request of a merchant user: cached per instance by organization and user,
 * read in the caller's transaction on a miss; a change reaches every instance at its commit (a change
 * made directly in SQL shows within the cache's minute). A user without one is not kept: his merchant may come any time.
 */
export function merchantOfUser(ctx: Pick<AppContext, 'db' | 'onClose'>, tx: Tx, userId: string): Promise<MerchantRow | null> {
  const key = keyOf(tx, userId);
  return key ? cacheOf(ctx).get(key, () => readMerchantOfUser(tx, userId)) : readMerchantOfUser(tx, userId);
}

/** In the transaction that changes the merchant of `ownerUserId` (its status, its commission). */
export function merchantChanged(ctx: Pick<AppContext, 'db' | 'onClose'>, tx: Tx, ownerUserId: string): Promise<void> {
  const key = keyOf(tx, ownerUserId);
  return key ? cacheOf(ctx).changed(tx, key) : cacheOf(ctx).changedAll(tx);
}

/** In the transaction that changes any number of merchants (a new territory's backfill). */
export function merchantsChanged(ctx: Pick<AppContext, 'db' | 'onClose'>, tx: Tx): Promise<void> {
  return cacheOf(ctx).changedAll(tx);
}
