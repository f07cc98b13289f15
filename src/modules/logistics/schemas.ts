import { Type, type Static } from '@sinclair/typebox';
import { GeoArea, GeoPoint } from '../../platform/geo.js';
import { MONEY_PATTERN } from '../../platform/money.js';
import { Literals, Money, Nullable, ShortText, Strict, Timestamp } from '../../platform/schemas.js';
import {
  APPROVAL_STATUSES,
  ASSIGNMENT_STRATEGIES,
  FAILED_DELIVERY_POLICIES,
  FAILURE_REASONS,
  PIN_STAGES,
  SERVICE_MODES,
  SOURCE_CHANNELS,
  STOP_KINDS,
  TRIP_STATUSES,
} from './tables.js';
import { EXCEPTION_KINDS, FAILED_LISTED_H, type ExceptionKind } from './repo/exceptions.js';

/** A nullable timestamp with its description on the union (where documentation tools look). */
const NullableTs = (description: string) => Type.Union([Timestamp, Type.Null()], { description });

export const TripStatusSchema = Literals(
  TRIP_STATUSES,
  'pending → assigned → accepted → picked_up → in_transit → completed; cancelled from any non-terminal state except returning; ' +
    'a failed delivery: in_transit → returning → returned (failed_delivery_policy return_to_merchant) or in_transit → failed (close)',
);
export type TripStatus = Static<typeof TripStatusSchema>;
export const FailureReasonSchema = Literals(FAILURE_REASONS, 'why the delivery could not be completed');
export type FailureReason = Static<typeof FailureReasonSchema>;
export const ApprovalStatusSchema = Literals(
  APPROVAL_STATUSES,
  'pending → approved | rejected (approve, reject); approved → suspended (suspend); suspended → approved (reactivate); rejected is final',
);
export type ApprovalStatus = Static<typeof ApprovalStatusSchema>;
const VEHICLE_TYPE_NAMES = ['motorcycle', 'bicycle', 'car', 'van', 'on_foot'] as const;
export const VehicleType = Literals(
  VEHICLE_TYPE_NAMES,
  'default capacities: on_foot 1 unit, 10 kg, 20 l, speed 0.25; bicycle 2 units, 15 kg, 40 l, 0.6; motorcycle 3 units, 30 kg, 90 l, 1; car 8 units, 300 kg, 400 l, 1; van 30 units, 1000 kg, 3000 l, 0.9 (speed factor against the organization average); a driver may override each',
);
export type VehicleTypeName = Static<typeof VehicleType>;

/**
 * What a vehicle type carries and how fast it goes against the organization's average speed, unless the driver
 * overrides it (capacity_units, capacity_weight_kg, capacity_volume_l, speed_factor). Units are parcels on board at
 * once (a trip's `units`, default 1): a bicycle's basket holds 2, a motorcycle's box 3, a car 8, a van 30. The
 * driver's `capacity` (concurrent trips he may be given) is a separate limit.
 */
export const VEHICLE_TYPES: Record<VehicleTypeName, { units: number; weight_kg: number; volume_l: number; speed_factor: number }> = {
  on_foot: { units: 1, weight_kg: 10, volume_l: 20, speed_factor: 0.25 },
  bicycle: { units: 2, weight_kg: 15, volume_l: 40, speed_factor: 0.6 },
  motorcycle: { units: 3, weight_kg: 30, volume_l: 90, speed_factor: 1 },
  car: { units: 8, weight_kg: 300, volume_l: 400, speed_factor: 1 },
  van: { units: 30, weight_kg: 1000, volume_l: 3000, speed_factor: 0.9 },
};

