import { withDeps, type Api, type AppContext } from '../../platform/context.js';
import type { DispatchContext } from './context.js';
import { dispatchRoutes } from './routes.js';
import { LIMITS } from './schemas.js';
import { createDispatchService } from './service/dispatch.js';
import { createSolverThread } from './service/solver-thread.js';

/** Optimized batch dispatch: plan (optimizer over pending trips and available drivers) and atomic commit. */
export const createDispatchModule = (base: AppContext, deps: DispatchContext['deps']) => {
  const ctx = withDeps(base, deps);
  return {
    name: 'dispatch',
    routes(app: Api) {
      // One solver thread per instance, ended with the app.
      const solver = createSolverThread({ maxQueued: LIMITS.maxQueuedSolves });
      ctx.onClose.push(() => solver.close());
      dispatchRoutes(app, createDispatchService(ctx, solver));
    },
  };
};
