import { Actor } from '../../../platform/auth.js';
import { Tx } from '../../../platform/db/index.js';
import { pageRequest, toPage } from '../../../platform/pagination.js';
import { TerritoryScope } from '../../../platform/scope.js';
import { MerchantRow } from '../../logistics/index.js';
import { CommerceContext } from '../context.js';
import { listScopedCoupons, type CouponRow } from '../repo/coupons.js';
import { OrderReportRow, Period, countOrdersByStatus, listScopedOrders, orderReportRows } from '../repo/orders.js';
import { listTariffs } from '../repo/tariffs.js';
import { OrderStatus } from '../schemas.js';
import { orderOut } from './common.js';
import { couponOut, createCoupon } from './coupons.js';
import { catalogItemsExist } from '../repo/catalog.js';
import { tariffOut } from './tariffs.js';

export type { Period };

/**
 * Read views over orders, coupons and tariffs by territory for staff consoles (sub-administration),
 * and coupon creation on behalf of a merchant. `territoryIds` null = the whole organization.
 * Each takes the caller's transaction.
 */
export function createCommerceViews(ctx: CommerceContext) {
  return {
    /** Whether the organization's catalog has any item (organizations: the one-currency rule). */
    catalogInUse: (tx: Tx): Promise<boolean> => catalogItemsExist(tx),
    orderStatusCounts: (tx: Tx, territoryIds: TerritoryScope, period: Period = {}): Promise<Record<string, number>> =>
      countOrdersByStatus(tx, territoryIds, period),

    async listOrders(
      tx: Tx,
      territoryIds: TerritoryScope,
      q: Period & { status?: OrderStatus; merchant_id?: string; limit?: number; cursor?: string },
    ) {
      const page = pageRequest(q);
      const rows = await listScopedOrders(tx, territoryIds, {
        status: q.status,
        merchantId: q.merchant_id,
        from: q.from,
        to: q.to,
        after: page.after,
        limit: page.limit + 1,
      });
      return toPage(rows, page, orderOut);
    },

    /** The order report lines with their territory and merchant names (logistics' records, each looked up once). */
    async orderReportRows(tx: Tx, territoryIds: TerritoryScope, period: Period = {}, limit = 100_000): Promise<OrderReportRow[]> {
      const rows = await orderReportRows(tx, territoryIds, period, limit);
      const territoryNames = new Map<string, string | null>();
      const merchantNames = new Map<string, string | null>();
      for (const r of rows) {
        if (r.territory_id !== null && !territoryNames.has(r.territory_id))
          territoryNames.set(r.territory_id, (await ctx.deps.logistics.getTerritory(tx, r.territory_id))?.name ?? null);
        if (!merchantNames.has(r.merchant_id))
          merchantNames.set(r.merchant_id, (await ctx.deps.logistics.getMerchant(tx, r.merchant_id))?.name ?? null);
        r.territory_name = r.territory_id === null ? null : (territoryNames.get(r.territory_id) ?? null);
        r.merchant_name = merchantNames.get(r.merchant_id) ?? null;
      }
      return rows;
    },

    /** Coupons of the merchants located in the territories (a coupon's territory is its merchant's), newest first. */
    async listCoupons(
      tx: Tx,
      territoryIds: TerritoryScope,
      q: { merchant_id?: string; active?: boolean; limit?: number; cursor?: string },
    ) {
      const page = pageRequest(q);
      return toPage(
        await listScopedCoupons(tx, territoryIds, {
          merchantId: q.merchant_id,
          active: q.active,
          after: page.after,
          limit: page.limit + 1,
        }),
        page,
        couponOut,
      );
    },

    /** Creates a coupon of `merchant` on its behalf (same rules as POST /merchant/coupons; audited with the acting user). */
    createCouponFor: (tx: Tx, actor: Actor, merchant: MerchantRow, body: Record<string, unknown>): Promise<CouponRow> =>
      createCoupon(ctx, tx, actor, body, merchant),

    async listTariffs(
      tx: Tx,
      territoryIds: TerritoryScope,
      q: { territory_id?: string; service_mode?: string; active?: boolean; limit?: number; cursor?: string },
    ) {
      const page = pageRequest(q);
      const rows = await listTariffs(tx, territoryIds, {
        territoryId: q.territory_id,
        serviceMode: q.service_mode,
        active: q.active,
        after: page.after,
        limit: page.limit + 1,
      });
      return toPage(rows, page, tariffOut);
    },
  };
}

export type CommerceViews = ReturnType<typeof createCommerceViews>;
