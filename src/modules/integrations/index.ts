import { withDeps, type Api, type AppContext } from '../../platform/context.js';
import type { IntegrationsContext } from './context.js';
import { createIntegrationsService } from './service/integrations.js';
import { integrationRoutes } from './routes.js';

export { refusePaymentIntent, futureIntegrationNotReleased, paymentConnectorReadyFrom } from './service/payments.js';

export type { IntegrationsService } from './service/integrations.js';

export function createIntegrationsModule(base: AppContext, deps: IntegrationsContext['deps']) {
  const ctx: IntegrationsContext = withDeps(base, deps);
  /** Reserved payment contracts for commerce: `refusePaymentIntent()`, `paymentConnectorReady()`. */
  const service = createIntegrationsService(ctx);
  return { name: 'integrations', service, routes: (app: Api) => integrationRoutes(app, ctx, service) };
}
