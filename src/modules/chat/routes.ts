import { Type } from '@sinclair/typebox';
import { actorOf } from '../../platform/auth.js';
import type { Api, AppContext } from '../../platform/context.js';
import { Id, IdParams, Page, PageQueryProps, Strict } from '../../platform/schemas.js';

import type { ChannelSettingsPatch, ChatService } from './service/chat.js';
import { OutboxOut, OutboxStatus, SettingsOut, SettingsPatch } from './schemas.js';

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
