import { sql } from 'drizzle-orm';
import {
  boolean,
  check,
  customType,
  doublePrecision,
  foreignKey,
  index,
  integer,
  jsonb,
  numeric,
  pgTable,
  pgView,
  point,
  primaryKey,
  text,
  timestamp,
  unique,
  uniqueIndex,
} from 'drizzle-orm/pg-core';
import { changedXid, sqlList } from '../../platform/tables.js';
import { organization } from '../organizations/tables.js';
import { users } from '../identity/tables.js';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });
/** Native `polygon` (no Drizzle type): one ring of a territory, for `polygon @> point` on a GiST index. */
const polygon = customType<{ data: string }>({ dataType: () => 'polygon' });
const pt = (name: string) => point(name, { mode: 'xy' });
const moneyCol = (name: string) => numeric(name, { precision: 12, scale: 2 });

/** Drivers and merchants: the approval states (the state machine is in service/lifecycle; the API enum in schemas.ts). */
export const APPROVAL_STATUSES = ['pending', 'approved', 'rejected', 'suspended'] as const;
export const SERVICE_MODES = ['marketplace', 'delivery_express'] as const;
/** Where a record came from: a merchant's `core`, the chat, staff's `admin`, an API key's `api`. */
export const SOURCE_CHANNELS = ['core', 'chat', 'admin', 'api'] as const;
/** The stages a PIN guards: the pickup and the delivery. */
export const PIN_STAGES = ['pickup', 'delivery'] as const;
export const ASSIGNMENT_STRATEGIES = ['nearest', 'least_loaded'] as const;
export const FAILED_DELIVERY_POLICIES = ['return_to_merchant', 'close'] as const;
/** A trip's two stops: where the goods are picked up and where they are delivered. */
export const STOP_KINDS = ['pickup', 'dropoff'] as const;

/** Per-organization logistics settings (one row, created on first read). */
export const logisticsSettings = pgTable('logistics_settings', {
  organizationId: text('organization_id')
    .primaryKey()
    .references(() => organization.id),
  autoAssignRadiusM: integer('auto_assign_radius_m').notNull().default(5000),
  acceptanceTimeoutS: integer('acceptance_timeout_s').notNull().default(120),
  acceptanceTimeoutEnabled: boolean('acceptance_timeout_enabled').notNull().default(false),
  acceptanceMaxOffers: integer('acceptance_max_offers').notNull().default(3),
  assignmentStrategy: text('assignment_strategy', { enum: ASSIGNMENT_STRATEGIES }).notNull().default('nearest'),
  failedDeliveryPolicy: text('failed_delivery_policy', { enum: FAILED_DELIVERY_POLICIES }).notNull().default('return_to_merchant'),
  geofenceRadiusM: integer('geofence_radius_m').notNull().default(100),
  averageSpeedKmh: integer('average_speed_kmh').notNull().default(25),
  defaultDeliveryFee: moneyCol('default_delivery_fee').notNull().default('15.00'),
  driverFlatFee: moneyCol('driver_flat_fee').notNull().default('10.00'),
  /** Cash on delivery: a driver holding this much cash or more is offered no cash order (null = no limit); a driver's own `cash_limit` overrides it. */
  cashLimit: moneyCol('cash_limit'),
  currency: text('currency').notNull().default('BOB'),
  /** Added to the preparation and travel estimate of a promise (time to find and dispatch a driver). */
  dispatchBufferMin: integer('dispatch_buffer_min').notNull().default(10),
  /** A trip is late (trip.delayed) once its ETA passes the promise by more than this. */
  delayGraceMin: integer('delay_grace_min').notNull().default(5),
  /** An on-duty driver whose last GPS fix is older than this is stale (trip.location_stale). */
  locationStaleAfterS: integer('location_stale_after_s').notNull().default(300),
  /** Rejections of one trip that raise trip.rejected_repeatedly. */
  rejectionsAlertThreshold: integer('rejections_alert_threshold').notNull().default(2),
  updatedByUserId: text('updated_by_user_id'),
  updatedAt: ts('updated_at').notNull().defaultNow(),
});

