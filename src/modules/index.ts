import type { Module } from '../platform/context.js';
import { identityModule } from './identity/index.js';
import { organizationsModule } from './organizations/index.js';
import { storageModule } from './storage/index.js';
import { documentsModule } from './documents/index.js';
import { auditModule } from './audit/index.js';
import { dashboardModule } from './dashboard/index.js';
import { logisticsModule } from './logistics/index.js';
import { dispatchModule } from './dispatch/index.js';
import { commerceModule } from './commerce/index.js';
import { moneyModule } from './money/index.js';
import { integrationsModule } from './integrations/index.js';
import { chatModule } from './chat/index.js';
import { notificationsModule } from './notifications/index.js';
import { mobileModule } from './mobile/index.js';
import { realtimeModule } from './realtime/index.js';
import { subadminModule } from './subadmin/index.js';
import { webhooksModule } from './webhooks/index.js';

/** Every module, in dependency order (a module's init may use the services of those before it). */
export const modules: Module[] = [
  identityModule,
  organizationsModule,
  storageModule,
  documentsModule,
  auditModule,
  dashboardModule,
  logisticsModule,
  dispatchModule,
  commerceModule,
  moneyModule,
  integrationsModule,
  chatModule,
  notificationsModule,
  mobileModule,
  realtimeModule,
  subadminModule,
  webhooksModule,
];
