import type { Module } from '../../platform/context.js';
import { createIdentityService, type IdentityService } from './service.js';
import { identityRoutes } from './routes.js';
import { userLifecycleRoutes } from './lifecycle.js';

declare module '../../platform/context.js' {
  interface ServiceRegistry {
    identity: IdentityService;
  }
}

export const identityModule: Module = {
  name: 'identity',
  init(ctx) {
    ctx.services.identity = createIdentityService(ctx);
  },
  routes(app, ctx) {
    identityRoutes(app, ctx);
    userLifecycleRoutes(app, ctx);
  },
};
