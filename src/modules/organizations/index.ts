import { withDeps, type Api, type AppContext, type ModuleContext } from '../../platform/context.js';
import type { ObjectLinker, ObjectReadGrant } from '../../platform/storage-links.js';
import type { IdentityService } from '../identity/index.js';
import type { LogisticsApi } from '../logistics/index.js';
import type { CommerceViews } from '../commerce/index.js';
import { createOrganizationService } from './service.js';
import { organizationRoutes } from './routes.js';
import { isOrganizationLogo, ownOperatorStatus } from './repo.js';

export type { OrganizationService } from './service.js';

export type OrganizationsContext = ModuleContext<{
  identity: IdentityService;
  storage: ObjectLinker;
  /** Whether trips exist (logistics, built later: a forward reference), for the one-currency rule. */
  logistics: Pick<LogisticsApi, 'tripStatusCounts'>;
  /** Whether orders exist (commerce, built later: a forward reference), for the one-currency rule. */
  commerceViews: Pick<CommerceViews, 'orderStatusCounts'>;
}>;

export function createOrganizationsModule(ctx: AppContext, deps: OrganizationsContext['deps']) {
  const mctx: OrganizationsContext = withDeps(ctx, deps);
  const service = createOrganizationService(mctx);
  // The organization's logo is shown to everyone in it (the mobile brand assets advertise it).
  const logoReadGrant: ObjectReadGrant = async (tx, _actor, o) => {
    if (o.purpose !== 'avatar' && o.purpose !== 'other') return false;
    return isOrganizationLogo(tx, o.id);
  };
  ctx.dashboard.set('operator', async (tx) => ({
    operator_status: await ownOperatorStatus(tx),
    users_by_role: await deps.identity.activeUsersByRole(tx),
  }));
  return { name: 'organizations', service, logoReadGrant, routes: (app: Api) => organizationRoutes(app, mctx, service) };
}
