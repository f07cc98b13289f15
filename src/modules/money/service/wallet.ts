import { recordAudit } from '../../../platform/audit.js';
import type { Actor } from '../../../platform/auth.js';
import type { Tx } from '../../../platform/db/index.js';
import { AppError } from '../../../platform/errors.js';
import { formatMoney, minMoney, money } from '../../../platform/money.js';
import type { ExpressMoneyFacts, OrderMoneyFacts, PaymentStatus } from '../../commerce/index.js';
import { assertTransition } from '../../../platform/state-machine.js';
import type { MoneyContext } from '../context.js';
import { anchorOrderPosting, deliveryFeeCharged, lockMerchantWallet, tripCharged } from '../repo/wallet.js';
import type { CashService } from './cash.js';
import { appendEntry, ordersOf, PAYMENT_STATUS_TRANSITIONS, postingsFor } from './ledger.js';

export function createWalletService(
  ctx: MoneyContext,
  cancelReview: (tx: Tx, actor: Actor, facts: OrderMoneyFacts) => Promise<void>,
  cash: Pick<CashService, 'recordCollection'>,
) {
  /** MoneyHooks.orderDelivered: posts the order once (a repeat, also a concurrent one, writes nothing). */
  async function orderDelivered(tx: Tx, actor: Actor, facts: OrderMoneyFacts): Promise<void> {
    const anchored = await anchorOrderPosting(tx, {
      organizationId: actor.organizationId,
      orderId: facts.orderId,
      merchantId: facts.merchantId,
      paymentDestination: facts.paymentDestination,
      orderTotal: facts.total,
    });
    if (!anchored) return;
    const merchant = await ctx.deps.logistics.getMerchant(tx, facts.merchantId);
    if (!merchant) throw AppError.notFound('Merchant');
    const trip = facts.tripId ? await ctx.deps.logistics.getTrip(tx, facts.tripId) : null;
    for (const p of postingsFor(facts, merchant.commission_percent)) {
      await appendEntry(tx, actor, {
        merchantId: facts.merchantId,
        entryType: p.entryType,
        amount: p.amount,
        currency: facts.currency,
        orderId: facts.orderId,
        tripId: facts.tripId,
        driverId: trip?.driver_id ?? null,
        paymentDestination: facts.paymentDestination,
        collectedBy: facts.collectedBy,
        territoryId: facts.territoryId,
        note: p.entryType === 'platform_commission' ? `commission ${merchant.commission_percent}%` : null,
      });
    }
    // Cash on delivery: the driver now carries the cash he recorded at the door.
    if (facts.paymentDestination === 'cash' && facts.collectedBy === 'driver') await cash.recordCollection(tx, actor, facts, trip);
  }

  /**
   * MoneyHooks.expressDelivered: a completed delivery_express trip. The merchant pays the delivery fee: one `delivery_fee_debit`
   * −fee, the whole fee, as for a marketplace order (each entry type means one thing in every flow: `delivery_fee_debit` is the
   * delivery fee the merchant pays, `platform_commission` the commission on a sale; how the fee splits between the driver and
   * the platform is the trip's driver_earning, not the merchant's ledger). Express requests carry no sale, so there is no sale
   * credit and no commission. Keyed by the trip: a repeat writes nothing. With nothing available the charge shows as merchant debt.
   */
  async function expressDelivered(tx: Tx, actor: Actor, e: ExpressMoneyFacts): Promise<void> {
    const fee = money(e.deliveryFee);
    if (fee.isZero()) return;
    await lockMerchantWallet(tx, actor.organizationId, e.merchantId);
    if (await tripCharged(tx, e.tripId)) return;
    const earning = minMoney(money(e.driverEarning), fee);
    await appendEntry(tx, actor, {
      merchantId: e.merchantId,
      entryType: 'delivery_fee_debit',
      amount: formatMoney(fee.negated()),
      currency: e.currency,
      tripId: e.tripId,
      driverId: e.driverId,
      territoryId: e.territoryId,
      note: `express ${e.expressRequestId}: delivery fee ${formatMoney(fee)} (driver ${formatMoney(earning)}, platform ${formatMoney(fee.minus(earning))})`,
    });
  }

  /**
   * MoneyHooks.orderCancelled: the order's pending review is cancelled and its payment status follows:
   * pending_review | authorized → failed (nothing was taken); a received platform payment (paid) → refunded
   * (the order was never delivered, so the merchant wallet holds nothing of it and no entry is written).
   * A direct payment the merchant approved stays paid: the merchant holds that money and returns it himself.
   */
  async function orderCancelled(tx: Tx, actor: Actor, facts: OrderMoneyFacts): Promise<void> {
    await cancelReview(tx, actor, facts);
    const to: PaymentStatus | null =
      facts.paymentStatus === 'pending_review' || facts.paymentStatus === 'authorized'
        ? 'failed'
        : facts.paymentStatus === 'paid' && facts.paymentDestination === 'platform'
          ? 'refunded'
          : null;
    if (!to) return;
    assertTransition('Order payment', PAYMENT_STATUS_TRANSITIONS, facts.paymentStatus, to);
    await ordersOf(ctx).setPaymentStatus(tx, facts.orderId, to);
    await recordAudit(tx, actor, {
      action: `order_payment.${to}`,
      entityType: 'merchant_order',
      entityId: facts.orderId,
      before: { payment_status: facts.paymentStatus },
      after: { payment_status: to, reason: 'order cancelled' },
    });
  }

  /**
   * MoneyHooks.deliveryFailed: the driver reached the recipient and could not hand over (absent, refused, wrong address...).
   * The delivery was performed, so its fee is owed by the merchant (the platform's customer for deliveries; he settles
   * with his own customer) and backs the driver's earning for the attempt; the goods were not sold, so there is no sale
   * credit and no commission. An order writes one `delivery_fee_debit` −delivery_fee without a payment destination (a
   * charge against what the platform holds for the merchant; beyond that it is debt) and its payment follows as for a
   * cancellation (pending_review | authorized → failed, a received platform payment → refunded in full); an express
   * request is charged exactly as a completed one. The return leg costs nothing more. Keyed by order and trip: a repeat writes nothing.
   */
  async function deliveryFailed(tx: Tx, actor: Actor, f: { order: OrderMoneyFacts } | { express: ExpressMoneyFacts }): Promise<void> {
    if ('express' in f) return expressDelivered(tx, actor, f.express);
    const o = f.order;
    await orderCancelled(tx, actor, o);
    const fee = money(o.deliveryFee);
    if (fee.isZero()) return;
    await lockMerchantWallet(tx, actor.organizationId, o.merchantId);
    if (await deliveryFeeCharged(tx, o.orderId, o.tripId)) return;
    const trip = o.tripId ? await ctx.deps.logistics.getTrip(tx, o.tripId) : null;
    await appendEntry(tx, actor, {
      merchantId: o.merchantId,
      entryType: 'delivery_fee_debit',
      amount: formatMoney(fee.negated()),
      currency: o.currency,
      orderId: o.orderId,
      tripId: o.tripId,
      driverId: trip?.driver_id ?? null,
      territoryId: o.territoryId,
      note: `failed delivery${trip?.failure_reason ? ` (${trip.failure_reason})` : ''}: the attempt's delivery fee`,
    });
  }

  return { orderDelivered, orderCancelled, expressDelivered, deliveryFailed };
}
