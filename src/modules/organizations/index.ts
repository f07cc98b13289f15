import { withDeps, type Api, type AppContext, type ModuleContext } from '../../platform/context.js';
import type { ObjectLinker, ObjectReadGrant } from '../../platform/storage-links.js';
import type { IdentityService } from '../identity/index.js';
import { createOrganizationService } from './service.js';
import { organizationRoutes } from './routes.js';

export type { OrganizationService } from './service.js';

export type OrganizationsContext = ModuleContext<{ identity: IdentityService; storage: ObjectLinker }>;

export function createOrganizationsModule(ctx: AppContext, deps: OrganizationsContext['deps']) {
  const mctx: OrganizationsContext = withDeps(ctx, deps);
  const service = createOrganizationService(mctx);
  // The organization's logo is shown to everyone in it (the mobile brand assets advertise it).
  const logoReadGrant: ObjectReadGrant = async (tx, _actor, o) => {
    if (o.purpose !== 'avatar' && o.purpose !== 'other') return false;
    const { rowCount } = await tx.query('SELECT 1 FROM organization WHERE logo_object_id = $1', [o.id]);
    return rowCount > 0;
  };
  ctx.dashboard.set('operator', async (tx) => {
    const { rows } = await tx.query<{ status: string }>('SELECT status FROM operator');
    const users = await tx.query<{ role: string; n: number }>('SELECT role, count(*)::int AS n FROM users WHERE active GROUP BY role');
    return { operator_status: rows[0]?.status ?? null, users_by_role: Object.fromEntries(users.rows.map((r) => [r.role, r.n])) };
  });
  return { name: 'organizations', service, logoReadGrant, routes: (app: Api) => organizationRoutes(app, mctx, service) };
}
