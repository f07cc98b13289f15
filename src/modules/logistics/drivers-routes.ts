import { Type } from '@sinclair/typebox';
import { actorOf, tenantOf, type Actor } from '../../platform/auth.js';
import type { Api, AppContext } from '../../platform/context.js';
import type { Tx } from '../../platform/db/index.js';
import { Id, IdParams, IdWith, Page, PageQueryProps, Strict, Timestamp } from '../../platform/schemas.js';
import { driverOut } from './model.js';
import { bodyOptional, ApprovalStatusSchema, DriverOut, IngestOut, NearbyDriverOut, ReasonBody, SingleLocationIn, TripOutSchema } from './schemas.js';
import { dispatchBoard, liveMap } from './trips-query.js';
import type { LogisticsService } from './service.js';

const STAFF = ['administrator', 'dispatch', 'subadmin'] as const;

export function driverRoutes(app: Api, ctx: AppContext, svc: LogisticsService) {
  const inTx = <T>(actor: Actor, fn: (tx: Tx) => Promise<T>) => ctx.db.withTenant(tenantOf(actor), fn);
  const drivers = svc.drivers;

  app.get(
    '/drivers',
    {
      config: { auth: { roles: [...STAFF], permission: 'drivers_view' } },
      schema: {
        operationId: 'listDrivers',
        tags: ['logistics'],
        summary: 'Drivers (sub-administrators: only drivers linked to their territories)',
        querystring: Strict({ ...PageQueryProps, status: Type.Optional(ApprovalStatusSchema), available: Type.Optional(Type.Boolean()), territory_id: Type.Optional(Id) }),
        response: { 200: Page(DriverOut) },
      },
    },
    async (req) => {
      const actor = actorOf(req);
      return inTx(actor, (tx) => drivers.list(tx, actor, req.query));
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
        description: 'user_id must be a `repartidor` user (422 USER_NOT_DRIVER); one profile per user (409 DRIVER_EXISTS). capacity = concurrent trips (default 1).',
        body: Strict({
          user_id: Type.Optional(IdWith('required for staff (missing: 400 VALIDATION_FAILED); a repartidor registering himself omits it or sends his own id (another: 403)')),
          vehicle_type: Type.Optional(Type.Union(['motorcycle', 'bicycle', 'car', 'van', 'on_foot'].map((v) => Type.Literal(v)))),
          capacity: Type.Optional(Type.Integer({ minimum: 1, maximum: 50 })),
          territory_ids: Type.Optional(Type.Array(Id, { maxItems: 50 })),
        }),
        response: { 201: DriverOut },
      },
    },
    async (req, reply) => {
      const actor = actorOf(req);
      return reply.code(201).send(driverOut(await inTx(actor, (tx) => drivers.create(tx, actor, req.body))));
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
        description: 'Bounding box of the circle on the GiST index of last positions, then exact haversine filter and order. available_only defaults to true.',
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
      return { data: await inTx(actor, (tx) => drivers.nearby(tx, actor, { lon: q.lon, lat: q.lat, radius_m: q.radius_m ?? 5000, limit: q.limit ?? 20, available_only: q.available_only ?? true })) };
    },
  );

  for (const [action, to] of [
    ['approve', 'approved'],
    ['reject', 'rejected'],
  ] as const) {
    app.post(
      `/drivers/:id/${action}`,
      {
        config: { auth: { roles: ['administrator', 'subadmin'], permission: 'drivers_approve' } },
        preValidation: bodyOptional,
        schema: {
          operationId: `${action}Driver`,
          tags: ['logistics'],
          summary: `${action === 'approve' ? 'Approve' : 'Reject'} a driver: pending → ${to} (otherwise 409 INVALID_TRANSITION); audited`,
          params: IdParams,
          body: ReasonBody,
          response: { 200: DriverOut },
        },
      },
      async (req) => {
        const actor = actorOf(req);
        return driverOut(await inTx(actor, (tx) => drivers.decide(tx, actor, req.params.id, to, req.body?.reason)));
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
        summary: 'Set a driver available or not (only approved drivers may be available: 422 DRIVER_NOT_APPROVED); audited',
        params: IdParams,
        body: Strict({ available: Type.Boolean() }),
        response: { 200: DriverOut },
      },
    },
    async (req) => {
      const actor = actorOf(req);
      return driverOut(await inTx(actor, async (tx) => drivers.setAvailability(tx, actor, await drivers.getScoped(tx, actor, req.params.id), req.body.available)));
    },
  );

  app.post(
    '/drivers/:id/location',
    {
      config: { auth: { roles: [...STAFF], permission: 'tracking' } },
      schema: {
        operationId: 'setDriverLocation',
        tags: ['logistics'],
        summary: "Record a driver's position on his behalf (same rules as the driver app: idempotent on client_point_id, older points do not move the last position)",
        params: IdParams,
        body: SingleLocationIn,
        response: { 200: IngestOut },
      },
    },
    async (req) => {
      const actor = actorOf(req);
      return inTx(actor, async (tx) => svc.locations.single(tx, actor, await drivers.getScoped(tx, actor, req.params.id), req.body));
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
      return inTx(actor, (tx) => dispatchBoard(tx, actor));
    },
  );

  app.get(
    '/admin/live-map',
    {
      config: { auth: { roles: [...STAFF], permission: 'tracking' } },
      schema: {
        operationId: 'getLiveMap',
        tags: ['dispatch'],
        summary: "GeoJSON FeatureCollection: approved drivers' last positions (Point, kind=driver) and active trips (LineString pickup → dropoff, kind=trip)",
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
      return inTx(actor, (tx) => liveMap(tx, actor));
    },
  );
}
