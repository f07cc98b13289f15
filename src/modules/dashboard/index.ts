import { Type } from '@sinclair/typebox';
import { actorOf } from '../../platform/auth.js';
import type { AppContext, Module } from '../../platform/context.js';

/**
 * GET /dashboard: one section per module (counts per state), computed in one tenant transaction.
 * Each contributor filters by `actor.subadmin.territoryIds` for sub-administrators.
 */
export const createDashboardModule = (ctx: AppContext): Module => ({
  name: 'dashboard',
  routes(app) {
    app.get(
      '/dashboard',
      {
        config: { auth: { roles: ['administrator', 'dispatch', 'subadmin'] } },
        schema: {
          operationId: 'getDashboard',
          tags: ['dashboard'],
          response: {
            200: Type.Object({
              generated_at: Type.String({ format: 'date-time' }),
              scope: Type.Union([Type.Literal('organization'), Type.Literal('territories')]),
              sections: Type.Object({}, { additionalProperties: true }),
            }),
          },
        },
      },
      async (req) => {
        const actor = actorOf(req);
        const sections = await ctx.db.withTenant(actor, async (tx) => {
          const out: Record<string, unknown> = {};
          for (const [name, contribute] of ctx.dashboard) out[name] = await contribute(tx, actor);
          return out;
        });
        return { generated_at: new Date().toISOString(), scope: actor.subadmin ? ('territories' as const) : ('organization' as const), sections };
      },
    );
  },
});
