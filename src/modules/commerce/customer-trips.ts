import { Type } from '@sinclair/typebox';
import { actorOf, type Actor } from '../../platform/auth.js';
import type { Api } from '../../platform/context.js';
import type { CommerceContext } from './index.js';
import type { Tx } from '../../platform/db/index.js';
import { AppError } from '../../platform/errors.js';
import { GeoPoint } from '../../platform/geo.js';
import { encodeCursor, pageRequest } from '../../platform/pagination.js';
import { IdParams, Money, Nullable, PageQueryProps, Strict, Timestamp } from '../../platform/schemas.js';
import type { TripRow } from '../logistics/index.js';
import { geo } from './model.js';
import { customerOrderTrips } from './repo/orders.js';

const ACTIVE = ['assigned', 'accepted', 'picked_up', 'in_transit'];

export const CustomerTripOut = Type.Object({
  id: Type.String(),
  status: Type.String({ description: 'trip status: pending, assigned, accepted, picked_up, in_transit, completed, cancelled' }),
  order_id: Nullable(Type.String()),
  service_mode: Type.String(),
  pickup_location: GeoPoint,
  pickup_address: Type.String(),
  dropoff_location: GeoPoint,
  dropoff_address: Type.String(),
  delivery_fee: Money,
  currency: Type.String(),
  delivery_pin: Type.String({ description: 'the PIN the customer gives the driver at delivery; shown only to this customer' }),
  driver: Nullable(
    Type.Object(
      {
        id: Type.String(),
        display_name: Type.String(),
        phone: Nullable(Type.String()),
        location: Nullable(GeoPoint),
        location_at: Nullable(Timestamp),
      },
      { description: 'while a driver carries the trip (assigned .. in_transit)' },
    ),
  ),
  assigned_at: Nullable(Timestamp),
  picked_up_at: Nullable(Timestamp),
  completed_at: Nullable(Timestamp),
  cancelled_at: Nullable(Timestamp),
  created_at: Timestamp,
  updated_at: Timestamp,
});

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
function listOwnTrips(ctx: CommerceContext, actor: Actor, page: { after: string | null; limit: number }) {
  return ctx.db.withTenant(actor, async (tx) => {
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
function ownTrip(ctx: CommerceContext, actor: Actor, id: string) {
  return ctx.db.withTenant(actor, async (tx) => {
    const t = await ctx.deps.logistics.getTrip(tx, id);
    if (!t || t.customer_user_id !== actor.userId) throw AppError.notFound('Trip');
    return customerTripView(ctx, tx, t);
  });
}

export function customerTripRoutes(app: Api, ctx: CommerceContext) {
  app.get(
    '/customer/trips',
    {
      config: { auth: { roles: ['delivery'] } },
      schema: {
        operationId: 'listCustomerTrips',
        tags: ['customer'],
        summary: "The trips of the calling customer's orders, newest order first, with the delivery PIN and the driver's position",
        querystring: Strict(PageQueryProps),
        response: { 200: Type.Object({ data: Type.Array(CustomerTripOut), next_cursor: Nullable(Type.String()) }) },
      },
    },
    async (req) => {
      return listOwnTrips(ctx, actorOf(req), pageRequest(req.query));
    },
  );

  app.get(
    '/customer/trips/:id',
    {
      config: { auth: { roles: ['delivery'] } },
      schema: {
        operationId: 'getCustomerTrip',
        tags: ['customer'],
        summary: "One of the caller's trips: status, the driver's last position, the delivery PIN (404 for anyone else's trip)",
        params: IdParams,
        response: { 200: CustomerTripOut },
      },
    },
    async (req) => {
      return ownTrip(ctx, actorOf(req), req.params.id);
    },
  );
}
