import type { Actor } from '../../platform/auth.js';
import type { ModuleContext } from '../../platform/context.js';
import type { Tx } from '../../platform/db/index.js';
import type { Hook } from '../../platform/hooks.js';

/**
 * What identity uses of the organizations module. Organizations is built after identity (its onboarding creates
 * users), so the composition root hands this over as a forward reference.
 */
export interface OrganizationDirectory {
  /** The default phone countries organizations use, across organizations (to read a typed phone at login). */
  phoneCountriesInUse(tx: Tx): Promise<string[]>;
  /** Organization names by id, of the organizations visible in the transaction. */
  organizationNames(tx: Tx, ids: readonly string[]): Promise<Map<string, string>>;
}

/** The hooks identity fires, each in the transaction of the change. */
export interface IdentityHooks {
  /** A user was deactivated (after his sessions were revoked): other modules react (logistics: driver off duty). */
  userDeactivated: Hook<[tx: Tx, actor: Actor, userId: string]>;
}

export type IdentityContext = ModuleContext<{ organizations: OrganizationDirectory; hooks: IdentityHooks }>;
