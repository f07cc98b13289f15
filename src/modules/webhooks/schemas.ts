import { Type } from '@sinclair/typebox';
import { Literals, Nullable, Timestamp } from '../../platform/schemas.js';
import { SecretInput } from '../../platform/secrets.js';
import { ATTEMPT_OUTCOMES, DELIVERY_STATUSES, SUBSCRIPTION_SCOPES } from './tables.js';

/** The events a subscription may ask for: the names of the SSE streams. */
export const WEBHOOK_EVENT_TYPES = [
  'trip.created',
  'trip.updated',
  'trip.assigned',
  'trip.accepted',
  'trip.rejected',
  'trip.unassigned',
  'trip.offer_expired',
  'trip.location_updated',
  'trip.geofence_entered',
  'trip.pickup_verified',
  'trip.on_the_way',
  'trip.delivery_verified',
  'trip.completed',
  'trip.delivery_failed',
  'trip.returned',
  'trip.cancelled',
  'trip.delayed',
  'trip.location_stale',
  'trip.rejected_repeatedly',
  'trip.pin_locked',
  'order.created',
  'order.status_changed',
  'payment_review.submitted',
  'payment_review.approved',
  'payment_review.rejected',
  'driver_settlement.created',
  'driver_settlement.paid',
] as const;
export const EventType = Type.String({
  enum: ['*', ...WEBHOOK_EVENT_TYPES],
  description: 'an event name of the SSE streams, or `*` (every event except the opt-in `trip.location_updated`)',
});
export const TargetUrl = Type.String({
  minLength: 8,
  maxLength: 2000,
  description:
    'https URL (http only in development or with WEBHOOK_ALLOW_HTTP); private, loopback and reserved addresses are refused unless WEBHOOK_ALLOW_PRIVATE_TARGETS',
});
export const DeliveryStatus = Type.Union(
  DELIVERY_STATUSES.map((s) => Type.Literal(s)),
  {
    description:
      '`pending` waiting for its (next) attempt, `sending` being sent, `delivered` (2xx), `failed` (another status, a refused target, or retries exhausted after about a day), `cancelled` (the subscription was disabled)',
  },
);

export const WebhookSubscriptionOut = Type.Object({
  id: Type.String(),
  organization_id: Type.String(),
  scope: Literals(
    SUBSCRIPTION_SCOPES,
    'Set from the creator: `organization` (an administrator): every event of the organization; `dispatch` (a dispatcher): the `trip.*` events; ' +
      '`territories` (a sub-administrator): the events of the territories he holds when each event happens (`trip.*` with `delivery_status`, ' +
      "`order.*` with `orders_status`, `payment_review.*` with `payments_review_view`); `merchant`: the events of the owner merchant's records",
  ),
  owner_user_id: Type.String(),
  merchant_id: Nullable(Type.String()),
  url: Type.String(),
  description: Nullable(Type.String()),
  event_types: Type.Array(Type.String()),
  active: Type.Boolean(),
  failing_since: Nullable(Timestamp),
  disabled_at: Nullable(Timestamp),
  disabled_reason: Nullable(Type.String({ description: '`failing` (a day of failed attempts) or `deactivated`' })),
  secret_set: Type.Literal(true, { description: 'a signing secret is set (it is stored encrypted and never returned)' }),
  secret_set_at: Timestamp,
  previous_secret_expires_at: Nullable(Timestamp),
  created_at: Timestamp,
  updated_at: Timestamp,
});
export const WithSecret = Type.Composite([
  WebhookSubscriptionOut,
  Type.Object({
    secret: Type.Optional(
      Type.String({
        description:
          'the signing secret the server generated (no `secret` in the request), shown only in this response; a secret the caller chose is never returned',
      }),
    ),
  }),
]);
export const SigningSecret = SecretInput(
  16,
  256,
  'The signing secret to use (16 to 256 visible ASCII characters); the server generates one when absent.',
);

export const WebhookDeliveryOut = Type.Object({
  id: Type.String(),
  organization_id: Type.String(),
  subscription_id: Type.String(),
  event_id: Type.String(),
  event_type: Type.String(),
  status: DeliveryStatus,
  attempts: Type.Integer(),
  next_attempt_at: Nullable(Timestamp),
  last_status_code: Nullable(Type.Integer()),
  last_error: Nullable(Type.String()),
  delivered_at: Nullable(Timestamp),
  redelivery_of: Nullable(Type.String()),
  created_at: Timestamp,
  updated_at: Timestamp,
});
export const AttemptOut = Type.Object({
  attempt: Type.Integer(),
  url: Type.String(),
  started_at: Timestamp,
  duration_ms: Type.Integer(),
  status_code: Nullable(Type.Integer()),
  error: Nullable(Type.String()),
  response_excerpt: Nullable(Type.String({ description: 'the first KiB of the response body' })),
  outcome: Literals(ATTEMPT_OUTCOMES),
});
export const DeliveryDetail = Type.Composite([
  WebhookDeliveryOut,
  Type.Object({
    body: Type.Record(Type.String(), Type.Unknown(), {
      description: 'the JSON body sent: id, type, occurred_at, organization_id, resource_type, resource_id, resource, data',
    }),
    attempts_log: Type.Array(AttemptOut),
  }),
]);
