import type { Api, AppContext } from '../../platform/context.js';
import type { LogisticsApi } from '../logistics/index.js';
import { dispatchRoutes } from './routes.js';
import { createDispatchService } from './service.js';

/** Optimized batch dispatch: plan (optimizer over pending trips and available drivers) and atomic commit. */
export const createDispatchModule = (ctx: AppContext, deps: { logistics: LogisticsApi }) => ({
  name: 'dispatch',
  routes(app: Api) {
    dispatchRoutes(app, createDispatchService(ctx, deps));
  },
});
