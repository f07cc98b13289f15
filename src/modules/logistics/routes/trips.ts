import { Type } from '@sinclair/typebox';
import { actorOf } from '../../../platform/auth.js';
import type { Api, AppContext } from '../../../platform/context.js';
import { GeoPoint } from '../../../platform/geo.js';
import { requestHash, validateIdempotencyKey } from '../../../platform/idempotency.js';
import {
  Id,
  IdParams,
  Money,
  Nullable,
  OneOf,
  Page,
  PageQueryProps,
  Phone,
  ShortText,
  Strict,
  Timestamp,
} from '../../../platform/schemas.js';
import { tripOut } from '../service/mappers.js';
import {
  DriverOut,
  FailureReasonSchema,
  PinLockSchema,
  ProofOut,
  ServiceModeSchema,
  StopKindSchema,
  SourceChannelSchema,
  TripOutSchema,
  TripStatusSchema,
  TripWindowsLoadIn,
  TripTrackOut,
  VerifyBody,
} from '../schemas.js';
import { TRACK_MAX_POINTS } from '../repo/locations.js';
import { TRACK_PAGE_DEFAULT, TRACK_PAGE_MAX } from '../service/trip-queries.js';
import type { Stage } from '../service/proofs.js';
import type { LogisticsService } from '../service/logistics.js';

const STAFF = ['administrator', 'dispatch', 'subadmin'] as const;
const TripIdParams = IdParams;

