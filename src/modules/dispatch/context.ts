import type { ModuleContext } from '../../platform/context.js';
import type { LogisticsApi } from '../logistics/index.js';

/** What dispatch uses of other modules: logistics' trips, drivers and settings to plan over, and its assignment to commit. */
export type DispatchContext = ModuleContext<{ logistics: LogisticsApi }>;
