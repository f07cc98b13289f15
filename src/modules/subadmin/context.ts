import type { ModuleContext } from '../../platform/context.js';
import type { ObjectLinker } from '../storage/index.js';
import type { CommerceViews } from '../commerce/index.js';
import type { IdentityService } from '../identity/index.js';
import type { LogisticsApi } from '../logistics/index.js';
import type { MoneyApi } from '../money/index.js';
import type { ScopeLoader } from './service/scope.js';

export type SubadminContext = ModuleContext<{
  logistics: LogisticsApi;
  identity: IdentityService;
  money: MoneyApi;
  commerceViews: CommerceViews;
  storage: ObjectLinker;
  /** The scope loader the auth hook calls for every sub-administrator request (built by the composition root first). */
  scope: ScopeLoader;
}>;
