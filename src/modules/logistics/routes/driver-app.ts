import { Type } from '@sinclair/typebox';
import { actorOf } from '../../../platform/auth.js';
import type { Api, AppContext } from '../../../platform/context.js';
import { IdParams, Money, Nullable, Page, PageQueryProps, ShortText, Strict, Timestamp } from '../../../platform/schemas.js';
import { driverOut, tripOut } from '../service/mappers.js';
import {
  DriverOut,
  EvidenceIn,
  FailureReasonSchema,
  GpsPointIn,
  IngestOut,
  ReasonBody,
  SingleLocationIn,
  TripOutSchema,
  TripStatusSchema,
} from '../schemas.js';
import { MAX_BATCH } from '../service/locations.js';
import type { LogisticsService } from '../service/logistics.js';

/** The driver app: every route acts on the caller's own driver profile (404 DRIVER_PROFILE_NOT_FOUND without one). */
export function driverAppRoutes(app: Api, _ctx: AppContext, svc: LogisticsService) {
  const me = svc.requests.driverApp;
  const auth = { auth: { roles: ['repartidor' as const] } };

  app.get(
    '/driver/me',
    {
      config: auth,
      schema: {
        operationId: 'getDriverMe',
        tags: ['driver-app'],
        summary: "The caller's driver profile and his settings-derived parameters",
        response: {
          200: Type.Object({ ...DriverOut.properties, geofence_radius_m: Type.Integer(), acceptance_timeout_s: Type.Integer() }),
        },
      },
    },
    async (req) => {
      const actor = actorOf(req);
      return me.me(actor);
    },
  );

  app.get(
    '/driver/trips',
    {
      config: auth,
      schema: {
        operationId: 'listDriverTrips',
        tags: ['driver-app'],
        summary: "The caller's trips, newest first (PINs are never included)",
        querystring: Strict({ ...PageQueryProps, status: Type.Optional(TripStatusSchema) }),
        response: { 200: Page(TripOutSchema) },
      },
    },
    async (req) => {
      const actor = actorOf(req);
      return me.trips(actor, req.query);
    },
  );

  app.post(
    '/driver/availability',
    {
      config: auth,
      schema: {
        operationId: 'setMyAvailability',
        tags: ['driver-app'],
        summary: 'Go available or unavailable (only approved drivers may be available: 422 DRIVER_NOT_APPROVED)',
        description:
          'A suspended driver is not approved (422 DRIVER_NOT_APPROVED). While staff hold the availability lock (`availability_locked`), ' +
          '`available: true` is 403 AVAILABILITY_LOCKED; going unavailable is always allowed.',
        body: Strict({ available: Type.Boolean() }),
        response: { 200: DriverOut },
      },
    },
    async (req) => {
      const actor = actorOf(req);
      return driverOut(await me.setAvailability(actor, req.body.available));
    },
  );

  app.post(
    '/driver/location',
    {
      config: auth,
      schema: {
        operationId: 'postMyLocation',
        tags: ['driver-app'],
        summary: 'Report one position (idempotent on client_point_id when given)',
        body: SingleLocationIn,
        response: { 200: IngestOut },
      },
    },
    async (req) => {
      const actor = actorOf(req);
      return me.location(actor, req.body);
    },
  );

  app.post(
    '/driver/locations/batch',
    {
      config: auth,
      bodyLimit: 1024 * 1024,
      schema: {
        operationId: 'postMyLocationBatch',
        tags: ['driver-app'],
        summary: `Upload up to ${MAX_BATCH} GPS points; every point needs client_point_id (400 otherwise) and is stored once`,
        description:
          'Repeats (same client_point_id, also in concurrent retries) are counted as duplicates and not stored again. Points may arrive out of order: ' +
          "they are ordered by recorded_at (device time), and the driver's last position moves only to a newer point. Geofence entries are reported once per trip and stop.",
        body: Strict({ points: Type.Array(GpsPointIn, { minItems: 1, maxItems: MAX_BATCH }) }),
        response: { 200: IngestOut },
      },
    },
    async (req) => {
      const actor = actorOf(req);
      return me.locations(actor, req.body.points);
    },
  );

  const actions = [
    [
      'accept',
      'acceptMyTrip',
      'Accept an assigned trip: assigned → accepted (409 INVALID_TRANSITION otherwise; of two concurrent accepts one wins; a suspended driver: 422 DRIVER_NOT_APPROVED)',
    ],
    ['reject', 'rejectMyTrip', 'Reject an assigned trip: assigned → pending; you are excluded from its candidates'],
    ['start-delivery', 'startMyDelivery', 'Leave the pickup with the goods: picked_up → in_transit (event trip.on_the_way)'],
  ] as const;
  for (const [action, operationId, summary] of actions) {
    app.post(
      `/driver/trips/:id/${action}`,
      {
        config: auth,
        schema: {
          operationId,
          tags: ['driver-app'],
          summary,
          description: '409 TRIP_NOT_ASSIGNED_TO_YOU when the trip is not yours.',
          params: IdParams,
          ...(action === 'reject' ? { body: ReasonBody } : {}),
          response: { 200: TripOutSchema },
        },
      },
      async (req) => {
        const actor = actorOf(req);
        const id = (req.params as { id: string }).id;
        const t =
          action === 'accept'
            ? await me.accept(actor, id)
            : action === 'reject'
              ? await me.reject(actor, id, (req.body as { reason?: string } | undefined)?.reason)
              : await me.startDelivery(actor, id);
        return tripOut(t, actor);
      },
    );
  }

  app.post(
    '/driver/trips/:id/fail-delivery',
    {
      config: auth,
      schema: {
        operationId: 'failMyDelivery',
        tags: ['driver-app'],
        summary: 'Report a delivery that could not be completed: in_transit → returning (or failed, as the organization configures)',
        description:
          'With the logistics setting `failed_delivery_policy` = `return_to_merchant` (default) the trip goes to `returning`: bring the goods back and ' +
          'confirm with POST /driver/trips/{id}/return; with `close` it ends as `failed` and frees your capacity. `reason`: recipient_absent, refused, ' +
          'wrong_address, unsafe_location, damaged or other (400 VALIDATION_FAILED listing them otherwise). Optional evidence {type, storage_key}: a private ' +
          'storage object of purpose delivery_evidence for this trip and stage `delivery` (422 STORAGE_OBJECT_WRONG_TRIP, _WRONG_STAGE, _WRONG_TYPE, ' +
          '_WRONG_PURPOSE, _NOT_OWNED otherwise). Event trip.delivery_failed; the order goes to delivery_failed (express request too) and the merchant is ' +
          'charged the delivery fee of the attempt. 409 INVALID_TRANSITION unless in_transit (also on a second report); 409 TRIP_NOT_ASSIGNED_TO_YOU for ' +
          "another driver's trip. Offline: sync push operation `trip.fail_delivery` with {trip_id, reason, note?, evidence?}.",
        params: IdParams,
        body: Strict({ reason: FailureReasonSchema, note: Type.Optional(ShortText(500)), evidence: Type.Optional(EvidenceIn) }),
        response: { 200: TripOutSchema },
      },
    },
    async (req) => {
      const actor = actorOf(req);
      return tripOut(await me.failDelivery(actor, req.params.id, req.body), actor);
    },
  );

  app.post(
    '/driver/trips/:id/return',
    {
      config: auth,
      schema: {
        operationId: 'returnMyTrip',
        tags: ['driver-app'],
        summary: 'Hand the goods of a failed delivery back to the merchant, proven with the pickup PIN: returning → returned',
        description:
          'The merchant gives the pickup PIN as at pickup. 422 INVALID_PIN (with attempts_remaining); after 5 wrong attempts of the pickup PIN 423 PIN_LOCKED ' +
          'until dispatch resets the `pickup` lock. Event trip.returned; the order (express request) goes to returned; your capacity is freed. ' +
          '409 INVALID_TRANSITION unless returning; 409 TRIP_NOT_ASSIGNED_TO_YOU for another driver.',
        params: IdParams,
        body: Strict({ pin: Type.String({ minLength: 1, maxLength: 12 }) }),
        response: { 200: TripOutSchema },
      },
    },
    async (req) => {
      const actor = actorOf(req);
      const out = await me.confirmReturn(actor, req.params.id, req.body.pin);
      if (!out.ok) throw out.error;
      return tripOut(out.trip, actor);
    },
  );

  app.get(
    '/driver/earnings',
    {
      config: auth,
      schema: {
        operationId: 'getMyEarnings',
        tags: ['driver-app'],
        summary:
          'Earnings per completed trip (the trip driver_earning: a flat fee from the logistics settings unless set at creation) and the total',
        description:
          'A failed delivery earns its driver the same driver_earning for the attempt once it ended (status failed, or returned to the merchant); ' +
          'completed_at is then when it ended and completed_trips counts it.',
        querystring: Strict({
          ...PageQueryProps,
          from: Type.Optional(Type.String({ format: 'date-time' })),
          to: Type.Optional(Type.String({ format: 'date-time' })),
        }),
        response: {
          200: Type.Object({
            currency: Type.String(),
            completed_trips: Type.Integer(),
            total_earnings: Money,
            data: Type.Array(
              Type.Object({
                trip_id: Type.String(),
                order_id: Nullable(Type.String()),
                status: TripStatusSchema,
                completed_at: Timestamp,
                driver_earning: Money,
                delivery_fee: Money,
              }),
            ),
            next_cursor: Nullable(Type.String()),
          }),
        },
      },
    },
    async (req) => {
      const actor = actorOf(req);
      return me.earnings(actor, req.query);
    },
  );
}
