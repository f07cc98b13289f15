import type { Static } from '@sinclair/typebox';
import { recordAudit } from '../../../platform/audit.js';
import type { Actor } from '../../../platform/auth.js';
import type { Tx } from '../../../platform/db/index.js';
import { AppError } from '../../../platform/errors.js';
import { formatMoney, minMoney, money } from '../../../platform/money.js';
import { assertTransition } from '../../../platform/state-machine.js';
import type { MoneyContext } from '../context.js';
import { addRefunded, findOrderPostingForUpdate, insertReceipt, lockMerchantWallet, type ReceiptRecord } from '../repo/wallet.js';
import { type ReceiptMethod, ReceiptOut } from '../schemas.js';
import { appendEntry, ordersOf, PAYMENT_STATUS_TRANSITIONS, platformCollects, walletSummary } from './ledger.js';

const receiptOut = (r: ReceiptRecord): Static<typeof ReceiptOut> => ({
  order_id: r.orderId,
  merchant_id: r.merchantId,
  amount: r.amount,
  currency: r.currency,
  method: r.method,
  reference: r.reference,
  note: r.note,
  recorded_by_user_id: r.recordedByUserId,
  received_at: r.receivedAt,
});

/**
 * Money received, refunds and adjustments. Every function writes its wallet entries, the order payment status and its
 * audit row in one transaction; each takes the merchant's wallet lock so settlements and debt payments see all or nothing.
 */
