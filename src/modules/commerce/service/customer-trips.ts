import { Actor } from '../../../platform/auth.js';
import { Tx } from '../../../platform/db/index.js';
import { AppError } from '../../../platform/errors.js';
import { encodeCursor } from '../../../platform/pagination.js';
import { TripRow } from '../../logistics/index.js';
import { CommerceContext } from '../context.js';
import { customerOrderTrips } from '../repo/orders.js';
import { geo } from './common.js';

const ACTIVE = ['assigned', 'accepted', 'picked_up', 'in_transit'];

async function customerTripView(ctx: CommerceContext, tx: Tx, t: TripRow) {
  const d = t.driver_id && ACTIVE.includes(t.status) ? await ctx.deps.logistics.getDriver(tx, t.driver_id) : null;
  return {
    id: t.id,
    status: t.status,
    order_id: t.order_id,
    service_mode: t.service_mode,
    pickup_location: geo(t.pickup_lon, t.pickup_lat)!,
    pickup_address: t.pickup_address,
    dropoff_location: geo(t.dropoff_lon, t.dropoff_lat)!,
    dropoff_address: t.dropoff_address,
    delivery_fee: t.delivery_fee,
    currency: t.currency,
    delivery_pin: t.delivery_pin,
    driver: d
      ? { id: d.id, display_name: d.display_name, phone: d.phone, location: geo(d.last_lon, d.last_lat), location_at: d.last_location_at }
      : null,
    assigned_at: t.assigned_at,
    picked_up_at: t.picked_up_at,
    completed_at: t.completed_at,
    cancelled_at: t.cancelled_at,
    created_at: t.created_at,
    updated_at: t.updated_at,
  };
}

/** GET /customer/trips: the trips of the caller's orders, newest order first. */
export function listOwnTrips(ctx: CommerceContext, actor: Actor, page: { after: string | null; limit: number }) {
  return ctx.db.readTenant(actor, async (tx) => {
    const rows = await customerOrderTrips(tx, actor.userId, { after: page.after, limit: page.limit + 1 });
    const slice = rows.slice(0, page.limit);
    const data = [];
    for (const r of slice) {
      const t = await ctx.deps.logistics.getTrip(tx, r.trip_id);
      if (t && t.customer_user_id === actor.userId) data.push(await customerTripView(ctx, tx, t));
    }
    return { data, next_cursor: rows.length > page.limit ? encodeCursor(slice[slice.length - 1].id) : null };
  });
}

/** GET /customer/trips/:id: one of the caller's trips (404 for anyone else's). */
export function ownTrip(ctx: CommerceContext, actor: Actor, id: string) {
  return ctx.db.readTenant(actor, async (tx) => {
    const t = await ctx.deps.logistics.getTrip(tx, id);
    if (!t || t.customer_user_id !== actor.userId) throw AppError.notFound('Trip');
    return customerTripView(ctx, tx, t);
  });
}
