import type { Module } from '../../platform/context.js';
import { createNotificationService, type NotificationService } from './service.js';
import { createDeviceService, type DeviceService } from './devices.js';
import { gatewayFromConfig, type PushGateway } from './gateway.js';
import { createPushWorker, pushWorkerOptions } from './worker.js';
import { notificationRoutes } from './routes.js';

declare module '../../platform/context.js' {
  interface ServiceRegistry {
    /** Inbox: `notifyIn(tx, orgId, {...})`, `registerTemplate(type, fn)`, `setTerritoryAudience(fn)`. */
    notifications: NotificationService;
    devices: DeviceService;
    /** The configured push gateway, or null (pushes wait as `pending` / `NO_GATEWAY`). */
    pushGateway: PushGateway | null;
  }
}

export const notificationsModule: Module = {
  name: 'notifications',
  init(ctx) {
    const gateway = gatewayFromConfig(ctx.config.raw);
    ctx.services.pushGateway = gateway;
    ctx.services.notifications = createNotificationService(ctx, { gatewayConfigured: gateway !== null });
    ctx.services.devices = createDeviceService(ctx);
    // Inbox rows and push outbox rows commit with the event that causes them (transactional outbox).
    ctx.events.onRecorded((tx, ev) => ctx.services.notifications.onEvent(tx, ev));
    ctx.workers.push(createPushWorker(ctx.db, { gateway, ...pushWorkerOptions(ctx.config.raw) }));
  },
  routes: notificationRoutes,
};