export const territory = pgTable(
  'territory',
  {
    organizationId: text('organization_id')
      .notNull()
      .references(() => organization.id),
    id: text('id').notNull(),
    name: text('name').notNull(),
    /** The GeoJSON Polygon/MultiPolygon as submitted (round-trips holes and parts). */
    geometry: jsonb('geometry').notNull(),
    active: boolean('active').notNull().default(true),
    createdByUserId: text('created_by_user_id'),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.organizationId, t.id] }), index('territory_active_idx').on(t.organizationId, t.active, t.createdAt)],
);

/** Native rings of a territory: ring_no 0 is the outer ring of part `part_no`, higher numbers are its holes. */
export const territoryRing = pgTable(
  'territory_ring',
  {
    organizationId: text('organization_id').notNull(),
    territoryId: text('territory_id').notNull(),
    partNo: integer('part_no').notNull(),
    ringNo: integer('ring_no').notNull(),
    ring: polygon('ring').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.territoryId, t.partNo, t.ringNo] }),
    foreignKey({ columns: [t.organizationId, t.territoryId], foreignColumns: [territory.organizationId, territory.id] }).onDelete(
      'cascade',
    ),
    index('territory_ring_gist').using('gist', t.ring),
  ],
);

export const driver = pgTable(
  'driver',
  {
    organizationId: text('organization_id').notNull(),
    id: text('id').notNull(),
    userId: text('user_id').notNull(),
    status: text('status', { enum: APPROVAL_STATUSES }).notNull().default('pending'),
    statusReason: text('status_reason'),
    available: boolean('available').notNull().default(false),
    /** Set by staff: the driver stays unavailable and cannot turn availability back on himself until staff unlock it. */
    availabilityLocked: boolean('availability_locked').notNull().default(false),
    availabilityLockReason: text('availability_lock_reason'),
    availabilityLockedByUserId: text('availability_locked_by_user_id'),
    availabilityLockedAt: ts('availability_locked_at'),
    vehicleType: text('vehicle_type').notNull().default('motorcycle'),
    /** Concurrent trips this driver may carry (the units his vehicle holds). */
    capacity: integer('capacity').notNull().default(1),
    /** Overrides of the vehicle type's capacities and speed (null: the type's default, VEHICLE_TYPES in schemas.ts). */
    capacityUnits: integer('capacity_units'),
    capacityWeightKg: doublePrecision('capacity_weight_kg'),
    capacityVolumeL: doublePrecision('capacity_volume_l'),
    speedFactor: doublePrecision('speed_factor'),
    /** Trips in assigned/accepted/picked_up/in_transit; kept by the assignment SQL (conditional update < capacity). */
    activeTrips: integer('active_trips').notNull().default(0),
    /** Cash on delivery: this driver's own cash limit (overrides the organization's logistics setting; null = the organization's). */
    cashLimit: moneyCol('cash_limit'),
    lastLocation: pt('last_location'),
    /** Device time of last_location (out-of-order points never move it back). */
    lastLocationAt: ts('last_location_at'),
    /** Server time of the last contact. */
    lastSeenAt: ts('last_seen_at'),
    /** Set when trip.location_stale was raised for the current silence; cleared by the next fix (one alert per silence). */
    locationStaleAt: ts('location_stale_at'),
    /** The end of the newest track kept for a trip of this driver (trip_track.ended_at): a GPS batch with a point at or before it merges late points. */
    lastTrackEndedAt: ts('last_track_ended_at'),
    decidedByUserId: text('decided_by_user_id'),
    decidedAt: ts('decided_at'),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.id] }),
    unique('driver_user_uq').on(t.organizationId, t.userId),
    foreignKey({ columns: [t.organizationId, t.userId], foreignColumns: [users.organizationId, users.id] }),
    index('driver_status_idx').on(t.organizationId, t.status, t.id),
    index('driver_location_gist').using('gist', t.lastLocation),
    check('driver_active_trips_ck', sql`${t.activeTrips} >= 0`),
    check('driver_capacity_ck', sql`${t.capacity} between 1 and 50`),
    check('driver_status_ck', sql`${t.status} in ${sqlList(APPROVAL_STATUSES)}`),
  ],
);

export const driverTerritory = pgTable(
  'driver_territory',
  {
    organizationId: text('organization_id').notNull(),
    driverId: text('driver_id').notNull(),
    territoryId: text('territory_id').notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.driverId, t.territoryId] }),
    index('driver_territory_territory_idx').on(t.organizationId, t.territoryId),
    foreignKey({ columns: [t.organizationId, t.driverId], foreignColumns: [driver.organizationId, driver.id] }).onDelete('cascade'),
    foreignKey({ columns: [t.organizationId, t.territoryId], foreignColumns: [territory.organizationId, territory.id] }),
  ],
);