/** Bounds of a trip's load and a vehicle's capacities (outside them: 422 LOAD_INVALID / CAPACITY_INVALID with the field). */
export const LOAD_LIMITS = { units: 1000, weight_kg: 5000, volume_l: 20_000, service_min: 240, speed_factor: [0.1, 3] as const };
export const ServiceModeSchema = Literals(SERVICE_MODES);
export type ServiceMode = Static<typeof ServiceModeSchema>;
export const StopKindSchema = Literals(STOP_KINDS);
export type StopKind = Static<typeof StopKindSchema>;
export { PIN_STAGES };
export type PinStage = (typeof PIN_STAGES)[number];
/** Which PIN lock a staff override resets: one stage's, or both. */
export const PinLockSchema = Literals([...PIN_STAGES, 'both'] as const);
export type PinLock = Static<typeof PinLockSchema>;
export const SourceChannelSchema = Literals(SOURCE_CHANNELS);
export const StrategySchema = Literals(ASSIGNMENT_STRATEGIES, 'auto-assignment ranking: nearest first, or least loaded first');
export const FailedDeliveryPolicySchema = Literals(
  FAILED_DELIVERY_POLICIES,
  'what a failed delivery leads to: return_to_merchant (default: the trip goes to returning until the merchant confirms the return with the pickup PIN) or close (the trip ends as failed)',
);
export type FailedDeliveryPolicy = Static<typeof FailedDeliveryPolicySchema>;
export type SourceChannel = Static<typeof SourceChannelSchema>;
export const ReasonBody = Strict({ reason: Type.Optional(ShortText(500)) });

export const SettingsOut = Type.Object({
  auto_assign_radius_m: Type.Integer(),
  acceptance_timeout_s: Type.Integer(),
  acceptance_timeout_enabled: Type.Boolean(),
  acceptance_max_offers: Type.Integer(),
  assignment_strategy: StrategySchema,
  failed_delivery_policy: FailedDeliveryPolicySchema,
  geofence_radius_m: Type.Integer(),
  average_speed_kmh: Type.Integer(),
  default_delivery_fee: Money,
  driver_flat_fee: Money,
  cash_limit: Type.Union([Money, Type.Null()], {
    description:
      'cash on delivery: a driver holding this much cash or more gets no cash order (null = no limit); a driver cash_limit overrides it',
  }),
  currency: Type.String(),
  dispatch_buffer_min: Type.Integer({ description: 'minutes added to preparation and travel in a delivery promise' }),
  delay_grace_min: Type.Integer({ description: 'trip.delayed when the ETA passes the promise by more than this many minutes' }),
  location_stale_after_s: Type.Integer({ description: "trip.location_stale when an on-duty driver's last GPS fix is older than this" }),
  rejections_alert_threshold: Type.Integer({
    description: 'rejections of one trip that raise trip.rejected_repeatedly (once per trip, at this count)',
  }),
  updated_at: Timestamp,
});