export function tripRoutes(app: Api, _ctx: AppContext, svc: LogisticsService) {
  const trips = svc.requests.trips;

  app.get(
    '/trips',
    {
      config: { auth: { roles: [...STAFF, 'comercio', 'delivery'], permission: 'delivery_status', apiKeyScope: 'trips:read' } },
      schema: {
        operationId: 'listTrips',
        tags: ['trips'],
        summary: 'Trips, newest first (cursor pagination)',
        description:
          'Staff see the organization (sub-administrators: their territories); a merchant sees his trips with the pickup PIN, a customer his with the delivery PIN.',
        querystring: Strict({
          ...PageQueryProps,
          status: Type.Optional(TripStatusSchema),
          driver_id: Type.Optional(Id),
          territory_id: Type.Optional(Id),
          merchant_id: Type.Optional(Id),
          order_id: Type.Optional(ShortText(100)),
          from: Type.Optional(Type.String({ format: 'date-time', description: 'created at or after' })),
          to: Type.Optional(Type.String({ format: 'date-time', description: 'created before' })),
        }),
        response: { 200: Page(TripOutSchema) },
      },
    },
    async (req) => {
      const actor = actorOf(req);
      return trips.list(actor, req.query);
    },
  );

  app.get(
    '/trips/:id',
    {
      config: {
        auth: { roles: [...STAFF, 'comercio', 'delivery', 'repartidor'], permission: 'delivery_status', apiKeyScope: 'trips:read' },
      },
      schema: {
        operationId: 'getTrip',
        tags: ['trips'],
        summary: 'One trip',
        description:
          'Staff (sub-administrators: within their territories), the merchant owner (with the pickup PIN), the customer (with the delivery PIN) and the assigned driver; ' +
          'anyone else, and a trip of another organization, gets 404.',
        params: TripIdParams,
        response: { 200: TripOutSchema },
      },
    },
    async (req) => {
      const actor = actorOf(req);
      return tripOut(await trips.get(actor, req.params.id), actor);
    },
  );

  app.post(
    '/trips',
    {
      config: { auth: { roles: [...STAFF, 'comercio'], apiKeyScope: 'trips:write' } },
      schema: {
        operationId: 'createTrip',
        tags: ['trips'],
        summary: 'Create a trip (status pending) with random pickup and delivery PINs; honours Idempotency-Key',
        description:
          'A repeat with the same Idempotency-Key returns the first response (also when concurrent); the same key with another body is 422 IDEMPOTENCY_KEY_REUSED. ' +
          'Without territory_id the territory is the oldest active one covering the pickup. delivery_fee and driver_earning default to the logistics settings; ' +
          'merchants may not set them. A merchant creates trips only for his own (approved) merchant. Linked ids are checked before anything is written: ' +
          "`customer_user_id` must be a customer (`delivery`) user of the organization (422 CUSTOMER_NOT_FOUND); `order_id` must be an order of the trip's " +
          "merchant (422 ORDER_NOT_FOUND, also for another merchant's order), `ready` (409 ORDER_NOT_READY_FOR_TRIP) and without a trip (409 ORDER_HAS_TRIP; " +
          "commerce creates the trip when an order becomes ready), and its customer is the trip's (422 CUSTOMER_MISMATCH); `express_request_id` must be a " +
          '`requested` express request of the same merchant without a trip (422 EXPRESS_REQUEST_NOT_FOUND, 409 EXPRESS_REQUEST_HAS_TRIP). ' +
          'A trip without customer_user_id (a recipient with no account) gets a recipient tracking link (GET /trips/:id/recipient-link); recipient_phone is where it is meant to be sent.',
        headers: Type.Object({ 'idempotency-key': Type.Optional(Type.String()) }),
        body: Strict({
          pickup_location: GeoPoint,
          pickup_address: ShortText(300),
          dropoff_location: GeoPoint,
          dropoff_address: ShortText(300),
          merchant_id: Type.Optional(Id),
          customer_user_id: Type.Optional(Id),
          recipient_phone: Type.Optional(Phone),
          recipient_name: Type.Optional(
            Type.String({ minLength: 1, maxLength: 120, description: 'how messages to the recipient address him ({recipient_name})' }),
          ),
          order_id: Type.Optional(Id),
          express_request_id: Type.Optional(Id),
          service_mode: Type.Optional(ServiceModeSchema),
          source_channel: Type.Optional(SourceChannelSchema),
          territory_id: Type.Optional(Id),
          delivery_fee: Type.Optional(Money),
          driver_earning: Type.Optional(Money),
          notes: Type.Optional(ShortText(1000)),
          promised_at: Type.Optional(
            Type.String({
              format: 'date-time',
              description:
                'default: now + travel estimate (learned speed) + dispatch_buffer_min; must be in the future (422 PROMISE_IN_PAST)',
            }),
          ),
          deliver_after: Type.Optional(
            Type.String({ format: 'date-time', description: 'a scheduled window start (needs deliver_before)' }),
          ),
          deliver_before: Type.Optional(
            Type.String({
              format: 'date-time',
              description:
                'a scheduled window end: the promise; after deliver_after (422 WINDOW_INVALID) and in the future (422 PROMISE_IN_PAST)',
            }),
          ),
          ...TripWindowsLoadIn,
        }),
        response: { 201: TripOutSchema },
      },
    },
    async (req, reply) => {
      const actor = actorOf(req);
      const key = validateIdempotencyKey(req.headers['idempotency-key']);
      const b = req.body;
      const input = {
        ...b,
        pickup: { lon: b.pickup_location.coordinates[0], lat: b.pickup_location.coordinates[1] },
        dropoff: { lon: b.dropoff_location.coordinates[0], lat: b.dropoff_location.coordinates[1] },
      };
      const result = await trips.create(actor, input, key ? { key, hash: requestHash(b) } : null);
      if ('replayed' in result && result.replayed) reply.header('idempotent-replayed', 'true');
      return reply.code(result.status as 201).send(result.body);
    },
  );

  app.post(
    '/trips/:id/assign',
    {
      config: { auth: { roles: [...STAFF], permission: 'trips_reassign' } },
      schema: {
        operationId: 'assignTrip',
        tags: ['trips'],
        summary: 'Assign or reassign a trip to a driver (pending|assigned|accepted → assigned)',
        description:
          '409 INVALID_TRANSITION from other states; 409 DRIVER_AT_CAPACITY when the driver carries `capacity` trips; 422 DRIVER_NOT_FOUND, ' +
          'DRIVER_NOT_AVAILABLE (not approved or not available), DRIVER_REJECTED_TRIP, DRIVER_OUTSIDE_TERRITORY. ' +
          'Cash on delivery: a trip with `cash_to_collect` > 0 and a driver whose cash in hand is at or over his cash limit is 422 CASH_LIMIT unless ' +
          "`cash_limit_override` gives the dispatcher's reason (then assigned and audited as trip.cash_limit_override).",
        params: TripIdParams,
        body: Strict({
          driver_id: Id,
          cash_limit_override: Type.Optional(
            Strict(
              { reason: ShortText(500) },
              { description: 'assign a cash order to a driver at or over his cash limit anyway (audited with the reason)' },
            ),
          ),
        }),
        response: { 200: TripOutSchema },
      },
    },
    async (req) => {
      const actor = actorOf(req);
      return tripOut(await trips.assign(actor, req.params.id, req.body.driver_id, req.body.cash_limit_override), actor);
    },
  );

  app.post(
    '/trips/:id/status',
    {
      config: { auth: { roles: [...STAFF], permission: 'delivery_status' } },
      schema: {
        operationId: 'changeTripStatus',
        tags: ['trips'],
        summary:
          'Dispatch status change: unassign (assigned|accepted → pending), cancel (any non-terminal but returning → cancelled), or record a failed delivery, with a reason',
        description:
          'Other moves have their own operations (assign, driver accept, PIN verification, start-delivery) and are 409 INVALID_TRANSITION here. ' +
          'A failed delivery reported by phone: in_transit → `returning` or `failed` (dispatch chooses; `failure_reason` required, 400 otherwise; `reason` becomes the note), ' +
          "with the same consequences as the driver's fail-delivery; returning → `returned` when the merchant confirms he has the goods back. " +
          '`reset_pin_lock` clears the wrong-PIN counter of the pickup, the delivery or both (a PIN locks after 5 wrong attempts). ' +
          'Sub-administrators need `trips_cancel` to cancel and `trips_reassign` to unassign.',
        params: TripIdParams,
        body: OneOf(
          [
            Strict(
              {
                status: TripStatusSchema,
                reason: ShortText(500),
                reset_pin_lock: Type.Optional(PinLockSchema),
                failure_reason: Type.Optional(FailureReasonSchema),
              },
              { title: 'TripStatusChange' },
            ),
            Strict({ reset_pin_lock: PinLockSchema, reason: ShortText(500) }, { title: 'TripPinLockReset' }),
          ],
          {
            description:
              'a status change (`status`, optionally also `reset_pin_lock`) or only a PIN-lock reset (`reset_pin_lock` without `status`); `reason` always',
          },
        ),
        response: { 200: TripOutSchema },
      },
    },
    async (req) => {
      const actor = actorOf(req);
      return tripOut(await trips.dispatchStatus(actor, req.params.id, req.body), actor);
    },
  );

  app.patch(
    '/trips/:id/coordinates',
    {
      config: { auth: { roles: [...STAFF], permission: 'delivery_status' } },
      schema: {
        operationId: 'updateTripCoordinates',
        tags: ['trips'],
        summary: 'Correct pickup/dropoff points or addresses',
        description:
          'The pickup may change while pending/assigned/accepted, the dropoff until the trip ends (409 INVALID_STATE otherwise). A new pickup re-derives the territory.',
        params: TripIdParams,
        body: Strict(
          {
            pickup_location: Type.Optional(GeoPoint),
            pickup_address: Type.Optional(ShortText(300)),
            dropoff_location: Type.Optional(GeoPoint),
            dropoff_address: Type.Optional(ShortText(300)),
          },
          { minProperties: 1 },
        ),
        response: { 200: TripOutSchema },
      },
    },
    async (req) => {
      const actor = actorOf(req);
      return tripOut(await trips.updateCoordinates(actor, req.params.id, req.body), actor);
    },
  );

  app.patch(
    '/trips/:id/promise',
    {
      config: { auth: { roles: [...STAFF], permission: 'delivery_status' } },
      schema: {
        operationId: 'updateTripPromise',
        tags: ['trips'],
        summary: 'Change the delivery promise and window, the pickup window, the load or the service time (staff); audited',
        description:
          'A window (deliver_after, deliver_before) must end after it starts (422 WINDOW_INVALID) and in the future (422 PROMISE_IN_PAST); promised_at is then its end. ' +
          'promised_at alone moves the promise (in the future, 422 PROMISE_IN_PAST). The pickup window (pickup_after, pickup_before), the load (units, weight_kg, ' +
          "volume_l) and service_min follow a new trip's rules (422 WINDOW_INVALID or LOAD_INVALID naming the field; null clears one) and change only before the " +
          'pickup: after it 409 INVALID_STATE. A trip that ended is 409 INVALID_STATE. Nothing is written on an error. Audited (trip.promise_changed, or ' +
          'trip.windows_load_changed when the pickup window, load or service time change). Event trip.updated; the delay alert (trip.delayed) starts over against a new promise.',
        params: TripIdParams,
        body: Strict(
          {
            promised_at: Type.Optional(Type.String({ format: 'date-time' })),
            deliver_after: Type.Optional(Nullable(Type.String({ format: 'date-time' }))),
            deliver_before: Type.Optional(Nullable(Type.String({ format: 'date-time' }))),
            pickup_after: Type.Optional(Nullable(TripWindowsLoadIn.pickup_after)),
            pickup_before: Type.Optional(Nullable(TripWindowsLoadIn.pickup_before)),
            units: TripWindowsLoadIn.units,
            weight_kg: Type.Optional(Nullable(TripWindowsLoadIn.weight_kg)),
            volume_l: Type.Optional(Nullable(TripWindowsLoadIn.volume_l)),
            service_min: Type.Optional(Nullable(TripWindowsLoadIn.service_min)),
          },
          { minProperties: 1 },
        ),
        response: { 200: TripOutSchema },
      },
    },
    async (req) => {
      const actor = actorOf(req);
      return tripOut(await trips.changePromise(actor, req.params.id, req.body), actor);
    },
  );

  const Candidate = Type.Object({
    driver: DriverOut,
    distance_m: Type.Number(),
    active_trips: Type.Integer(),
    capacity: Type.Integer(),
    territory_match: Type.Boolean(),
    eligible: Type.Boolean(),
    reasons: Type.Array(Type.String(), {
      description:
        'why not eligible: not_available, at_capacity, rejected_this_trip, outside_territory, current_driver, cash_limit (a cash order and the driver holds cash at or over his cash limit)',
    }),
  });
  app.get(
    '/trips/:id/candidates',
    {
      config: { auth: { roles: [...STAFF], permission: 'trips_reassign' } },
      schema: {
        operationId: 'listTripCandidates',
        tags: ['trips'],
        summary:
          'Approved drivers within the radius of the pickup, ranked: eligible first, territory match, then distance and load (per assignment_strategy)',
        params: TripIdParams,
        querystring: Strict({
          radius_m: Type.Optional(Type.Integer({ minimum: 10, maximum: 200_000 })),
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200 })),
        }),
        response: { 200: Type.Object({ trip_id: Type.String(), radius_m: Type.Integer(), data: Type.Array(Candidate) }) },
      },
    },
    async (req) => {
      const actor = actorOf(req);
      return trips.candidates(actor, req.params.id, req.query);
    },
  );

  app.post(
    '/trips/:id/auto-assign',
    {
      config: { auth: { roles: [...STAFF], permission: 'trips_reassign' } },
      schema: {
        operationId: 'autoAssignTrip',
        tags: ['trips'],
        summary: 'Assign a pending trip to the best eligible candidate (409 INVALID_TRANSITION unless pending; 422 NO_ELIGIBLE_DRIVER)',
        params: TripIdParams,
        response: { 200: TripOutSchema },
      },
    },
    async (req) => {
      const actor = actorOf(req);
      return tripOut(await trips.autoAssign(actor, req.params.id), actor);
    },
  );

  const Crumb = Type.Object({ location: GeoPoint, recorded_at: Timestamp, speed_mps: Nullable(Type.Number()) });
  app.get(
    '/trips/:id/tracking',
    {
      config: { auth: { roles: [...STAFF, 'comercio', 'delivery', 'repartidor'], permission: 'tracking' } },
      schema: {
        operationId: 'getTripTracking',
        tags: ['trips'],
        summary:
          "Driver's last position (live only while the trip is active; after it ends, the last point recorded during the trip), breadcrumb from acceptance to the end of the trip (device time order), geofence entries, ETA by straight-line distance and average speed",
        params: TripIdParams,
        response: {
          200: Type.Object({
            trip_id: Type.String(),
            status: TripStatusSchema,
            driver_id: Nullable(Type.String()),
            last_location: Nullable(GeoPoint),
            last_location_at: Nullable(Timestamp),
            next_stop: Nullable(StopKindSchema),
            distance_remaining_m: Nullable(Type.Integer()),
            eta_seconds: Nullable(Type.Integer()),
            breadcrumb: Type.Array(Crumb),
            geofence_entries: Type.Array(Type.Object({ stop: Type.String(), entered_at: Timestamp, distance_m: Type.Integer() })),
          }),
        },
      },
    },
    async (req) => {
      const actor = actorOf(req);
      return trips.tracking(actor, req.params.id);
    },
  );

  app.get(
    '/trips/:id/track',
    {
      config: { auth: { roles: [...STAFF, 'comercio', 'delivery', 'repartidor'], permission: 'tracking', apiKeyScope: 'trips:read' } },
      schema: {
        operationId: 'getTripTrack',
        tags: ['trips'],
        summary: "The trip's route: its driver's points from acceptance to the end, oldest first, a page at a time",
        description:
          "Who may read it: as GET /trips/{id} (staff, sub-administrators within their territories, the trip's merchant, its customer and its driver); " +
          'another trip is 404. Once the trip ended, the route kept with the trip (`source: kept`, at most the last ' +
          `${TRACK_MAX_POINTS} points), which outlives the GPS history's retention; while it is active, the GPS history between acceptance and now ` +
          `(\`source: history\`). Pages of \`limit\` points (default ${TRACK_PAGE_DEFAULT}, at most ${TRACK_PAGE_MAX}); \`next_after\` is the \`after\` of the next page, null on the last.`,
        params: TripIdParams,
        querystring: Strict({
          after: Type.Optional(
            Type.String({ format: 'date-time', description: 'points recorded after this time (next_after of the previous page)' }),
          ),
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: TRACK_PAGE_MAX, default: TRACK_PAGE_DEFAULT })),
        }),
        response: { 200: TripTrackOut },
      },
    },
    async (req) => {
      const actor = actorOf(req);
      return trips.track(actor, req.params.id, req.query);
    },
  );

  app.get(
    '/trips/:id/proofs',
    {
      config: { auth: { roles: [...STAFF, 'comercio', 'delivery', 'repartidor'], permission: 'tracking' } },
      schema: {
        operationId: 'listTripProofs',
        tags: ['trips'],
        summary: 'Proofs of pickup and delivery (PIN verified, optional evidence)',
        params: TripIdParams,
        response: { 200: Type.Object({ data: Type.Array(ProofOut) }) },
      },
    },
    async (req) => {
      const actor = actorOf(req);
      return trips.proofs(actor, req.params.id);
    },
  );

  for (const [stage, path, from, to] of [
    ['pickup', 'verify-pickup', 'accepted', 'picked_up'],
    ['delivery', 'verify-delivery', 'in_transit', 'completed'],
  ] as const) {
    app.post(
      `/trips/:id/${path}`,
      {
        config: { auth: { roles: ['repartidor'] } },
        schema: {
          operationId: stage === 'pickup' ? 'verifyTripPickup' : 'verifyTripDelivery',
          tags: ['trips'],
          summary: `The assigned driver proves the ${stage} with its PIN: ${from} → ${to}`,
          description:
            `422 INVALID_PIN (with attempts_remaining); after 5 wrong attempts 423 PIN_LOCKED until dispatch resets it. Optional evidence {type, storage_key} must be a private ` +
            `storage object of purpose ${stage}_evidence for this trip and stage, uploaded as that proof_type (422 STORAGE_OBJECT_WRONG_TRIP, _WRONG_STAGE, _WRONG_TYPE, _WRONG_PURPOSE, _NOT_OWNED otherwise). ` +
            `409 INVALID_TRANSITION unless the trip is ${from}; ` +
            '409 TRIP_NOT_ASSIGNED_TO_YOU for another driver.',
          params: TripIdParams,
          body: VerifyBody,
          response: { 200: TripOutSchema },
        },
      },
      async (req) => {
        const actor = actorOf(req);
        const out = await trips.verify(actor, req.params.id, stage as Stage, req.body);
        if (!out.ok) throw out.error;
        return tripOut(out.trip, actor);
      },
    );
  }
}
