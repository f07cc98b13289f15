import type { Api, AppContext } from '../../platform/context.js';
import type { IdentityService } from '../identity/index.js';
import { createNotificationService } from './service.js';
import { createDeviceService } from './devices.js';
import { gatewayFromConfig } from './gateway.js';
import { createPushWorker, pushWorkerOptions } from './worker.js';
import { notificationRoutes } from './routes.js';

export type { NotificationService } from './service.js';
export type { DeviceService } from './devices.js';
export type { PushGateway } from './gateway.js';

export function createNotificationsModule(ctx: AppContext, deps: { identity: IdentityService }) {
  /** The configured push gateway, or null (pushes wait as `pending` / `NO_GATEWAY`). */
  const pushGateway = gatewayFromConfig(ctx.config.settings);
  /** Inbox: `notifyIn(tx, orgId, {...})`, `registerTemplate(type, fn)`, `setTerritoryAudience(fn)`. */
  const service = createNotificationService(ctx, { gatewayConfigured: pushGateway !== null, identity: deps.identity });
  const devices = createDeviceService(ctx);
  ctx.workers.push(createPushWorker(ctx.db, { gateway: pushGateway, ...pushWorkerOptions(ctx.config.settings) }));
  return { name: 'notifications', service, devices, pushGateway, routes: (app: Api) => notificationRoutes(app, ctx, service, devices) };
}