export const TerritoryOut = Type.Object({
  id: Type.String(),
  name: Type.String(),
  active: Type.Boolean(),
  geometry: GeoArea,
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const DriverOut = Type.Object({
  id: Type.String(),
  user_id: Type.String(),
  display_name: Type.String(),
  phone: Nullable(Type.String()),
  status: ApprovalStatusSchema,
  status_reason: Nullable(Type.String()),
  available: Type.Boolean(),
  availability_locked: Type.Boolean({
    description: 'set by staff: the driver cannot go available until staff unlock it (403 AVAILABILITY_LOCKED)',
  }),
  availability_lock_reason: Nullable(Type.String()),
  vehicle_type: Type.String(),
  capacity: Type.Integer({ description: 'concurrent trips this driver may be given' }),
  capacity_units: Type.Integer({
    description: "units of load his vehicle holds at once (planning's units dimension): his override, else his vehicle type's default",
  }),
  capacity_weight_kg: Type.Number({ description: "kilograms his vehicle carries: his override, else his vehicle type's default" }),
  capacity_volume_l: Type.Number({ description: "litres his vehicle carries: his override, else his vehicle type's default" }),
  speed_factor: Type.Number({ description: "his speed against the organization's average: his override, else his vehicle type's default" }),
  overrides: Type.Object(
    {
      capacity_units: Nullable(Type.Integer()),
      capacity_weight_kg: Nullable(Type.Number()),
      capacity_volume_l: Nullable(Type.Number()),
      speed_factor: Nullable(Type.Number()),
    },
    { description: 'the values set for this driver (null: the vehicle type decides)' },
  ),
  active_trips: Type.Integer(),
  cash_limit: Type.Union([Money, Type.Null()], {
    description: "cash on delivery: this driver's own cash limit (null: the organization's logistics setting cash_limit)",
  }),
  last_location: Nullable(GeoPoint),
  last_location_at: Nullable(Timestamp),
  last_seen_at: Nullable(Timestamp),
  location_stale: Type.Boolean({
    description:
      "on duty (available or carrying trips) and the last GPS fix older than the organization's location_stale_after_s (or none)",
  }),
  territory_ids: Type.Array(Type.String()),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const NearbyDriverOut = Type.Object({
  ...DriverOut.properties,
  distance_m: Type.Number({ description: 'great-circle distance in metres' }),
});

export const MerchantOut = Type.Object({
  id: Type.String(),
  owner_user_id: Type.String(),
  name: Type.String(),
  phone: Nullable(Type.String()),
  address: Nullable(Type.String()),
  location: Nullable(GeoPoint),
  status: ApprovalStatusSchema,
  status_reason: Nullable(Type.String()),
  commission_percent: Type.String({ description: 'percent, decimal string e.g. "10.00"' }),
  territory_id: Nullable(Type.String()),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const TripOutSchema = Type.Object({
  id: Type.String(),
  status: TripStatusSchema,
  service_mode: ServiceModeSchema,
  source_channel: SourceChannelSchema,
  territory_id: Nullable(Type.String()),
  merchant_id: Nullable(Type.String()),
  customer_user_id: Nullable(Type.String()),
  order_id: Nullable(Type.String()),
  express_request_id: Nullable(Type.String()),
  driver_id: Nullable(Type.String()),
  plan_id: Nullable(Type.String()),
  stop_order: Nullable(Type.Integer()),
  pickup_location: GeoPoint,
  pickup_address: Type.String(),
  dropoff_location: GeoPoint,
  dropoff_address: Type.String(),
  notes: Nullable(Type.String()),
  delivery_fee: Money,
  driver_earning: Money,
  cash_to_collect: Type.String({
    pattern: MONEY_PATTERN,
    description:
      'cash on delivery: what the driver collects at the door (the order total of a cash order the platform\'s driver collects; "0.00" otherwise); delivering needs `cash_collected`',
  }),
  cash_collected: Nullable(Type.String({ pattern: MONEY_PATTERN, description: 'what the driver recorded collecting at delivery' })),
  cash_discrepancy_reason: Nullable(
    Type.String({ description: 'why the cash collected differs from cash_to_collect (a discrepancy for review)' }),
  ),
  recipient_phone: Nullable(
    Type.String({
      description:
        "the recipient's phone (his tracking link's when he has no account, else his account's), to call or message him: for staff, and for the trip's driver " +
        'from acceptance until delivered or returned (accepted, picked_up, in_transit, returning); null otherwise and for everyone else',
    }),
  ),
  recipient_name: Nullable(Type.String({ description: "the recipient's name, shown with recipient_phone under the same rule" })),
  currency: Type.String(),
  pickup_pin: Type.Optional(
    Type.String({ description: 'only for the merchant owner (staff when the trip has no merchant); never for drivers' }),
  ),
  delivery_pin: Type.Optional(
    Type.String({ description: 'only for the customer (staff when the trip has no customer user); never for drivers' }),
  ),
  pickup_pin_locked: Type.Boolean({
    description: 'true after 5 wrong pickup PINs; dispatch resets it with POST /trips/:id/status {reset_pin_lock}',
  }),
  delivery_pin_locked: Type.Boolean(),
  status_reason: Nullable(Type.String()),
  assigned_at: Nullable(Timestamp),
  accepted_at: Nullable(Timestamp),
  picked_up_at: Nullable(Timestamp),
  in_transit_at: Nullable(Timestamp),
  completed_at: Nullable(Timestamp),
  cancelled_at: Nullable(Timestamp),
  failed_at: Nullable(Timestamp),
  returned_at: Nullable(Timestamp),
  failure_reason: Nullable(FailureReasonSchema),
  failure_note: Nullable(Type.String()),
  promised_at: NullableTs(
    'when the delivery was promised: checkout (branch preparation + travel estimate + dispatch_buffer_min), creation (travel + buffer) or a scheduled window (deliver_before); staff may change it (PATCH /trips/:id/promise, audited)',
  ),
  deliver_after: NullableTs("a scheduled order's window start"),
  deliver_before: NullableTs("a scheduled order's window end (= promised_at)"),
  pickup_after: NullableTs('the pickup window start: a planned route waits until then'),
  pickup_before: NullableTs('the pickup window end: a plan never reaches the pickup later (else unassigned TIME_WINDOW)'),
  units: Type.Integer({ description: 'load in units (default 1), on board from pickup to drop-off' }),
  weight_kg: Nullable(Type.Number({ description: 'load in kilograms' })),
  volume_l: Nullable(Type.Number({ description: 'load in litres' })),
  service_min: Nullable(Type.Integer({ description: "minutes at each stop of this trip (null: the dispatch settings' service times)" })),
  eta_pickup_at: NullableTs(
    "live: recomputed when the driver's GPS arrives, from his position along his remaining stops in order; null once picked up, without a driver or when no longer active",
  ),
  eta_dropoff_at: NullableTs(
    'live ETA at the dropoff (counts the pickup leg and the stops before it); null without a driver or when no longer active',
  ),
  eta_updated_at: Nullable(Timestamp),
  late_by_s: Nullable(
    Type.Integer({
      description: 'seconds by which the ETA (or the actual delivery) passes promised_at; negative = early; null without a promise or ETA',
    }),
  ),
  created_at: Timestamp,
  updated_at: Timestamp,
});
export type TripOut = Static<typeof TripOutSchema>;

export const ProofOut = Type.Object({
  id: Type.String(),
  trip_id: Type.String(),
  stage: Literals(PIN_STAGES),
  pin_verified: Type.Boolean(),
  evidence: Nullable(Type.Object({ type: Type.String(), storage_key: Type.String() })),
  driver_id: Nullable(Type.String()),
  verified_by_user_id: Nullable(Type.String()),
  created_at: Timestamp,
});

export const EvidenceIn = Strict({
  type: Type.String({ pattern: '^[a-z][a-z0-9_]{1,31}$', description: 'kind of proof, e.g. photo, signature' }),
  storage_key: Type.String({
    minLength: 1,
    maxLength: 64,
    pattern: '^[A-Za-z0-9_-]+$',
    description: 'id of a private storage object of this trip and stage',
  }),
});
export const VerifyBody = Strict({
  pin: Type.String({ minLength: 1, maxLength: 12 }),
  evidence: Type.Optional(EvidenceIn),
  cash_collected: Type.Optional(
    Type.String({
      pattern: '^\\d{1,10}(\\.\\d{1,2})?$',
      description:
        'delivery of a trip with cash_to_collect > 0 (required there, 422 CASH_COLLECTION_REQUIRED otherwise; refused on other trips and at pickup, 422 NO_CASH_TO_COLLECT): the cash taken at the door, > 0',
    }),
  ),
  cash_discrepancy_reason: Type.Optional(ShortText(500)),
});

export const GpsPointIn = Strict({
  client_point_id: Type.String({ minLength: 1, maxLength: 100, description: 'chosen by the device; repeats are duplicates' }),
  location: GeoPoint,
  recorded_at: Type.String({ format: 'date-time', description: 'device time; points may arrive out of order' }),
  accuracy_m: Type.Optional(Type.Number({ minimum: 0, maximum: 100_000 })),
  speed_mps: Type.Optional(Type.Number({ minimum: 0, maximum: 200 })),
  heading: Type.Optional(Type.Number({ minimum: 0, maximum: 360 })),
});
export const SingleLocationIn = Strict({
  location: GeoPoint,
  recorded_at: Type.Optional(Type.String({ format: 'date-time' })),
  client_point_id: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  accuracy_m: Type.Optional(Type.Number({ minimum: 0, maximum: 100_000 })),
  speed_mps: Type.Optional(Type.Number({ minimum: 0, maximum: 200 })),
  heading: Type.Optional(Type.Number({ minimum: 0, maximum: 360 })),
});
export const IngestOut = Type.Object({
  accepted: Type.Integer({ description: 'points stored now' }),
  duplicates: Type.Integer({ description: 'points already stored (same client_point_id) or repeated in this batch' }),
  last_location: Nullable(GeoPoint),
  last_location_at: Nullable(Timestamp),
  geofence_entries: Type.Array(Type.Object({ trip_id: Type.String(), stop: Type.String() })),
});

export const GpsDeviceOut = Type.Object({
  id: Type.String(),
  organization_id: Type.String(),
  driver_id: Type.String(),
  device_identifier: Type.String({ description: 'what the app sends as the OsmAnd `id` (Traccar Client: "Device identifier")' }),
  created_by: Type.String(),
  created_at: Timestamp,
  last_seen_at: Nullable(Timestamp),
  revoked_at: Nullable(Timestamp),
});
/** A bound GPS device with its token, shown once. */
export const GpsDeviceWithTokenOut = Type.Composite([
  GpsDeviceOut,
  Type.Object({
    token: Type.String({ description: 'the per-device token, shown only in this response' }),
    url_path: Type.String({
      description: "the path to give the app as its server URL (after this server's origin): /api/v1/gps/osmand/<token>",
    }),
  }),
]);

/** OsmAnd's query (what Traccar Client sends); unknown fields pass and are ignored. */
export const OsmandQuery = Type.Object(
  {
    id: Type.Optional(Type.String({ maxLength: 100, description: 'the device identifier bound to the token' })),
    lat: Type.Optional(Type.String({ maxLength: 40, description: 'latitude, degrees' })),
    lon: Type.Optional(Type.String({ maxLength: 40, description: 'longitude, degrees' })),
    timestamp: Type.Optional(Type.String({ maxLength: 40, description: 'unix seconds (or milliseconds) or ISO 8601; absent = now' })),
    speed: Type.Optional(Type.String({ maxLength: 40, description: 'knots (the OsmAnd unit); stored in m/s' })),
    bearing: Type.Optional(Type.String({ maxLength: 40, description: 'degrees 0-360' })),
    accuracy: Type.Optional(Type.String({ maxLength: 40, description: 'metres' })),
    batt: Type.Optional(Type.String({ maxLength: 40, description: 'battery percent (checked, not stored)' })),
  },
  { additionalProperties: true, description: 'Other OsmAnd fields (altitude, charge, hdop, ...) are ignored.' },
);
const OsmandNumber = Type.Number();
/**
 * A POST body: the OsmAnd fields as a form (or flat JSON), or the JSON of newer Traccar Client versions
 * (`device_id`, `location.timestamp` ISO 8601, `location.coords` with speed in m/s, `location.battery.level` 0-1).
 */
export const OsmandBody = Type.Object(
  {
    ...Object.fromEntries(
      Object.entries(OsmandQuery.properties).map(([k, v]) => [
        k,
        Type.Optional(Type.Union([v, Type.Number()], { description: v.description })),
      ]),
    ),
    device_id: Type.Optional(Type.String({ maxLength: 100, description: 'JSON: the device identifier bound to the token' })),
    location: Type.Optional(
      Type.Object(
        {
          timestamp: Type.Optional(
            Type.Union([Type.String({ maxLength: 40 }), OsmandNumber], { description: 'ISO 8601 (or unix seconds); absent = now' }),
          ),
          coords: Type.Object(
            {
              latitude: OsmandNumber,
              longitude: OsmandNumber,
              speed: Type.Optional(Type.Number({ description: 'm/s; negative = unknown' })),
              heading: Type.Optional(Type.Number({ description: 'degrees; negative = unknown' })),
              accuracy: Type.Optional(Type.Number({ description: 'metres' })),
            },
            { additionalProperties: true },
          ),
          battery: Type.Optional(
            Type.Object(
              { level: Type.Optional(Type.Number({ description: '0 to 1; negative = unknown (checked, not stored)' })) },
              { additionalProperties: true },
            ),
          ),
        },
        { additionalProperties: true, description: 'JSON: one fix (other fields such as is_moving, odometer, activity are ignored)' },
      ),
    ),
  },
  { additionalProperties: true },
);
export const OsmandOut = Type.Object({ accepted: Type.Integer(), duplicates: Type.Integer() });

export const ExceptionKindSchema = Type.Union(
  EXCEPTION_KINDS.map((k) => Type.Literal(k)),
  {
    description:
      `failed: a delivery closed as failed in the last ${FAILED_LISTED_H} h; returning: a failed delivery whose goods go back to the merchant (until returned); ` +
      'late: an unfinished trip whose ETA (or the clock) passed promised_at + delay_grace_min; stale_gps: an on-duty driver whose last fix is older than location_stale_after_s; ' +
      'rejected_again: a trip still unaccepted that rejections_alert_threshold drivers rejected; pin_locked: a trip whose pickup or delivery PIN is locked',
  },
);

export const ExceptionsOut = Type.Object({
  counts: Type.Object(
    Object.fromEntries(EXCEPTION_KINDS.map((k) => [k, Type.Integer()])) as Record<ExceptionKind, ReturnType<typeof Type.Integer>>,
    {
      description: "open exceptions per kind in the caller's scope (not limited by kind or the page)",
    },
  ),
  items: Type.Array(
    Type.Object({
      kind: ExceptionKindSchema,
      trip_id: Nullable(Type.String()),
      driver_id: Nullable(Type.String()),
      since: Timestamp,
      detail: Type.Object(
        {},
        {
          additionalProperties: true,
          description:
            'per kind: failure_reason/failure_note; promised_at/eta_dropoff_at/late_by_s; last_location_at/available/active_trips; rejections/last_reason; stage',
        },
      ),
      trip: Nullable(TripOutSchema),
    }),
  ),
  next_cursor: Nullable(Type.String()),
});

export const LinkOut = Type.Object({
  id: Type.String(),
  trip_id: Type.String(),
  url: Type.String({ description: 'the public tracking address (absolute when PUBLIC_BASE_URL is set)' }),
  recipient_phone: Nullable(Type.String()),
  created_at: Timestamp,
  expires_at: Nullable(Timestamp), // null while the trip runs; LINK_HOURS_AFTER_END hours after it ended
  revoked_at: Nullable(Timestamp),
});

/** What the recipient's public tracking page reads. */
export const PublicTracking = Type.Object({
  trip_id: Type.String(),
  status: TripStatusSchema,
  organization_name: Nullable(Type.String()),
  dropoff_address: Type.String(),
  dropoff_location: GeoPoint,
  promised_at: Nullable(Timestamp),
  eta_dropoff_at: Nullable(Timestamp), // the live ETA at the recipient's address (not at the next stop), while active
  driver_location: Nullable(GeoPoint), // only while the trip is active
  driver_location_at: Nullable(Timestamp),
  next_stop: Nullable(StopKindSchema),
  eta_seconds: Nullable(Type.Integer()),
  delivery_pin: Nullable(Type.String({ description: 'the code to give the driver at the door; null once the trip ended' })),
  created_at: Timestamp,
  picked_up_at: Nullable(Timestamp),
  completed_at: Nullable(Timestamp),
  cancelled_at: Nullable(Timestamp),
  expires_at: Nullable(Timestamp),
});

/** The optional windows and load of a new trip (POST /trips, and the orders and express requests that create one). */
export const TripWindowsLoadIn = {
  pickup_after: Type.Optional(Type.String({ format: 'date-time', description: 'pickup window start (a planned route waits)' })),
  pickup_before: Type.Optional(
    Type.String({
      format: 'date-time',
      description: 'pickup window end: after pickup_after, in the future and before deliver_before (422 WINDOW_INVALID)',
    }),
  ),
  units: Type.Optional(Type.Integer({ description: `load in units, 1 to ${LOAD_LIMITS.units} (default 1; else 422 LOAD_INVALID)` })),
  weight_kg: Type.Optional(
    Type.Number({ description: `load in kilograms, > 0 and at most ${LOAD_LIMITS.weight_kg} (else 422 LOAD_INVALID)` }),
  ),
  volume_l: Type.Optional(Type.Number({ description: `load in litres, > 0 and at most ${LOAD_LIMITS.volume_l} (else 422 LOAD_INVALID)` })),
  service_min: Type.Optional(
    Type.Integer({ description: `minutes at each stop of this trip, 0 to ${LOAD_LIMITS.service_min} (else 422 LOAD_INVALID)` }),
  ),
};

/** A trip's route (GET /trips/{id}/track). */
export const TripTrackOut = Type.Object({
  trip_id: Type.String(),
  status: TripStatusSchema,
  source: Type.Union([Type.Literal('kept'), Type.Literal('history')], {
    description: 'kept: the route stored with the finished trip; history: read from the GPS history (an active trip)',
  }),
  points: Type.Array(
    Type.Object({
      lon: Type.Number(),
      lat: Type.Number(),
      recorded_at: Timestamp,
      speed_mps: Nullable(Type.Number()),
    }),
    { description: 'device time order' },
  ),
  next_after: Type.Union([Timestamp, Type.Null()], { description: 'the `after` of the next page; null on the last page' }),
});

const HOUR_MINUTE = '^([01]\\d|2[0-3]):[0-5]\\d$';
/** A hub's opening hours: one interval a weekday, closing after it opens the same day. */
export const HubHours = Type.Array(
  Strict({
    day: Type.Integer({ minimum: 0, maximum: 6, description: '0 = Sunday' }),
    open: Type.String({ pattern: HOUR_MINUTE, description: 'HH:MM, organization time zone' }),
    close: Type.String({ pattern: '^(([01]\\d|2[0-3]):[0-5]\\d|24:00)$', description: 'HH:MM after open (24:00: midnight)' }),
  }),
  {
    maxItems: 7,
    description:
      'One interval per weekday in the organization time zone, close after open (422 HUB_HOURS_INVALID otherwise; a day twice too). A day without an ' +
      'interval is closed; no intervals at all: always open. Plans start from the hub no earlier than its opening and return to it by its closing, that day.',
  },
);
export type HubHours = Static<typeof HubHours>;

export const HubOut = Type.Object({
  id: Type.String(),
  organization_id: Type.String(),
  name: Type.String(),
  address: Type.String(),
  location: GeoPoint,
  territory_id: Type.String({ description: 'the territory the hub lies in (the oldest active one covering it)' }),
  opening_hours: HubHours,
  active: Type.Boolean(),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const HubBody = {
  name: ShortText(120),
  address: ShortText(300),
  location: GeoPoint,
  opening_hours: HubHours,
  active: Type.Boolean(),
};
