import { TypeCompiler } from '@sinclair/typebox/compiler';
import { AppError, type FieldError } from '../../../platform/errors.js';
import { newId, sha256Hex } from '../../../platform/ids.js';
import type { IntegrationsContext } from '../context.js';
import { PAYMENT_CONNECTORS, ROADMAP, WEBHOOK_SECRET_SETTING, type PaymentConnector } from './connectors.js';
import { SIGNATURE_HEADER, verifySignature } from '../../../platform/signature.js';
import { paymentConnectorReadyFrom, refusePaymentIntent } from './payments.js';
import { findWebhookEvent, insertWebhookEvent } from '../repo.js';
import { WebhookPayload } from '../schemas.js';

const checkPayload = TypeCompiler.Compile(WebhookPayload);

export interface WebhookReceipt {
  id: string;
  connector: PaymentConnector;
  event_id: string;
  received: true;
  duplicate: boolean;
  status: 'received' | 'ignored' | 'processed';
}

function parsePayload(raw: Buffer): WebhookPayload {
  let body: unknown;
  try {
    body = JSON.parse(raw.toString('utf8'));
  } catch {
    throw AppError.badRequest('The body is not valid JSON', undefined, 'MALFORMED_JSON');
  }
  if (!checkPayload.Check(body)) {
    const errors: FieldError[] = [...checkPayload.Errors(body)]
      .slice(0, 20)
      .map((e) => ({ field: e.path.replace(/^\//, '').replace(/\//g, '.') || 'body', message: e.message }));
    throw AppError.badRequest('The callback body is invalid', errors);
  }
  return body;
}

export function createIntegrationsService(ctx: IntegrationsContext) {
  const secretOf = (connector: PaymentConnector): string | null => {
    const value = ctx.config.settings[WEBHOOK_SECRET_SETTING[connector]];
    return value && value.length > 0 ? value : null;
  };

  return {
    roadmap() {
      return {
        data: ROADMAP.map((e) => {
          const connector = (PAYMENT_CONNECTORS as readonly string[]).includes(e.key) ? (e.key as PaymentConnector) : null;
          return {
            ...e,
            active: e.state === 'available',
            webhook_path: connector ? `/api/v1/integrations/${connector}/webhook` : null,
            webhook_configured: connector ? secretOf(connector) !== null : null,
          };
        }),
      };
    },

    paymentsState() {
      return {
        state: 'future' as const,
        active: false,
        code: 'FUTURE_INTEGRATION_NOT_RELEASED',
        message: 'Platform payment connectors are not active as of V0.7.2; payment-intent routes are a reserved contract.',
        connectors: PAYMENT_CONNECTORS.map((key) => ({ key, state: 'future' as const, active: false })),
      };
    },

    /** PATCH /integrations/payments: refused until a connector is released. */
    updatePayments(): never {
      throw new AppError(
        501,
        'FUTURE_INTEGRATION_NOT_RELEASED',
        'Payment integration settings cannot be changed until a future version releases a connector',
      );
    },

    refusePaymentIntent,
    paymentConnectorReady: () => paymentConnectorReadyFrom(ctx.config),

    /**
     * A connector callback: 503 without a configured secret, 401 unless signed over the raw body within the
     * time window, then stored once per (organization, connector, event id) and acknowledged. No effect on
     * orders while the connectors are not active.
     */
    async receiveWebhook(
      connector: PaymentConnector,
      rawBody: Buffer,
      headers: Record<string, string | string[] | undefined>,
    ): Promise<WebhookReceipt> {
      const secret = secretOf(connector);
      if (!secret) {
        throw new AppError(
          503,
          'WEBHOOK_NOT_CONFIGURED',
          `The ${connector} connector has no webhook secret configured (${WEBHOOK_SECRET_SETTING[connector]})`,
        );
      }
      const signedAt = verifySignature(secret, rawBody, headers[SIGNATURE_HEADER]);
      const payload = parsePayload(rawBody);
      // The signed payload names its organization: stored under that tenant's row-level security.
      return ctx.db.withTenant({ organizationId: payload.organization_id, userId: null }, async (tx) => {
        // The organization's own row, seen through the tenant set above: none when the organization does not exist.
        if (!(await ctx.deps.organizations.branding(tx)))
          throw AppError.unprocessable('The organization of the callback does not exist', 'UNKNOWN_ORGANIZATION');
        const inserted = await insertWebhookEvent(tx, {
          organizationId: payload.organization_id,
          id: newId(),
          connector,
          eventId: payload.event_id,
          eventType: payload.type ?? null,
          payload,
          bodySha256: sha256Hex(rawBody),
          signedAt,
        });
        const duplicate = !inserted;
        const row = inserted ?? (await findWebhookEvent(tx, payload.organization_id, connector, payload.event_id));
        return { id: row.id, connector, event_id: payload.event_id, received: true, duplicate, status: row.status };
      });
    },
  };
}

export type IntegrationsService = ReturnType<typeof createIntegrationsService>;
