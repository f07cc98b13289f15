import type { ModuleContext } from '../../platform/context.js';
import type { Tx } from '../../platform/db/index.js';

/** What integrations uses of other modules, given by the composition root. */
export type IntegrationsContext = ModuleContext<{
  /** The organization of the transaction's tenant, if it exists (organizations): a callback names its organization. */
  organizations: { branding(tx: Tx): Promise<{ id: string } | undefined> };
}>;
