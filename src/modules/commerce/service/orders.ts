import { recordAudit } from '../../../platform/audit.js';
import { Actor } from '../../../platform/auth.js';
import { Tx } from '../../../platform/db/index.js';
import { AppError } from '../../../platform/errors.js';
import { pointSql } from '../../../platform/geo.js';
import { newId } from '../../../platform/ids.js';
import type { OrderMoneyFacts, PaymentStatus } from '../schemas.js';
import { pageRequest, toPage } from '../../../platform/pagination.js';
import { Transitions, assertTransition } from '../../../platform/state-machine.js';
import { CommerceContext } from '../context.js';
import { pickupOf } from '../repo/branches.js';
import { lockQuote, markQuoteUsed, orderPromise } from '../repo/checkout.js';
import { releaseRedemption } from '../repo/coupons.js';
import { findExpressFacts } from '../repo/express.js';
import {
  OrderRow,
  findOrder,
  insertOrder,
  listCustomerOrders,
  listMerchantOrders,
  setOrderPaymentStatus,
  setOrderPreparation,
  setOrderTrip,
  updateOrderStatus,
} from '../repo/orders.js';
import { OrderStatus } from '../schemas.js';
import { Cart, CartInput, buildCart } from './checkout.js';
import { orderOut, ownMerchant } from './common.js';
import { couponRefused, refusalNow } from './coupons.js';

/** Order facts and payment status, as logistics and money read and set them (each in the caller's transaction). */
export interface OrderPayments {
  getOrderFacts(tx: Tx, orderId: string): Promise<OrderMoneyFacts | null>;
  /** What logistics checks before linking a trip to an express request (same merchant, still `requested`, no trip). */
  getExpressFacts(tx: Tx, expressRequestId: string): Promise<{ merchantId: string; status: string; tripId: string | null } | null>;
  /** Sets payment_status (and the review link); no state machine here: money decides the transition. */
  setPaymentStatus(tx: Tx, orderId: string, status: PaymentStatus, paymentReviewId?: string | null): Promise<void>;
}

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
  return {
    userId: userId ?? 'system',
    organizationId,
    role: 'administrator',
    kind: 'dispatch',
    sessionId: 'commerce',
    requestId,
    subadmin: null,
  };
}

export const loadOrder = findOrder;

export function orderFacts(o: OrderRow): OrderMoneyFacts {
  return {
    orderId: o.id,
    merchantId: o.merchant_id,
    customerUserId: o.customer_user_id,
    tripId: o.trip_id,
    territoryId: o.territory_id,
    paymentDestination: o.payment_destination,
    collectedBy: o.collected_by,
    paymentStatus: o.payment_status,
    status: o.status,
    subtotal: o.subtotal,
    discountTotal: o.discount_total,
    deliveryFee: o.delivery_fee,
    total: o.total,
    currency: o.currency,
  };
}

/** What the chat messages say of an order. */
const summaryOf = (o: OrderRow) => ({
  order_id: o.id,
  status: o.status,
  total: o.total,
  currency: o.currency,
  items: o.items.length,
  payment_destination: o.payment_destination,
});

