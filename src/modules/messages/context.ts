import type { ModuleContext } from '../../platform/context.js';
import type { ChatService } from '../chat/index.js';
import type { LogisticsApi } from '../logistics/index.js';
import type { NotificationService } from '../notifications/index.js';
import type { IdentityService } from '../identity/index.js';
import type { OrganizationService } from '../organizations/index.js';

/** What recipient messages use of other modules, given by the composition root. */
export type MessagesContext = ModuleContext<{
  logistics: Pick<LogisticsApi, 'getTrip' | 'getMerchant' | 'recipientContact' | 'resolveRecipientToken'>;
  chat: Pick<ChatService, 'enqueueRecipientMessage'>;
  notifications: Pick<NotificationService, 'notifyIn'>;
  organizations: Pick<OrganizationService, 'branding' | 'settingsIn'>;
  /** A customer's phone: his messages follow that phone's preference (opt-out, language) as a recipient's do. */
  identity: Pick<IdentityService, 'userPhone'>;
}>;
