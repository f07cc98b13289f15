import type { Module } from '../../platform/context.js';
import { registerObjectReadGrant } from '../../platform/storage-links.js';
import { createOrganizationService, type OrganizationService } from './service.js';
import { organizationRoutes } from './routes.js';
import { isOrganizationLogo, ownOperatorStatus } from './repo.js';

declare module '../../platform/context.js' {
  interface ServiceRegistry {
    organizations: OrganizationService;
  }
}

export const organizationsModule: Module = {
  name: 'organizations',
  init(ctx) {
    ctx.services.organizations = createOrganizationService(ctx);
    // The organization's logo is shown to everyone in it (the mobile brand assets advertise it).
    registerObjectReadGrant(ctx, async (tx, _actor, o) => {
      if (o.purpose !== 'avatar' && o.purpose !== 'other') return false;
      return isOrganizationLogo(tx, o.id);
    });
    ctx.dashboard.set('operator', async (tx) => {
      return { operator_status: await ownOperatorStatus(tx), users_by_role: await ctx.services.identity.activeUsersByRole(tx) };
    });
  },
  routes: organizationRoutes,
};
