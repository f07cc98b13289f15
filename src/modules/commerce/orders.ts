import type { Actor } from '../../platform/auth.js';
import type { CommerceContext } from './index.js';
import type { Tx } from '../../platform/db/index.js';
import { AppError } from '../../platform/errors.js';
import { pointSql } from '../../platform/geo.js';
import { newId } from '../../platform/ids.js';
import type { OrderMoneyFacts, OrderPayments, PaymentStatus } from '../../platform/order-contracts.js';
import { assertTransition, type Transitions } from '../../platform/state-machine.js';
import { buildCart, type Cart, type CartInput } from './checkout.js';
import { couponRefused, redeemCoupon, releaseRedemption } from './coupons.js';
import { ORDER_SELECT, type OrderRow, type OrderStatus } from './model.js';

/**
 * The commercial order machine (terminal: delivered, cancelled, returned; delivery_failed is final when the
 * organization closes failed deliveries, else it ends as returned when the merchant gets the goods back).
 */
export const ORDER_TRANSITIONS: Transitions<OrderStatus> = {
  pending_confirmation: ['confirmed', 'cancelled'],
  confirmed: ['preparing', 'cancelled'],
  preparing: ['ready', 'cancelled'],
  ready: ['in_delivery', 'cancelled'],
  in_delivery: ['delivered', 'cancelled', 'delivery_failed'],
  delivered: [],
  cancelled: [],
  delivery_failed: ['returned'],
  returned: [],
};

/** What the merchant may request by hand; in_delivery and delivered only follow the trip (pickup verified, completed). */
export const MERCHANT_TRANSITIONS: Transitions<OrderStatus> = {
  pending_confirmation: ['confirmed', 'cancelled'],
  confirmed: ['preparing', 'cancelled'],
  preparing: ['ready', 'cancelled'],
  ready: ['cancelled'],
  in_delivery: ['cancelled'],
  delivered: [],
  cancelled: [],
  delivery_failed: [],
  returned: [],
};

/**
 * A synthetic actor for reacting to trip events (which carry only the acting user's id): the order follows its
 * trip on behalf of the platform. It keeps the real user id for audit and event attribution.
 */
export function serviceActor(organizationId: string, userId: string | null, requestId = 'commerce'): Actor {
  return { userId: userId ?? 'system', organizationId, role: 'administrator', kind: 'dispatch', sessionId: 'commerce', requestId, subadmin: null };
}

export async function loadOrder(tx: Tx, id: string, lock = false): Promise<OrderRow | null> {
  return (await tx.query<OrderRow>(`${ORDER_SELECT} WHERE o.id = $1${lock ? ' FOR NO KEY UPDATE OF o' : ''}`, [id])).rows[0] ?? null;
}

export function orderFacts(o: OrderRow): OrderMoneyFacts {
  return {
    orderId: o.id,
    merchantId: o.merchant_id,
    customerUserId: o.customer_user_id,
    tripId: o.trip_id,
    territoryId: o.territory_id,
    paymentDestination: o.payment_destination,
    paymentStatus: o.payment_status,
    status: o.status,
    subtotal: o.subtotal,
    discountTotal: o.discount_total,
    deliveryFee: o.delivery_fee,
    total: o.total,
    currency: o.currency,
  };
}

const summaryOf = (o: OrderRow) => ({ order_id: o.id, status: o.status, total: o.total, currency: o.currency, items: o.items.length, payment_destination: o.payment_destination });

