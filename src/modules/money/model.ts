import type { Actor } from '../../platform/auth.js';
import type { MoneyContext } from './index.js';
import type { Tx } from '../../platform/db/index.js';
import { AppError } from '../../platform/errors.js';
import { formatMoney, money } from '../../platform/money.js';
import type { OrderPayments, PaymentStatus } from '../../platform/order-contracts.js';
import type { Transitions } from '../../platform/state-machine.js';
import type { MerchantRow } from '../logistics/index.js';

export type ReviewStatus = 'pending' | 'approved' | 'rejected' | 'cancelled';
export type WalletEntryType = 'sale_credit' | 'platform_commission' | 'delivery_fee_debit' | 'merchant_debt_payment' | 'adjustment' | 'refund' | 'settlement_debit';

/** Payment review: a rejected review reopens when the customer submits a new proof; a pending one is cancelled with its order. */
export const REVIEW_TRANSITIONS: Transitions<ReviewStatus> = {
  pending: ['approved', 'rejected', 'cancelled'],
  rejected: ['pending'],
  approved: [],
  cancelled: [],
};

/**
 * The order payment status moves money decides (commerce stores it). `pending → paid` is the cash order
 * at delivery (commerce); refunds come from an administrator's refund.
 */
export const PAYMENT_STATUS_TRANSITIONS: Transitions<PaymentStatus> = {
  pending: ['pending_review', 'authorized', 'paid', 'failed'],
  pending_review: ['paid', 'failed'],
  failed: ['pending_review'],
  authorized: ['paid', 'failed'],
  paid: ['partially_refunded', 'refunded'],
  partially_refunded: ['partially_refunded', 'refunded'],
  refunded: [],
};

/** Commission and delivery-fee entries of orders whose money the merchant received: merchant debt (SPEC wallet rule 2). */
export const DEBT_ENTRY_SQL = `(entry_type IN ('platform_commission', 'delivery_fee_debit') AND payment_destination IN ('merchant_direct', 'cash'))`;

export const REVIEW_COLUMNS = `id, organization_id, territory_id, order_id, merchant_id, customer_id, amount, currency, proof_storage_object_id,
  customer_reference, status, review_notes, submissions, submitted_at, reviewed_by_user_id, reviewed_at, updated_at`;

export const ENTRY_COLUMNS = `id, merchant_id, order_id, trip_id, driver_id, settlement_id, entry_type, payment_destination, amount, currency,
  territory_id, note, created_by_user_id, created_at`;

/** For sub-administrators: the territories they are confined to (null = not confined). */
export { scopeOf } from '../../platform/scope.js';

/** The merchant the calling `comercio` user owns (404 when he has none). */
export async function ownMerchant(ctx: MoneyContext, tx: Tx, actor: Actor): Promise<MerchantRow> {
  const m = await ctx.deps.logistics.merchantOfUser(tx, actor.userId);
  if (!m) throw AppError.notFound('Merchant');
  return m;
}

/** Commerce's order facts. */
export function ordersOf(ctx: MoneyContext): OrderPayments {
  return ctx.deps.orders;
}

export interface WalletSummary {
  /** SUM of every entry (= available + pending − debt + credit). */
  balance: string;
  /** Entries of platform-paid orders whose payment the platform has not recorded as received: visible, never paid out. */
  pending: string;
  /** What the platform holds for the merchant from money it received, outside debt and credit: what a settlement pays out (>= 0). */
  available: string;
  /** Commission and delivery-fee debt not yet covered by debt payments, plus any shortfall of the available part (>= 0). */
  debt: string;
  /** Debt payments beyond the debt, held for future debt (>= 0). */
  credit: string;
  /** Same as `available` (kept for older clients). */
  payable: string;
  currency: string;
}

/** Wallet entries of a platform-paid order without a receipt: money the platform has not received yet. */
export const PENDING_ENTRY_SQL = `(payment_destination = 'platform' AND order_id IS NOT NULL AND entry_type IN ('sale_credit', 'platform_commission', 'delivery_fee_debit')
  AND NOT EXISTS (SELECT 1 FROM merchant_payment_receipt r WHERE r.organization_id = merchant_wallet_entry.organization_id AND r.order_id = merchant_wallet_entry.order_id))`;

/** The wallet of a merchant, derived from its entries (optionally only those created before `before`; `organizationId` for system transactions). */
export async function walletSummary(tx: Tx, merchantId: string, before: Date | null = null, organizationId: string | null = null): Promise<WalletSummary> {
  const { rows } = await tx.query<{ balance: string; debt_net: string; pending: string; currency: string | null }>(
    `SELECT COALESCE(sum(amount), 0)::numeric(14,2) AS balance,
            COALESCE(sum(amount) FILTER (WHERE ${DEBT_ENTRY_SQL} OR entry_type = 'merchant_debt_payment'), 0)::numeric(14,2) AS debt_net,
            COALESCE(sum(amount) FILTER (WHERE ${PENDING_ENTRY_SQL}), 0)::numeric(14,2) AS pending,
            max(currency) AS currency
       FROM merchant_wallet_entry
      WHERE merchant_id = $1 AND ($2::timestamptz IS NULL OR created_at < $2) AND ($3::text IS NULL OR organization_id = $3)`,
    [merchantId, before, organizationId],
  );
  const currency =
    rows[0].currency ??
    (await tx.query<{ c: string }>('SELECT default_currency AS c FROM organization_settings WHERE ($1::text IS NULL OR organization_id = $1)', [organizationId])).rows[0]?.c ??
    'BOB';
  return summarize(rows[0].balance, rows[0].debt_net, currency, rows[0].pending);
}

/**
 * balance = SUM(all); debt_net = SUM(debt entries + debt payments): negative is debt, positive is credit;
 * pending = SUM(entries of unreceived platform orders); available = the rest. When the rest is negative
 * (a refund, a charge or an adjustment larger than what was available) the shortfall is debt, so available
 * never goes below zero and never includes pending money.
 */
export function summarize(balance: string, debtNet: string, currency: string, pending = '0'): WalletSummary {
  const p = money(pending);
  let net = money(debtNet);
  let available = money(balance).minus(net).minus(p);
  if (available.isNegative() && !available.isZero()) {
    net = net.plus(available);
    available = money(0);
  }
  return {
    balance: formatMoney(money(balance)),
    pending: formatMoney(p),
    available: formatMoney(available),
    debt: net.isNegative() && !net.isZero() ? formatMoney(net.negated()) : '0.00',
    credit: net.gt(0) ? formatMoney(net) : '0.00',
    payable: formatMoney(available),
    currency,
  };
}

/** Serializes work on one merchant's wallet (debt payments, settlements) for the transaction. */
export async function lockMerchantWallet(tx: Tx, organizationId: string, merchantId: string): Promise<void> {
  await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`money:wallet:${organizationId}:${merchantId}`]);
}