export const merchant = pgTable(
  'merchant',
  {
    organizationId: text('organization_id').notNull(),
    id: text('id').notNull(),
    ownerUserId: text('owner_user_id').notNull(),
    name: text('name').notNull(),
    phone: text('phone'),
    address: text('address'),
    location: pt('location'),
    status: text('status', { enum: APPROVAL_STATUSES }).notNull().default('pending'),
    statusReason: text('status_reason'),
    commissionPercent: numeric('commission_percent', { precision: 5, scale: 2 }).notNull().default('10.00'),
    territoryId: text('territory_id'),
    decidedByUserId: text('decided_by_user_id'),
    decidedAt: ts('decided_at'),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.id] }),
    unique('merchant_owner_uq').on(t.organizationId, t.ownerUserId),
    foreignKey({ columns: [t.organizationId, t.ownerUserId], foreignColumns: [users.organizationId, users.id] }),
    foreignKey({ columns: [t.organizationId, t.territoryId], foreignColumns: [territory.organizationId, territory.id] }),
    index('merchant_status_idx').on(t.organizationId, t.status, t.id),
    index('merchant_territory_idx').on(t.organizationId, t.territoryId, t.id),
    check('merchant_commission_ck', sql`${t.commissionPercent} >= 0 and ${t.commissionPercent} <= 100`),
    check('merchant_status_ck', sql`${t.status} in ${sqlList(APPROVAL_STATUSES)}`),
  ],
);

export const TRIP_STATUSES = [
  'pending',
  'assigned',
  'accepted',
  'picked_up',
  'in_transit',
  'completed',
  'cancelled',
  'returning',
  'returned',
  'failed',
] as const;
export const FAILURE_REASONS = ['recipient_absent', 'refused', 'wrong_address', 'unsafe_location', 'damaged', 'other'] as const;

