import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { actorOf } from '../../../platform/auth.js';
import type { Api } from '../../../platform/context.js';
import { IdParams, Id, Page, PageQueryProps, Strict } from '../../../platform/schemas.js';
import type { createGpsDevices, OsmandFields, OsmandInput } from '../service/gps-devices.js';
import { GpsDeviceOut, GpsDeviceWithTokenOut, OsmandBody, OsmandOut, OsmandQuery } from '../schemas.js';

const STAFF = { auth: { roles: ['administrator' as const, 'dispatch' as const] } };
const DevParams = Strict({ id: Id, deviceId: Id });
export function gpsDeviceRoutes(app: Api, devices: ReturnType<typeof createGpsDevices>) {
  app.post(
    '/drivers/:id/gps-devices',
    {
      config: STAFF,
      schema: {
        operationId: 'bindGpsDevice',
        tags: ['drivers'],
        summary: 'Binds a GPS app (Traccar Client, OsmAnd protocol) to a driver; returns its token once',
        description:
          "Its positions go into the driver's location ingest (GET/POST /gps/osmand/{token}). Another organization's driver is 404; an identifier " +
          'already bound (not revoked) in the organization is 409.',
        params: IdParams,
        body: Strict({ device_identifier: Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9._:-]+$' }) }),
        response: { 201: GpsDeviceWithTokenOut },
      },
    },
    async (req, reply) => {
      reply.code(201);
      return devices.bind(actorOf(req), req.params.id, req.body.device_identifier);
    },
  );

  app.get(
    '/drivers/:id/gps-devices',
    {
      config: STAFF,
      schema: {
        operationId: 'listGpsDevices',
        tags: ['drivers'],
        summary: "A driver's GPS devices, newest first (without tokens)",
        params: IdParams,
        querystring: Strict(PageQueryProps),
        response: { 200: Page(GpsDeviceOut) },
      },
    },
    async (req) => devices.list(actorOf(req), req.params.id, req.query),
  );

  app.delete(
    '/drivers/:id/gps-devices/:deviceId',
    {
      config: STAFF,
      schema: {
        operationId: 'revokeGpsDevice',
        tags: ['drivers'],
        summary: 'Revokes a GPS device (its token is refused from now on)',
        params: DevParams,
        response: { 204: Type.Null() },
      },
    },
    async (req, reply) => {
      await devices.revoke(actorOf(req), req.params.id, req.params.deviceId);
      return reply.code(204).send(null);
    },
  );

  // Traccar Client sends its fields in the query string (GET or POST), as a form body, or (newer versions) as JSON:
  // an encapsulated scope parses forms and keeps bodies small.
  app.register(async (scope) => {
    scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 16 * 1024 }, (_req, body, done) =>
      done(null, Object.fromEntries(new URLSearchParams(String(body)))),
    );
    const description =
      'The OsmAnd protocol (Traccar Client): `id`, `lat`, `lon`, `timestamp`, `speed` (knots), `bearing`, `accuracy`, `batt` in the query string or ' +
      'a form body; or, as newer Traccar Client versions POST it, JSON `{"device_id", "location": {"timestamp" (ISO 8601), "coords": {"latitude", ' +
      '"longitude", "speed" (m/s), "heading", "accuracy"}, "battery": {"level" (0-1)}}}`. The token comes from POST /drivers/{id}/gps-devices; an ' +
      'unknown or revoked token is 401 INVALID_GPS_TOKEN, an identifier other than the bound one 404 GPS_DEVICE_UNKNOWN, a bad field 400; more ' +
      'than `GPS_DEVICE_RATE_LIMIT_PER_MINUTE` fixes a minute per device 429 RATE_LIMITED with Retry-After; nothing is written then. Each fix ' +
      "is stored once (by device and time, so a retry is a duplicate); an older fix than the driver's last position goes to history only.";
    const handler = async (
      req: FastifyRequest<{ Params: { token: string }; Querystring: OsmandFields; Body: OsmandInput | undefined }>,
    ) => {
      const body = req.body && typeof req.body === 'object' ? req.body : {};
      // A flat JSON body may carry numbers where the query string carries text.
      const flat = Object.fromEntries(Object.entries(body).map(([k, v]) => [k, typeof v === 'number' ? String(v) : v])) as OsmandInput;
      return devices.receive(req.params.token, { ...(req.query ?? {}), ...flat }, String(req.id));
    };
    for (const method of ['GET', 'POST'] as const) {
      scope.route({
        method,
        url: '/gps/osmand/:token',
        config: { auth: 'public' },
        schema: {
          operationId: method === 'GET' ? 'osmandPositionGet' : 'osmandPositionPost',
          tags: ['drivers'],
          summary: `One GPS fix from an OsmAnd client (${method})`,
          description,
          params: Strict({ token: Type.String({ minLength: 1, maxLength: 200 }) }),
          querystring: OsmandQuery,
          ...(method === 'POST' ? { body: OsmandBody } : {}),
          response: { 200: OsmandOut },
        },
        handler: handler as never,
      });
    }
  });
}
