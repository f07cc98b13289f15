import type { AppContext, Module } from '../../platform/context.js';
import { driversFromConfig } from './drivers.js';
import { limitsFromConfig } from './policy.js';
import { createStorageService, slotJanitor, type StorageService } from './service.js';
import { storageRoutes } from './routes.js';

// The full service stays inside the module; other modules see only the ObjectLinker (ctx.services.storage).
const services = new WeakMap<AppContext, StorageService>();

export const storageModule: Module = {
  name: 'storage',
  init(ctx) {
    const drivers = driversFromConfig(ctx.config);
    const svc = createStorageService(ctx, { ...drivers, limits: limitsFromConfig(ctx.config.raw) });
    services.set(ctx, svc);
    ctx.services.storage = svc;
    ctx.workers.push(slotJanitor(svc));
  },
  async routes(app, ctx) {
    await storageRoutes(app, services.get(ctx)!);
  },
};
