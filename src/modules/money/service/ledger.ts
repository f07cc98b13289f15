import type { Decimal } from 'decimal.js';
import { recordAudit } from '../../../platform/audit.js';
import type { Actor } from '../../../platform/auth.js';
import type { Tx } from '../../../platform/db/index.js';
import { AppError } from '../../../platform/errors.js';
import { newId } from '../../../platform/ids.js';
import { formatMoney, money, toCents } from '../../../platform/money.js';
import type { CollectedBy, OrderMoneyFacts, OrderPayments, PaymentDestination, PaymentStatus } from '../../commerce/index.js';
import type { Transitions } from '../../../platform/state-machine.js';
import type { MerchantRow } from '../../logistics/index.js';
import type { MoneyContext } from '../context.js';
import { type EntryView, insertEntry, walletSums } from '../repo/wallet.js';
import type { ReviewStatus, WalletEntryType } from '../schemas.js';

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

export interface Posting {
  entryType: WalletEntryType;
  amount: string;
}

/**
 * The wallet entries of a delivered order (pure; unit-tested against hand-computed figures).
 *
 * commission = commission_percent × (subtotal − discount_total), rounded half-up to cents.
 * - platform, and cash collected by the platform's driver: the platform collects the customer's whole payment, and credits
 *   all of it to the merchant: sale_credit +total (subtotal − discount_total + delivery_fee), platform_commission −commission,
 *   delivery_fee_debit −delivery_fee. The merchant nets subtotal − discount_total − commission (pending until the platform
 *   has the money: the payment received, or the driver's cash remitted).
 * - merchant_direct, and cash collected by the merchant's own staff: the merchant already holds the money: no sale credit;
 *   the commission and the delivery fee are merchant debt: platform_commission −commission, delivery_fee_debit −delivery_fee.
 * So the merchant nets subtotal − discount_total − commission whoever collected the money (for direct and cash
 * orders, counting the total he collected himself); the platform keeps the commission and the delivery fee.
 * Zero amounts are not written (a free delivery writes no delivery_fee_debit).
 */
export function postingsFor(
  facts: Pick<OrderMoneyFacts, 'paymentDestination' | 'subtotal' | 'discountTotal' | 'deliveryFee' | 'total'> &
    Partial<Pick<OrderMoneyFacts, 'collectedBy'>>,
  commissionPercent: string,
): Posting[] {
  const fee = money(facts.deliveryFee);
  const commission: Decimal = toCents(money(facts.subtotal).minus(facts.discountTotal).times(commissionPercent).dividedBy(100));
  const out: Posting[] = [];
  if (platformCollects(facts)) out.push({ entryType: 'sale_credit', amount: formatMoney(money(facts.total)) });
  out.push({ entryType: 'platform_commission', amount: formatMoney(commission.negated()) });
  out.push({ entryType: 'delivery_fee_debit', amount: formatMoney(fee.negated()) });
  return out.filter((p) => !money(p.amount).isZero());
}

/** Whether the platform collects the customer's payment of an order: platform payments, and cash its driver takes at the door. */
export function platformCollects(
  facts: Pick<OrderMoneyFacts, 'paymentDestination'> & Partial<Pick<OrderMoneyFacts, 'collectedBy'>>,
): boolean {
  return facts.paymentDestination === 'platform' || (facts.paymentDestination === 'cash' && facts.collectedBy === 'driver');
}

export interface EntryInput {
  merchantId: string;
  entryType: WalletEntryType;
  amount: string;
  currency: string;
  orderId?: string | null;
  tripId?: string | null;
  driverId?: string | null;
  settlementId?: string | null;
  paymentDestination?: PaymentDestination | null;
  collectedBy?: CollectedBy | null;
  territoryId?: string | null;
  note?: string | null;
}

/** Appends one wallet entry and its audit row (every money movement is audited). */
export async function appendEntry(
  tx: Tx,
  actor: Pick<Actor, 'organizationId' | 'userId' | 'requestId'>,
  e: EntryInput,
): Promise<EntryView> {
  const row = await insertEntry(tx, {
    organizationId: actor.organizationId,
    id: newId(),
    merchantId: e.merchantId,
    orderId: e.orderId ?? null,
    tripId: e.tripId ?? null,
    driverId: e.driverId ?? null,
    settlementId: e.settlementId ?? null,
    entryType: e.entryType,
    paymentDestination: e.paymentDestination ?? null,
    collectedBy: e.collectedBy ?? null,
    amount: e.amount,
    currency: e.currency,
    territoryId: e.territoryId ?? null,
    note: e.note ?? null,
    createdByUserId: actor.userId,
  });
  await recordAudit(tx, actor, {
    action: `wallet.${e.entryType}`,
    entityType: 'merchant_wallet_entry',
    entityId: row.id,
    after: {
      merchant_id: e.merchantId,
      order_id: e.orderId ?? null,
      trip_id: e.tripId ?? null,
      amount: e.amount,
      currency: e.currency,
      settlement_id: e.settlementId ?? null,
    },
  });
  return row;
}
