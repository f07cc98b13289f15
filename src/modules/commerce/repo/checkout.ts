import { prepared, type Tx } from '../../../platform/db/index.js';
import type { SnakeRow } from '../../../platform/db/columns.js';
import type { MerchantRow } from '../../logistics/index.js';
import type { CatalogPrice } from '../service/pricing.js';
import type { checkoutQuote } from '../tables.js';
import { ADDRESS_COLUMNS, type AddressRow } from './addresses.js';
import { BRANCH_COLUMNS, type BranchRow } from './branches.js';
import { COUPON_COLUMNS, type CouponRow } from './coupons.js';
import { TARIFF_COLUMNS, type TariffRow } from './tariffs.js';

/** What a cart needs of the branch's merchant: its id, approval and owner (the audience of the order's events). */
export type CartMerchant = Pick<MerchantRow, 'id' | 'status' | 'owner_user_id'>;
export type CartCatalogItem = CatalogPrice & { merchant_id: string; available: boolean; branch_ids: string[]; currency: string };

export interface CartFacts {
  branch: BranchRow | null;
  merchant: CartMerchant | null;
  address: AddressRow | null;
  items: CartCatalogItem[];
  /** The active marketplace tariff of the branch's territory (null: none, or the branch has no territory). */
  tariff: TariffRow | null;
  /** The merchant's coupon with the code (case-insensitive), when a code was given and exists. */
  coupon: CouponRow | null;
  /** The customer's uses of that coupon that still count. */
  couponUses: number;
}

