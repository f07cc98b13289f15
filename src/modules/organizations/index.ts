import type { Module } from '../../platform/context.js';
import { registerObjectReadGrant } from '../../platform/storage-links.js';
import { createOrganizationService, type OrganizationService } from './service.js';
import { organizationRoutes } from './routes.js';

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
      const { rowCount } = await tx.query('SELECT 1 FROM organization WHERE logo_object_id = $1', [o.id]);
      return rowCount > 0;
    });
    ctx.dashboard.set('operator', async (tx) => {
      const { rows } = await tx.query<{ status: string }>('SELECT status FROM operator');
      const users = await tx.query<{ role: string; n: number }>('SELECT role, count(*)::int AS n FROM users WHERE active GROUP BY role');
      return { operator_status: rows[0]?.status ?? null, users_by_role: Object.fromEntries(users.rows.map((r) => [r.role, r.n])) };
    });
  },
  routes: organizationRoutes,
};
