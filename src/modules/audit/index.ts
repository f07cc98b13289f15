import { withDeps, type Api, type AppContext, type Module } from '../../platform/context.js';
import { auditRoutes } from './routes.js';
import { createAuditService } from './service.js';

export { AuditOut } from './schemas.js';

export function createAuditModule(ctx: AppContext): Module {
  const service = createAuditService(withDeps(ctx, {}));
  return { name: 'audit', routes: (app: Api) => auditRoutes(app, service) };
}
