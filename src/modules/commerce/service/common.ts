import { Actor } from '../../../platform/auth.js';
import { Tx } from '../../../platform/db/index.js';
import { AppError } from '../../../platform/errors.js';
import { GeoPoint, LonLat, toGeoPoint } from '../../../platform/geo.js';
import { MerchantRow } from '../../logistics/index.js';
import { CommerceContext } from '../context.js';
import { ownedIds } from '../repo/catalog.js';
import { OrderRow } from '../repo/orders.js';
import { OrderOut } from '../schemas.js';
import { Static } from '@sinclair/typebox';

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
    pickup_after: o.pickup_after,
    pickup_before: o.pickup_before,
    units: o.units,
    weight_kg: o.weight_kg,
    volume_l: o.volume_l,
    preparation_min: o.preparation_min,
    created_at: o.created_at,
    updated_at: o.updated_at,
  };
}
