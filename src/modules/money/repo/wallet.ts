import type { Static } from '@sinclair/typebox';
import { eq, sql } from 'drizzle-orm';
import type { Tx } from '../../../platform/db/index.js';
import { scopeSql, type TerritoryScope } from '../../../platform/scope.js';
import type { EntryOut } from '../schemas.js';
import { merchantOrderPosting, merchantPaymentReceipt, merchantWalletEntry as entry } from '../tables.js';

/** A wallet entry as stored (derived from the table) and as the API shows it (the response schema). */
export type EntryRecord = typeof entry.$inferSelect;
export type EntryView = Static<typeof EntryOut>;
export type NewEntry = Omit<typeof entry.$inferInsert, 'createdAt'>;

export const entryOut = (e: EntryRecord): EntryView => ({
  id: e.id,
  merchant_id: e.merchantId,
  order_id: e.orderId,
  trip_id: e.tripId,
  driver_id: e.driverId,
  settlement_id: e.settlementId,
  entry_type: e.entryType,
  payment_destination: e.paymentDestination,
  amount: e.amount,
  currency: e.currency,
  territory_id: e.territoryId,
  note: e.note,
  created_by_user_id: e.createdByUserId,
  created_at: e.createdAt,
});

/**
 * Commission and delivery-fee entries of orders whose money the merchant received (merchant_direct, and cash his own staff
 * collected; cash entries from before `collected_by` existed were merchant-collected): merchant debt (SPEC wallet rule 2).
 */
export const DEBT_ENTRY_SQL = `(entry_type IN ('platform_commission', 'delivery_fee_debit') AND (payment_destination = 'merchant_direct' OR (payment_destination = 'cash' AND collected_by IS DISTINCT FROM 'driver')))`;

/**
 * Wallet entries of an order the platform collects (platform payments, cash its driver collects) without a receipt: money the
 * platform has not received yet (a platform payment not recorded, or cash the driver has not remitted).
 */
export const PENDING_ENTRY_SQL = `((payment_destination = 'platform' OR (payment_destination = 'cash' AND collected_by = 'driver')) AND order_id IS NOT NULL AND entry_type IN ('sale_credit', 'platform_commission', 'delivery_fee_debit')
  AND NOT EXISTS (SELECT 1 FROM merchant_payment_receipt r WHERE r.organization_id = merchant_wallet_entry.organization_id AND r.order_id = merchant_wallet_entry.order_id))`;

/** Appends one wallet entry (append-only: there is no update). */
export async function insertEntry(tx: Tx, v: NewEntry): Promise<EntryView> {
  const rows = await tx.orm.insert(entry).values(v).returning();
  return entryOut(rows[0]);
}

/** Serializes work on one merchant's wallet (debt payments, settlements, refunds) for the transaction. */
export async function lockMerchantWallet(tx: Tx, organizationId: string, merchantId: string): Promise<void> {
  await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`money:wallet:${organizationId}:${merchantId}`]);
}

/** The sums a wallet is derived from (see model.summarize); `currency` is null when the merchant has no entry. */
export interface WalletSums {
  balance: string;
  debt_net: string;
  pending: string;
  currency: string | null;
}

/** The sums of a merchant's entries (optionally only those created before `before`; `organizationId` for system transactions). */
export async function walletSums(tx: Tx, merchantId: string, before: Date | null, organizationId: string | null): Promise<WalletSums> {
  const { rows } = await tx.query<WalletSums>(
    `SELECT COALESCE(sum(amount), 0)::numeric(14,2) AS balance,
            COALESCE(sum(amount) FILTER (WHERE ${DEBT_ENTRY_SQL} OR entry_type = 'merchant_debt_payment'), 0)::numeric(14,2) AS debt_net,
            COALESCE(sum(amount) FILTER (WHERE ${PENDING_ENTRY_SQL}), 0)::numeric(14,2) AS pending,
            max(currency) AS currency
       FROM merchant_wallet_entry
      WHERE merchant_id = $1 AND ($2::timestamptz IS NULL OR created_at < $2) AND ($3::text IS NULL OR organization_id = $3)`,
    [merchantId, before, organizationId],
  );
  return rows[0];
}

/** A debt entry a payment covers: what it owed and how much of it this payment covers. */
export interface DebtCoverage {
  id: string;
  order_id: string | null;
  entry_type: EntryRecord['entryType'];
  owed: string;
  covered: string;
}

/**
 * The debt entries a payment of `amount` newly covers, oldest first. Coverage is derived, never stored:
 * all debt payments so far cover the debt entries in (created_at, id) order.
 */