export const trip = pgTable(
  'trip',
  {
    organizationId: text('organization_id').notNull(),
    id: text('id').notNull(),
    status: text('status', { enum: TRIP_STATUSES }).notNull().default('pending'),
    serviceMode: text('service_mode', { enum: SERVICE_MODES }).notNull().default('marketplace'),
    sourceChannel: text('source_channel', { enum: SOURCE_CHANNELS }).notNull().default('core'),
    territoryId: text('territory_id'),
    merchantId: text('merchant_id'),
    customerUserId: text('customer_user_id'),
    /** Commerce owns orders: a reference without a foreign key. */
    orderId: text('order_id'),
    expressRequestId: text('express_request_id'),
    driverId: text('driver_id'),
    planId: text('plan_id'),
    stopOrder: integer('stop_order'),
    /** The 1-based position of the dropoff in the committed plan's route (stop_order is the pickup's). */
    dropoffOrder: integer('dropoff_order'),
    pickupLocation: pt('pickup_location').notNull(),
    pickupAddress: text('pickup_address').notNull(),
    dropoffLocation: pt('dropoff_location').notNull(),
    dropoffAddress: text('dropoff_address').notNull(),
    notes: text('notes'),
    deliveryFee: moneyCol('delivery_fee').notNull(),
    driverEarning: moneyCol('driver_earning').notNull(),
    /** Cash on delivery: what the driver collects at the door (the order total of a cash order the driver collects; 0 otherwise). */
    cashToCollect: moneyCol('cash_to_collect').notNull().default('0'),
    /** What the driver recorded collecting at delivery (null until delivered, and for trips without cash). */
    cashCollected: moneyCol('cash_collected'),
    /** Why the collected cash differs from cash_to_collect (a discrepancy for review). */
    cashDiscrepancyReason: text('cash_discrepancy_reason'),
    currency: text('currency').notNull().default('BOB'),
    pickupPin: text('pickup_pin').notNull(),
    deliveryPin: text('delivery_pin').notNull(),
    pickupPinAttempts: integer('pickup_pin_attempts').notNull().default(0),
    deliveryPinAttempts: integer('delivery_pin_attempts').notNull().default(0),
    statusReason: text('status_reason'),
    createdByUserId: text('created_by_user_id'),
    assignedAt: ts('assigned_at'),
    acceptedAt: ts('accepted_at'),
    pickedUpAt: ts('picked_up_at'),
    inTransitAt: ts('in_transit_at'),
    completedAt: ts('completed_at'),
    cancelledAt: ts('cancelled_at'),
    failedAt: ts('failed_at'),
    returnedAt: ts('returned_at'),
    failureReason: text('failure_reason', { enum: FAILURE_REASONS }),
    failureNote: text('failure_note'),
    /** When the delivery was promised (checkout, creation, or staff). */
    promisedAt: ts('promised_at'),
    /** A scheduled order's window (promised_at = deliver_before). */
    deliverAfter: ts('deliver_after'),
    deliverBefore: ts('deliver_before'),
    /** Hard pickup window (the optimizer waits before it, never plans after it); either bound may be absent. */
    pickupAfter: ts('pickup_after'),
    pickupBefore: ts('pickup_before'),
    /** The load, on board from pickup to drop-off: units (default 1), kilograms and litres (absent: not counted). */
    units: integer('units').notNull().default(1),
    weightKg: doublePrecision('weight_kg'),
    volumeL: doublePrecision('volume_l'),
    /** Minutes spent at each stop of this trip (null: the dispatch settings' service times). */
    serviceMin: integer('service_min'),
    /** Live ETAs, recomputed when the driver's GPS arrives; null without a driver or once the trip is no longer active. */
    etaPickupAt: ts('eta_pickup_at'),
    etaDropoffAt: ts('eta_dropoff_at'),
    etaUpdatedAt: ts('eta_updated_at'),
    /** Set when trip.delayed was raised (ETA past the promise plus the grace); cleared when the ETA comes back under. */
    delayedAt: ts('delayed_at'),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
    /** Offline sync: the transaction that last wrote the row (trigger sync_touch_changed_xid). */
    changedXid: changedXid(),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.id] }),
    foreignKey({ columns: [t.organizationId, t.driverId], foreignColumns: [driver.organizationId, driver.id] }),
    foreignKey({ columns: [t.organizationId, t.merchantId], foreignColumns: [merchant.organizationId, merchant.id] }),
    foreignKey({ columns: [t.organizationId, t.territoryId], foreignColumns: [territory.organizationId, territory.id] }),
    index('trip_status_idx').on(t.organizationId, t.status, t.id),
    index('trip_driver_idx').on(t.organizationId, t.driverId, t.id),
    index('trip_driver_sync_idx').on(t.organizationId, t.driverId, t.changedXid),
    index('trip_territory_idx').on(t.organizationId, t.territoryId, t.id),
    index('trip_merchant_idx').on(t.organizationId, t.merchantId, t.id),
    index('trip_customer_idx').on(t.organizationId, t.customerUserId, t.id),
    index('trip_created_idx').on(t.organizationId, t.createdAt),
    index('trip_pickup_gist').using('gist', t.pickupLocation),
    uniqueIndex('trip_order_uq')
      .on(t.organizationId, t.orderId)
      .where(sql`order_id IS NOT NULL AND status <> 'cancelled'`),
    uniqueIndex('trip_express_uq')
      .on(t.organizationId, t.expressRequestId)
      .where(sql`express_request_id IS NOT NULL AND status <> 'cancelled'`),
    check('trip_fee_ck', sql`${t.deliveryFee} >= 0 and ${t.driverEarning} >= 0`),
    check('trip_units_ck', sql`${t.units} between 1 and 1000`),
    check('trip_load_ck', sql`(${t.weightKg} IS NULL or ${t.weightKg} > 0) and (${t.volumeL} IS NULL or ${t.volumeL} > 0)`),
    check('trip_cash_ck', sql`${t.cashToCollect} >= 0 and (${t.cashCollected} IS NULL or ${t.cashCollected} >= 0)`),
  ],
);

/**
 * GPS points of a driver; a trip's breadcrumb is its driver's points between acceptance and the end.
 * In the database the table is partitioned by RANGE (recorded_at), one partition a day plus a default one
 * (migration `logistics_location_partitions`; created ahead and dropped after LOCATION_HISTORY_RETENTION_DAYS
 * by `driver_location_maintain`, see worker.ts). Drizzle does not describe partitioning: this declares the parent.
 * A unique key of a partitioned table must contain the partition key, so recorded_at is in the primary key; a resend
 * of a point carries the same client_point_id and the same recorded_at, so it is still a duplicate.
 */
