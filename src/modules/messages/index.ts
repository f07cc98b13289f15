import { withDeps, type Api, type AppContext, type ModuleContext } from '../../platform/context.js';
import type { ChatService } from '../chat/index.js';
import type { LogisticsApi } from '../logistics/index.js';
import type { NotificationService } from '../notifications/index.js';
import type { IdentityService } from '../identity/index.js';
import type { OrganizationService } from '../organizations/index.js';
import { messageRoutes } from './routes.js';
import { createMessagesService } from './service.js';

export type { MessagesService } from './service.js';

/** What recipient messages use of other modules, given by the composition root. */
export type MessagesContext = ModuleContext<{
  logistics: Pick<LogisticsApi, 'getTrip' | 'getMerchant' | 'recipientContact' | 'resolveRecipientToken'>;
  chat: Pick<ChatService, 'enqueueRecipientMessage'>;
  notifications: Pick<NotificationService, 'notifyIn'>;
  organizations: Pick<OrganizationService, 'branding' | 'settingsIn'>;
  /** A customer's phone: his messages follow that phone's preference (opt-out, language) as a recipient's do. */
  identity: Pick<IdentityService, 'userPhone'>;
}>;

/**
 * Recipient messages: what a trip's recipient is told (order confirmed, driver assigned, arriving soon, delivered,
 * failed), in his language, through the chat outbox or push; templates per organization; opt-out per phone. The
 * composition root subscribes `service.onEvent` (recorded events), `service.linkIssued` and `service.etaUpdated`
 * (logistics hooks).
 */
export function createMessagesModule(base: AppContext, deps: MessagesContext['deps']) {
  const ctx: MessagesContext = withDeps(base, deps);
  const service = createMessagesService(ctx);
  return { name: 'recipient-messages', service, routes: (app: Api) => messageRoutes(app, ctx, service) };
}
