import { withDeps, type Api, type AppContext } from '../../platform/context.js';
import type { MessagesContext } from './context.js';
import { messageRoutes } from './routes.js';
import { createMessagesService } from './service/messages.js';

export type { MessagesService } from './service/messages.js';
export { LANGUAGES, type Language } from './schemas.js';

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