/** `alias.a, alias.b` → `alias.a AS p__a, alias.b AS p__b` (point columns already split as `(alias.x)[0] AS lon`). */
const prefixed = (columns: string, alias: string, prefix: string) =>
  columns
    .split(',')
    .map((c) => c.trim())
    .map((c) => {
      const as = /^(.*) AS (\w+)$/i.exec(c);
      return as ? `${as[1].replace(/^\(/, `(${alias}.`)} AS ${prefix}__${as[2]}` : `${alias}.${c} AS ${prefix}__${c}`;
    })
    .join(', ');

function part<T>(row: Record<string, unknown>, prefix: string): T | null {
  if (row[`${prefix}__id`] === null || row[`${prefix}__id`] === undefined) return null;
  const out: Record<string, unknown> = {};
  const p = `${prefix}__`;
  for (const [k, v] of Object.entries(row)) if (k.startsWith(p)) out[k.slice(p.length)] = v;
  return out as T;
}

const CART_FACTS_SQL = `
  SELECT ${prefixed(BRANCH_COLUMNS, 'b', 'b')}, m.id AS m__id, m.status AS m__status, m.owner_user_id AS m__owner_user_id,
         ${prefixed(ADDRESS_COLUMNS, 'a', 'a')}, ${prefixed(TARIFF_COLUMNS, 't', 't')}, ${prefixed(COUPON_COLUMNS, 'c', 'c')}, u.uses AS coupon_uses,
         COALESCE((SELECT json_agg(json_build_object('id', i.id, 'merchant_id', i.merchant_id, 'name', i.name, 'price', i.price::text, 'currency', i.currency,
                                                    'available', i.available, 'branch_ids', i.branch_ids))
                     FROM catalog_item i WHERE i.id = ANY($4::text[]) AND i.merchant_id = b.merchant_id), '[]'::json) AS items
    FROM (SELECT 1) one
    LEFT JOIN merchant_branch b ON b.id = $1
    LEFT JOIN merchant_directory m ON m.organization_id = b.organization_id AND m.id = b.merchant_id
    LEFT JOIN customer_address a ON a.id = $2 AND a.user_id = $3
    LEFT JOIN territory_tariff t ON t.organization_id = b.organization_id AND t.territory_id = b.territory_id AND t.service_mode = 'marketplace' AND t.active
    LEFT JOIN merchant_coupon c ON $5::text IS NOT NULL AND c.organization_id = b.organization_id AND c.merchant_id = b.merchant_id AND lower(c.code) = lower($5)
    LEFT JOIN merchant_coupon_customer_usage u ON u.organization_id = c.organization_id AND u.coupon_id = c.id AND u.customer_id = $3`;

/** Prepared: planning this join took ~1.8 ms against ~0.4 ms to run it. */
const CART_FACTS = prepared(CART_FACTS_SQL);

/**
 * Everything a cart is priced from, in ONE statement (an order takes at most 8 round trips): the branch
 * and its merchant's approval, the customer's address, the catalog items asked for, the branch territory's
 * marketplace tariff, and the coupon with the customer's uses of it.
 */
export async function loadCartFacts(
  tx: Tx,
  q: { branchId: string; addressId: string; customerUserId: string; itemIds: string[]; couponCode: string | null },
): Promise<CartFacts> {
  const { rows } = await tx.query<Record<string, unknown>>(CART_FACTS, [
    q.branchId,
    q.addressId,
    q.customerUserId,
    q.itemIds,
    q.couponCode,
  ]);
  const r = rows[0];
  return {
    branch: part<BranchRow>(r, 'b'),
    merchant: part<CartMerchant>(r, 'm'),
    address: part<AddressRow>(r, 'a'),
    items: r.items as CartCatalogItem[],
    tariff: part<TariffRow>(r, 't'),
    coupon: part<CouponRow>(r, 'c'),
    couponUses: (r.coupon_uses as number | null) ?? 0,
  };
}

export type QuoteRow = Omit<SnakeRow<typeof checkoutQuote.$inferSelect>, 'lines'> & {
  lines: { catalog_item_id: string; quantity: number }[];
};

/** The customer's quote, locked (a quote makes one order). */
export async function lockQuote(tx: Tx, id: string, customerUserId: string): Promise<QuoteRow | null> {
  return (
    (await tx.query<QuoteRow>('SELECT * FROM checkout_quote WHERE id = $1 AND customer_user_id = $2 FOR UPDATE', [id, customerUserId]))
      .rows[0] ?? null
  );
}

export async function markQuoteUsed(tx: Tx, id: string, orderId: string): Promise<void> {
  await tx.query('UPDATE checkout_quote SET order_id = $2 WHERE id = $1', [id, orderId]);
}

export type NewQuote = Omit<SnakeRow<typeof checkoutQuote.$inferInsert>, 'order_id' | 'expires_at' | 'created_at'> & { ttl_ms: number };

export async function insertQuote(tx: Tx, q: NewQuote): Promise<{ expires_at: Date; created_at: Date }> {
  const { rows } = await tx.query<{ expires_at: Date; created_at: Date }>(
    `INSERT INTO checkout_quote (organization_id, id, customer_user_id, merchant_id, branch_id, address_id, payment_destination, lines, subtotal,
                                 coupon_id, coupon_code, coupon_error, discount_total, delivery_fee, total, currency, expires_at, promised_at, deliver_after, deliver_before,
                                 pickup_after, pickup_before, units, weight_kg, volume_l)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9, $10, $11, $12, $13, $14, $15, $16, now() + $17 * interval '1 millisecond', $18, $19, $20,
             $21, $22, $23, $24, $25) RETURNING expires_at, created_at`,
    [
      q.organization_id,
      q.id,
      q.customer_user_id,
      q.merchant_id,
      q.branch_id,
      q.address_id,
      q.payment_destination ?? 'platform',
      JSON.stringify(q.lines),
      q.subtotal,
      q.coupon_id ?? null,
      q.coupon_code ?? null,
      q.coupon_error ?? null,
      q.discount_total ?? '0',
      q.delivery_fee,
      q.total,
      q.currency,
      q.ttl_ms,
      q.promised_at ?? null,
      q.deliver_after ?? null,
      q.deliver_before ?? null,
      q.pickup_after ?? null,
      q.pickup_before ?? null,
      q.units ?? 1,
      q.weight_kg ?? null,
      q.volume_l ?? null,
    ],
  );
  return rows[0];
}

/** The promise of an order, for its trip. */
export async function orderPromise(
  tx: Tx,
  orderId: string,
): Promise<{ promised_at: Date | null; deliver_after: Date | null; deliver_before: Date | null } | null> {
  const { rows } = await tx.query<{ promised_at: Date | null; deliver_after: Date | null; deliver_before: Date | null }>(
    'SELECT promised_at, deliver_after, deliver_before FROM merchant_order WHERE id = $1',
    [orderId],
  );
  return rows[0] ?? null;
}
