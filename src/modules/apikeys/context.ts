import type { ModuleContext } from '../../platform/context.js';
import type { IdentityService } from '../identity/index.js';

/** What API keys use of other modules, given by the composition root. */
export type ApiKeysContext = ModuleContext<{
  /** A key acts as its owner now: his principal and whether he is active (identity). */
  identity: Pick<IdentityService, 'principalOfUser'>;
}>;
