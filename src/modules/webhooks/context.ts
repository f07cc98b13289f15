import type { TSchema } from '@sinclair/typebox';
import type { SubadminScope } from '../../platform/auth.js';
import type { ModuleContext } from '../../platform/context.js';
import type { Tx } from '../../platform/db/index.js';
import type { LogisticsApi } from '../logistics/index.js';
import type { NotificationService } from '../notifications/index.js';

/** What webhooks uses of other modules, given by the composition root. */
export type WebhooksContext = ModuleContext<{
  /** The trip as GET /trips/:id returns it (logistics). */
  logistics: Pick<LogisticsApi, 'getTrip' | 'merchantOfUser'>;
  /** The owner of a disabled subscription is told (notifications). */
  notifications: Pick<NotificationService, 'notifyIn'>;
  /** A sub-administrator's effective scope now (territories, permissions), for the subscriptions he owns (subadmin). */
  subadminScope: (tx: Tx, organizationId: string, userId: string) => Promise<SubadminScope | null>;
  /**
   * The other resource families as their GETs return them (the mapper's output and the response schema): orders
   * (commerce), payment reviews and settlements (money). `current`: the entity the event carries (EventInput.current),
   * rendered instead of read when given.
   */
  resources: Record<string, { schema: TSchema; read: (tx: Tx, id: string, current?: unknown) => Promise<object | null> }>;
}>;