export function createOrderService(ctx: CommerceContext) {
  /** Records an order event; `o` is the order as this transaction holds it after the change (the hooks render it). */
  async function announce(
    tx: Tx,
    actorUserId: string | null,
    o: OrderRow,
    type: 'order.created' | 'order.status_changed',
    from?: OrderStatus,
    ownerUserId?: string,
  ) {
    const owner = ownerUserId ?? (await ctx.deps.logistics.merchantOwner(tx, o.organization_id, o.merchant_id));
    await ctx.events.record(tx, o.organization_id, {
      type,
      entityType: 'merchant_order',
      entityId: o.id,
      territoryId: o.territory_id,
      actorUserId,
      audienceUserIds: [o.customer_user_id, ...(owner ? [owner] : [])],
      payload: { order_id: o.id, status: o.status, previous_status: from ?? null, trip_id: o.trip_id, total: o.total },
      current: o,
    });
    if (type === 'order.created') {
      const data = summaryOf(o);
      await ctx.deps.chat.enqueueOrderCreated(tx, {
        organizationId: o.organization_id,
        merchantId: o.merchant_id,
        orderId: o.id,
        territoryId: o.territory_id,
        summary: `New order ${o.id.slice(-6)}: ${data.items} item(s), total ${data.total} ${data.currency} (${data.payment_destination})`,
        data,
      });
    } else {
      await ctx.deps.chat.enqueueStatusChanged(tx, {
        organizationId: o.organization_id,
        merchantId: o.merchant_id,
        orderId: o.id,
        territoryId: o.territory_id,
        status: o.status,
        data: summaryOf(o),
      });
    }
  }

  /**
   * Creates an order from a priced cart, in the caller's transaction: refusals first, then ONE statement writing the
   * order, its lines and the coupon redemption, then the events. The events come after the order is written because
   * their hooks read it (an outbound webhook carries the order as the API returns it); the coupon row lock (which
   * queues concurrent redemptions of the coupon) is so held over the event's statements too, until the COMMIT.
   * 9 round trips in all (test/commerce/order-round-trips).
   */
  async function create(tx: Tx, actor: Actor, input: CartInput & { notes?: string; quote_id?: string }, priced?: Cart): Promise<OrderRow> {
    const cart = priced ?? (await buildCart(ctx, tx, actor, input));
    if (cart.coupon && !cart.coupon.applied) throw couponRefused(cart.coupon.reason_code!);
    if (cart.payment_required) {
      throw AppError.unprocessable(
        'This organization requires a platform payment (authorized or paid intent) before the order; choose merchant_direct or cash',
        'PAYMENT_REQUIRED',
      );
    }
    const id = newId();
    const couponId = cart.coupon?.coupon_id ?? null;
    const lines = cart.lines.map((l) => ({
      catalog_item_id: l.catalog_item_id,
      name: l.name,
      unit_price: l.unit_price,
      quantity: l.quantity,
      line_total: l.line_total,
    }));
    const now = new Date();
    const written = await insertOrder(tx, {
      organizationId: actor.organizationId,
      id,
      merchantId: cart.merchant.id,
      branchId: cart.branch.id,
      customerUserId: actor.userId,
      addressId: cart.address.id,
      dropoffAddress: cart.address.address,
      dropoffPoint: pointSql({ lon: Number(cart.address.lon), lat: Number(cart.address.lat) }),
      territoryId: cart.territory_id,
      paymentDestination: cart.payment_destination,
      collectedBy: cart.collected_by,
      subtotal: cart.subtotal,
      discountTotal: cart.discount_total,
      deliveryFee: cart.delivery_fee,
      driverEarning: cart.driver_earning,
      total: cart.total,
      currency: cart.currency,
      quoteId: input.quote_id ?? null,
      notes: input.notes ?? null,
      lines,
      promisedAt: cart.promised_at,
      deliverAfter: cart.deliver_after,
      deliverBefore: cart.deliver_before,
      pickupAfter: cart.pickup_after,
      pickupBefore: cart.pickup_before,
      units: cart.units,
      weightKg: cart.weight_kg,
      volumeL: cart.volume_l,
      coupon: couponId ? { id: couponId, code: cart.coupon!.code, redemptionId: newId(), now } : null,
    });
    if (!written.ok)
      throw written.refusal === 'customer' ? couponRefused('COUPON_CUSTOMER_LIMIT_REACHED') : await refusalNow(tx, couponId!, now);
    await announce(tx, actor.userId, written.order, 'order.created', undefined, cart.merchant.owner_user_id);
    return written.order;
  }

  /** Creates the trip of an order that just became `ready` (pickup = branch, dropoff = the customer's address). */
  async function createTripFor(tx: Tx, actor: Actor, o: OrderRow): Promise<string> {
    const b = await pickupOf(tx, o.branch_id);
    // The promise made at checkout (it may have passed by now: a late order stays late).
    const promise = await orderPromise(tx, o.id);
    // The merchant's own actor; the fees were priced by the tariff at checkout, which logistics accepts from this trusted call only.
    const trip = await ctx.deps.logistics.createTrip(
      tx,
      actor,
      {
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
        promised_at: promise?.promised_at ?? null,
        deliver_after: promise?.deliver_after ?? null,
        deliver_before: promise?.deliver_before ?? null,
        // checked when the order was placed: kept as they are, even if the pickup window has passed (a late order stays late)
        pickup_after: o.pickup_after,
        pickup_before: o.pickup_before,
        units: o.units,
        weight_kg: o.weight_kg,
        volume_l: o.volume_l,
      },
      { pricedBy: 'tariff' },
    );
    await setOrderTrip(tx, o.id, trip.id, trip.territory_id);
    return trip.id;
  }

  /**
   * Moves an order from `from` to `to`, decided in SQL (`UPDATE ... WHERE status = from`): of two racing
   * requests only one moves it; the other gets 409 INVALID_TRANSITION naming the current state.
   * Entering `ready` creates the trip; `cancelled` cancels the open trip, releases the coupon use and tells money and chat.
   */
  async function move(
    tx: Tx,
    actor: Actor,
    o: OrderRow,
    to: OrderStatus,
    reason: string | null,
    opts: { cancelTrip?: boolean } = {},
  ): Promise<OrderRow> {
    assertTransition('Order', ORDER_TRANSITIONS, o.status, to);
    const moved = await updateOrderStatus(tx, o.id, o.status, to, reason);
    if (!moved) {
      const now = (await loadOrder(tx, o.id))!;
      throw AppError.invalidTransition('Order', now.status, to);
    }
    if (to === 'ready') await createTripFor(tx, actor, o);
    if (to === 'cancelled') {
      if (o.trip_id && opts.cancelTrip !== false)
        await ctx.deps.logistics.cancelTrip(tx, actor, o.trip_id, `order cancelled${reason ? `: ${reason}` : ''}`);
      await releaseRedemption(tx, o.id);
      await ctx.deps.chat.cancelPendingForOrder(tx, o.id);
    }
    // Entering `ready` links the trip and a cancellation may move the trip's order: read it again; otherwise the update's row is it.
    let after = to === 'ready' || to === 'cancelled' ? (await loadOrder(tx, o.id))! : moved;
    if (to === 'cancelled') await ctx.deps.hooks.orderCancelled.run(tx, actor, orderFacts(after));
    if (to === 'delivered') await ctx.deps.hooks.orderDelivered.run(tx, actor, orderFacts(after));
    if (to === 'delivery_failed') await ctx.deps.hooks.deliveryFailed.run(tx, actor, { order: orderFacts(after) });
    // Money may have moved the payment status (a cancellation, a failed delivery): answer with the order as committed.
    if (to === 'cancelled' || to === 'delivery_failed') after = (await loadOrder(tx, o.id))!;
    await announce(tx, actor.userId, after, 'order.status_changed', o.status);
    return after;
  }

  /**
   * The preparation time the merchant gives when he accepts: kept on the order, and the promise moves to now + it + travel + the
   * dispatch buffer (the estimate checkout made, started again from the acceptance). A scheduled window keeps its promise.
   */
  async function prepare(tx: Tx, actor: Actor, o: OrderRow, preparationMin: number): Promise<void> {
    let promisedAt: Date | null = null;
    if (!o.deliver_before) {
      const b = await pickupOf(tx, o.branch_id);
      const p = await ctx.deps.logistics.promiseFor(tx, actor.organizationId, {
        territoryId: o.territory_id,
        pickup: { lon: Number(b.lon), lat: Number(b.lat) },
        dropoff: { lon: Number(o.dropoff_lon), lat: Number(o.dropoff_lat) },
        preparationMin,
      });
      promisedAt = p.promised_at;
    }
    await setOrderPreparation(tx, o.id, preparationMin, promisedAt);
  }

  /**
   * PATCH /merchant/orders/:id/status: only the merchant's own orders (404 otherwise), only MERCHANT_TRANSITIONS; a preparation
   * time only when accepting (→ confirmed; 400 otherwise).
   */
  async function merchantStatus(
    tx: Tx,
    actor: Actor,
    merchantId: string,
    orderId: string,
    to: OrderStatus,
    reason: string | null,
    preparationMin: number | null = null,
  ): Promise<OrderRow> {
    if (preparationMin !== null && to !== 'confirmed') {
      throw AppError.badRequest('preparation_min is given when accepting the order (status confirmed)', [
        { field: 'preparation_min', message: 'only with status confirmed' },
      ]);
    }
    const o = await loadOrder(tx, orderId);
    if (!o || o.merchant_id !== merchantId) throw AppError.notFound('Order');
    assertTransition('Order', MERCHANT_TRANSITIONS, o.status, to);
    const after = await move(tx, actor, o, to, reason);
    if (preparationMin === null) return after;
    await prepare(tx, actor, after, preparationMin);
    return (await loadOrder(tx, o.id))!;
  }

  const payments: OrderPayments = {
    async getOrderFacts(tx, orderId) {
      const o = await loadOrder(tx, orderId);
      return o ? orderFacts(o) : null;
    },
    async getExpressFacts(tx, id) {
      const r = await findExpressFacts(tx, id);
      return r ? { merchantId: r.merchant_id, status: r.status, tripId: r.trip_id } : null;
    },
    async setPaymentStatus(tx, orderId, status: PaymentStatus, paymentReviewId) {
      if (!(await setOrderPaymentStatus(tx, orderId, status, paymentReviewId))) throw AppError.notFound('Order');
    },
  };

  /** From a quote: re-priced now; a different total than quoted is 409 QUOTE_PRICE_CHANGED; a quote makes one order. */
  async function fromQuote(tx: Tx, actor: Actor, quoteId: string, notes?: string): Promise<OrderRow> {
    const q = await lockQuote(tx, quoteId, actor.userId);
    if (!q) throw AppError.notFound('Quote');
    if (q.order_id) throw AppError.conflict('This quote already produced an order', 'QUOTE_ALREADY_USED', { order_id: q.order_id });
    if (q.expires_at <= new Date()) throw AppError.unprocessable('The quote has expired; request a new preflight', 'QUOTE_EXPIRED');
    const input = {
      branch_id: q.branch_id,
      address_id: q.address_id,
      items: q.lines.map((l) => ({ catalog_item_id: l.catalog_item_id, quantity: l.quantity })),
      coupon_code: q.coupon_code,
      payment_destination: q.payment_destination,
      deliver_after: q.deliver_after,
      deliver_before: q.deliver_before,
      pickup_after: q.pickup_after,
      pickup_before: q.pickup_before,
      units: q.units,
      weight_kg: q.weight_kg,
      volume_l: q.volume_l,
    };
    const cart = await buildCart(ctx, tx, actor, input);
    if (cart.total !== q.total) {
      throw AppError.conflict(
        `Prices changed since the quote (quoted ${q.total}, now ${cart.total}); request a new preflight`,
        'QUOTE_PRICE_CHANGED',
        { quoted_total: q.total, current_total: cart.total },
      );
    }
    const o = await create(tx, actor, { ...input, notes, quote_id: q.id }, cart);
    await markQuoteUsed(tx, q.id, o.id);
    return o;
  }

  /** POST /customer/orders: from a quote, or from a cart; one transaction. */
  function place(actor: Actor, b: { quote_id: string; notes?: string } | (CartInput & { notes?: string })): Promise<OrderRow> {
    return ctx.db.withTenant(actor, (tx) => ('quote_id' in b ? fromQuote(tx, actor, b.quote_id, b.notes) : create(tx, actor, b)));
  }

  /** GET /customer/orders: the customer's own orders, newest first. */
  function listForCustomer(actor: Actor, q: { status?: OrderStatus; limit?: number; cursor?: string }) {
    const page = pageRequest(q);
    return ctx.db.readTenant(actor, async (tx) =>
      toPage(await listCustomerOrders(tx, actor.userId, { status: q.status, after: page.after, limit: page.limit + 1 }), page, orderOut),
    );
  }

  /** GET /merchant/orders: the calling merchant's orders, newest first. */
  function listForMerchant(actor: Actor, q: { status?: OrderStatus; branch_id?: string; limit?: number; cursor?: string }) {
    const page = pageRequest(q);
    return ctx.db.readTenant(actor, async (tx) => {
      const m = await ownMerchant(ctx, tx, actor);
      return toPage(
        await listMerchantOrders(tx, m.id, { status: q.status, branchId: q.branch_id, after: page.after, limit: page.limit + 1 }),
        page,
        orderOut,
      );
    });
  }

  /** PATCH /merchant/orders/:id/status, in its own transaction. */
  function updateByMerchant(
    actor: Actor,
    orderId: string,
    to: OrderStatus,
    reason: string | null,
    preparationMin: number | null = null,
  ): Promise<OrderRow> {
    return ctx.db.withTenant(actor, async (tx) =>
      merchantStatus(tx, actor, (await ownMerchant(ctx, tx, actor)).id, orderId, to, reason, preparationMin),
    );
  }

  /** POST /admin/orders/:id/cancel: same effects as a merchant cancellation; audited. */
  function cancelByAdmin(actor: Actor, orderId: string, reason: string): Promise<OrderRow> {
    return ctx.db.withTenant(actor, async (tx) => {
      const o = await loadOrder(tx, orderId, true);
      if (!o) throw AppError.notFound('Order');
      const after = await move(tx, actor, o, 'cancelled', reason);
      await recordAudit(tx, actor, {
        action: 'order.cancelled',
        entityType: 'merchant_order',
        entityId: o.id,
        before: { status: o.status, payment_status: o.payment_status },
        after: { status: after.status, payment_status: after.payment_status, reason },
      });
      return after;
    });
  }

  return { create, move, merchantStatus, payments, announce, place, listForCustomer, listForMerchant, updateByMerchant, cancelByAdmin };
}

export type OrderService = ReturnType<typeof createOrderService>;
