import type { Module } from '../platform/context.js';
import { identityModule } from './identity/index.js';
import { organizationsModule } from './organizations/index.js';
import { documentsModule } from './documents/index.js';
import { auditModule } from './audit/index.js';
import { dashboardModule } from './dashboard/index.js';
import { logisticsModule } from './logistics/index.js';
import { commerceModule } from './commerce/index.js';

/** Every module, in dependency order (a module's init may use the services of those before it). */
export const modules: Module[] = [identityModule, organizationsModule, documentsModule, auditModule, dashboardModule, logisticsModule, commerceModule];
