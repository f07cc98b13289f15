import type { Static } from '@sinclair/typebox';
import type { Tx } from '../../../platform/db/index.js';
import type { MerchantSettlementOut, MerchantSettlementOutcome } from '../schemas.js';

/** The settlements the worker wrote for one merchant (settled and skipped periods), newest first, `limit` rows after the cursor id. */
export async function listMerchantSettlements(
  tx: Tx,
  merchantId: string,
  f: { status: MerchantSettlementOutcome | null; after: string | null; limit: number },
): Promise<Static<typeof MerchantSettlementOut>[]> {
  const { rows } = await tx.query<Static<typeof MerchantSettlementOut>>(
    `SELECT id, merchant_id, period_start, period_end, status, gross_amount, debt_netted, payout_amount, currency, created_at
       FROM merchant_settlement
      WHERE merchant_id = $1 AND ($2::text IS NULL OR status = $2) AND ($3::text IS NULL OR id < $3)
      ORDER BY id DESC LIMIT $4`,
    [merchantId, f.status, f.after, f.limit],
  );
  return rows;
}

/** A cash order of the merchant that a platform driver collected and the platform has not received yet. */
export interface HeldCashRow {
  id: string;
  organization_id: string;
  order_id: string;
  trip_id: string | null;
  driver_id: string;
  amount: string;
  currency: string;
  collected_at: Date;
}

const HELD_SQL = `SELECT e.id, e.organization_id, e.order_id, e.trip_id, e.driver_id, e.amount::numeric(14,2) AS amount, e.currency, e.created_at AS collected_at
    FROM driver_cash_entry e
   WHERE e.merchant_id = $1 AND e.entry_type = 'cash_collected' AND e.order_id IS NOT NULL
     AND NOT EXISTS (SELECT 1 FROM merchant_payment_receipt r WHERE r.organization_id = e.organization_id AND r.order_id = e.order_id)`;

/**
 * The merchant's cash the platform's drivers collected and the platform has not received: collections (`cash_collected`) of his
 * orders with no receipt yet (money writes the receipt once the driver's remittances cover the collection, and for a short one
 * once staff resolved the shortfall), as his wallet counts them pending. Newest first, `limit` rows after the cursor id.
 */
export async function listHeldCash(tx: Tx, merchantId: string, f: { after: string | null; limit: number }): Promise<HeldCashRow[]> {
  const { rows } = await tx.query<HeldCashRow>(`${HELD_SQL} AND ($2::text IS NULL OR e.id < $2) ORDER BY e.id DESC LIMIT $3`, [
    merchantId,
    f.after,
    f.limit,
  ]);
  return rows;
}

/** The total held and the number of collections (every page). */
export async function heldCashTotal(tx: Tx, merchantId: string): Promise<{ total: string; count: number; currency: string | null }> {
  const { rows } = await tx.query<{ total: string; count: number; currency: string | null }>(
    `SELECT COALESCE(sum(amount), 0)::numeric(14,2) AS total, count(*)::int AS count, max(currency) AS currency FROM (${HELD_SQL}) h`,
    [merchantId],
  );
  return rows[0];
}
