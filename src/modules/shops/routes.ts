import { Type } from '@sinclair/typebox';
import { actorOf } from '../../platform/auth.js';
import type { Api } from '../../platform/context.js';
import { Page } from '../../platform/schemas.js';
import {
  ConnectionListQuery,
  ConnectionParams,
  CreateShopConnectionBody,
  PlaceShopOrderBody,
  ShopConnectionOut,
  ShopOrderListQuery,
  ShopOrderOut,
  ShopOrderParams,
  SHOP_PLATFORMS,
  WebhookReceiptOut,
  type ShopPlatform,
} from './schemas.js';
import type { ConnectionService } from './service/connections.js';
import { SHOP_HEADERS, SHOP_WEBHOOK_MAX_AGE_SECONDS, SHOP_WEBHOOK_PER_MINUTE, type InboundService } from './service/inbound.js';
import { SHOP_TOPICS } from './service/payloads.js';

const who = { auth: { roles: ['administrator' as const, 'comercio' as const] } };
const ACCESS =
  "Merchant users (`comercio`) see and manage their own merchant's shops (another merchant's is 404); administrators every merchant's of the organization.";

const inboundDescription = (platform: ShopPlatform) => {
  const h = SHOP_HEADERS[platform];
  const name = platform === 'woocommerce' ? 'WooCommerce' : 'Shopify';
  return (
    `The ${name} order webhook of a shop connection (docs/SHOPS.md). Public route, verified instead of authenticated:\n\n` +
    `* \`${h.signature}\`: base64 of HMAC-SHA256 over the exact body bytes with the connection's secret, compared in constant time; ` +
    'missing or wrong: **401** (`SHOP_SIGNATURE_MISSING`, `SHOP_SIGNATURE_INVALID`), nothing written.\n' +
    `* An unknown or deleted connection, or one of the other shop: **404** \`SHOP_CONNECTION_NOT_FOUND\` (its id is unguessable and reveals nothing without the secret).\n` +
    `* Replays: ${h.triggeredAt ? `\`${h.triggeredAt}\`` : "the order's `date_modified_gmt`"} more than ${SHOP_WEBHOOK_MAX_AGE_SECONDS / 3600} hours old ` +
    '(or 5 minutes ahead) is **401** `SHOP_WEBHOOK_STALE`; a delivery id already received (`' +
    h.delivery +
    "`, else the body's SHA-256) answers 200 with `duplicate: true` and writes nothing; a version older than the one applied changes nothing (`stale`).\n" +
    `* Topics (\`${h.topic}\`): ${Object.keys(SHOP_TOPICS[platform])
      .map((t) => `\`${t}\``)
      .join(', ')}; others are acknowledged as \`ignored\`.\n` +
    "* An order becomes one express request of the connection's merchant (source_channel `api`) once per shop order id, with the shipping " +
    "address's coordinates when the shop sends them (Shopify's `latitude`/`longitude`); without them it waits as `awaiting_location` for " +
    'the merchant (POST /shops/orders/{shop_order_id}/place). Changes follow while the package is not picked up; a cancellation cancels the trip.\n' +
    `* Not JSON: 400 \`MALFORMED_JSON\`; no order id: 400 \`SHOP_ORDER_INVALID\`; the merchant cannot request deliveries (not approved, no pickup location): 4xx, nothing written.\n` +
    `* At most ${SHOP_WEBHOOK_PER_MINUTE} deliveries per minute per connection (429 RATE_LIMITED with Retry-After).` +
    (platform === 'woocommerce'
      ? "\n* WooCommerce's unsigned ping (`webhook_id=<n>` as a form) answers 200 `ping` and writes nothing."
      : '')
  );
};

