import { Type } from '@sinclair/typebox';
import { actorOf } from '../../platform/auth.js';
import type { Api } from '../../platform/context.js';
import { AppError } from '../../platform/errors.js';
import { countRequest } from '../../platform/rate-limit.js';
import { Nullable, Page, PageQueryProps, Phone, Strict } from '../../platform/schemas.js';
import type { MessagesContext } from './context.js';
import type { MessagesService } from './service/messages.js';
import { Body, Kind, Language, PreferenceOut, SettingsOut } from './schemas.js';

const STAFF = ['administrator', 'dispatch'] as const;
const TRIGGERS =
  "Messages are queued, in the transaction of the change, through the merchant's chat outbox (`recipient_<kind>` rows, only when the trip has a merchant whose chat channel is on) to the phone of a recipient without an account (the trip's recipient link), " +
  "and as an inbox notification with push (`recipient.<kind>`) to a customer with an account: order confirmed (the first recipient link of a trip; a customer's order confirmed by the merchant), " +
  "driver assigned (trip.assigned), arriving soon (the trip's ETA to the drop-off is `arriving_soon_min` or less; at most once per trip per `eta_message_period_min`), delivered (trip.completed), failed (trip.delivery_failed). " +
  "Each other kind is queued at most once per trip and channel. The recipient's language is his preference, else `default_language`; a phone that opted out gets nothing.";

