import { withDeps, type Api, type AppContext } from '../../platform/context.js';
import type { ObjectReadGrant } from '../storage/index.js';
import type { OrganizationDirectory } from '../identity/index.js';
import type { OrganizationsContext } from './context.js';
import { isOrganizationLogo, organizationNames, ownOperatorStatus, phoneCountriesInUse } from './repo.js';
import { organizationRoutes } from './routes.js';
import { createOrganizationService } from './service.js';

export type { OrganizationService, OperatorStatus } from './service.js';
export { OPERATOR_TRANSITIONS, ORGANIZATION_SETTINGS_CHANGED } from './service.js';
export { OperatorOut } from './schemas.js';
export type { CurrencyUse, TripCounts } from './context.js';

export function createOrganizationsModule(ctx: AppContext, deps: OrganizationsContext['deps']) {
  const mctx: OrganizationsContext = withDeps(ctx, deps);
  const service = createOrganizationService(mctx);
  /** Organization names and phone countries, for identity (login, GET /me). */
  const directory: OrganizationDirectory = { phoneCountriesInUse, organizationNames };
  // The organization's logo is shown to everyone in it (the mobile brand assets advertise it).
  const logoReadGrant: ObjectReadGrant = async (tx, _actor, o) => {
    if (o.purpose !== 'avatar' && o.purpose !== 'other') return false;
    return isOrganizationLogo(tx, o.id);
  };
  ctx.dashboard.set('operator', async (tx) => ({
    operator_status: await ownOperatorStatus(tx),
    users_by_role: await deps.identity.activeUsersByRole(tx),
  }));
  return { name: 'organizations', service, directory, logoReadGrant, routes: (app: Api) => organizationRoutes(app, service) };
}
