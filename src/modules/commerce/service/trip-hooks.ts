import { Tx } from '../../../platform/db/index.js';
import { StoredEvent } from '../../../platform/events.js';
import { CommerceContext } from '../context.js';
import { moveExpress } from '../repo/express.js';
import { OrderStatus } from '../schemas.js';
import { OrderService, loadOrder, serviceActor } from './orders.js';

/**
 * Orders and express requests follow their trip (the composition root subscribes the returned handler to the
 * recorded events). It runs inside the transaction that changed the
 * trip, so the order can never disagree with it:
 * - order: trip.pickup_verified → in_delivery; trip.completed → delivered; trip.cancelled (by dispatch) → cancelled;
 *   trip.delivery_failed → delivery_failed (money charges the attempt); trip.returned → returned.
 * - express request: trip.created → created (trip_id set); trip.completed → completed; trip.cancelled → cancelled;
 *   trip.delivery_failed → delivery_failed (charged as a completed one); trip.returned → returned.
 * Every move is conditional on the current state, so a repeated or late event changes nothing.
 */
export function createTripFollower(ctx: CommerceContext, orders: OrderService) {
  const ORDER_MOVES: Record<string, { to: OrderStatus; from: OrderStatus[] }> = {
    'trip.pickup_verified': { to: 'in_delivery', from: ['ready'] },
    'trip.completed': { to: 'delivered', from: ['in_delivery'] },
    'trip.cancelled': { to: 'cancelled', from: ['pending_confirmation', 'confirmed', 'preparing', 'ready', 'in_delivery'] },
    'trip.delivery_failed': { to: 'delivery_failed', from: ['in_delivery'] },
    'trip.returned': { to: 'returned', from: ['delivery_failed'] },
  };
  const EXPRESS_MOVES: Record<string, { to: string; from: string[] }> = {
    'trip.created': { to: 'created', from: ['requested'] },
    'trip.completed': { to: 'completed', from: ['requested', 'created'] },
    'trip.cancelled': { to: 'cancelled', from: ['requested', 'created'] },
    'trip.delivery_failed': { to: 'delivery_failed', from: ['created'] },
    'trip.returned': { to: 'returned', from: ['delivery_failed'] },
  };

  async function followOrder(tx: Tx, ev: StoredEvent, orderId: string) {
    const move = ORDER_MOVES[ev.type];
    if (!move) return;
    const o = await loadOrder(tx, orderId, true);
    if (!o || o.organization_id !== ev.organization_id || o.trip_id !== ev.entity_id || !move.from.includes(o.status)) return;
    const actor = serviceActor(ev.organization_id, ev.actor_user_id, `event:${ev.seq}`);
    const reason =
      ev.type === 'trip.cancelled'
        ? `trip cancelled${ev.payload.reason ? `: ${String(ev.payload.reason)}` : ''}`
        : ev.type === 'trip.delivery_failed'
          ? `delivery failed: ${String(ev.payload.failure_reason)}`
          : null;
    // The trip is already cancelled: the order must not try to cancel it again.
    await orders.move(tx, actor, o, move.to, reason, { cancelTrip: false });
  }

  async function followExpress(tx: Tx, ev: StoredEvent) {
    const move = EXPRESS_MOVES[ev.type];
    if (!move) return;
    const to = move.to;
    const trip = await ctx.deps.logistics.getTrip(tx, ev.entity_id);
    if (!trip?.express_request_id) return;
    const r = await moveExpress(tx, {
      organizationId: ev.organization_id,
      id: trip.express_request_id,
      tripId: trip.id,
      to,
      from: move.from,
    });
    if (r && (to === 'completed' || to === 'delivery_failed')) {
      // The fee of a completed (or attempted and failed) express delivery goes on the merchant's ledger in the trip's transaction.
      const actor = serviceActor(ev.organization_id, ev.actor_user_id, `event:${ev.seq}`);
      const facts = {
        expressRequestId: r.id,
        merchantId: r.merchant_id,
        tripId: trip.id,
        driverId: trip.driver_id,
        territoryId: r.territory_id ?? trip.territory_id,
        deliveryFee: trip.delivery_fee,
        driverEarning: trip.driver_earning,
        currency: trip.currency,
      };
      if (to === 'completed') await ctx.deps.hooks.expressDelivered.run(tx, actor, facts);
      else await ctx.deps.hooks.deliveryFailed.run(tx, actor, { express: facts });
    }
    if (r && to !== 'created') {
      await ctx.deps.chat.enqueueStatusChanged(tx, {
        organizationId: ev.organization_id,
        merchantId: r.merchant_id,
        expressRequestId: r.id,
        territoryId: r.territory_id,
        status: to,
      });
    }
  }

  return async (tx: Tx, ev: StoredEvent) => {
    if (ev.entity_type !== 'trip') return;
    if (ev.payload.service_mode === 'delivery_express' || ev.type !== 'trip.created') {
      const orderId = typeof ev.payload.order_id === 'string' ? ev.payload.order_id : null;
      if (orderId) await followOrder(tx, ev, orderId);
      else await followExpress(tx, ev);
    }
  };
}
