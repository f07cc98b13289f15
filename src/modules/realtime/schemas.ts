import { Type, type Static } from '@sinclair/typebox';
import { Id, Strict, Timestamp } from '../../platform/schemas.js';

/** Which stream a stream token opens. */
export const StreamKindSchema = Type.Union([
  Type.Literal('me'),
  Type.Literal('organization'),
  Type.Literal('trip'),
  Type.Literal('territories'),
]);
export type StreamKind = Static<typeof StreamKindSchema>;

export const StreamQuery = Strict({
  stream_token: Type.Optional(
    Type.String({
      minLength: 10,
      maxLength: 4096,
      description: 'from POST /realtime/tokens, instead of the Authorization header (EventSource)',
    }),
  ),
  last_event_id: Type.Optional(
    Type.String({ pattern: '^[0-9]{1,18}$', description: 'resume after this event sequence (same as the Last-Event-ID header)' }),
  ),
});

export const SseResponse = {
  200: {
    description:
      'text/event-stream. Frames: `id: <event sequence>`, `event: <type>` (trip.created, trip.assigned, trip.accepted, trip.rejected, trip.offer_expired (an offer not accepted within the acceptance timeout), trip.unassigned, trip.location_updated, trip.geofence_entered, trip.pickup_verified, trip.on_the_way, trip.delivery_verified, trip.completed, trip.cancelled, trip.delivery_failed (a failed delivery: reason, policy), trip.returned (goods back at the merchant), trip.delayed (the ETA passed promised_at + delay_grace_min, once per crossing), trip.location_stale (an on-duty driver\'s last fix is older than location_stale_after_s), trip.rejected_repeatedly (rejections of one trip reached rejections_alert_threshold; once per trip), trip.pin_locked (a PIN locked after wrong attempts), trip.updated, notification.created; `stream.reset`: refetch state, see below), `data: <JSON event>`; a `: heartbeat` comment every 15 s. A `stream.reset` frame (`data: {"type":"stream.reset","reason","last_event_id","resume_from","refetch":true,"resync"}`) means events between the client\'s `Last-Event-ID` and `resume_from` will not be sent: the client must refetch the state it shows (GET the resources, or POST /mobile/sync/pull), then keep reading: live events follow on the same connection. Reasons: `unknown_event_id` (not a sequence number, or beyond the newest event), `expired_event_id` (older than the oldest event kept), `too_many_missed_events` (more than the replay limit).',
    content: { 'text/event-stream': { schema: { type: 'string' } } },
  },
};

export const StreamTokenBody = Strict({ stream: Type.Optional(StreamKindSchema), trip_id: Type.Optional(Id) });

export const StreamTokenOut = Type.Object({
  stream_token: Type.String(),
  token_type: Type.Literal('stream'),
  expires_in: Type.Integer(),
  expires_at: Timestamp,
});
