import type { Actor } from '../../platform/auth.js';
import type { AppContext } from '../../platform/context.js';
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
export const scopeOf = (actor: Actor): string[] | null => (actor.kind === 'subadmin' ? (actor.subadmin?.territoryIds ?? []) : null);

/** The merchant the calling `comercio` user owns (404 when he has none). */
export async function ownMerchant(ctx: AppContext, tx: Tx, actor: Actor): Promise<MerchantRow> {
  const m = await ctx.services.logistics.merchantOfUser(tx, actor.userId);
  if (!m) throw AppError.notFound('Merchant');
  return m;
}

/** Commerce's order facts; absent until commerce is merged (then every order route answers 503). */
export function ordersOf(ctx: AppContext): OrderPayments {
  const orders = ctx.services.orders;
  if (!orders) throw new AppError(503, 'ORDERS_UNAVAILABLE', 'Orders are not available in this build');
  return orders;
}

export interface WalletSummary {
  /** SUM of every entry. */
  balance: string;
  /** Commission and delivery-fee debt not yet covered by debt payments (>= 0). */
  debt: string;
  /** Debt payments beyond the debt, held for future debt (>= 0). */
  credit: string;
  /** What the platform holds for the merchant outside debt and credit: what a settlement would pay out. */
  payable: string;
  currency: string;
}

/** The wallet of a merchant, derived from its entries (optionally only those created before `before`; `organizationId` for system transactions). */
export async function walletSummary(tx: Tx, merchantId: string, before: Date | null = null, organizationId: string | null = null): Promise<WalletSummary> {
  const { rows } = await tx.query<{ balance: string; debt_net: string; currency: string | null }>(
    `SELECT COALESCE(sum(amount), 0)::numeric(14,2) AS balance,
            COALESCE(sum(amount) FILTER (WHERE ${DEBT_ENTRY_SQL} OR entry_type = 'merchant_debt_payment'), 0)::numeric(14,2) AS debt_net,
            max(currency) AS currency
       FROM merchant_wallet_entry
      WHERE merchant_id = $1 AND ($2::timestamptz IS NULL OR created_at < $2) AND ($3::text IS NULL OR organization_id = $3)`,
    [merchantId, before, organizationId],
  );
  return summarize(rows[0].balance, rows[0].debt_net, rows[0].currency ?? 'BOB');
}

/** balance = SUM(all); debt_net = SUM(debt entries + debt payments): negative is debt, positive is credit; payable = the rest. */
export function summarize(balance: string, debtNet: string, currency: string): WalletSummary {
  const net = money(debtNet);
  return {
    balance: formatMoney(money(balance)),
    debt: net.isNegative() && !net.isZero() ? formatMoney(net.negated()) : '0.00',
    credit: net.gt(0) ? formatMoney(net) : '0.00',
    payable: formatMoney(money(balance).minus(net)),
    currency,
  };
}

/** Serializes work on one merchant's wallet (debt payments, settlements) for the transaction. */
export async function lockMerchantWallet(tx: Tx, organizationId: string, merchantId: string): Promise<void> {
  await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`money:wallet:${organizationId}:${merchantId}`]);
}

/** Route hook: an action POST sent without a body validates as `{}` (its body fields are all optional). */
export async function emptyBodyAsObject(req: { body: unknown }): Promise<void> {
  if (req.body === undefined || req.body === null) req.body = {};
}