export function shopRoutes(app: Api, connections: ConnectionService, inbound: InboundService) {
  app.post(
    '/shops/connections',
    {
      config: who,
      schema: {
        operationId: 'createShopConnection',
        tags: ['shops'],
        summary: "Connects a merchant's WooCommerce or Shopify shop: its order webhooks become express requests",
        description:
          `${ACCESS} Administrators name the merchant (\`merchant_id\`, 422 MERCHANT_REQUIRED without it). The courier picks up at \`branch_id\` ` +
          "(another merchant's branch is 404), else at the merchant's location. The shop's webhook secret is stored encrypted and never " +
          'returned (`secret_set`); 503 SECRETS_KEY_MISSING when the server has no key. Paste `webhook_url` into the shop with the same secret, ' +
          'for each of `topics`.',
        body: CreateShopConnectionBody,
        response: { 201: ShopConnectionOut },
      },
    },
    async (req, reply) => reply.code(201).send(await connections.create(actorOf(req), req.body)),
  );

  app.get(
    '/shops/connections',
    {
      config: who,
      schema: {
        operationId: 'listShopConnections',
        tags: ['shops'],
        summary: 'Shop connections, newest first',
        description: `${ACCESS} Deleted connections are not listed.`,
        querystring: ConnectionListQuery,
        response: { 200: Page(ShopConnectionOut) },
      },
    },
    async (req) => connections.list(actorOf(req), req.query),
  );

  app.get(
    '/shops/connections/:connection_id',
    {
      config: who,
      schema: {
        operationId: 'getShopConnection',
        tags: ['shops'],
        summary: 'One shop connection (never its secret)',
        description: ACCESS,
        params: ConnectionParams,
        response: { 200: ShopConnectionOut },
      },
    },
    async (req) => connections.get(actorOf(req), req.params.connection_id),
  );

  app.delete(
    '/shops/connections/:connection_id',
    {
      config: who,
      schema: {
        operationId: 'deleteShopConnection',
        tags: ['shops'],
        summary: 'Disconnects a shop: its webhooks are refused from now on (404), its secret is erased',
        description: `${ACCESS} Its shop orders and their express requests stay.`,
        params: ConnectionParams,
        response: { 204: Type.Null() },
      },
    },
    async (req, reply) => {
      await connections.remove(actorOf(req), req.params.connection_id);
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/shops/orders',
    {
      config: who,
      schema: {
        operationId: 'listShopOrders',
        tags: ['shops'],
        summary: 'Orders received from connected shops, newest first (`status=awaiting_location`: the ones to place)',
        description: ACCESS,
        querystring: ShopOrderListQuery,
        response: { 200: Page(ShopOrderOut) },
      },
    },
    async (req) => connections.listOrders(actorOf(req), req.query),
  );

  app.post(
    '/shops/orders/:shop_order_id/place',
    {
      config: { auth: { roles: ['comercio'] } },
      schema: {
        operationId: 'placeShopOrder',
        tags: ['shops'],
        summary: "Gives the delivery point of a shop order's address: creates its express request, or moves it",
        description:
          "Merchant users, their own shop orders (another's is 404). `awaiting_location`: the express request is created (as POST " +
          '/merchant/delivery-express, source_channel `api`); `placed`: its express request and trip move to the point while not picked up ' +
          '(409 EXPRESS_PICKED_UP after); cancelled: 409 SHOP_ORDER_CANCELLED.',
        params: ShopOrderParams,
        body: PlaceShopOrderBody,
        response: { 200: ShopOrderOut },
      },
    },
    async (req) => inbound.placeOrder(actorOf(req), req.params.shop_order_id, req.body),
  );

  // The signature covers the exact bytes: an encapsulated scope keeps the body raw (as the payment connectors' callbacks do).
  app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('application/json', { parseAs: 'buffer', bodyLimit: 1024 * 1024 }, (_req, body, done) => done(null, body));
    scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'buffer', bodyLimit: 1024 }, (_req, body, done) =>
      done(null, body),
    );
    for (const platform of SHOP_PLATFORMS) {
      scope.post(
        `/shops/${platform}/:connection_id`,
        {
          config: { auth: 'public' },
          // The body is read by the service after the signature check (a bad signature is 401, never 400); an id of
          // the wrong form finds no connection (404).
          validatorCompiler: () => () => true,
          schema: {
            operationId: platform === 'woocommerce' ? 'wooCommerceOrderWebhook' : 'shopifyOrderWebhook',
            tags: ['shops'],
            summary: `Inbound ${platform === 'woocommerce' ? 'WooCommerce' : 'Shopify'} order webhook (HMAC-SHA256 signed)`,
            description: inboundDescription(platform),
            params: ConnectionParams,
            body: Type.Object({}, { additionalProperties: true, description: "the shop's order JSON" }),
            response: { 200: WebhookReceiptOut },
          },
        },
        async (req) => {
          const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
          const form = String(req.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded');
          return inbound.receive(
            platform,
            (req.params as { connection_id: string }).connection_id,
            raw,
            req.headers,
            form && /^webhook_id=\d{1,20}$/.test(raw.toString('latin1').trim()),
          );
        },
      );
    }
  });
}
