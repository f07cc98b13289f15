import type { Module } from '../../platform/context.js';
import { dispatchRoutes } from './routes.js';
import { createDispatchService } from './service.js';

/** Optimized batch dispatch: plan (optimizer over pending trips and available drivers) and atomic commit. */
export const dispatchModule: Module = {
  name: 'dispatch',
  routes(app, ctx) {
    dispatchRoutes(app, createDispatchService(ctx));
  },
};
