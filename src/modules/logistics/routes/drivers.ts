import { Type } from '@sinclair/typebox';
import { actorOf } from '../../../platform/auth.js';
import type { Api, AppContext } from '../../../platform/context.js';
import { AppError } from '../../../platform/errors.js';
import {
  Id,
  IdParams,
  IdWith,
  NonNegativeMoney,
  Nullable,
  Page,
  PageQueryProps,
  ShortText,
  Strict,
  Timestamp,
} from '../../../platform/schemas.js';
import { driverOut } from '../service/mappers.js';
import {
  ApprovalStatusSchema,
  DriverOut,
  VehicleType,
  IngestOut,
  NearbyDriverOut,
  ReasonBody,
  SingleLocationIn,
  TripOutSchema,
} from '../schemas.js';
import type { LogisticsService } from '../service/logistics.js';

const STAFF = ['administrator', 'dispatch', 'subadmin'] as const;

export function driverRoutes(app: Api, _ctx: AppContext, svc: LogisticsService) {
  const staff = svc.requests.staff;

  app.get(
    '/drivers',
    {
      config: { auth: { roles: [...STAFF], permission: 'drivers_view' } },
      schema: {
        operationId: 'listDrivers',
        tags: ['logistics'],
        summary: 'Drivers (sub-administrators: only drivers linked to their territories)',
        querystring: Strict({
          ...PageQueryProps,
          status: Type.Optional(ApprovalStatusSchema),
          available: Type.Optional(Type.Boolean()),
          territory_id: Type.Optional(Id),
        }),
        response: { 200: Page(DriverOut) },
      },
    },
    async (req) => {
      const actor = actorOf(req);
      return staff.listDrivers(actor, req.query);
    },
  );

  app.post(
    '/drivers',
    {
      config: { auth: { roles: ['administrator', 'subadmin', 'repartidor'], permission: 'drivers_create' } },
      schema: {
        operationId: 'createDriver',
        tags: ['logistics'],
        summary: 'Create a driver profile (status pending, not available) for a repartidor user; a repartidor may register himself',
        description:
          'user_id must be a `repartidor` user (422 USER_NOT_DRIVER); one profile per user (409 DRIVER_EXISTS). capacity = concurrent trips (default 1).',
        body: Strict({
          user_id: Type.Optional(
            IdWith(
              'required for staff (missing: 400 VALIDATION_FAILED); a repartidor registering himself omits it or sends his own id (another: 403)',
            ),
          ),
          vehicle_type: Type.Optional(VehicleType),
          capacity: Type.Optional(Type.Integer({ minimum: 1, maximum: 50 })),
          territory_ids: Type.Optional(Type.Array(Id, { maxItems: 50 })),
          capacity_units: Type.Optional(
            Nullable(
              Type.Integer({
                description:
                  "units of load his vehicle holds at once, 1 to 1000 (null: the vehicle type's default; else 422 CAPACITY_INVALID)",
              }),
            ),
          ),
          capacity_weight_kg: Type.Optional(
            Nullable(
              Type.Number({
                description: "kilograms his vehicle carries, > 0 (null: the vehicle type's default; else 422 CAPACITY_INVALID)",
              }),
            ),
          ),
          capacity_volume_l: Type.Optional(
            Nullable(
              Type.Number({ description: "litres his vehicle carries, > 0 (null: the vehicle type's default; else 422 CAPACITY_INVALID)" }),
            ),
          ),
          speed_factor: Type.Optional(
            Nullable(
              Type.Number({ description: "his speed against the organization's average, 0.1 to 3 (null: the vehicle type's default)" }),
            ),
          ),
        }),
        response: { 201: DriverOut },
      },
    },
    async (req, reply) => {
      const actor = actorOf(req);
      return reply.code(201).send(driverOut(await staff.createDriver(actor, req.body)));
    },
  );

  app.get(
    '/drivers/nearby',
    {
      config: { auth: { roles: [...STAFF], permission: 'drivers_view' } },
      schema: {
        operationId: 'listNearbyDrivers',
        tags: ['logistics'],
        summary: 'Approved drivers within radius_m of a point, nearest first, with the great-circle distance in metres',
        description:
          'Bounding box of the circle on the GiST index of last positions, then exact haversine filter and order. available_only defaults to true.',
        querystring: Strict({
          lon: Type.Number({ minimum: -180, maximum: 180 }),
          lat: Type.Number({ minimum: -90, maximum: 90 }),
          radius_m: Type.Optional(Type.Integer({ minimum: 1, maximum: 200_000, default: 5000 })),
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 20 })),
          available_only: Type.Optional(Type.Boolean({ default: true })),
        }),
        response: { 200: Type.Object({ data: Type.Array(NearbyDriverOut) }) },
      },
    },
    async (req) => {
      const actor = actorOf(req);
      const q = req.query;
      return {
        data: await staff.nearbyDrivers(actor, {
          lon: q.lon,
          lat: q.lat,
          radius_m: q.radius_m ?? 5000,
          limit: q.limit ?? 20,
          available_only: q.available_only ?? true,
        }),
      };
    },
  );

  const ACTIONS = {
    approve: 'Approve a driver: pending → approved',
    reject: 'Reject a driver: pending → rejected (final)',
    suspend:
      'Suspend a driver: approved → suspended. He is made unavailable and gets no trips (assignment, auto-assignment, candidates and the optimizer take only ' +
      'approved drivers); his trips still `assigned` or `accepted` go back to `pending` (events trip.unassigned); trips already picked up stay with him so the goods arrive',
    reactivate: 'Reactivate a suspended driver: suspended → approved (he stays unavailable until he or staff turn availability on)',
  } as const;
  for (const action of ['approve', 'reject', 'suspend', 'reactivate'] as const) {
    app.post(
      `/drivers/:id/${action}`,
      {
        config: { auth: { roles: ['administrator', 'subadmin'], permission: 'drivers_approve' } },
        schema: {
          operationId: `${action}Driver`,
          tags: ['logistics'],
          summary: `${ACTIONS[action].split(':')[0]}; 409 INVALID_TRANSITION from any other state; audited`,
          description: `${ACTIONS[action]}. \`reason\` is kept as status_reason. Sub-administrators: only drivers linked to their territories (404 otherwise).`,
          params: IdParams,
          body: ReasonBody,
          response: { 200: DriverOut },
        },
      },
      async (req) => {
        const actor = actorOf(req);
        return driverOut(await staff.decideDriver(actor, req.params.id, action, req.body?.reason));
      },
    );
  }

  app.post(
    '/drivers/:id/availability',
    {
      config: { auth: { roles: [...STAFF], permission: 'drivers_approve' } },
      schema: {
        operationId: 'setDriverAvailability',
        tags: ['logistics'],
        summary: 'Set a driver available or not, and lock or unlock his availability; audited',
        description:
          'Only approved drivers may be available (422 DRIVER_NOT_APPROVED). `locked: true` makes the driver unavailable and keeps him so: ' +
          'his own POST /driver/availability with `available: true` answers 403 AVAILABILITY_LOCKED until staff send `locked: false`. ' +
          '`available: true` together with `locked: true` is 422 AVAILABILITY_LOCKED; `available: true` on a locked driver without unlocking is 403 AVAILABILITY_LOCKED. ' +
          '`reason` is kept with the lock.',
        params: IdParams,
        body: Strict({ available: Type.Boolean(), locked: Type.Optional(Type.Boolean()), reason: Type.Optional(ShortText(500)) }),
        response: { 200: DriverOut },
      },
    },
    async (req) => {
      const actor = actorOf(req);
      const { available, locked, reason } = req.body;
      if (available && locked)
        throw AppError.unprocessable('A locked driver cannot be available', 'AVAILABILITY_LOCKED', [
          { field: 'locked', message: 'requires available: false' },
        ]);
      return driverOut(await staff.setDriverAvailability(actor, req.params.id, { available, locked, reason }));
    },
  );

  app.patch(
    '/drivers/:id',
    {
      config: { auth: { roles: ['administrator', 'subadmin'], permission: 'drivers_approve' } },
      schema: {
        operationId: 'updateDriver',
        tags: ['logistics'],
        summary: "Edit a driver's capacity, vehicle, territories and cash limit (also of self-registered drivers); audited",
        description:
          "Only the fields sent change. `territory_ids` replaces the driver's territory links (unknown territory: 422 TERRITORY_NOT_FOUND). " +
          'Sub-administrators: only drivers linked to their territories (404 otherwise); they replace only the links inside their territories, must name ' +
          'only their territories and must leave at least one (422 TERRITORY_REQUIRED). Lowering capacity below the active trips keeps those trips and gives no new ones until he is below it.',
        params: IdParams,
        body: Strict(
          {
            capacity: Type.Optional(Type.Integer({ minimum: 1, maximum: 50 })),
            vehicle_type: Type.Optional(VehicleType),
            territory_ids: Type.Optional(Type.Array(Id, { maxItems: 50 })),
            capacity_units: Type.Optional(
              Nullable(
                Type.Integer({
                  description:
                    "units of load his vehicle holds at once, 1 to 1000 (null: the vehicle type's default; else 422 CAPACITY_INVALID)",
                }),
              ),
            ),
            capacity_weight_kg: Type.Optional(
              Nullable(
                Type.Number({
                  description: "kilograms his vehicle carries, > 0 (null: the vehicle type's default; else 422 CAPACITY_INVALID)",
                }),
              ),
            ),
            capacity_volume_l: Type.Optional(
              Nullable(
                Type.Number({
                  description: "litres his vehicle carries, > 0 (null: the vehicle type's default; else 422 CAPACITY_INVALID)",
                }),
              ),
            ),
            speed_factor: Type.Optional(
              Nullable(
                Type.Number({ description: "his speed against the organization's average, 0.1 to 3 (null: the vehicle type's default)" }),
              ),
            ),
            cash_limit: Type.Optional(
              Type.Union([NonNegativeMoney, Type.Null()], {
                description:
                  "cash on delivery: this driver's own cash limit, overriding the organization's (logistics settings cash_limit); null = back to the organization's",
              }),
            ),
          },
          { minProperties: 1 },
        ),
        response: { 200: DriverOut },
      },
    },
    async (req) => {
      const actor = actorOf(req);
      return driverOut(await staff.updateDriver(actor, req.params.id, req.body));
    },
  );

  app.post(
    '/drivers/:id/location',
    {
      config: { auth: { roles: [...STAFF], permission: 'tracking' } },
      schema: {
        operationId: 'setDriverLocation',
        tags: ['logistics'],
        summary:
          "Record a driver's position on his behalf (same rules as the driver app: idempotent on client_point_id, older points do not move the last position)",
        params: IdParams,
        body: SingleLocationIn,
        response: { 200: IngestOut },
      },
    },
    async (req) => {
      const actor = actorOf(req);
      return staff.recordDriverLocation(actor, req.params.id, req.body);
    },
  );

  app.get(
    '/admin/dispatch',
    {
      config: { auth: { roles: [...STAFF], permission: 'tracking' } },
      schema: {
        operationId: 'getDispatchBoard',
        tags: ['dispatch'],
        summary: 'Unassigned trips (oldest first), at-risk trips and drivers with free capacity',
        description:
          'Risks: unassigned_too_long (pending longer than acceptance_timeout_s), not_accepted_in_time (assigned longer than acceptance_timeout_s), ' +
          'driver_silent (active trip, driver not seen for 5 minutes).',
        response: {
          200: Type.Object({
            generated_at: Timestamp,
            acceptance_timeout_s: Type.Integer(),
            counts: Type.Record(Type.String(), Type.Integer()),
            unassigned: Type.Array(TripOutSchema),
            at_risk: Type.Array(Type.Object({ trip: TripOutSchema, risk: Type.String() })),
            available_drivers: Type.Array(DriverOut),
          }),
        },
      },
    },
    async (req) => {
      const actor = actorOf(req);
      return staff.dispatchBoard(actor);
    },
  );

  app.get(
    '/admin/live-map',
    {
      config: { auth: { roles: [...STAFF], permission: 'tracking' } },
      schema: {
        operationId: 'getLiveMap',
        tags: ['dispatch'],
        summary:
          "GeoJSON FeatureCollection: approved drivers' last positions (Point, kind=driver) and active trips (LineString pickup → dropoff, kind=trip)",
        response: {
          200: Type.Object({
            type: Type.Literal('FeatureCollection'),
            features: Type.Array(
              Type.Object({
                type: Type.Literal('Feature'),
                id: Type.String(),
                geometry: Type.Object({}, { additionalProperties: true }),
                properties: Type.Object({}, { additionalProperties: true }),
              }),
            ),
          }),
        },
      },
    },
    async (req) => {
      const actor = actorOf(req);
      return staff.liveMap(actor);
    },
  );
}