/** Recipient messages: settings and templates, previews, and the recipients' opt-outs and languages. */
export function messageRoutes(app: Api, ctx: MessagesContext, svc: MessagesService) {
  app.get(
    '/recipient-messages/settings',
    {
      config: { auth: { roles: [...STAFF] } },
      schema: {
        operationId: 'getRecipientMessageSettings',
        tags: ['recipient-messages'],
        summary:
          'The messages a trip\'s recipient gets: their templates (Spanish and English), when "arriving soon" is sent, and how often',
        description: TRIGGERS,
        response: { 200: SettingsOut },
      },
    },
    async (req) => svc.getSettings(actorOf(req)),
  );

  app.patch(
    '/recipient-messages/settings',
    {
      config: { auth: { roles: ['administrator'] } },
      schema: {
        operationId: 'updateRecipientMessageSettings',
        tags: ['recipient-messages'],
        summary: 'Change the recipient message settings and templates (administrators); audited',
        description:
          'Only the given fields change. A template with `body: null` (or the built-in text) goes back to the built-in one. ' +
          'A template using a placeholder outside `placeholders` is 400 UNKNOWN_PLACEHOLDER (each named in `errors`) and nothing is written.',
        body: Strict({
          arriving_soon_min: Type.Optional(Type.Integer({ minimum: 1, maximum: 240 })),
          eta_message_period_min: Type.Optional(Type.Integer({ minimum: 1, maximum: 1440 })),
          default_language: Type.Optional(Language),
          templates: Type.Optional(Type.Array(Strict({ kind: Kind, language: Language, body: Nullable(Body) }), { maxItems: 20 })),
        }),
        response: { 200: SettingsOut },
      },
    },
    async (req) => svc.updateSettings(actorOf(req), req.body),
  );

  app.post(
    '/recipient-messages/preview',
    {
      config: { auth: { roles: [...STAFF] } },
      schema: {
        operationId: 'previewRecipientMessage',
        tags: ['recipient-messages'],
        summary: 'A template rendered with sample values: the stored one, or `body` as typed (not saved)',
        description: 'An unknown placeholder in `body` is 400 UNKNOWN_PLACEHOLDER. Writes nothing.',
        body: Strict({ kind: Kind, language: Language, body: Type.Optional(Body) }),
        response: { 200: Type.Object({ kind: Kind, language: Language, text: Type.String() }) },
      },
    },
    async (req) => svc.preview(actorOf(req), req.body),
  );

  app.get(
    '/recipient-messages/preferences',
    {
      config: { auth: { roles: [...STAFF] } },
      schema: {
        operationId: 'listRecipientPreferences',
        tags: ['recipient-messages'],
        summary: "Recipients' choices by phone: opted out, language (newest first)",
        querystring: Strict({ ...PageQueryProps, opted_out: Type.Optional(Type.Boolean()) }),
        response: { 200: Page(PreferenceOut) },
      },
    },
    async (req) => svc.listPreferences(actorOf(req), req.query),
  );

  app.put(
    '/recipient-messages/preferences',
    {
      config: { auth: { roles: [...STAFF] } },
      schema: {
        operationId: 'setRecipientPreference',
        tags: ['recipient-messages'],
        summary: "Opt a recipient's phone out of the messages (or back in) and set their language; audited",
        description: "The phone is stored in E.164 (a national number takes the organization's country). Only the given fields change.",
        body: Strict({ phone: Phone, opted_out: Type.Optional(Type.Boolean()), language: Type.Optional(Nullable(Language)) }),
        response: { 200: PreferenceOut },
      },
    },
    async (req) => svc.setPreference(actorOf(req), req.body),
  );

  const OwnPreference = Type.Object(
    {
      phone: Nullable(
        Type.String({ description: "The account's phone (E.164) the preference belongs to; null: the account has no phone" }),
      ),
      opted_out: Type.Boolean(),
      language: Nullable(Language),
    },
    { $id: 'CustomerMessagePreference' },
  );
  app.get(
    '/customer/message-preferences',
    {
      config: { auth: { roles: ['delivery'] } },
      schema: {
        operationId: 'getCustomerMessagePreference',
        tags: ['recipient-messages'],
        summary:
          'The customer: whether he is told about his orders (order confirmed, driver assigned, arriving soon, delivered, failed) and in which language',
        description:
          "The preference of the account's phone, shared with the messages a tracking link's recipient gets on that phone. Language null: the organization's default.",
        response: { 200: OwnPreference },
      },
    },
    async (req) => svc.ownCustomerPreference(actorOf(req)),
  );

  app.put(
    '/customer/message-preferences',
    {
      config: { auth: { roles: ['delivery'] } },
      schema: {
        operationId: 'setCustomerMessagePreference',
        tags: ['recipient-messages'],
        summary: 'The customer: stop (or resume) the messages about his orders, or choose their language',
        description: 'Only the given fields change. An account without a phone is 422 NO_RECIPIENT_PHONE and nothing is written.',
        body: Strict({ opted_out: Type.Optional(Type.Boolean()), language: Type.Optional(Nullable(Language)) }),
        response: { 200: OwnPreference },
      },
    },
    async (req) => svc.ownCustomerPreference(actorOf(req), req.body),
  );

  app.put(
    '/public/tracking/:token/preferences',
    {
      config: { auth: 'public' },
      schema: {
        operationId: 'setOwnRecipientPreference',
        tags: ['recipient-messages'],
        summary: 'The recipient, from his tracking link: stop (or resume) the messages to his phone, or choose their language',
        description:
          'No login: the link is the credential. An unknown, forged, revoked or expired link is 404; a link without a phone is 422 NO_RECIPIENT_PHONE. ' +
          `At most ${PUBLIC_PER_MINUTE} per minute per client address, shared with the tracking page's unknown links (429 RATE_LIMITED).`,
        params: Strict({ token: Type.String({ minLength: 20, maxLength: 100, pattern: '^[A-Za-z0-9_.-]+$' }) }),
        body: Strict({ opted_out: Type.Optional(Type.Boolean()), language: Type.Optional(Language) }),
        response: { 200: Type.Object({ opted_out: Type.Boolean(), language: Nullable(Language) }) },
      },
    },
    async (req) => {
      const { weighted, resetSeconds } = await countRequest(ctx.db, `public-tracking:ip:${req.ip}`);
      if (weighted > PUBLIC_PER_MINUTE) {
        throw new AppError(429, 'RATE_LIMITED', `Too many requests from one address; retry in ${resetSeconds} s`, undefined, {
          retry_after: resetSeconds,
          limit: PUBLIC_PER_MINUTE,
        });
      }
      const out = await svc.setOwnPreference(req.params.token, req.body);
      if (!out) throw AppError.notFound('Tracking link');
      return out;
    },
  );
}

/** The tracking page's per-address limit for unknown links (logistics' PUBLIC_TRACKING_UNKNOWN_PER_MINUTE), shared through the same counter. */
const PUBLIC_PER_MINUTE = 30;
