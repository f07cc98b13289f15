import type { Static } from '@sinclair/typebox';
import type { Actor } from '../../../platform/auth.js';
import { toGeoPoint, type LonLat } from '../../../platform/geo.js';
import type { DriverRow } from '../repo/drivers.js';
import type { MerchantRow } from '../repo/merchants.js';
import type { TripRow } from '../repo/trips.js';
import { VEHICLE_TYPES, type DriverOut, type MerchantOut, type TripOutSchema, type TripStatus, type VehicleTypeName } from '../schemas.js';
import { ACTIVE_STATUSES, PIN_MAX_ATTEMPTS } from './transitions.js';

export const STAFF: Actor['kind'][] = ['administrator', 'dispatch', 'subadmin'];
export const isStaff = (actor: Pick<Actor, 'kind'>) => STAFF.includes(actor.kind);

/**
 * A trip as its viewer may see it. The pickup PIN goes to the merchant owner (to staff when the trip
 * has no merchant), the delivery PIN to the customer (to staff when there is no customer user);
 * drivers never see either: they must obtain them at the stops. The recipient's phone and name go to staff, and
 * to the trip's driver while he carries it (`recipientContactVisible`); to nobody else.
 */
export function tripOut(t: TripRow, viewer: Pick<Actor, 'userId' | 'kind'>): Static<typeof TripOutSchema> {
  const staff = isStaff(viewer);
  const contact = staff || recipientContactVisible(t, viewer);
  // ETAs are live only while a driver carries the trip to its dropoff (returning goes back to the merchant).
  const live = !!t.driver_id && ACTIVE_STATUSES.includes(t.status) && t.status !== 'returning';
  const showPickup = viewer.kind !== 'repartidor' && (viewer.userId === t.merchant_user_id || (staff && !t.merchant_id));
  const showDelivery = viewer.kind !== 'repartidor' && (viewer.userId === t.customer_user_id || (staff && !t.customer_user_id));
  return {
    id: t.id,
    status: t.status,
    service_mode: t.service_mode,
    source_channel: t.source_channel,
    territory_id: t.territory_id,
    merchant_id: t.merchant_id,
    customer_user_id: t.customer_user_id,
    order_id: t.order_id,
    express_request_id: t.express_request_id,
    driver_id: t.driver_id,
    plan_id: t.plan_id,
    stop_order: t.stop_order,
    pickup_location: toGeoPoint({ lon: t.pickup_lon, lat: t.pickup_lat })!,
    pickup_address: t.pickup_address,
    dropoff_location: toGeoPoint({ lon: t.dropoff_lon, lat: t.dropoff_lat })!,
    dropoff_address: t.dropoff_address,
    notes: t.notes,
    delivery_fee: t.delivery_fee,
    driver_earning: t.driver_earning,
    cash_to_collect: t.cash_to_collect,
    cash_collected: t.cash_collected,
    cash_discrepancy_reason: t.cash_discrepancy_reason,
    currency: t.currency,
    recipient_phone: contact ? t.recipient_phone : null,
    recipient_name: contact ? t.recipient_name : null,
    ...(showPickup ? { pickup_pin: t.pickup_pin } : {}),
    ...(showDelivery ? { delivery_pin: t.delivery_pin } : {}),
    pickup_pin_locked: t.pickup_pin_attempts >= PIN_MAX_ATTEMPTS,
    delivery_pin_locked: t.delivery_pin_attempts >= PIN_MAX_ATTEMPTS,
    status_reason: t.status_reason,
    assigned_at: t.assigned_at,
    accepted_at: t.accepted_at,
    picked_up_at: t.picked_up_at,
    in_transit_at: t.in_transit_at,
    completed_at: t.completed_at,
    cancelled_at: t.cancelled_at,
    failed_at: t.failed_at,
    returned_at: t.returned_at,
    failure_reason: t.failure_reason,
    failure_note: t.failure_note,
    promised_at: t.promised_at,
    deliver_after: t.deliver_after,
    deliver_before: t.deliver_before,
    pickup_after: t.pickup_after,
    pickup_before: t.pickup_before,
    units: t.units,
    weight_kg: t.weight_kg,
    volume_l: t.volume_l,
    service_min: t.service_min,
    eta_pickup_at: live && (t.status === 'assigned' || t.status === 'accepted') ? t.eta_pickup_at : null,
    eta_dropoff_at: live ? t.eta_dropoff_at : null,
    eta_updated_at: t.eta_updated_at,
    late_by_s: lateBySeconds(t),
    created_at: t.created_at,
    updated_at: t.updated_at,
  };
}

