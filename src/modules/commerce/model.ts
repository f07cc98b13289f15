import { Type, type Static } from '@sinclair/typebox';
import type { Actor } from '../../platform/auth.js';
import type { CommerceContext } from './index.js';
import type { Tx } from '../../platform/db/index.js';
import { AppError } from '../../platform/errors.js';
import { GeoPoint, toGeoPoint, type LonLat } from '../../platform/geo.js';
import { Money, Nullable, Timestamp } from '../../platform/schemas.js';
import type { MerchantRow } from '../logistics/index.js';
import { EXPRESS_STATUSES, ORDER_SOURCES, ORDER_STATUSES, PAYMENT_DESTINATIONS, PAYMENT_STATUSES, SERVICE_MODES } from './tables.js';
import { ownedIds } from './repo/catalog.js';
import type { OrderRow } from './repo/orders.js';

export const lit = <T extends string>(values: readonly T[], description?: string) =>
  Type.Union(
    values.map((v) => Type.Literal(v)),
    description ? { description } : {},
  );

export type OrderStatus = (typeof ORDER_STATUSES)[number];
export type ServiceMode = (typeof SERVICE_MODES)[number];

export const OrderStatusSchema = lit(
  ORDER_STATUSES,
  'pending_confirmation → confirmed → preparing → ready → in_delivery → delivered; cancelled from any non-terminal state; ' +
    'a failed delivery: in_delivery → delivery_failed (→ returned when the goods are back at the merchant)',
);
export const PaymentDestinationSchema = lit(PAYMENT_DESTINATIONS, 'platform (default), merchant_direct or cash');
export const PaymentStatusSchema = lit(
  PAYMENT_STATUSES,
  'pending → pending_review (direct-payment proof) → paid | failed (failed → pending_review with a new proof); pending | authorized → paid when the platform ' +
    'records a platform payment as received (POST /admin/orders/{id}/payment-received), cash orders at delivery; paid → partially_refunded → refunded (refunds). ' +
    'A cancelled order: pending_review | authorized → failed, a received platform payment → refunded. A delivered platform order stays pending until received: its ' +
    'wallet entries are pending and no settlement pays them out.',
);
export const OrderSourceSchema = lit(ORDER_SOURCES);
/** How long an order takes to prepare, in minutes (an order when accepted, a branch's default). */
export const PreparationMinutes = Type.Integer({ minimum: 1, maximum: 240, description: 'minutes, 1 to 240' });
export const ExpressStatusSchema = lit(
  EXPRESS_STATUSES,
  'requested → created (trip exists) → completed | cancelled | delivery_failed (→ returned), following the trip',
);
export const ServiceModeSchema = lit(SERVICE_MODES);

/** The merchant of the calling `comercio` user (404 MERCHANT_PROFILE_NOT_FOUND without one). */
export async function ownMerchant(ctx: CommerceContext, tx: Tx, actor: Actor): Promise<MerchantRow> {
  const m = await ctx.deps.logistics.merchantOfUser(tx, actor.userId);
  if (!m) throw new AppError(404, 'MERCHANT_PROFILE_NOT_FOUND', 'You have no merchant profile');
  return m;
}

export const lonLat = (p: GeoPoint): LonLat => ({ lon: p.coordinates[0], lat: p.coordinates[1] });
export const geo = (lon: number | null, lat: number | null) =>
  lon === null || lat === null ? null : toGeoPoint({ lon: Number(lon), lat: Number(lat) });

/** Refuses ids that are not among the merchant's records of a table (422 with one error per bad id). */
export async function assertOwnIds(
  tx: Tx,
  table: 'merchant_branch' | 'catalog_item',
  merchantId: string,
  ids: string[],
  field: string,
): Promise<void> {
  if (ids.length === 0) return;
  const known = await ownedIds(tx, table, merchantId, ids);
  const bad = [...new Set(ids)].filter((id) => !known.has(id));
  if (bad.length) {
    const what = table === 'merchant_branch' ? 'branch' : 'catalog item';
    throw AppError.unprocessable(
      `Unknown ${what}`,
      table === 'merchant_branch' ? 'BRANCH_NOT_FOUND' : 'CATALOG_ITEM_NOT_FOUND',
      bad.map((id) => ({ field, message: `unknown ${what} ${id}` })),
    );
  }
}

