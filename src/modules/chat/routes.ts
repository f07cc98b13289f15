import { Type } from '@sinclair/typebox';
import { actorOf } from '../../platform/auth.js';
import type { Api, AppContext } from '../../platform/context.js';
import { Id, IdParams, Nullable, Page, PageQueryProps, Phone, Strict, Timestamp } from '../../platform/schemas.js';
import { SecretInput } from '../../platform/secrets.js';
import { SECRET_REF_PATTERN } from './settings.js';
import type { ChannelSettingsPatch, ChatService } from './service.js';

const ChatMode = Type.Union([Type.Literal('link'), Type.Literal('cloud_api')], {
  description: '`link`: a click-to-chat link per message, `sent` at once; `cloud_api`: sent through the chat cloud API',
});
const OutboxStatus = Type.Union(
  ['pending', 'sending', 'sent', 'failed', 'cancelled'].map((s) => Type.Literal(s)),
  {
    description:
      '`pending` waiting (again after a retryable failure, with a later `available_at`; also while delivery is not configured, with `last_error` saying why); ' +
      '`sending` claimed by the worker; `sent`; `failed` (permanent error or attempts exhausted); `cancelled` (order cancelled or channel disabled before sending)',
  },
);
const ProviderId = Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_-]+$' });

const SettingsOut = Type.Object({
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

const OutboxOut = Type.Object({
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

const SettingsPatch = Strict({
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
const TOKEN_DOC =
  "`chat_token` is the channel's cloud API token: write-only (stored encrypted with the server's SECRETS_KEY, never returned; the response says " +
  '`chat_token_set` and `chat_token_set_at`), `null` clears it; 503 SECRETS_KEY_MISSING when the server has no key to store it with. ';

export function chatRoutes(app: Api, ctx: AppContext, svc: ChatService) {
  const merchantOnly = { auth: { roles: ['comercio' as const] } };

  app.get(
    '/merchant/channels',
    {
      config: merchantOnly,
      schema: {
        operationId: 'getMerchantChannels',
        tags: ['chat'],
        summary: "The merchant's chat channel settings",
        description: 'Merchant users (`comercio`). Defaults when never set. 422 `MERCHANT_PROFILE_REQUIRED` when the user has no merchant.',
        response: { 200: SettingsOut },
      },
    },
    async (req) => svc.getSettings(actorOf(req)),
  );

  app.patch(
    '/merchant/channels',
    {
      config: merchantOnly,
      schema: {
        operationId: 'updateMerchantChannels',
        tags: ['chat'],
        summary: "Updates the merchant's chat channel settings (partial)",
        description:
          'Merchant users. Only the fields sent change; `null` clears an optional field. ' +
          TOKEN_DOC +
          'The legacy way: `chat_secret_ref`, a reference to a secret held ' +
          'outside the database, and only the one the operator provisioned for this merchant: `env:CHAT_SECRET_<ORGANIZATION_ID>_<MERCHANT_ID>` ' +
          '(both ids upper-cased, every character other than A-Z and 0-9 written as `_`); any other name is 422 `SECRET_REF_NOT_PROVISIONED`, a value ' +
          "that is not an `env:CHAT_` reference is 400. The worker checks the reference again before each send, and messages go only to the server's " +
          "`CHAT_CLOUD_API_URL` (chat_phone_number_id is one URL-encoded path segment), so a merchant can neither use another tenant's token nor choose " +
          'where it is sent. The reference is never the secret, and it is ' +
          'returned masked. Enabling the channel without a `chat_phone`: 422 `CHAT_PHONE_REQUIRED`. Audited (without the token).',
        body: SettingsPatch,
        response: { 200: SettingsOut },
      },
    },
    async (req) => svc.updateSettings(actorOf(req), req.body as ChannelSettingsPatch),
  );

  const adminOnly = { auth: { roles: ['administrator' as const] } };
  app.get(
    '/admin/merchants/:id/channels',
    {
      config: adminOnly,
      schema: {
        operationId: 'getMerchantChannelsAsAdmin',
        tags: ['chat'],
        summary: "A merchant's chat channel settings (administrators)",
        description: "Administrators. Defaults when never set. Another organization's merchant, or none: 404.",
        params: IdParams,
        response: { 200: SettingsOut },
      },
    },
    async (req) => svc.getSettingsOf(actorOf(req), req.params.id),
  );

  app.patch(
    '/admin/merchants/:id/channels',
    {
      config: adminOnly,
      schema: {
        operationId: 'updateMerchantChannelsAsAdmin',
        tags: ['chat'],
        summary: "Updates a merchant's chat channel settings (administrators; partial)",
        description: `Administrators, as the merchant's own PATCH /merchant/channels (the same fields and rules). ${TOKEN_DOC}Another organization's merchant, or none: 404. Audited (without the token).`,
        params: IdParams,
        body: SettingsPatch,
        response: { 200: SettingsOut },
      },
    },
    async (req) => svc.updateSettingsOf(actorOf(req), req.params.id, req.body as ChannelSettingsPatch),
  );

  app.get(
    '/merchant/chat/outbox',
    {
      config: merchantOnly,
      schema: {
        operationId: 'listMerchantChatOutbox',
        tags: ['chat'],
        summary: "The merchant's chat messages and their delivery state",
        description: 'Merchant users; newest first, cursor pagination. Statuses: `pending`, `sending`, `sent`, `failed`, `cancelled`.',
        querystring: Strict({
          ...PageQueryProps,
          status: Type.Optional(OutboxStatus),
          order_id: Type.Optional(Id),
          express_request_id: Type.Optional(Id),
        }),
        response: { 200: Page(OutboxOut) },
      },
    },
    async (req) => svc.listOutbox(actorOf(req), req.query as Parameters<typeof svc.listOutbox>[1]),
  );
}
