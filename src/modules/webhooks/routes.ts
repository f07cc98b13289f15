import { Type, type Static } from '@sinclair/typebox';
import { actorOf } from '../../platform/auth.js';
import type { Api } from '../../platform/context.js';
import type { WebhooksContext } from './context.js';
import type { WebhookService } from './service/webhooks.js';
import { IdParams, Nullable, Page, PageQueryProps, Strict } from '../../platform/schemas.js';
import type { attemptOut, deliveryOut, subscriptionOut } from './service/webhooks.js';
import {
  AttemptOut,
  DeliveryDetail,
  DeliveryStatus,
  EventType,
  SigningSecret,
  TargetUrl,
  WebhookDeliveryOut,
  WebhookSubscriptionOut,
  WithSecret,
} from './schemas.js';

// The mappers must produce exactly what the schemas describe.
const _s: (x: ReturnType<typeof subscriptionOut>) => Static<typeof WebhookSubscriptionOut> = (x) => x;
const _d: (x: ReturnType<typeof deliveryOut>) => Static<typeof WebhookDeliveryOut> = (x) => x;
const _a: (x: ReturnType<typeof attemptOut>) => Static<typeof AttemptOut> = (x) => x;
void _s;
void _d;
void _a;

const who = { auth: { roles: ['administrator' as const, 'dispatch' as const, 'subadmin' as const, 'comercio' as const] } };
const ACCESS =
  'Administrators manage every subscription of the organization; dispatchers, sub-administrators and merchant users (`comercio`) only their own ' +
  "(another's is 404), which receive only what their owner may read (see `scope`).";

