import { Type } from '@sinclair/typebox';
import { actorOf } from '../../../platform/auth.js';
import type { Api } from '../../../platform/context.js';
import { PageQueryProps, Strict } from '../../../platform/schemas.js';
import { ExceptionKindSchema, ExceptionsOut } from '../schemas.js';
import type { LogisticsService } from '../service/logistics.js';

export function exceptionRoutes(app: Api, svc: LogisticsService) {
  app.get(
    '/exceptions',
    {
      config: { auth: { roles: ['administrator', 'dispatch', 'subadmin'] } },
      schema: {
        operationId: 'listExceptions',
        tags: ['dispatch'],
        summary: 'Open exceptions (failed, returning, late, stale GPS, rejected again, PIN locked), newest first, with counts',
        description:
          'Sub-administrators see their territories only (trips by territory, drivers by their territory links). Each exception is also an event on the SSE ' +
          "streams, the outbound webhooks and the administrators' and dispatchers' notification inbox: trip.delivery_failed and trip.returned, trip.delayed " +
          '(payload promised_at, eta_dropoff_at, late_by_s, grace_min, source eta|overdue: once per crossing of promised_at + delay_grace_min, again only after ' +
          'the ETA came back under), trip.location_stale (driver_id, last_location_at: once per silence; one per active trip, or one with entity_type driver when ' +
          'he carries none), trip.rejected_repeatedly (rejections, threshold, last_reason: at each rejection from rejections_alert_threshold on), trip.pin_locked ' +
          '(stage, attempts). Actions: reassign or unassign (POST /trips/:id/assign, POST /trips/:id/status), close a return (status returned), reset a PIN ' +
          'lock (POST /trips/:id/status {reset_pin_lock}).',
        querystring: Strict({ ...PageQueryProps, kind: Type.Optional(ExceptionKindSchema) }),
        response: { 200: ExceptionsOut },
      },
    },
    async (req) => svc.exceptions.list(actorOf(req), req.query),
  );
}