export const driverLocation = pgTable(
  'driver_location',
  {
    organizationId: text('organization_id').notNull(),
    driverId: text('driver_id').notNull(),
    /** Chosen by the device; a repeat of the same point (same id, same recorded_at) is a duplicate and is not stored twice. */
    clientPointId: text('client_point_id').notNull(),
    location: pt('location').notNull(),
    recordedAt: ts('recorded_at').notNull(),
    accuracyM: doublePrecision('accuracy_m'),
    speedMps: doublePrecision('speed_mps'),
    heading: doublePrecision('heading'),
    receivedAt: ts('received_at').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.driverId, t.clientPointId, t.recordedAt] }),
    index('driver_location_time_idx').on(t.organizationId, t.driverId, t.recordedAt),
  ],
);

export const tripProof = pgTable(
  'trip_proof',
  {
    organizationId: text('organization_id').notNull(),
    id: text('id').notNull(),
    tripId: text('trip_id').notNull(),
    stage: text('stage', { enum: PIN_STAGES }).notNull(),
    pinVerified: boolean('pin_verified').notNull().default(true),
    evidenceType: text('evidence_type'),
    storageKey: text('storage_key'),
    driverId: text('driver_id'),
    verifiedByUserId: text('verified_by_user_id'),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.id] }),
    unique('trip_proof_stage_uq').on(t.organizationId, t.tripId, t.stage),
    foreignKey({ columns: [t.organizationId, t.tripId], foreignColumns: [trip.organizationId, trip.id] }),
  ],
);

/** Geofence entries: at most one per trip and stop (the primary key decides). */
export const tripGeofence = pgTable(
  'trip_geofence',
  {
    organizationId: text('organization_id').notNull(),
    tripId: text('trip_id').notNull(),
    stop: text('stop', { enum: STOP_KINDS }).notNull(),
    driverId: text('driver_id').notNull(),
    distanceM: doublePrecision('distance_m').notNull(),
    enteredAt: ts('entered_at').notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.tripId, t.stop] }),
    foreignKey({ columns: [t.organizationId, t.tripId], foreignColumns: [trip.organizationId, trip.id] }),
  ],
);

/**
 * A finished trip's own route: its driver's points between acceptance and the end, copied from driver_location when
 * the trip ends, so dropping old GPS partitions never loses it. One row per trip, the points as parallel arrays in
 * device time order (about 32 bytes a point before compression). Points of the trip's window that reach the server
 * after the end (a driver offline, syncing later) are merged in by the ingest, once each (by device time).
 */
export const tripTrack = pgTable(
  'trip_track',
  {
    organizationId: text('organization_id').notNull(),
    tripId: text('trip_id').notNull(),
    driverId: text('driver_id').notNull(),
    startedAt: ts('started_at').notNull(),
    endedAt: ts('ended_at').notNull(),
    lons: doublePrecision('lons').array().notNull(),
    lats: doublePrecision('lats').array().notNull(),
    recordedAt: ts('recorded_at').array().notNull(),
    /** Null entries where the device sent no speed. */
    speedsMps: doublePrecision('speeds_mps').array().notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.tripId] }),
    foreignKey({ columns: [t.organizationId, t.tripId], foreignColumns: [trip.organizationId, trip.id] }),
    // Every GPS batch looks up its driver's ended trips whose time window it reaches (points synced late).
    index('trip_track_driver_ended_idx').on(t.organizationId, t.driverId, t.endedAt),
  ],
);

/** Drivers who rejected a trip: excluded from its candidates. */
export const tripRejection = pgTable(
  'trip_rejection',
  {
    organizationId: text('organization_id').notNull(),
    tripId: text('trip_id').notNull(),
    driverId: text('driver_id').notNull(),
    reason: text('reason'),
    /** `rejected` by the driver, or `timed_out`: an automatic offer he did not accept in time. */
    kind: text('kind', { enum: ['rejected', 'timed_out'] })
      .notNull()
      .default('rejected'),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.tripId, t.driverId] }),
    foreignKey({ columns: [t.organizationId, t.tripId], foreignColumns: [trip.organizationId, trip.id] }),
  ],
);

