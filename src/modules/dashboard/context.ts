import type { ModuleContext } from '../../platform/context.js';
import type { LogisticsApi } from '../logistics/index.js';

/** What the dashboard uses of other modules: logistics' on-time report (the sections come from the modules' own contributors). */
export type DashboardContext = ModuleContext<{ logistics: Pick<LogisticsApi, 'onTimeReport'> }>;
