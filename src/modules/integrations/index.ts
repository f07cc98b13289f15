import type { Module } from '../../platform/context.js';
import { createIntegrationsService, type IntegrationsService } from './service.js';
import { integrationRoutes } from './routes.js';

export { refusePaymentIntent, futureIntegrationNotReleased, paymentConnectorReadyFrom } from './payments.js';
export { signPayload, verifySignature } from './signature.js';

declare module '../../platform/context.js' {
  interface ServiceRegistry {
    /** Reserved payment contracts for commerce: `refusePaymentIntent()`, `paymentConnectorReady()`. */
    integrations: IntegrationsService;
  }
}

export const integrationsModule: Module = {
  name: 'integrations',
  init(ctx) {
    ctx.services.integrations = createIntegrationsService(ctx);
  },
  routes: integrationRoutes,
};
