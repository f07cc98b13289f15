import type { Api, AppContext } from '../../platform/context.js';
import type { NotificationsContext } from './context.js';
import { createNotificationService } from './service/inbox.js';
import { createDeviceService } from './service/devices.js';
import { createPushTargets } from './service/push-targets.js';
import { gatewayFromConfig } from './service/gateway.js';
import { createPushWorker, pushWorkerOptions } from './worker.js';
import { notificationRoutes } from './routes.js';

export type { NotificationService } from './service/inbox.js';
export type { DeviceService } from './service/devices.js';
export type { PushGateway } from './service/gateway.js';
export type { SyncWindow } from './context.js';
export { publicNotification } from './service/inbox.js';
export { publicDevice } from './service/devices.js';
export { HeartbeatProps, Platform } from './schemas.js';

export function createNotificationsModule(ctx: AppContext, deps: NotificationsContext['deps']) {
  /** The configured push gateway, or null (pushes wait as `pending` / `NO_GATEWAY`). */
  const pushGateway = gatewayFromConfig(ctx.config.settings);
  /** Inbox: `notifyIn(tx, orgId, {...})`, `registerTemplate(type, fn)`, `setTerritoryAudience(fn)`. */
  const pushTargets = createPushTargets(ctx);
  const service = createNotificationService(ctx, { gatewayConfigured: pushGateway !== null, identity: deps.identity, pushTargets });
  const devices = createDeviceService(ctx, pushTargets);
  ctx.workers.push(createPushWorker(ctx.db, { gateway: pushGateway, ...pushWorkerOptions(ctx.config.settings) }));
  return { name: 'notifications', service, devices, pushGateway, routes: (app: Api) => notificationRoutes(app, ctx, service, devices) };
}
