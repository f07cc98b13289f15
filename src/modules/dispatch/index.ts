import type { Api, AppContext } from '../../platform/context.js';
import type { LogisticsApi } from '../logistics/index.js';
import { dispatchRoutes } from './routes.js';
import { createDispatchService, LIMITS } from './service/dispatch.js';
import { createSolverThread } from './service/solver-thread.js';

/** Optimized batch dispatch: plan (optimizer over pending trips and available drivers) and atomic commit. */
export const createDispatchModule = (ctx: AppContext, deps: { logistics: LogisticsApi }) => ({
  name: 'dispatch',
  routes(app: Api) {
    // One solver thread per instance, ended with the app.
    const solver = createSolverThread({ maxQueued: LIMITS.maxQueuedSolves });
    ctx.onClose.push(() => solver.close());
    dispatchRoutes(app, createDispatchService(ctx, { ...deps, solver }));
  },
});