export function webhookRoutes(app: Api, ctx: WebhooksContext, svc: WebhookService) {
  app.post(
    '/webhooks/subscriptions',
    {
      config: who,
      schema: {
        operationId: 'createWebhookSubscription',
        tags: ['webhooks'],
        summary: 'Subscribes a URL to events (outbound webhooks)',
        description:
          `${ACCESS} An administrator's subscription receives every event of the organization, a merchant's only those of its records ` +
          "(422 MERCHANT_PROFILE_REQUIRED without a merchant profile); a dispatcher's or sub-administrator's only those of its scope, and naming a type " +
          "outside it is 422 WEBHOOK_EVENT_TYPE_OUT_OF_SCOPE. The signing secret is stored encrypted and never returned: the caller's `secret`, or one the " +
          'server generates, which is in this response only. 503 SECRETS_KEY_MISSING when the server has no key to store it with. ' +
          '422 WEBHOOK_TARGET_REFUSED for a URL the service will not call, 422 WEBHOOK_SUBSCRIPTION_LIMIT beyond WEBHOOK_MAX_SUBSCRIPTIONS.',
        body: Strict({
          url: TargetUrl,
          event_types: Type.Array(EventType, { minItems: 1, maxItems: 50 }),
          description: Type.Optional(Nullable(Type.String({ maxLength: 300 }))),
          active: Type.Optional(Type.Boolean()),
          secret: Type.Optional(SigningSecret),
        }),
        response: { 201: WithSecret },
      },
    },
    async (req, reply) => {
      reply.code(201);
      return svc.create(actorOf(req), req.body);
    },
  );

  app.get(
    '/webhooks/subscriptions',
    {
      config: who,
      schema: {
        operationId: 'listWebhookSubscriptions',
        tags: ['webhooks'],
        summary: 'Webhook subscriptions, newest first',
        description: ACCESS,
        querystring: Strict(PageQueryProps),
        response: { 200: Page(WebhookSubscriptionOut) },
      },
    },
    async (req) => svc.list(actorOf(req), req.query),
  );

  app.get(
    '/webhooks/subscriptions/:id',
    {
      config: who,
      schema: {
        operationId: 'getWebhookSubscription',
        tags: ['webhooks'],
        summary: 'One webhook subscription',
        description: ACCESS,
        params: IdParams,
        response: { 200: WebhookSubscriptionOut },
      },
    },
    async (req) => svc.get(actorOf(req), req.params.id),
  );

  app.patch(
    '/webhooks/subscriptions/:id',
    {
      config: who,
      schema: {
        operationId: 'updateWebhookSubscription',
        tags: ['webhooks'],
        summary: 'Changes a webhook subscription (partial)',
        description: `${ACCESS} \`active: false\` cancels its undelivered deliveries; \`active: true\` enables a disabled subscription again (the failure streak starts over).`,
        params: IdParams,
        body: Strict({
          url: Type.Optional(TargetUrl),
          event_types: Type.Optional(Type.Array(EventType, { minItems: 1, maxItems: 50 })),
          description: Type.Optional(Nullable(Type.String({ maxLength: 300 }))),
          active: Type.Optional(Type.Boolean()),
        }),
        response: { 200: WebhookSubscriptionOut },
      },
    },
    async (req) => svc.update(actorOf(req), req.params.id, req.body),
  );

  app.delete(
    '/webhooks/subscriptions/:id',
    {
      config: who,
      schema: {
        operationId: 'deleteWebhookSubscription',
        tags: ['webhooks'],
        summary: 'Deletes a webhook subscription and its delivery log',
        description: ACCESS,
        params: IdParams,
        response: { 204: Type.Null() },
      },
    },
    async (req, reply) => {
      await svc.remove(actorOf(req), req.params.id);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/webhooks/subscriptions/:id/rotate-secret',
    {
      config: who,
      schema: {
        operationId: 'rotateWebhookSecret',
        tags: ['webhooks'],
        summary: 'Replaces the signing secret, with an overlap',
        description:
          `${ACCESS} The new secret: the caller's \`secret\` (stored encrypted, never returned), or one the server generates, in this response only. ` +
          'During `overlap_seconds` (default 86400, at most 7 days; 0 replaces it at once) deliveries carry two `v1` signatures, one per secret. Audited (without the secret).',
        params: IdParams,
        body: Type.Optional(
          Strict({
            overlap_seconds: Type.Optional(Type.Integer({ minimum: 0, maximum: 7 * 86_400 })),
            secret: Type.Optional(SigningSecret),
          }),
        ),
        response: { 200: WithSecret },
      },
    },
    async (req) => svc.rotateSecret(actorOf(req), req.params.id, req.body?.overlap_seconds ?? 86_400, req.body?.secret),
  );

  app.post(
    '/webhooks/subscriptions/:id/test',
    {
      config: who,
      schema: {
        operationId: 'sendWebhookTestEvent',
        tags: ['webhooks'],
        summary: 'Queues a `webhook.test` event to the subscription',
        description: `${ACCESS} Delivered (signed, logged, retried) like any event. 409 WEBHOOK_SUBSCRIPTION_INACTIVE on an inactive subscription; test events and redeliveries are limited per user (WEBHOOK_TEST_PER_MINUTE, 429 RATE_LIMITED).`,
        params: IdParams,
        response: { 202: WebhookDeliveryOut },
      },
    },
    async (req, reply) => {
      reply.code(202);
      return svc.sendTest(actorOf(req), req.params.id);
    },
  );

  app.get(
    '/webhooks/subscriptions/:id/deliveries',
    {
      config: who,
      schema: {
        operationId: 'listWebhookDeliveries',
        tags: ['webhooks'],
        summary: 'The delivery log of a subscription, newest first',
        description: ACCESS,
        params: IdParams,
        querystring: Strict({ ...PageQueryProps, status: Type.Optional(DeliveryStatus) }),
        response: { 200: Page(WebhookDeliveryOut) },
      },
    },
    async (req) => svc.listDeliveries(actorOf(req), req.params.id, req.query),
  );

  app.get(
    '/webhooks/deliveries/:id',
    {
      config: who,
      schema: {
        operationId: 'getWebhookDelivery',
        tags: ['webhooks'],
        summary: 'One delivery with its body and attempts',
        description: ACCESS,
        params: IdParams,
        response: { 200: DeliveryDetail },
      },
    },
    async (req) => svc.getDelivery(actorOf(req), req.params.id),
  );

  app.post(
    '/webhooks/deliveries/:id/redeliver',
    {
      config: who,
      schema: {
        operationId: 'redeliverWebhook',
        tags: ['webhooks'],
        summary: "Sends one delivery's event again",
        description: `${ACCESS} A new delivery with the same event id and body (signed anew), outside the per-resource order. 409 WEBHOOK_SUBSCRIPTION_INACTIVE on an inactive subscription; limited like test events.`,
        params: IdParams,
        response: { 202: WebhookDeliveryOut },
      },
    },
    async (req, reply) => {
      reply.code(202);
      return svc.redeliver(actorOf(req), req.params.id);
    },
  );
}