/** Trip states in which its driver may call the recipient: from his acceptance until the goods are delivered or back. */
export const RECIPIENT_CONTACT_STATUSES: TripStatus[] = ['accepted', 'picked_up', 'in_transit', 'returning'];

/** The recipient's phone and name go to the trip's own driver while he carries it (not for an offer, not afterwards). */
export function recipientContactVisible(t: Pick<TripRow, 'status' | 'driver_user_id'>, viewer: Pick<Actor, 'userId' | 'kind'>): boolean {
  return (
    viewer.kind === 'repartidor' &&
    !!t.driver_user_id &&
    t.driver_user_id === viewer.userId &&
    RECIPIENT_CONTACT_STATUSES.includes(t.status)
  );
}

/**
 * Seconds by which a trip passes its promise: the delivery time once completed, else the live ETA at the dropoff
 * (negative = early); null without a promise, or without an ETA while it is under way.
 */
export function lateBySeconds(t: Pick<TripRow, 'promised_at' | 'eta_dropoff_at' | 'completed_at' | 'status' | 'driver_id'>): number | null {
  if (!t.promised_at) return null;
  const at =
    t.status === 'completed'
      ? t.completed_at
      : ACTIVE_STATUSES.includes(t.status) && t.status !== 'returning' && t.driver_id
        ? t.eta_dropoff_at
        : null;
  return at ? Math.round((new Date(at).getTime() - new Date(t.promised_at).getTime()) / 1000) : null;
}

export const lonLatOf = (lon: number | null, lat: number | null): LonLat | null =>
  lon === null || lat === null ? null : { lon: Number(lon), lat: Number(lat) };

/** A driver's capacities and speed factor: his overrides, else his vehicle type's defaults (VEHICLE_TYPES). */
export function vehicleOf(
  d: Pick<DriverRow, 'vehicle_type' | 'capacity_units' | 'capacity_weight_kg' | 'capacity_volume_l' | 'speed_factor'>,
) {
  const type = VEHICLE_TYPES[d.vehicle_type as VehicleTypeName] ?? VEHICLE_TYPES.motorcycle;
  return {
    capacity_units: d.capacity_units ?? type.units,
    capacity_weight_kg: d.capacity_weight_kg ?? type.weight_kg,
    capacity_volume_l: d.capacity_volume_l ?? type.volume_l,
    speed_factor: d.speed_factor ?? type.speed_factor,
  };
}

export function driverOut(d: DriverRow): Static<typeof DriverOut> {
  return {
    id: d.id,
    user_id: d.user_id,
    display_name: d.display_name,
    phone: d.phone,
    status: d.status,
    status_reason: d.status_reason,
    available: d.available,
    availability_locked: d.availability_locked,
    availability_lock_reason: d.availability_lock_reason,
    vehicle_type: d.vehicle_type,
    capacity: d.capacity,
    ...vehicleOf(d),
    overrides: {
      capacity_units: d.capacity_units,
      capacity_weight_kg: d.capacity_weight_kg,
      capacity_volume_l: d.capacity_volume_l,
      speed_factor: d.speed_factor,
    },
    active_trips: d.active_trips,
    cash_limit: d.cash_limit,
    last_location: toGeoPoint(lonLatOf(d.last_lon, d.last_lat)),
    last_location_at: d.last_location_at,
    last_seen_at: d.last_seen_at,
    location_stale: d.location_stale,
    territory_ids: d.territory_ids,
    created_at: d.created_at,
    updated_at: d.updated_at,
  };
}

export function merchantOut(m: MerchantRow): Static<typeof MerchantOut> {
  return {
    id: m.id,
    owner_user_id: m.owner_user_id,
    name: m.name,
    phone: m.phone,
    address: m.address,
    location: toGeoPoint(lonLatOf(m.lon, m.lat)),
    status: m.status,
    status_reason: m.status_reason,
    commission_percent: m.commission_percent,
    territory_id: m.territory_id,
    created_at: m.created_at,
    updated_at: m.updated_at,
  };
}
