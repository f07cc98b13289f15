import type { Actor } from '../../platform/auth.js';
import { toGeoPoint, type LonLat } from '../../platform/geo.js';
import type { Transitions } from '../../platform/state-machine.js';
import type { FAILURE_REASONS, TRIP_STATUSES } from './tables.js';

export type TripStatus = (typeof TRIP_STATUSES)[number];
export type FailureReason = (typeof FAILURE_REASONS)[number];
export type FailedDeliveryPolicy = 'return_to_merchant' | 'close';
export type ServiceMode = 'marketplace' | 'delivery_express';
export type SourceChannel = 'core' | 'chat' | 'admin' | 'api';
export type ApprovalStatus = 'pending' | 'approved' | 'rejected' | 'suspended';

/**
 * The trip state machine. `assigned → assigned` and `accepted → assigned` are reassignments;
 * `assigned|accepted → pending` is a driver reject or a dispatch unassign.
 * A failed delivery (`in_transit`, the driver could not hand over) goes, as the organization's
 * `failed_delivery_policy` says, to `returning` (the driver brings the goods back; `returned` when the
 * merchant confirms with the pickup PIN) or straight to `failed`. returned and failed are terminal.
 */
export const TRIP_TRANSITIONS: Transitions<TripStatus> = {
  pending: ['assigned', 'cancelled'],
  assigned: ['assigned', 'accepted', 'pending', 'cancelled'],
  accepted: ['assigned', 'picked_up', 'pending', 'cancelled'],
  picked_up: ['in_transit', 'cancelled'],
  in_transit: ['completed', 'cancelled', 'returning', 'failed'],
  completed: [],
  cancelled: [],
  returning: ['returned'],
  returned: [],
  failed: [],
};

/** What `POST /trips/:id/status` may do: unassign (back to pending), cancel, record a failed delivery and close its return; the rest have their own operations and proofs. */
export const DISPATCH_TRANSITIONS: Transitions<TripStatus> = {
  pending: ['cancelled'],
  assigned: ['pending', 'cancelled'],
  accepted: ['pending', 'cancelled'],
  picked_up: ['cancelled'],
  // A failed delivery reported by phone (returning or failed, dispatch decides; `failure_reason` required).
  in_transit: ['cancelled', 'returning', 'failed'],
  completed: [],
  cancelled: [],
  // The merchant confirmed he has the goods back (no PIN: dispatch answers for it, audited).
  returning: ['returned'],
  returned: [],
  failed: [],
};

/** States in which a trip occupies one unit of its driver's capacity. */
export const ACTIVE_STATUSES: TripStatus[] = ['assigned', 'accepted', 'picked_up', 'in_transit', 'returning'];
export const TERMINAL_STATUSES: TripStatus[] = ['completed', 'cancelled', 'returned', 'failed'];

/**
 * Drivers and merchants: pending → approved | rejected; approved → suspended → approved (reactivate).
 * Rejected is final. Every query that hands out work asks for `status = 'approved'`, so a suspended
 * driver gets no trips and a suspended merchant no orders or trips without further checks.
 */
export const APPROVAL_TRANSITIONS: Transitions<ApprovalStatus> = {
  pending: ['approved', 'rejected'],
  approved: ['suspended'],
  suspended: ['approved'],
  rejected: [],
};

export type ApprovalAction = 'approve' | 'reject' | 'suspend' | 'reactivate';

/** Each operation names the state it starts from, so `approve` does not double as `reactivate`. */
export const APPROVAL_ACTIONS: Record<ApprovalAction, { from: ApprovalStatus; to: ApprovalStatus }> = {
  approve: { from: 'pending', to: 'approved' },
  reject: { from: 'pending', to: 'rejected' },
  suspend: { from: 'approved', to: 'suspended' },
  reactivate: { from: 'suspended', to: 'approved' },
};

/**
 * Trips that earn their driver his driver_earning, and when: a completed delivery, and a failed one (the attempt was
 * driven) once it ended: closed (failed) or brought back to the merchant (returned).
 */
export const EARNING_TRIP_SQL = `status IN ('completed', 'returned', 'failed')`;
export const EARNED_AT_SQL = 'COALESCE(completed_at, returned_at, failed_at)';

/** Wrong PIN attempts that lock a verification until dispatch resets it. */
export const PIN_MAX_ATTEMPTS = 5;

export interface TripRow {
  organization_id: string;
  id: string;
  status: TripStatus;
  service_mode: ServiceMode;
  source_channel: SourceChannel;
  territory_id: string | null;
  merchant_id: string | null;
  customer_user_id: string | null;
  order_id: string | null;
  express_request_id: string | null;
  driver_id: string | null;
  plan_id: string | null;
  stop_order: number | null;
  pickup_lon: number;
  pickup_lat: number;
  pickup_address: string;
  dropoff_lon: number;
  dropoff_lat: number;
  dropoff_address: string;
  notes: string | null;
  delivery_fee: string;
  driver_earning: string;
  currency: string;
  pickup_pin: string;
  delivery_pin: string;
  pickup_pin_attempts: number;
  delivery_pin_attempts: number;
  status_reason: string | null;
  created_by_user_id: string | null;
  assigned_at: Date | null;
  accepted_at: Date | null;
  picked_up_at: Date | null;
  in_transit_at: Date | null;
  completed_at: Date | null;
  cancelled_at: Date | null;
  failed_at: Date | null;
  returned_at: Date | null;
  failure_reason: FailureReason | null;
  failure_note: string | null;
  created_at: Date;
  updated_at: Date;
  /** Joined: the user of the driver and the owner of the merchant (event audiences, PIN visibility). */
  driver_user_id: string | null;
  merchant_user_id: string | null;
}

