import { Type } from '@sinclair/typebox';
import type { Api, AppContext } from '../../platform/context.js';
import type { IntegrationsService } from './service/integrations.js';
import { Strict } from '../../platform/schemas.js';
import { PAYMENT_CONNECTORS, WEBHOOK_SECRET_SETTING } from './service/connectors.js';
import { SIGNATURE_TOLERANCE_SECONDS } from '../../platform/signature.js';
import { PaymentsOut, ReceiptOut, RoadmapOut, WebhookPayload } from './schemas.js';

const webhookDescription = (connector: string, setting: string) =>
  `Inbound callback of the ${connector} connector. Public route, verified instead of authenticated:\n\n` +
  `* Header \`X-Signature: t=<unix seconds>,v1=<hex>\` where the hex is HMAC-SHA256 with the connector secret (\`${setting}\`) ` +
  `over the exact bytes \`<t>.<raw body>\`; several \`v1=\` values are accepted (secret rotation).\n` +
  `* \`t\` must be within ${SIGNATURE_TOLERANCE_SECONDS} seconds of the server clock.\n` +
  '* Missing, malformed or wrong signature, or stale timestamp: **401** (`WEBHOOK_SIGNATURE_MISSING`, `WEBHOOK_SIGNATURE_INVALID`, ' +
  '`WEBHOOK_TIMESTAMP_STALE`), nothing stored.\n' +
  `* No secret configured on the server: **503** \`WEBHOOK_NOT_CONFIGURED\` for every call (the connector retries; nothing is lost).\n` +
  "* Body (JSON, checked after the signature): `event_id` (the connector's id, deduplication key), `organization_id` " +
  '(the organization concerned; signed, so it cannot be forged), optional `type` and `data`; other fields are kept. ' +
  'Invalid JSON or fields: 400; unknown organization: 422 `UNKNOWN_ORGANIZATION`.\n' +
  '* A verified callback is stored once per (organization, connector, event_id) and acknowledged with 200; a repeat of an ' +
  'event id answers 200 with `duplicate: true` and stores nothing. While the connector is not active (V0.7.2) callbacks are ' +
  'stored with status `ignored` and have no effect on orders.';

export function integrationRoutes(app: Api, ctx: AppContext, svc: IntegrationsService) {
  app.get(
    '/integrations/roadmap',
    {
      config: { auth: { roles: ['administrator', 'platform'] } },
      schema: {
        operationId: 'getIntegrationsRoadmap',
        tags: ['integrations'],
        summary: 'Administrative roadmap of connectors and their states',
        description:
          'Administrators. States: `available`, `planned`, `future`. The two payment connectors are `future` (not active, not dependencies) as of V0.7.2.',
        response: { 200: RoadmapOut },
      },
    },
    async () => svc.roadmap(),
  );

  app.get(
    '/integrations/payments',
    {
      schema: {
        operationId: 'getPaymentIntegrations',
        tags: ['integrations'],
        summary: 'Platform payment integration state (read compatibility): always `future`',
        description:
          'Any authenticated user (the apps read it to hide platform prepayment). Kept for read compatibility; returns `state: "future"`.',
        response: { 200: PaymentsOut },
      },
    },
    async () => svc.paymentsState(),
  );

  app.patch(
    '/integrations/payments',
    {
      config: { auth: { roles: ['administrator', 'platform'] } },
      schema: {
        operationId: 'updatePaymentIntegrations',
        tags: ['integrations'],
        summary: 'Reserved: blocked until a future version (501 FUTURE_INTEGRATION_NOT_RELEASED)',
        description:
          'Administrators. Always refused with **501** and code `FUTURE_INTEGRATION_NOT_RELEASED` (the same status and code as the ' +
          'reserved payment-intent routes): no connector is released in V0.7.2. Nothing is changed. The body is the reserved shape; ' +
          'unknown fields are 400.',
        body: Strict({
          connector: Type.Optional(Type.Union(PAYMENT_CONNECTORS.map((c) => Type.Literal(c)))),
          active: Type.Optional(Type.Boolean()),
        }),
        response: { 200: PaymentsOut },
      },
    },
    async () => svc.updatePayments(),
  );

  // The webhooks need the raw bytes to verify the signature: an encapsulated scope with its own body parser,
  // so no other route's JSON parsing is affected.
  app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('application/json', { parseAs: 'buffer', bodyLimit: 256 * 1024 }, (_req, body, done) => done(null, body));
    for (const connector of PAYMENT_CONNECTORS) {
      scope.post(
        `/integrations/${connector}/webhook`,
        {
          config: { auth: 'public' },
          // The body is validated by the service after the signature check (a bad signature is 401, never 400).
          validatorCompiler: () => () => true,
          schema: {
            operationId: connector === 'partner-pay' ? 'partnerPayWebhook' : 'partnerChefPayWebhook',
            tags: ['integrations'],
            summary: `Inbound ${connector} callback (HMAC-SHA256 signed, stored once, no effect while inactive)`,
            description: webhookDescription(connector, WEBHOOK_SECRET_SETTING[connector]),
            headers: Type.Object({ 'x-signature': Type.Optional(Type.String({ description: 't=<unix seconds>,v1=<hex HMAC-SHA256>' })) }),
            body: WebhookPayload,
            response: { 200: ReceiptOut },
          },
        },
        async (req) => svc.receiveWebhook(connector, Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0), req.headers),
      );
    }
  });
}
