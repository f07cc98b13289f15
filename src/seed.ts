import type { FastifyInstance } from 'fastify';
import type { DemoSeed } from './platform/context.js';
import { anyOrganizationExists, lockSeed } from './platform/repo.js';

export const DEMO_PASSWORD = 'Demo-pass-2026';
export const DEMO_LOGINS = {
  platform: 'platform@demo.test',
  admin: 'admin@demo.test',
  dispatch: 'dispatch@demo.test',
  merchant: 'merchant@demo.test',
  customer: 'customer@demo.test',
  driver: 'driver@demo.test',
} as const;

/** Held (transaction-scoped) while one instance seeds: instances starting together on one empty database take turns. */
const SEED_LOCK = 7270002;

/**
 * On an empty database: a platform operator organization and an approved demo organization with one
 * user per role (published password: only on the embedded default or with SEED_DEMO=true). Safe when
 * several instances start at once: the emptiness check and the creation run in one transaction under
 * an advisory lock, so exactly one instance seeds and the others find the database not empty.
 */
export async function seedDemo(app: FastifyInstance): Promise<DemoSeed | null> {
  const { ctx } = app;
  const orgs = app.services.organizations;
  const identity = app.services.identity;
  const demo = await ctx.db.withSystem(async (tx) => {
    await lockSeed(tx, SEED_LOCK);
    if (await anyOrganizationExists(tx)) return null;
    const platform = await orgs.createOrganization(
      tx,
      {
        organization_name: 'Platform Operations',
        slug: 'platform',
        admin: { email: 'platform-owner@demo.test', password: DEMO_PASSWORD, display_name: 'Platform owner' },
      },
      'approved',
    );
    await identity.insertUser(tx, platform.organization_id, {
      email: DEMO_LOGINS.platform,
      password: DEMO_PASSWORD,
      display_name: 'Platform operator',
      role: 'administrator',
      platform_admin: true,
    });
    const org = await orgs.createOrganization(
      tx,
      {
        organization_name: 'Demo Logistics',
        slug: 'demo',
        country: 'BO',
        admin: { email: DEMO_LOGINS.admin, password: DEMO_PASSWORD, display_name: 'Demo administrator' },
      },
      'approved',
    );
    const id = org.organization_id;
    const mk = (
      email: string,
      role: 'administrator' | 'comercio' | 'delivery' | 'repartidor',
      name: string,
      extra: { dispatch?: boolean } = {},
    ) => identity.insertUser(tx, id, { email, password: DEMO_PASSWORD, display_name: name, role, ...extra }).then((u) => u.id);
    return {
      organizationId: id,
      password: DEMO_PASSWORD,
      users: {
        admin: org.admin_user_id,
        dispatch: await mk(DEMO_LOGINS.dispatch, 'administrator', 'Demo dispatcher', { dispatch: true }),
        merchant: await mk(DEMO_LOGINS.merchant, 'comercio', 'Demo merchant'),
        customer: await mk(DEMO_LOGINS.customer, 'delivery', 'Demo customer'),
        driver: await mk(DEMO_LOGINS.driver, 'repartidor', 'Demo driver'),
      },
    } satisfies DemoSeed;
  });
  if (!demo) return null;
  for (const m of app.modules) await m.seed?.(demo);
  return demo;
}