export const TRIP_SELECT = `
  SELECT t.organization_id, t.id, t.status, t.service_mode, t.source_channel, t.territory_id, t.merchant_id, t.customer_user_id,
         t.order_id, t.express_request_id, t.driver_id, t.plan_id, t.stop_order,
         (t.pickup_location)[0] AS pickup_lon, (t.pickup_location)[1] AS pickup_lat, t.pickup_address,
         (t.dropoff_location)[0] AS dropoff_lon, (t.dropoff_location)[1] AS dropoff_lat, t.dropoff_address,
         t.notes, t.delivery_fee, t.driver_earning, t.currency, t.pickup_pin, t.delivery_pin,
         t.pickup_pin_attempts, t.delivery_pin_attempts, t.status_reason, t.created_by_user_id,
         t.assigned_at, t.accepted_at, t.picked_up_at, t.in_transit_at, t.completed_at, t.cancelled_at, t.failed_at, t.returned_at, t.failure_reason, t.failure_note, t.created_at, t.updated_at,
         d.user_id AS driver_user_id, m.owner_user_id AS merchant_user_id
    FROM trip t
    LEFT JOIN driver d ON d.organization_id = t.organization_id AND d.id = t.driver_id
    LEFT JOIN merchant m ON m.organization_id = t.organization_id AND m.id = t.merchant_id`;

export const STAFF: Actor['kind'][] = ['administrator', 'dispatch', 'subadmin'];
export const isStaff = (actor: Pick<Actor, 'kind'>) => STAFF.includes(actor.kind);

/**
 * A trip as its viewer may see it. The pickup PIN goes to the merchant owner (to staff when the trip
 * has no merchant), the delivery PIN to the customer (to staff when there is no customer user);
 * drivers never see either: they must obtain them at the stops.
 */
export function tripOut(t: TripRow, viewer: Pick<Actor, 'userId' | 'kind'>) {
  const staff = isStaff(viewer);
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
    currency: t.currency,
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
    created_at: t.created_at,
    updated_at: t.updated_at,
  };
}
export type TripOut = ReturnType<typeof tripOut>;

export interface DriverRow {
  organization_id: string;
  id: string;
  user_id: string;
  display_name: string;
  phone: string | null;
  status: ApprovalStatus;
  status_reason: string | null;
  available: boolean;
  availability_locked: boolean;
  availability_lock_reason: string | null;
  vehicle_type: string;
  capacity: number;
  active_trips: number;
  last_lon: number | null;
  last_lat: number | null;
  last_location_at: Date | null;
  last_seen_at: Date | null;
  territory_ids: string[];
  created_at: Date;
  updated_at: Date;
}

export const DRIVER_SELECT = `
  SELECT d.organization_id, d.id, d.user_id, u.display_name, u.phone, d.status, d.status_reason, d.available, d.availability_locked, d.availability_lock_reason, d.vehicle_type,
         d.capacity, d.active_trips, (d.last_location)[0] AS last_lon, (d.last_location)[1] AS last_lat,
         d.last_location_at, d.last_seen_at, d.created_at, d.updated_at,
         COALESCE((SELECT array_agg(dt.territory_id ORDER BY dt.territory_id) FROM driver_territory dt
                    WHERE dt.organization_id = d.organization_id AND dt.driver_id = d.id), '{}') AS territory_ids
    FROM driver d JOIN users u ON u.organization_id = d.organization_id AND u.id = d.user_id`;

export const lonLatOf = (lon: number | null, lat: number | null): LonLat | null => (lon === null || lat === null ? null : { lon: Number(lon), lat: Number(lat) });

export function driverOut(d: DriverRow) {
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
    active_trips: d.active_trips,
    last_location: toGeoPoint(lonLatOf(d.last_lon, d.last_lat)),
    last_location_at: d.last_location_at,
    last_seen_at: d.last_seen_at,
    territory_ids: d.territory_ids,
    created_at: d.created_at,
    updated_at: d.updated_at,
  };
}

export interface MerchantRow {
  organization_id: string;
  id: string;
  owner_user_id: string;
  name: string;
  phone: string | null;
  address: string | null;
  lon: number | null;
  lat: number | null;
  status: ApprovalStatus;
  status_reason: string | null;
  commission_percent: string;
  territory_id: string | null;
  created_at: Date;
  updated_at: Date;
}

export const MERCHANT_SELECT = `
  SELECT m.organization_id, m.id, m.owner_user_id, m.name, m.phone, m.address, (m.location)[0] AS lon, (m.location)[1] AS lat,
         m.status, m.status_reason, m.commission_percent, m.territory_id, m.created_at, m.updated_at
    FROM merchant m`;

export function merchantOut(m: MerchantRow) {
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

/** For sub-administrators: the territories they are confined to (null = not confined). */
export { scopeOf } from '../../platform/scope.js';