/**
 * The recipient's tracking link of a trip whose recipient has no account. The token is not stored: it is
 * `<org>.<id>.<HMAC(recipient-link key, org and id)>`, so staff and the merchant can be shown it again and a
 * leaked table gives nothing away. One live link per trip (reissuing revokes the old).
 */
export const tripRecipientLink = pgTable(
  'trip_recipient_link',
  {
    organizationId: text('organization_id').notNull(),
    id: text('id').notNull(),
    tripId: text('trip_id').notNull(),
    recipientPhone: text('recipient_phone'),
    /** How messages to the recipient address him ({recipient_name}); optional. */
    recipientName: text('recipient_name'),
    createdByUserId: text('created_by_user_id'),
    /** 2: the MAC is under the derived recipient-link key; null: issued earlier, under the raw secret (still honoured). */
    tokenVersion: integer('token_version'),
    createdAt: ts('created_at').notNull().defaultNow(),
    revokedAt: ts('revoked_at'),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.id] }),
    foreignKey({ columns: [t.organizationId, t.tripId], foreignColumns: [trip.organizationId, trip.id] }),
    uniqueIndex('trip_recipient_link_live_uq')
      .on(t.organizationId, t.tripId)
      .where(sql`revoked_at IS NULL`),
  ],
);

/**
 * A GPS device (a phone running Traccar Client, the OsmAnd protocol) bound to a driver by staff: its positions go
 * into the driver's location ingest. It authenticates with a per-device token in the URL (`gpd_<id>_<secret>`, only
 * the SHA-256 of the secret stored) and must send its `device_identifier` as the OsmAnd `id`. Revoked devices are refused.
 */
export const gpsDevice = pgTable(
  'gps_device',
  {
    organizationId: text('organization_id').notNull(),
    id: text('id').notNull(),
    driverId: text('driver_id').notNull(),
    deviceIdentifier: text('device_identifier').notNull(),
    tokenHash: text('token_hash').notNull(),
    createdBy: text('created_by').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    lastSeenAt: timestamp('last_seen_at', { withTimezone: true, mode: 'date' }),
    revokedAt: timestamp('revoked_at', { withTimezone: true, mode: 'date' }),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.id] }),
    foreignKey({ columns: [t.organizationId, t.driverId], foreignColumns: [driver.organizationId, driver.id] }),
    index('gps_device_id_idx').on(t.id),
    uniqueIndex('gps_device_live_uq')
      .on(t.organizationId, t.deviceIdentifier)
      .where(sql`revoked_at IS NULL`),
  ],
);

/**
 * The published read of a merchant for other modules' joins on hot paths (a cart checks its merchant's approval
 * in the one statement that prices it; coupons are listed by their merchant's territory): they join this view,
 * never `merchant`. `security_invoker`: the reader's row-level security applies, as it would on the table.
 */
export const merchantDirectory = pgView('merchant_directory')
  .with({ securityInvoker: true })
  .as((qb) =>
    qb
      .select({
        organizationId: merchant.organizationId,
        id: merchant.id,
        ownerUserId: merchant.ownerUserId,
        name: merchant.name,
        status: merchant.status,
        territoryId: merchant.territoryId,
      })
      .from(merchant),
  );

/**
 * A hub: a place of the organization where routes may start and end (a depot, a warehouse), with its opening
 * hours (`[{ day, open, close }]`, weekday 0 = Sunday, wall-clock times in the organization's time zone; no
 * intervals: always open). It lies inside one of the organization's territories (`territory_id`, the oldest active
 * one covering it, which also confines it to that territory's sub-administrators).
 */
export const hub = pgTable(
  'hub',
  {
    organizationId: text('organization_id').notNull(),
    id: text('id').notNull(),
    name: text('name').notNull(),
    address: text('address').notNull(),
    location: pt('location').notNull(),
    territoryId: text('territory_id').notNull(),
    openingHours: jsonb('opening_hours').$type<{ day: number; open: string; close: string }[]>().notNull().default([]),
    active: boolean('active').notNull().default(true),
    createdByUserId: text('created_by_user_id'),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.id] }),
    foreignKey({ columns: [t.organizationId, t.territoryId], foreignColumns: [territory.organizationId, territory.id] }),
    index('hub_territory_idx').on(t.organizationId, t.territoryId, t.id),
  ],
);
