import type { Tx } from './db/index.js';
import type { Actor } from './auth.js';

/**
 * Contracts between commerce (orders), money (wallet, reviews) and chat (outbox), so each module calls
 * the other's service and never its tables. Commerce implements `orders`; money implements `money`;
 * chat implements `chat`. Every function runs in the caller's transaction.
 */
export type PaymentDestination = 'platform' | 'merchant_direct' | 'cash';
/** Cash orders: who takes the cash at the door (the platform's driver, or the merchant's own staff). */
export type CollectedBy = 'driver' | 'merchant';
export type PaymentStatus = 'pending' | 'pending_review' | 'authorized' | 'paid' | 'failed' | 'partially_refunded' | 'refunded';

export interface OrderMoneyFacts {
  orderId: string;
  merchantId: string;
  customerUserId: string;
  tripId: string | null;
  territoryId: string | null;
  paymentDestination: PaymentDestination;
  /** Cash orders only (null otherwise): who collected the cash. */
  collectedBy: CollectedBy | null;
  paymentStatus: PaymentStatus;
  status: string;
  subtotal: string;
  discountTotal: string;
  deliveryFee: string;
  total: string;
  currency: string;
}

/** A completed delivery_express trip (commerce tells money in the trip's transaction). */
export interface ExpressMoneyFacts {
  expressRequestId: string;
  merchantId: string;
  tripId: string;
  driverId: string | null;
  territoryId: string | null;
  deliveryFee: string;
  driverEarning: string;
  currency: string;
}

/** Implemented by commerce. */
export interface OrderPayments {
  getOrderFacts(tx: Tx, orderId: string): Promise<OrderMoneyFacts | null>;
  /** What logistics checks before linking a trip to an express request (same merchant, still `requested`, no trip). */
  getExpressFacts(tx: Tx, expressRequestId: string): Promise<{ merchantId: string; status: string; tripId: string | null } | null>;
  /** Sets payment_status (and the review link); no state machine here: money decides the transition. */
  setPaymentStatus(tx: Tx, orderId: string, status: PaymentStatus, paymentReviewId?: string | null): Promise<void>;
}

/** Implemented by money. */
export interface MoneyHooks {
  /** The order was delivered: wallet entries per payment destination (idempotent per order). */
  orderDelivered(tx: Tx, actor: Actor, facts: OrderMoneyFacts): Promise<void>;
  /** The order was cancelled: a pending payment review becomes `cancelled`; the payment status follows (pending_review | authorized → failed, received → refunded). */
  orderCancelled(tx: Tx, actor: Actor, facts: OrderMoneyFacts): Promise<void>;
  /** The payment destinations a merchant accepts now: platform and cash always; merchant_direct only with direct payment enabled in his profile. */
  paymentDestinations(tx: Tx, merchantId: string): Promise<PaymentDestination[]>;
  /** The destinations (as paymentDestinations) and who collects a cash order of this merchant, in one read. */
  paymentOptions(tx: Tx, merchantId: string): Promise<{ destinations: PaymentDestination[]; cashCollectedBy: CollectedBy }>;
  /** A delivery_express trip was completed: its delivery-fee entry (idempotent per trip). */
  expressDelivered(tx: Tx, actor: Actor, facts: ExpressMoneyFacts): Promise<void>;
  /**
   * A delivery failed at the recipient's door: the merchant pays the attempt's delivery fee (idempotent per order and
   * trip), no sale is credited, and an order's payment status follows as for a cancellation.
   */
  deliveryFailed(tx: Tx, actor: Actor, facts: { order: OrderMoneyFacts } | { express: ExpressMoneyFacts }): Promise<void>;
}

/** Implemented by chat (given to commerce by the composition root): `summary` is the human message text, `data` the structured order summary. */
export interface ChatOutboxHooks {
  enqueueOrderCreated(
    tx: Tx,
    input: {
      organizationId: string;
      merchantId: string;
      orderId?: string;
      expressRequestId?: string;
      territoryId?: string | null;
      summary: string;
      data?: Record<string, unknown>;
    },
  ): Promise<string | null>;
  enqueueStatusChanged(
    tx: Tx,
    input: {
      organizationId: string;
      merchantId: string;
      orderId?: string;
      expressRequestId?: string;
      territoryId?: string | null;
      status: string;
      summary?: string;
      data?: Record<string, unknown>;
    },
  ): Promise<string | null>;
  cancelPendingForOrder(tx: Tx, orderId: string): Promise<number>;
}
