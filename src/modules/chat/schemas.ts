import { Type } from '@sinclair/typebox';
import { Literals, Nullable, Phone, Strict, Timestamp } from '../../platform/schemas.js';
import { CHAT_MODES, CHAT_OUTBOX_STATUSES } from './tables.js';
import { SecretInput } from '../../platform/secrets.js';
import { SECRET_REF_PATTERN } from './service/settings.js';

export const ChatMode = Literals(
  CHAT_MODES,
  '`link`: a click-to-chat link per message, `sent` at once; `cloud_api`: sent through the chat cloud API',
);
export const OutboxStatus = Literals(
  CHAT_OUTBOX_STATUSES,
  '`pending` waiting (again after a retryable failure, with a later `available_at`; also while delivery is not configured, with `last_error` saying why); ' +
    '`sending` claimed by the worker; `sent`; `failed` (permanent error or attempts exhausted); `cancelled` (order cancelled or channel disabled before sending)',
);
export const ProviderId = Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_-]+$' });

export const SettingsOut = Type.Object({
  merchant_id: Type.String(),
  chat_enabled: Type.Boolean(),
  chat_mode: ChatMode,
  chat_phone: Nullable(Type.String()),
  chat_phone_number_id: Nullable(Type.String()),
  chat_account_id: Nullable(Type.String()),
  chat_secret_ref: Nullable(Type.String({ description: 'masked, e.g. `env:****EN_1`; the reference is never returned in full' })),
  chat_secret_configured: Type.Boolean({ description: 'a token is set (`chat_token_set`) or a legacy `chat_secret_ref` is' }),
  chat_token_set: Type.Boolean({ description: 'a channel token is stored (encrypted; it is never returned)' }),
  chat_token_set_at: Nullable(Timestamp),
  order_notifications: Type.Boolean(),
  status_notifications: Type.Boolean(),
  delivery_ready: Type.Boolean({ description: 'false when something keeps messages from being delivered (see configuration_issues)' }),
  configuration_issues: Type.Array(Type.String()),
  created_at: Nullable(Timestamp),
  updated_at: Nullable(Timestamp),
});

export const OutboxOut = Type.Object({
  id: Type.String(),
  organization_id: Type.String(),
  territory_id: Nullable(Type.String()),
  merchant_id: Type.String(),
  order_id: Nullable(Type.String()),
  express_request_id: Nullable(Type.String()),
  destination_phone: Type.String(),
  message_type: Type.String({ description: '`order_created` or `order_status_changed`' }),
  payload: Type.Record(Type.String(), Type.Unknown(), {
    description: '`summary`, optional `data` and `status`; `link` in link mode; `provider_message_id` once sent through the cloud API',
  }),
  status: OutboxStatus,
  attempts: Type.Integer(),
  available_at: Timestamp,
  last_error: Nullable(Type.String()),
  sent_at: Nullable(Timestamp),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const SettingsPatch = Strict({
  chat_enabled: Type.Optional(Type.Boolean()),
  chat_mode: Type.Optional(ChatMode),
  chat_phone: Type.Optional(Nullable(Phone)),
  chat_phone_number_id: Type.Optional(Nullable(ProviderId)),
  chat_account_id: Type.Optional(Nullable(ProviderId)),
  chat_secret_ref: Type.Optional(
    Nullable(
      Type.String({
        pattern: SECRET_REF_PATTERN,
        maxLength: 210,
        description: 'Legacy: `env:CHAT_SECRET_<ORGANIZATION_ID>_<MERCHANT_ID>`; a stored `chat_token` takes precedence',
      }),
    ),
  ),
  chat_token: Type.Optional(
    Nullable(
      SecretInput(
        1,
        4096,
        'The chat cloud API token of the channel (1 to 4096 visible ASCII characters), stored encrypted; `null` clears it.',
      ),
    ),
  ),
  order_notifications: Type.Optional(Type.Boolean()),
  status_notifications: Type.Optional(Type.Boolean()),
});