export async function debtCoverage(tx: Tx, merchantId: string, amount: string): Promise<DebtCoverage[]> {
  const { rows } = await tx.query<DebtCoverage>(
    `WITH d AS (
       SELECT id, order_id, entry_type, created_at, -amount AS owed, sum(-amount) OVER (ORDER BY created_at, id) AS cum
         FROM merchant_wallet_entry WHERE merchant_id = $1 AND ${DEBT_ENTRY_SQL}),
     p AS (SELECT COALESCE(sum(amount), 0) AS paid FROM merchant_wallet_entry WHERE merchant_id = $1 AND entry_type = 'merchant_debt_payment'),
     c AS (
       SELECT d.*, LEAST(d.owed, GREATEST(0, p.paid - (d.cum - d.owed))) AS before_cov,
              LEAST(d.owed, GREATEST(0, p.paid + $2::numeric - (d.cum - d.owed))) AS after_cov
         FROM d, p)
     SELECT id, order_id, entry_type, owed::numeric(14,2) AS owed, (after_cov - before_cov)::numeric(14,2) AS covered
       FROM c WHERE after_cov > before_cov ORDER BY created_at, id`,
    [merchantId, amount],
  );
  return rows;
}

/** Whether a trip already carries its express charge (delivery fee or platform commission). */
export async function tripCharged(tx: Tx, tripId: string): Promise<boolean> {
  const { rowCount } = await tx.query(
    `SELECT 1 FROM merchant_wallet_entry WHERE trip_id = $1 AND entry_type IN ('delivery_fee_debit', 'platform_commission')`,
    [tripId],
  );
  return rowCount > 0;
}

/** Whether the order or the trip already carries a delivery-fee debit. */
export async function deliveryFeeCharged(tx: Tx, orderId: string, tripId: string | null): Promise<boolean> {
  const { rowCount } = await tx.query(
    `SELECT 1 FROM merchant_wallet_entry WHERE entry_type = 'delivery_fee_debit' AND (order_id = $1 OR trip_id = $2)`,
    [orderId, tripId],
  );
  return rowCount > 0;
}

/** Merchant debt in the scope, per merchant (never below zero: one merchant's credit does not hide another's debt). */
export async function debtTotals(tx: Tx, scope: TerritoryScope): Promise<{ total: string; merchants: number }> {
  const { rows } = await tx.query<{ total: string; merchants: number }>(
    `SELECT COALESCE(sum(d), 0)::numeric(14,2) AS total, count(*) FILTER (WHERE d > 0)::int AS merchants FROM (
       SELECT GREATEST(0, -sum(amount)) AS d FROM merchant_wallet_entry
        WHERE (${DEBT_ENTRY_SQL} OR entry_type = 'merchant_debt_payment') AND ${scopeSql('territory_id', 1)}
        GROUP BY merchant_id) x`,
    [scope],
  );
  return rows[0];
}

// ---------------------------------------------------------------- order postings (the idempotency anchor of a delivered order)

export type PostingRecord = typeof merchantOrderPosting.$inferSelect;

/** Anchors a delivered order's posting; false when it was posted already (also by a concurrent transaction). */
export async function anchorOrderPosting(
  tx: Tx,
  v: Omit<typeof merchantOrderPosting.$inferInsert, 'refundedTotal' | 'postedAt'>,
): Promise<boolean> {
  const rows = await tx.orm
    .insert(merchantOrderPosting)
    .values(v)
    .onConflictDoNothing()
    .returning({ orderId: merchantOrderPosting.orderId });
  return rows.length > 0;
}

export async function findOrderPostingForUpdate(
  tx: Tx,
  orderId: string,
): Promise<Pick<PostingRecord, 'refundedTotal' | 'orderTotal'> | null> {
  const rows = await tx.orm
    .select({ refundedTotal: merchantOrderPosting.refundedTotal, orderTotal: merchantOrderPosting.orderTotal })
    .from(merchantOrderPosting)
    .where(eq(merchantOrderPosting.orderId, orderId))
    .for('update');
  return rows[0] ?? null;
}

export async function addRefunded(tx: Tx, orderId: string, amount: string): Promise<void> {
  await tx.orm
    .update(merchantOrderPosting)
    .set({ refundedTotal: sql`${merchantOrderPosting.refundedTotal} + ${amount}::numeric` })
    .where(eq(merchantOrderPosting.orderId, orderId));
}

// ---------------------------------------------------------------- payment receipts

export type ReceiptRecord = typeof merchantPaymentReceipt.$inferSelect;

/** Records a platform order's payment as received; null when it was recorded already. */
export async function insertReceipt(
  tx: Tx,
  v: Omit<typeof merchantPaymentReceipt.$inferInsert, 'receivedAt'>,
): Promise<ReceiptRecord | null> {
  const rows = await tx.orm.insert(merchantPaymentReceipt).values(v).onConflictDoNothing().returning();
  return rows[0] ?? null;
}
