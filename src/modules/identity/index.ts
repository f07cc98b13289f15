import type { Actor } from '../../platform/auth.js';
import { withDeps, type AppContext, type ModuleContext } from '../../platform/context.js';
import type { Tx } from '../../platform/db/index.js';
import { hook, type Hook } from '../../platform/hooks.js';
import { createIdentityService, type IdentityService } from './service.js';
import { identityRoutes } from './routes.js';
import { userLifecycleRoutes } from './lifecycle.js';

export type { IdentityService } from './service.js';

/** What identity's routes see: its own service and the hooks it fires. */
export type IdentityContext = ModuleContext<{ identity: IdentityService; userDeactivated: Hook<[Tx, Actor, string]> }>;

export function createIdentityModule(ctx: AppContext) {
  const identity = createIdentityService(ctx);
  /** Fired in the transaction that deactivates a user (after its sessions are revoked): other modules react (logistics: driver off duty). */
  const userDeactivated = hook<[tx: Tx, actor: Actor, userId: string]>();
  const mctx: IdentityContext = withDeps(ctx, { identity, userDeactivated });
  return {
    name: 'identity',
    service: identity,
    on: { userDeactivated },
    routes(app: Parameters<typeof identityRoutes>[0]) {
      identityRoutes(app, mctx);
      userLifecycleRoutes(app, mctx);
    },
  };
}
