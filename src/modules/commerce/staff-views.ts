import type { Actor } from '../../platform/auth.js';
import type { CommerceContext } from './index.js';
import type { Tx } from '../../platform/db/index.js';
import { pageRequest, toPage } from '../../platform/pagination.js';
import type { MerchantRow } from '../logistics/index.js';
import { createCoupon, type CouponRow } from './coupons.js';
import { ORDER_SELECT, orderOut, type OrderRow, type OrderStatus } from './model.js';
import type { TariffRow } from './tariffs.js';

export interface Period {
  from?: string | null;
  to?: string | null;
}

export interface OrderReportRow {
  id: string;
  created_at: Date;
  status: OrderStatus;
  territory_id: string | null;
  territory_name: string | null;
  merchant_id: string;
  merchant_name: string | null;
  payment_destination: string;
  payment_status: string;
  coupon_code: string | null;
  subtotal: string;
  discount_total: string;
  delivery_fee: string;
  total: string;
  currency: string;
}

/**
 * Read views over orders, coupons and tariffs by territory for staff consoles (sub-administration),
 * and coupon creation on behalf of a merchant. `territoryIds` null = the whole organization.
 * Each takes the caller's transaction.
 */
export function createCommerceViews(ctx: CommerceContext) {
  return {
    async orderStatusCounts(tx: Tx, territoryIds: string[] | null, period: Period = {}): Promise<Record<string, number>> {
      const { rows } = await tx.query<{ status: string; n: number }>(
        `SELECT status, count(*)::int AS n FROM merchant_order
          WHERE ($1::text[] IS NULL OR territory_id = ANY($1)) AND ($2::timestamptz IS NULL OR created_at >= $2) AND ($3::timestamptz IS NULL OR created_at < $3)
          GROUP BY status`,
        [territoryIds, period.from ?? null, period.to ?? null],
      );
      return Object.fromEntries(rows.map((r) => [r.status, r.n]));
    },

    async listOrders(tx: Tx, territoryIds: string[] | null, q: Period & { status?: OrderStatus; merchant_id?: string; limit?: number; cursor?: string }) {
      const page = pageRequest(q);
      const { rows } = await tx.query<OrderRow>(
        `${ORDER_SELECT} WHERE ($1::text[] IS NULL OR o.territory_id = ANY($1)) AND ($2::text IS NULL OR o.status = $2) AND ($3::text IS NULL OR o.merchant_id = $3)
            AND ($4::timestamptz IS NULL OR o.created_at >= $4) AND ($5::timestamptz IS NULL OR o.created_at < $5) AND ($6::text IS NULL OR o.id < $6)
          ORDER BY o.id DESC LIMIT $7`,
        [territoryIds, q.status ?? null, q.merchant_id ?? null, q.from ?? null, q.to ?? null, page.after, page.limit + 1],
      );
      return toPage(rows, page, orderOut);
    },

    async orderReportRows(tx: Tx, territoryIds: string[] | null, period: Period = {}, limit = 100_000): Promise<OrderReportRow[]> {
      const { rows } = await tx.query<OrderReportRow>(
        `SELECT o.id, o.created_at, o.status, o.territory_id, tr.name AS territory_name, o.merchant_id, m.name AS merchant_name, o.payment_destination,
                o.payment_status, o.coupon_code, o.subtotal, o.discount_total, o.delivery_fee, o.total, o.currency
           FROM merchant_order o
           LEFT JOIN territory tr ON tr.organization_id = o.organization_id AND tr.id = o.territory_id
           LEFT JOIN merchant m ON m.organization_id = o.organization_id AND m.id = o.merchant_id
          WHERE ($1::text[] IS NULL OR o.territory_id = ANY($1)) AND ($2::timestamptz IS NULL OR o.created_at >= $2) AND ($3::timestamptz IS NULL OR o.created_at < $3)
          ORDER BY o.created_at, o.id LIMIT $4`,
        [territoryIds, period.from ?? null, period.to ?? null, limit],
      );
      return rows;
    },

    /** Coupons of the merchants located in the territories (a coupon's territory is its merchant's), newest first. */
    async listCoupons(tx: Tx, territoryIds: string[] | null, q: { merchant_id?: string; active?: boolean; limit?: number; cursor?: string }) {
      const page = pageRequest(q);
      const { rows } = await tx.query<CouponRow>(
        `SELECT c.id, c.merchant_id, c.code, c.name, c.description, c.discount_type, c.discount_value, c.max_discount, c.minimum_order, c.product_ids, c.branch_ids,
                c.valid_from, c.valid_until, c.usage_limit, c.per_customer_limit, c.usage_count, c.active, c.created_by_user_id, c.created_at, c.updated_at
           FROM merchant_coupon c JOIN merchant m ON m.organization_id = c.organization_id AND m.id = c.merchant_id
          WHERE ($1::text[] IS NULL OR m.territory_id = ANY($1)) AND ($2::text IS NULL OR c.merchant_id = $2) AND ($3::boolean IS NULL OR c.active = $3)
            AND ($4::text IS NULL OR c.id < $4)
          ORDER BY c.id DESC LIMIT $5`,
        [territoryIds, q.merchant_id ?? null, q.active ?? null, page.after, page.limit + 1],
      );
      return toPage(rows, page);
    },

    /** Creates a coupon of `merchant` on its behalf (same rules as POST /merchant/coupons; audited with the acting user). */
    createCouponFor: (tx: Tx, actor: Actor, merchant: MerchantRow, body: Record<string, unknown>): Promise<CouponRow> => createCoupon(ctx, tx, actor, body, merchant),

    async listTariffs(tx: Tx, territoryIds: string[] | null, q: { territory_id?: string; service_mode?: string; active?: boolean; limit?: number; cursor?: string }) {
      const page = pageRequest(q);
      const { rows } = await tx.query<TariffRow>(
        `SELECT id, territory_id, service_mode, base_fee, per_km_fee, minimum_fee, driver_share_type, driver_share_value, active, created_at, updated_at
           FROM territory_tariff
          WHERE ($1::text[] IS NULL OR territory_id = ANY($1)) AND ($2::text IS NULL OR territory_id = $2) AND ($3::text IS NULL OR service_mode = $3)
            AND ($4::boolean IS NULL OR active = $4) AND ($5::text IS NULL OR id < $5)
          ORDER BY id DESC LIMIT $6`,
        [territoryIds, q.territory_id ?? null, q.service_mode ?? null, q.active ?? null, page.after, page.limit + 1],
      );
      return toPage(rows, page);
    },
  };
}

export type CommerceViews = ReturnType<typeof createCommerceViews>;