export function createOrderService(ctx: CommerceContext) {
  async function announce(tx: Tx, actorUserId: string | null, o: OrderRow, type: 'order.created' | 'order.status_changed', from?: OrderStatus, ownerUserId?: string) {
    const owner = ownerUserId ?? (await ctx.deps.logistics.getMerchant(tx, o.merchant_id))?.owner_user_id;
    await ctx.events.record(tx, o.organization_id, {
      type,
      entityType: 'merchant_order',
      entityId: o.id,
      territoryId: o.territory_id,
      actorUserId,
      audienceUserIds: [o.customer_user_id, ...(owner ? [owner] : [])],
      payload: { order_id: o.id, status: o.status, previous_status: from ?? null, trip_id: o.trip_id, total: o.total },
    });
    if (type === 'order.created') {
      const data = summaryOf(o);
      await ctx.deps.chat.enqueueOrderCreated(tx, { organizationId: o.organization_id, merchantId: o.merchant_id, orderId: o.id, territoryId: o.territory_id, summary: `New order ${o.id.slice(-6)}: ${data.items} item(s), total ${data.total} ${data.currency} (${data.payment_destination})`, data });
    } else {
      await ctx.deps.chat.enqueueStatusChanged(tx, { organizationId: o.organization_id, merchantId: o.merchant_id, orderId: o.id, territoryId: o.territory_id, status: o.status, data: summaryOf(o) });
    }
  }

  /** Creates an order from a priced cart, in the caller's transaction: refusals first, then the rows and events, then the coupon redemption. */
  async function create(tx: Tx, actor: Actor, input: CartInput & { notes?: string; quote_id?: string }, priced?: Cart): Promise<OrderRow> {
    const cart = priced ?? (await buildCart(ctx, tx, actor, input));
    if (cart.coupon && !cart.coupon.applied) throw couponRefused(cart.coupon.reason_code!);
    if (cart.payment_required) {
      throw AppError.unprocessable('This organization requires a platform payment (authorized or paid intent) before the order; choose merchant_direct or cash', 'PAYMENT_REQUIRED');
    }
    const id = newId();
    const couponId = cart.coupon?.coupon_id ?? null;
    await tx.query(
      `INSERT INTO merchant_order (organization_id, id, merchant_id, branch_id, customer_user_id, address_id, dropoff_address, dropoff_location, territory_id,
                                   payment_destination, order_source, coupon_id, coupon_code, subtotal, discount_total, delivery_fee, driver_earning, total, currency, quote_id, notes)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8::point, $9, $10, 'core', $11, $12, $13, $14, $15, $16, $17, $18, $19, $20)`,
      [
        actor.organizationId, id, cart.merchant.id, cart.branch.id, actor.userId, cart.address.id, cart.address.address,
        pointSql({ lon: Number(cart.address.lon), lat: Number(cart.address.lat) }), cart.territory_id, cart.payment_destination, couponId,
        couponId ? cart.coupon!.code : null, cart.subtotal, cart.discount_total, cart.delivery_fee, cart.driver_earning, cart.total, cart.currency,
        input.quote_id ?? null, input.notes ?? null,
      ],
    );
    const values = cart.lines.map((_, i) => `($1, $2, ${i + 1}, $${3 + i * 5}, $${4 + i * 5}, $${5 + i * 5}, $${6 + i * 5}, $${7 + i * 5})`);
    await tx.query(
      `INSERT INTO merchant_order_item (organization_id, order_id, line_no, catalog_item_id, name, unit_price, quantity, line_total) VALUES ${values.join(', ')}`,
      [actor.organizationId, id, ...cart.lines.flatMap((l) => [l.catalog_item_id, l.name, l.unit_price, l.quantity, l.line_total])],
    );
    const order = (await loadOrder(tx, id))!;
    await announce(tx, actor.userId, order, 'order.created', undefined, cart.merchant.owner_user_id);
    // Last, so the coupon row lock (which queues concurrent redemptions of this coupon) is held only until the commit that follows.
    if (couponId) {
      await redeemCoupon(tx, { organizationId: actor.organizationId, couponId, merchantId: cart.merchant.id, customerId: actor.userId, orderId: id, discount: cart.discount_total });
    }
    return order;
  }

  /** Creates the trip of an order that just became `ready` (pickup = branch, dropoff = the customer's address). */
  async function createTripFor(tx: Tx, actor: Actor, o: OrderRow): Promise<string> {
    const { rows } = await tx.query<{ name: string; address: string; lon: number; lat: number }>(
      'SELECT name, address, (location)[0] AS lon, (location)[1] AS lat FROM merchant_branch WHERE id = $1',
      [o.branch_id],
    );
    const b = rows[0];
    // The merchant's own actor; the fees were priced by the tariff at checkout, which logistics accepts from this trusted call only.
    const trip = await ctx.deps.logistics.createTrip(tx, actor, {
      pickup: { lon: Number(b.lon), lat: Number(b.lat) },
      pickup_address: `${b.name}, ${b.address}`,
      dropoff: { lon: Number(o.dropoff_lon), lat: Number(o.dropoff_lat) },
      dropoff_address: o.dropoff_address,
      merchant_id: o.merchant_id,
      customer_user_id: o.customer_user_id,
      order_id: o.id,
      service_mode: 'marketplace',
      source_channel: 'core',
      ...(o.territory_id ? { territory_id: o.territory_id } : {}),
      delivery_fee: o.delivery_fee,
      driver_earning: o.driver_earning,
      notes: o.notes ?? undefined,
    }, { pricedBy: 'tariff' });
    await tx.query('UPDATE merchant_order SET trip_id = $2, territory_id = COALESCE(territory_id, $3) WHERE id = $1', [o.id, trip.id, trip.territory_id]);
    return trip.id;
  }

  /**
   * Moves an order from `from` to `to`, decided in SQL (`UPDATE ... WHERE status = from`): of two racing
   * requests only one moves it; the other gets 409 INVALID_TRANSITION naming the current state.
   * Entering `ready` creates the trip; `cancelled` cancels the open trip, releases the coupon use and tells money and chat.
   */
  async function move(tx: Tx, actor: Actor, o: OrderRow, to: OrderStatus, reason: string | null, opts: { cancelTrip?: boolean } = {}): Promise<OrderRow> {
    assertTransition('Order', ORDER_TRANSITIONS, o.status, to);
    const done = await tx.query(
      `UPDATE merchant_order SET status = $3, status_reason = COALESCE($4, status_reason),
              payment_status = CASE WHEN $3 = 'delivered' AND payment_destination = 'cash' THEN 'paid' ELSE payment_status END, updated_at = now()
        WHERE id = $1 AND status = $2`,
      [o.id, o.status, to, reason],
    );
    if (done.rowCount === 0) {
      const now = (await loadOrder(tx, o.id))!;
      throw AppError.invalidTransition('Order', now.status, to);
    }
    if (to === 'ready') await createTripFor(tx, actor, o);
    if (to === 'cancelled') {
      if (o.trip_id && opts.cancelTrip !== false) await ctx.deps.logistics.cancelTrip(tx, actor, o.trip_id, `order cancelled${reason ? `: ${reason}` : ''}`);
      await releaseRedemption(tx, o.id);
      await ctx.deps.chat.cancelPendingForOrder(tx, o.id);
    }
    let after = (await loadOrder(tx, o.id))!;
    if (to === 'cancelled') await ctx.deps.hooks.orderCancelled.run(tx, actor, orderFacts(after));
    if (to === 'delivered') await ctx.deps.hooks.orderDelivered.run(tx, actor, orderFacts(after));
    if (to === 'delivery_failed') await ctx.deps.hooks.deliveryFailed.run(tx, actor, { order: orderFacts(after) });
    // Money may have moved the payment status (a cancellation, a failed delivery): answer with the order as committed.
    if (to === 'cancelled' || to === 'delivery_failed') after = (await loadOrder(tx, o.id))!;
    await announce(tx, actor.userId, after, 'order.status_changed', o.status);
    return after;
  }

  /** PATCH /merchant/orders/:id/status: only the merchant's own orders (404 otherwise), only MERCHANT_TRANSITIONS. */
  async function merchantStatus(tx: Tx, actor: Actor, merchantId: string, orderId: string, to: OrderStatus, reason: string | null): Promise<OrderRow> {
    const o = await loadOrder(tx, orderId);
    if (!o || o.merchant_id !== merchantId) throw AppError.notFound('Order');
    assertTransition('Order', MERCHANT_TRANSITIONS, o.status, to);
    return move(tx, actor, o, to, reason);
  }

  const payments: OrderPayments = {
    async getOrderFacts(tx, orderId) {
      const o = await loadOrder(tx, orderId);
      return o ? orderFacts(o) : null;
    },
    async getExpressFacts(tx, id) {
      const { rows } = await tx.query<{ merchant_id: string; status: string; trip_id: string | null }>('SELECT merchant_id, status, trip_id FROM delivery_express_request WHERE id = $1', [id]);
      return rows[0] ? { merchantId: rows[0].merchant_id, status: rows[0].status, tripId: rows[0].trip_id } : null;
    },
    async setPaymentStatus(tx, orderId, status: PaymentStatus, paymentReviewId) {
      const r = await tx.query(
        `UPDATE merchant_order SET payment_status = $2, payment_review_id = CASE WHEN $3 THEN $4 ELSE payment_review_id END, updated_at = now() WHERE id = $1`,
        [orderId, status, paymentReviewId !== undefined, paymentReviewId ?? null],
      );
      if (r.rowCount === 0) throw AppError.notFound('Order');
    },
  };

  return { create, move, merchantStatus, payments, announce };
}

export type OrderService = ReturnType<typeof createOrderService>;
