import type { ModuleContext } from '../../platform/context.js';
import type { ObjectLinker } from '../storage/index.js';
import type { IdentityService } from '../identity/index.js';
import type { LogisticsApi } from '../logistics/index.js';

/** What documents uses of others: whether a subject exists (identity, logistics) and storage links. */
export type DocumentsContext = ModuleContext<{ identity: IdentityService; logistics: LogisticsApi; storage: ObjectLinker }>;
