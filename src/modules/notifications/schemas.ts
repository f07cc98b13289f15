import { Type } from '@sinclair/typebox';
import { Id, Literals, Nullable, ShortText, Timestamp } from '../../platform/schemas.js';
import { ORGANIZATION_PRINCIPALS } from '../../platform/auth.js';
import { PLATFORMS } from './tables.js';

export const NotificationOut = Type.Object({
  id: Type.String(),
  user_id: Type.String(),
  type: Type.String({ description: 'the causing event type (`trip.assigned`...), `test` or `admin.message`' }),
  title: Type.String(),
  body: Type.String(),
  data: Type.Record(Type.String(), Type.Unknown()),
  entity_type: Nullable(Type.String()),
  entity_id: Nullable(Type.String()),
  event_seq: Nullable(Type.Integer()),
  read: Type.Boolean(),
  read_at: Nullable(Timestamp),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const Platform = Literals(PLATFORMS);
export const DeviceOut = Type.Object({
  id: Type.String(),
  user_id: Type.String(),
  platform: Platform,
  push_token_suffix: Type.String({ description: 'last 4 characters; the token itself is never returned' }),
  app_role: Type.String(),
  app_version: Nullable(Type.String()),
  build_number: Nullable(Type.Integer()),
  device_model: Nullable(Type.String()),
  os_version: Nullable(Type.String()),
  last_seen_at: Nullable(Timestamp),
  battery_level: Nullable(Type.Integer()),
  charging: Nullable(Type.Boolean()),
  network: Nullable(Type.String()),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const Network = Type.Union(['wifi', 'cellular', 'ethernet', 'offline', 'unknown'].map((n) => Type.Literal(n)));
export const HeartbeatProps = {
  device_id: Id,
  app_version: Type.Optional(ShortText(40)),
  build_number: Type.Optional(Type.Integer({ minimum: 0, maximum: 2_000_000_000 })),
  battery_level: Type.Optional(Type.Integer({ minimum: 0, maximum: 100, description: 'percent' })),
  charging: Type.Optional(Type.Boolean()),
  network: Type.Optional(Network),
  recorded_at: Type.Optional(
    Type.String({
      format: 'date-time',
      description: 'when the app took the reading; default now; older than the last one recorded = 409 STALE_HEARTBEAT',
    }),
  ),
};

export const TargetRole = Literals(ORGANIZATION_PRINCIPALS);

export const adminMessage = {
  title: ShortText(120),
  body: ShortText(1000),
  data: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
};
