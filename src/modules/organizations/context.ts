import type { ModuleContext } from '../../platform/context.js';
import type { Tx } from '../../platform/db/index.js';
import type { ObjectLinker } from '../storage/index.js';
import type { TerritoryScope } from '../../platform/scope.js';
import type { IdentityService } from '../identity/index.js';

/**
 * Whether amounts in the organization currency exist in a later module (commerce: catalog items and orders,
 * logistics: trips), for the one-currency rule. Both are built after organizations: forward references.
 */
export interface CurrencyUse {
  catalogInUse(tx: Tx): Promise<boolean>;
  orderStatusCounts(tx: Tx, territoryIds: TerritoryScope): Promise<Record<string, number>>;
}
export interface TripCounts {
  tripStatusCounts(tx: Tx, territoryIds: TerritoryScope): Promise<Record<string, number>>;
}

export type OrganizationsContext = ModuleContext<{
  identity: Pick<IdentityService, 'insertUser' | 'rateLimit' | 'activeUsersByRole'>;
  storage: ObjectLinker;
  logistics: TripCounts;
  commerceViews: CurrencyUse;
}>;
