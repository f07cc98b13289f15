import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { actorOf } from '../../../platform/auth.js';
import type { Api } from '../../../platform/context.js';
import { IdParams, Id, Page, PageQueryProps, Strict } from '../../../platform/schemas.js';
import type { createGpsDevices, OsmandFields } from '../service/gps-devices.js';
import { GpsDeviceOut, GpsDeviceWithTokenOut, OsmandOut, OsmandQuery } from '../schemas.js';

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

  // Traccar Client sends its fields in the query string (GET or POST) or as a form body: an encapsulated scope parses forms.
  app.register(async (scope) => {
    scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 16 * 1024 }, (_req, body, done) =>
      done(null, Object.fromEntries(new URLSearchParams(String(body)))),
    );
    const description =
      'The OsmAnd protocol (Traccar Client): `id`, `lat`, `lon`, `timestamp`, `speed` (knots), `bearing`, `accuracy`, `batt` in the query string or ' +
      'a form body. The token comes from POST /drivers/{id}/gps-devices; an unknown or revoked token is 401 INVALID_GPS_TOKEN, an `id` other than ' +
      'the bound identifier 404 GPS_DEVICE_UNKNOWN, a bad field 400; nothing is written then. Each fix is stored once (by device and time, so a ' +
      "retry is a duplicate); an older fix than the driver's last position goes to history only.";
    const handler = async (req: FastifyRequest<{ Params: { token: string }; Querystring: OsmandFields; Body: OsmandFields | undefined }>) =>
      devices.receive(
        req.params.token,
        { ...(req.query ?? {}), ...(req.body && typeof req.body === 'object' ? req.body : {}) },
        String(req.id),
      );
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
          response: { 200: OsmandOut },
        },
        handler: handler as never,
      });
    }
  });
}
