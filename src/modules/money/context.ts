import type { ModuleContext } from '../../platform/context.js';
import type { OrderPayments } from '../commerce/index.js';
import type { ObjectLinker } from '../storage/index.js';
import type { LogisticsApi } from '../logistics/index.js';
import type { OrganizationService } from '../organizations/index.js';

/** What money uses of others: merchants, drivers and trips (logistics), order facts (commerce), storage links, settings. */
export type MoneyContext = ModuleContext<{
  logistics: LogisticsApi;
  orders: OrderPayments;
  storage: ObjectLinker;
  organizations: Pick<OrganizationService, 'settingsIn'>;
}>;
