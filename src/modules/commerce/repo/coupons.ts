import type { Tx } from '../../../platform/db/index.js';
import type { SnakeRow } from '../../../platform/db/columns.js';
import { scopeSql, type TerritoryScope } from '../../../platform/scope.js';
import type { merchantCoupon } from '../tables.js';

export type CouponRecord = typeof merchantCoupon.$inferSelect;
export type CouponRow = Omit<SnakeRow<CouponRecord>, 'organization_id'>;

export const COUPON_COLUMNS = `id, merchant_id, code, name, description, discount_type, discount_value, max_discount, minimum_order, product_ids, branch_ids,
  valid_from, valid_until, usage_limit, per_customer_limit, usage_count, active, created_by_user_id, created_at, updated_at`;
const qualified = (alias: string) =>
  COUPON_COLUMNS.split(',')
    .map((c) => `${alias}.${c.trim()}`)
    .join(', ');

/** The merchant's coupon with this code (case-insensitive), or null. */
export async function findCouponByCode(tx: Tx, merchantId: string, code: string): Promise<CouponRow | null> {
  return (
    (
      await tx.query<CouponRow>(`SELECT ${COUPON_COLUMNS} FROM merchant_coupon WHERE merchant_id = $1 AND lower(code) = lower($2)`, [
        merchantId,
        code,
      ])
    ).rows[0] ?? null
  );
}

export async function findCoupon(tx: Tx, id: string): Promise<CouponRow | null> {
  return (await tx.query<CouponRow>(`SELECT ${COUPON_COLUMNS} FROM merchant_coupon WHERE id = $1`, [id])).rows[0] ?? null;
}

/** The merchant's coupon, locked for an update, or null. */
export async function lockMerchantCoupon(tx: Tx, merchantId: string, id: string): Promise<CouponRow | null> {
  return (
    (
      await tx.query<CouponRow>(`SELECT ${COUPON_COLUMNS} FROM merchant_coupon WHERE id = $1 AND merchant_id = $2 FOR UPDATE`, [
        id,
        merchantId,
      ])
    ).rows[0] ?? null
  );
}

/** Uses of a coupon by a customer that still count (not released by a cancellation). */
export async function customerUses(tx: Tx, couponId: string, customerId: string): Promise<number> {
  const { rows } = await tx.query<{ uses: number }>(
    'SELECT uses FROM merchant_coupon_customer_usage WHERE coupon_id = $1 AND customer_id = $2',
    [couponId, customerId],
  );
  return rows[0]?.uses ?? 0;
}

export async function listMerchantCoupons(
  tx: Tx,
  merchantId: string,
  q: { active?: boolean; after: string | null; limit: number },
): Promise<CouponRow[]> {
  const { rows } = await tx.query<CouponRow>(
    `SELECT ${COUPON_COLUMNS} FROM merchant_coupon WHERE merchant_id = $1 AND ($2::boolean IS NULL OR active = $2) AND ($3::text IS NULL OR id < $3) ORDER BY id DESC LIMIT $4`,
    [merchantId, q.active ?? null, q.after, q.limit],
  );
  return rows;
}

/** Coupons of the merchants located in a territory scope (a coupon's territory is its merchant's), newest first. */
export async function listScopedCoupons(
  tx: Tx,
  scope: TerritoryScope,
  q: { merchantId?: string; active?: boolean; after: string | null; limit: number },
): Promise<CouponRow[]> {
  const { rows } = await tx.query<CouponRow>(
    `SELECT ${qualified('c')}
       FROM merchant_coupon c JOIN merchant_directory m ON m.organization_id = c.organization_id AND m.id = c.merchant_id
      WHERE ${scopeSql('m.territory_id', 1)} AND ($2::text IS NULL OR c.merchant_id = $2) AND ($3::boolean IS NULL OR c.active = $3)
        AND ($4::text IS NULL OR c.id < $4)
      ORDER BY c.id DESC LIMIT $5`,
    [scope, q.merchantId ?? null, q.active ?? null, q.after, q.limit],
  );
  return rows;
}

export type NewCoupon = Omit<CouponRow, 'usage_count' | 'created_at' | 'updated_at'>;

export async function insertCoupon(tx: Tx, organizationId: string, c: NewCoupon): Promise<CouponRow> {
  const { rows } = await tx.query<CouponRow>(
    `INSERT INTO merchant_coupon (organization_id, id, merchant_id, code, name, description, discount_type, discount_value, max_discount, minimum_order,
                                  product_ids, branch_ids, valid_from, valid_until, usage_limit, per_customer_limit, active, created_by_user_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11::text[], $12::text[], $13, $14, $15, $16, $17, $18) RETURNING ${COUPON_COLUMNS}`,
    [
      organizationId,
      c.id,
      c.merchant_id,
      c.code,
      c.name,
      c.description,
      c.discount_type,
      c.discount_value,
      c.max_discount,
      c.minimum_order,
      c.product_ids,
      c.branch_ids,
      c.valid_from,
      c.valid_until,
      c.usage_limit,
      c.per_customer_limit,
      c.active,
      c.created_by_user_id,
    ],
  );
  return rows[0];
}

/** The writable coupon columns a PATCH may name; anything else never reaches the SQL text. */
export const COUPON_WRITABLE = [
  'code',
  'name',
  'description',
  'discount_type',
  'discount_value',
  'max_discount',
  'minimum_order',
  'product_ids',
  'branch_ids',
  'valid_from',
  'valid_until',
  'usage_limit',
  'per_customer_limit',
  'active',
] as const;
export type CouponPatch = Partial<Record<(typeof COUPON_WRITABLE)[number], unknown>>;

export async function updateCoupon(tx: Tx, id: string, patch: CouponPatch): Promise<CouponRow> {
  const keys = Object.keys(patch).filter((k): k is (typeof COUPON_WRITABLE)[number] => (COUPON_WRITABLE as readonly string[]).includes(k));
  const cast = (k: string) => (k === 'product_ids' || k === 'branch_ids' ? '::text[]' : '');
  const { rows } = await tx.query<CouponRow>(
    `UPDATE merchant_coupon SET ${keys.map((k, i) => `${k} = $${i + 2}${cast(k)}`).join(', ')}, updated_at = now() WHERE id = $1 RETURNING ${COUPON_COLUMNS}`,
    [id, ...keys.map((k) => patch[k])],
  );
  return rows[0];
}

/** A cancelled order gives its use back, in one statement: the redemption is marked released, usage_count and the customer's count decremented (once). */
export async function releaseRedemption(tx: Tx, orderId: string): Promise<boolean> {
  const { rows } = await tx.query<{ released: number }>(
    `WITH r AS (
       UPDATE merchant_coupon_redemption SET released_at = now() WHERE order_id = $1 AND released_at IS NULL RETURNING organization_id, coupon_id, customer_id),
     c AS (
       UPDATE merchant_coupon m SET usage_count = greatest(m.usage_count - 1, 0), updated_at = now()
         FROM r WHERE m.organization_id = r.organization_id AND m.id = r.coupon_id),
     u AS (
       UPDATE merchant_coupon_customer_usage x SET uses = greatest(x.uses - 1, 0)
         FROM r WHERE x.organization_id = r.organization_id AND x.coupon_id = r.coupon_id AND x.customer_id = r.customer_id)
     SELECT count(*)::int AS released FROM r`,
    [orderId],
  );
  return rows[0].released > 0;
}
