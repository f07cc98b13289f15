import type { Actor } from '../../platform/auth.js';
import type { MoneyContext } from './index.js';
import type { Tx } from '../../platform/db/index.js';
import { AppError } from '../../platform/errors.js';
import { formatMoney, money } from '../../platform/money.js';
import type { OrderPayments, PaymentStatus } from '../../platform/order-contracts.js';
import type { Transitions } from '../../platform/state-machine.js';
import type { MerchantRow } from '../logistics/index.js';
import { walletSums } from './repo/wallet.js';
import type { REVIEW_STATUSES, WALLET_ENTRY_TYPES } from './tables.js';

export type ReviewStatus = (typeof REVIEW_STATUSES)[number];
export type WalletEntryType = (typeof WALLET_ENTRY_TYPES)[number];

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

/**
 * The wallet of a merchant, derived from its entries (optionally only those created before `before`; `organizationId` for
 * system transactions). A merchant without entries shows the organization's currency.
 */
export async function walletSummary(
  ctx: MoneyContext,
  tx: Tx,
  merchantId: string,
  before: Date | null = null,
  organizationId: string | null = null,
): Promise<WalletSummary> {
  const sums = await walletSums(tx, merchantId, before, organizationId);
  const currency = sums.currency ?? (await ctx.deps.organizations.settingsIn(tx)).default_currency;
  return summarize(sums.balance, sums.debt_net, currency, sums.pending);
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
