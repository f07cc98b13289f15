import { Type } from '@sinclair/typebox';
import { actorOf } from '../../platform/auth.js';
import type { Api } from '../../platform/context.js';
import { Nullable, PageQueryProps, Strict, Timestamp } from '../../platform/schemas.js';
import { EXCEPTION_KINDS, FAILED_LISTED_H, type ExceptionKind } from './repo/exceptions.js';
import { TripOutSchema } from './schemas.js';
import type { LogisticsService } from './service.js';

const ExceptionKindSchema = Type.Union(
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
