import { Type, type Static } from '@sinclair/typebox';
import { Id, Nullable, PageQueryProps, Strict, Timestamp } from '../../platform/schemas.js';

export const AuditOut = Type.Object({
  id: Type.String(),
  actor_user_id: Nullable(Type.String()),
  action: Type.String(),
  entity_type: Type.String(),
  entity_id: Type.String(),
  before: Nullable(Type.Object({}, { additionalProperties: true })),
  after: Nullable(Type.Object({}, { additionalProperties: true })),
  request_id: Nullable(Type.String()),
  created_at: Timestamp,
});
export type AuditView = Static<typeof AuditOut>;

export const AuditQuery = Strict({
  ...PageQueryProps,
  action: Type.Optional(Type.String({ maxLength: 100 })),
  entity_type: Type.Optional(Type.String({ maxLength: 100 })),
  entity_id: Type.Optional(Id),
  actor_user_id: Type.Optional(Id),
  from: Type.Optional(Timestamp),
  to: Type.Optional(Timestamp),
});
export type AuditQuery = Static<typeof AuditQuery>;
