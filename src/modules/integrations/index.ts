import type { Api, AppContext } from '../../platform/context.js';
import { createIntegrationsService } from './service.js';
import { integrationRoutes } from './routes.js';

export { refusePaymentIntent, futureIntegrationNotReleased, paymentConnectorReadyFrom } from './payments.js';
export { signPayload, verifySignature } from './signature.js';

export type { IntegrationsService } from './service.js';

export function createIntegrationsModule(ctx: AppContext) {
  /** Reserved payment contracts for commerce: `refusePaymentIntent()`, `paymentConnectorReady()`. */
  const service = createIntegrationsService(ctx);
  return { name: 'integrations', service, routes: (app: Api) => integrationRoutes(app, ctx, service) };
}
