import { Type, type Static } from '@sinclair/typebox';
import { Id, Literals } from '../../platform/schemas.js';
import { RECEIPT_STATUSES } from './tables.js';

/**
 * The signed body of a connector callback. Fields we do not know are kept (a partner adding a field must
 * not make its callbacks fail); the organization comes from the signed body, so it cannot be forged.
 */
export const WebhookPayload = Type.Object(
  {
    event_id: Type.String({
      minLength: 1,
      maxLength: 200,
      pattern: '^[\\x21-\\x7E]+$',
      description: "the connector's unique event id; deduplication key",
    }),
    organization_id: Id,
    type: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'e.g. payment_intent.succeeded' })),
    data: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  },
  { additionalProperties: true },
);
export type WebhookPayload = Static<typeof WebhookPayload>;
export const RoadmapState = Type.Union([Type.Literal('available'), Type.Literal('planned'), Type.Literal('future')], {
  description:
    '`available` usable now; `planned` scheduled for a coming release; `future` contract reserved, not active, no release scheduled',
});
export const RoadmapOut = Type.Object({
  data: Type.Array(
    Type.Object({
      key: Type.String(),
      name: Type.String(),
      category: Type.Union([Type.Literal('payments'), Type.Literal('chat')]),
      state: RoadmapState,
      active: Type.Boolean(),
      description: Type.String(),
      webhook_path: Type.Union([Type.String(), Type.Null()]),
      webhook_configured: Type.Union([Type.Boolean(), Type.Null()], {
        description: 'whether the signing secret of the inbound callback is set (never the secret)',
      }),
    }),
  ),
});
export const PaymentsOut = Type.Object({
  state: Type.Literal('future'),
  active: Type.Boolean(),
  code: Type.String(),
  message: Type.String(),
  connectors: Type.Array(Type.Object({ key: Type.String(), state: Type.Literal('future'), active: Type.Boolean() })),
});
export const ReceiptOut = Type.Object({
  id: Type.String({ description: 'id of the stored callback' }),
  connector: Type.String(),
  event_id: Type.String(),
  received: Type.Literal(true),
  duplicate: Type.Boolean({ description: 'true when this event id was already stored; nothing was stored again' }),
  status: Literals(RECEIPT_STATUSES, '`ignored` while the connectors are not active: stored, acknowledged, no effect on orders'),
});
