import { Tx } from '../../../platform/db/index.js';
import { lastPosition } from '../../mobile/index.js';
import { CommerceContext } from '../context.js';
import { syncAddresses } from '../repo/addresses.js';
import { syncCatalog } from '../repo/catalog.js';
import { syncOrders } from '../repo/orders.js';
import { addressOut } from './addresses.js';
import { orderOut } from './common.js';

/**
 * Offline sync entities (GET /mobile/sync/pull), each the rows the caller may see that changed in the pull's
 * window (commit order). Nothing here is ever deleted (an item becomes unavailable, an order cancelled), so there
 * are no tombstones.
 * - `orders`: a merchant's orders (his own merchant) or a customer's own orders.
 * - `catalog_items`: the merchant's catalog.
 * - `addresses`: the customer's addresses (never edited: `updated_at` is the creation time).
 * An empty page: `{ changed: [], deleted: [], last: null, read: 0 }`.
 */
const EMPTY = { changed: [], deleted: [], last: null, read: 0 };

export function registerCommerceSync(ctx: CommerceContext) {
  const registry = ctx.deps.sync;
  const merchantIdOf = async (tx: Tx, userId: string) => (await ctx.deps.logistics.merchantOfUser(tx, userId))?.id ?? null;

  registry.registerProvider({
    entity: 'orders',
    kinds: ['comercio', 'delivery'],
    async pull(tx, actor, w) {
      const merchantId = actor.kind === 'comercio' ? await merchantIdOf(tx, actor.userId) : null;
      if (actor.kind === 'comercio' && !merchantId) return EMPTY;
      const c = w.clause('o', 2);
      const rows = await syncOrders(tx, merchantId ? { merchantId } : { customerUserId: actor.userId }, c);
      return { changed: rows.map(orderOut), deleted: [], last: lastPosition(rows), read: rows.length };
    },
  });

  registry.registerProvider({
    entity: 'catalog_items',
    kinds: ['comercio'],
    async pull(tx, actor, w) {
      const merchantId = await merchantIdOf(tx, actor.userId);
      if (!merchantId) return EMPTY;
      const c = w.clause('c', 2);
      const rows = await syncCatalog(tx, merchantId, c);
      return { changed: rows.map(({ sync_xid: _, ...r }) => r), deleted: [], last: lastPosition(rows), read: rows.length };
    },
  });

  registry.registerProvider({
    entity: 'addresses',
    kinds: ['delivery'],
    async pull(tx, actor, w) {
      const c = w.clause('a', 2);
      const rows = await syncAddresses(tx, actor.userId, c);
      return {
        changed: rows.map((a) => ({ ...addressOut(a), updated_at: a.created_at })),
        deleted: [],
        last: lastPosition(rows),
        read: rows.length,
      };
    },
  });
}