export function createOrderPaymentService(ctx: MoneyContext) {
  async function facts(tx: Tx, orderId: string) {
    const f = await ordersOf(ctx).getOrderFacts(tx, orderId);
    if (!f) throw AppError.notFound('Order');
    return f;
  }

  /**
   * The platform received a platform-destination order's payment (the connector is not active): the administrator records it,
   * e.g. the cash the driver collected at the door and handed in, or a transfer. The amount is the order total. Payment status
   * pending | authorized → paid; from then on the order's wallet entries are available instead of pending.
   */
  async function recordReceipt(
    actor: Actor,
    orderId: string,
    input: { method: ReceiptMethod; amount?: string; reference?: string; note?: string },
  ) {
    return ctx.db.withTenant(actor, async (tx) => {
      const f = await facts(tx, orderId);
      if (f.paymentDestination !== 'platform') {
        throw AppError.unprocessable(
          `The order is paid by '${f.paymentDestination}'; only platform payments are received by the platform`,
          'NOT_PLATFORM_PAYMENT',
        );
      }
      if (f.status === 'cancelled') throw AppError.conflict('The order is cancelled', 'ORDER_CANCELLED');
      // A failed delivery: the customer did not get the goods, so there is no payment to receive (a received one was refunded).
      if (f.status === 'delivery_failed' || f.status === 'returned')
        throw AppError.conflict('The delivery of this order failed', 'ORDER_DELIVERY_FAILED');
      if (input.amount !== undefined && !money(input.amount).eq(money(f.total))) {
        throw AppError.unprocessable(`The amount must equal the order total ${f.total}`, 'AMOUNT_MISMATCH', [
          { field: 'amount', message: `must be ${f.total}` },
        ]);
      }
      await lockMerchantWallet(tx, actor.organizationId, f.merchantId);
      assertTransition('Order payment', PAYMENT_STATUS_TRANSITIONS, f.paymentStatus, 'paid');
      const receipt = await insertReceipt(tx, {
        organizationId: actor.organizationId,
        orderId,
        merchantId: f.merchantId,
        amount: f.total,
        currency: f.currency,
        method: input.method,
        reference: input.reference ?? null,
        note: input.note ?? null,
        recordedByUserId: actor.userId,
      });
      if (!receipt) throw AppError.conflict('The payment of this order is already recorded', 'PAYMENT_ALREADY_RECEIVED');
      await ordersOf(ctx).setPaymentStatus(tx, orderId, 'paid');
      await recordAudit(tx, actor, {
        action: 'order_payment.received',
        entityType: 'merchant_order',
        entityId: orderId,
        before: { payment_status: f.paymentStatus },
        after: { payment_status: 'paid', amount: f.total, method: input.method, reference: input.reference ?? null },
      });
      return { receipt: receiptOut(receipt), payment_status: 'paid' as const, wallet: await walletSummary(ctx, tx, f.merchantId) };
    });
  }

  /**
   * A refund of a delivered order the platform collected (a received platform payment, or cash the platform's driver collected at
   * the door; full when amount is omitted): the platform pays the customer back and charges the merchant one `refund` entry
   * (−amount), payment status paid | partially_refunded → partially_refunded | refunded. The merchant bears the refund; when more
   * than his available balance, the shortfall shows as debt.
   */
  async function refund(actor: Actor, orderId: string, input: { amount?: string; reason: string }) {
    return ctx.db.withTenant(actor, async (tx) => {
      const f = await facts(tx, orderId);
      if (!platformCollects(f)) {
        throw AppError.unprocessable(
          `The order was paid to the merchant ('${f.paymentDestination}'); the merchant refunds it himself`,
          'NOT_PLATFORM_PAYMENT',
        );
      }
      await lockMerchantWallet(tx, actor.organizationId, f.merchantId);
      const posted = await findOrderPostingForUpdate(tx, orderId);
      if (!posted) throw AppError.unprocessable('Only delivered orders are refunded (cancel an open order instead)', 'REFUND_NOT_ALLOWED');
      const trip = f.tripId ? await ctx.deps.logistics.getTrip(tx, f.tripId) : null;
      // Cash collected short at the door: the customer paid only what the driver took, and that is all he can get back.
      const paid =
        f.paymentDestination === 'cash' && trip?.cash_collected != null
          ? minMoney(money(posted.orderTotal), money(trip.cash_collected))
          : money(posted.orderTotal);
      const left = paid.minus(posted.refundedTotal);
      const amount = input.amount !== undefined ? money(input.amount) : left;
      if (!amount.gt(0))
        throw AppError.unprocessable('A refund must be positive', 'INVALID_AMOUNT', [{ field: 'amount', message: 'must be > 0' }]);
      if (amount.gt(left)) {
        throw AppError.unprocessable(
          `The refund exceeds what is left of what the customer paid (${formatMoney(left)})`,
          'REFUND_EXCEEDS_TOTAL',
          [{ field: 'amount', message: `at most ${formatMoney(left)}` }],
        );
      }
      const to = amount.eq(left) ? ('refunded' as const) : ('partially_refunded' as const);
      assertTransition('Order payment', PAYMENT_STATUS_TRANSITIONS, f.paymentStatus, to);
      await addRefunded(tx, orderId, formatMoney(amount));
      const entry = await appendEntry(tx, actor, {
        merchantId: f.merchantId,
        entryType: 'refund',
        amount: formatMoney(amount.negated()),
        currency: f.currency,
        orderId,
        tripId: f.tripId,
        driverId: trip?.driver_id ?? null,
        paymentDestination: f.paymentDestination,
        collectedBy: f.collectedBy,
        territoryId: f.territoryId,
        note: input.reason,
      });
      await ordersOf(ctx).setPaymentStatus(tx, orderId, to);
      await recordAudit(tx, actor, {
        action: `order_payment.${to}`,
        entityType: 'merchant_order',
        entityId: orderId,
        before: { payment_status: f.paymentStatus, refunded_total: posted.refundedTotal },
        after: { payment_status: to, amount: formatMoney(amount), reason: input.reason },
      });
      return { entry, payment_status: to, wallet: await walletSummary(ctx, tx, f.merchantId) };
    });
  }

  /** A signed correction of a merchant's wallet with its reason (an `adjustment` entry), audited. */
  async function adjust(actor: Actor, merchantId: string, input: { amount: string; reason: string; order_id?: string }) {
    const amount = money(input.amount);
    if (amount.isZero()) throw AppError.badRequest('amount may not be zero', [{ field: 'amount', message: 'must not be 0' }]);
    return ctx.db.withTenant(actor, async (tx) => {
      const merchant = await ctx.deps.logistics.getMerchant(tx, merchantId);
      if (!merchant) throw AppError.notFound('Merchant');
      let orderTerritory: string | null = null;
      if (input.order_id) {
        const f = await facts(tx, input.order_id);
        if (f.merchantId !== merchantId) throw AppError.notFound('Order');
        orderTerritory = f.territoryId;
      }
      await lockMerchantWallet(tx, actor.organizationId, merchantId);
      const before = await walletSummary(ctx, tx, merchantId);
      const entry = await appendEntry(tx, actor, {
        merchantId,
        entryType: 'adjustment',
        amount: formatMoney(amount),
        currency: before.currency,
        orderId: input.order_id ?? null,
        territoryId: orderTerritory ?? merchant.territory_id,
        note: input.reason,
      });
      return { entry, wallet: await walletSummary(ctx, tx, merchantId) };
    });
  }

  return { recordReceipt, refund, adjust };
}
