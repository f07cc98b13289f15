import type { CommerceContext } from './index.js';
import type { Tx } from '../../platform/db/index.js';
import { lastPosition, withSyncXid } from '../mobile/index.js';
import { CATALOG_SELECT, type CatalogItemRow } from './catalog.js';
import { addressOut, type AddressRow } from './addresses.js';
import { ORDER_SELECT, orderOut, type OrderRow } from './model.js';

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
      const { rows } = await tx.query<OrderRow & { sync_xid: string }>(
        `${withSyncXid(ORDER_SELECT, 'o')} WHERE ${actor.kind === 'comercio' ? 'o.merchant_id = $1' : 'o.customer_user_id = $1'} AND ${c.where} ${c.orderLimit}`,
        [merchantId ?? actor.userId, ...c.params],
      );
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
      const { rows } = await tx.query<CatalogItemRow & { sync_xid: string }>(`${withSyncXid(`${CATALOG_SELECT} c`, 'c')} WHERE merchant_id = $1 AND ${c.where} ${c.orderLimit}`, [
        merchantId,
        ...c.params,
      ]);
      return { changed: rows.map(({ sync_xid: _, ...r }) => r), deleted: [], last: lastPosition(rows), read: rows.length };
    },
  });

  registry.registerProvider({
    entity: 'addresses',
    kinds: ['delivery'],
    async pull(tx, actor, w) {
      const c = w.clause('a', 2);
      const { rows } = await tx.query<AddressRow & { sync_xid: string }>(
        `SELECT a.changed_xid::text AS sync_xid, id, user_id, label, address, (location)[0] AS lon, (location)[1] AS lat, notes, created_at FROM customer_address a
          WHERE user_id = $1 AND ${c.where} ${c.orderLimit}`,
        [actor.userId, ...c.params],
      );
      return { changed: rows.map((a) => ({ ...addressOut(a), updated_at: a.created_at })), deleted: [], last: lastPosition(rows), read: rows.length };
    },
  });
}
