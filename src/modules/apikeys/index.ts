import { withDeps, type Api, type AppContext, type Module } from '../../platform/context.js';
import type { ApiKeysContext } from './context.js';
import { createApiKeyService } from './service.js';
import { apiKeyRoutes } from './routes.js';

/**
 * API keys of administrators and merchant users, for integrations (a shop's server). Settings (environment):
 * API_KEY_RATE_LIMIT_PER_MINUTE (120 per key), API_KEY_MAX_PER_OWNER (25).
 */
export function createApiKeysModule(base: AppContext, deps: ApiKeysContext['deps']) {
  const ctx: ApiKeysContext = withDeps(base, deps);
  const service = createApiKeyService(ctx);
  return {
    name: 'apikeys',
    service,
    routes: (app: Api) => apiKeyRoutes(app, service),
  } satisfies Module & Record<string, unknown>;
}
