import { withDeps, type Api, type AppContext, type Module } from '../../platform/context.js';
import type { DashboardContext } from './context.js';
import { dashboardRoutes } from './routes.js';
import { createDashboardService } from './service.js';

/** GET /dashboard and the on-time report: the modules' dashboard contributors and logistics' report, for staff. */
export function createDashboardModule(base: AppContext, deps: DashboardContext['deps']): Module {
  const service = createDashboardService(withDeps(base, deps));
  return { name: 'dashboard', routes: (app: Api) => dashboardRoutes(app, service) };
}
