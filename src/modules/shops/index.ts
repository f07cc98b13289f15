import { withDeps, type Api, type AppContext, type Module } from '../../platform/context.js';
import type { ShopsContext } from './context.js';
import { shopRoutes } from './routes.js';
import { createConnectionService } from './service/connections.js';
import { createInboundService } from './service/inbound.js';

export { SHOP_SECRET_COLUMN } from './repo.js';
export type { ShopExpressPort, ShopMerchants } from './context.js';
export { ShopConnectionOut, ShopOrderOut } from './schemas.js';

/**
 * Online shops (WooCommerce, Shopify): a merchant connects his shop with its webhook secret (stored encrypted), and
 * the shop's signed order webhooks become his express requests, followed when the order changes or is cancelled.
 */
export function createShopsModule(base: AppContext, deps: ShopsContext['deps']) {
  const ctx: ShopsContext = withDeps(base, deps);
  const connections = createConnectionService(ctx);
  const inbound = createInboundService(ctx, connections);
  return {
    name: 'shops',
    connections,
    inbound,
    routes: (app: Api) => shopRoutes(app, connections, inbound),
  } satisfies Module & Record<string, unknown>;
}