export const PricedLineOut = Type.Object({
  catalog_item_id: Type.String(),
  name: Type.String(),
  unit_price: Money,
  quantity: Type.Integer(),
  line_total: Money,
});

export const OrderOut = Type.Object({
  id: Type.String(),
  status: OrderStatusSchema,
  merchant_id: Type.String(),
  branch_id: Type.String(),
  customer_user_id: Type.String(),
  address_id: Type.String(),
  dropoff_address: Type.String(),
  dropoff_location: GeoPoint,
  territory_id: Nullable(Type.String()),
  payment_destination: PaymentDestinationSchema,
  collected_by: Nullable(
    Type.Union([Type.Literal('driver'), Type.Literal('merchant')], {
      description:
        "cash orders: who takes the cash at the door — `driver` (the platform's driver; the platform holds it once he remits it) or `merchant` (his own staff); null for other destinations",
    }),
  ),
  payment_status: PaymentStatusSchema,
  payment_review_id: Nullable(Type.String()),
  order_source: OrderSourceSchema,
  coupon_id: Nullable(Type.String()),
  coupon_code: Nullable(Type.String()),
  items: Type.Array(PricedLineOut),
  subtotal: Money,
  discount_total: Money,
  delivery_fee: Money,
  total: Money,
  currency: Type.String(),
  quote_id: Nullable(Type.String()),
  trip_id: Nullable(Type.String()),
  notes: Nullable(Type.String()),
  status_reason: Nullable(Type.String()),
  promised_at: Type.Union([Timestamp, Type.Null()], {
    description:
      "when the delivery is promised: set at checkout (the branch's preparation + travel + dispatch buffer, or a scheduled window's end), moved when the merchant accepts with a preparation time; the trip inherits it",
  }),
  deliver_after: Type.Union([Timestamp, Type.Null()], { description: "a scheduled delivery window's start" }),
  deliver_before: Type.Union([Timestamp, Type.Null()], { description: "a scheduled delivery window's end (the promise)" }),
  preparation_min: Nullable(Type.Integer({ description: 'the preparation time the merchant gave when accepting (minutes); null before' })),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export type { OrderRow };

/** The order as the API shows it (typed against OrderOut: a field missing from either fails to compile). */
export function orderOut(o: OrderRow): Static<typeof OrderOut> {
  return {
    id: o.id,
    status: o.status,
    merchant_id: o.merchant_id,
    branch_id: o.branch_id,
    customer_user_id: o.customer_user_id,
    address_id: o.address_id,
    dropoff_address: o.dropoff_address,
    dropoff_location: geo(o.dropoff_lon, o.dropoff_lat)!,
    territory_id: o.territory_id,
    payment_destination: o.payment_destination,
    collected_by: o.collected_by,
    payment_status: o.payment_status,
    payment_review_id: o.payment_review_id,
    order_source: o.order_source,
    coupon_id: o.coupon_id,
    coupon_code: o.coupon_code,
    items: o.items,
    subtotal: o.subtotal,
    discount_total: o.discount_total,
    delivery_fee: o.delivery_fee,
    total: o.total,
    currency: o.currency,
    quote_id: o.quote_id,
    trip_id: o.trip_id,
    notes: o.notes,
    status_reason: o.status_reason,
    promised_at: o.promised_at,
    deliver_after: o.deliver_after,
    deliver_before: o.deliver_before,
    preparation_min: o.preparation_min,
    created_at: o.created_at,
    updated_at: o.updated_at,
  };
}
