import type { AppContext } from '../../platform/context.js';
import { withDeps, type Api } from '../../platform/context.js';
import { hook } from '../../platform/hooks.js';
import type { IdentityContext, IdentityHooks, OrganizationDirectory } from './context.js';
import { identityRoutes } from './routes.js';
import { createIdentityService } from './service/accounts.js';
import { createUserDeactivation } from './service/deactivation.js';

export type { IdentityService, NewUser } from './service/accounts.js';
export type { OrganizationDirectory } from './context.js';
export { PASSWORD_RULES, UserOut } from './schemas.js';

export function createIdentityModule(base: AppContext, deps: { organizations: OrganizationDirectory }) {
  const hooks: IdentityHooks = { userDeactivated: hook() };
  const ctx: IdentityContext = withDeps(base, { ...deps, hooks });
  const service = createIdentityService(ctx);
  const deactivation = createUserDeactivation(ctx, service);
  return {
    name: 'identity',
    service,
    on: hooks,
    routes: (app: Api) => identityRoutes(app, service, deactivation),
  };
}
