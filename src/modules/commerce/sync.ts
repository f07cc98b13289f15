import type { AppContext } from '../../platform/context.js';
import type { Tx } from '../../platform/db/index.js';
import { syncRegistry } from '../mobile/index.js';
import { CATALOG_SELECT, type CatalogItemRow } from './catalog.js';
import { addressOut, type AddressRow } from './addresses.js';
import { ORDER_SELECT, orderOut, type OrderRow } from './model.js';

/**
 * Offline sync entities (GET /mobile/sync/pull), each the rows the caller may see that changed after `since`,
 * oldest change first. Nothing here is ever deleted (an item becomes unavailable, an order cancelled), so there
 * are no tombstones.
 * - `orders`: a merchant's orders (his own merchant) or a customer's own orders.
 * - `catalog_items`: the merchant's catalog.
 * - `addresses`: the customer's addresses (never edited: `updated_at` is the creation time).
 */
export function registerCommerceSync(ctx: AppContext) {
  const registry = syncRegistry(ctx);
  const merchantIdOf = async (tx: Tx, userId: string) => (await ctx.services.logistics.merchantOfUser(tx, userId))?.id ?? null;

  registry.registerProvider({
    entity: 'orders',
    kinds: ['comercio', 'delivery'],
    async pull(tx, actor, { since, limit }) {
      const merchantId = actor.kind === 'comercio' ? await merchantIdOf(tx, actor.userId) : null;
      if (actor.kind === 'comercio' && !merchantId) return { changed: [], deleted: [] };
      const { rows } = await tx.query<OrderRow>(
        `${ORDER_SELECT} WHERE ${actor.kind === 'comercio' ? 'o.merchant_id = $1' : 'o.customer_user_id = $1'}
            AND ($2::timestamptz IS NULL OR o.updated_at > $2) ORDER BY o.updated_at, o.id LIMIT $3`,
        [merchantId ?? actor.userId, since, limit],
      );
      return { changed: rows.map(orderOut), deleted: [] };
    },
  });

  registry.registerProvider({
    entity: 'catalog_items',
    kinds: ['comercio'],
    async pull(tx, actor, { since, limit }) {
      const merchantId = await merchantIdOf(tx, actor.userId);
      if (!merchantId) return { changed: [], deleted: [] };
      const { rows } = await tx.query<CatalogItemRow>(`${CATALOG_SELECT} WHERE merchant_id = $1 AND ($2::timestamptz IS NULL OR updated_at > $2) ORDER BY updated_at, id LIMIT $3`, [
        merchantId,
        since,
        limit,
      ]);
      return { changed: rows.map((r) => ({ ...r })), deleted: [] };
    },
  });

  registry.registerProvider({
    entity: 'addresses',
    kinds: ['delivery'],
    async pull(tx, actor, { since, limit }) {
      const { rows } = await tx.query<AddressRow>(
        `SELECT id, user_id, label, address, (location)[0] AS lon, (location)[1] AS lat, notes, created_at FROM customer_address
          WHERE user_id = $1 AND ($2::timestamptz IS NULL OR created_at > $2) ORDER BY created_at, id LIMIT $3`,
        [actor.userId, since, limit],
      );
      return { changed: rows.map((a) => ({ ...addressOut(a), updated_at: a.created_at })), deleted: [] };
    },
  });
}
