import type { Api, AppContext } from '../../platform/context.js';
import type { ChatContext } from './context.js';
import { createChatService } from './service/chat.js';
import { chatRoutes } from './routes.js';
import { outboxBacklog } from './repo.js';
import { scopeOf } from '../../platform/scope.js';
import { chatOutboxOptions, createChatOutboxWorker } from './worker.js';

export type { OrderMessageInput, StatusMessageInput } from './service/chat.js';
export type { MerchantOfUser } from './context.js';
export { CHAT_TOKEN_COLUMN } from './repo.js';
export type { ChatSender, ChatMessage, ChatSendResult } from './service/sender.js';

export type { ChatService } from './service/chat.js';

/**
 * Settings (environment): CHAT_CLOUD_API_URL (base URL of the chat cloud API; unset = cloud_api rows wait),
 * CHAT_SEND_TIMEOUT_MS (10000), CHAT_OUTBOX_CLAIM_TIMEOUT_MS (60000), CHAT_OUTBOX_MAX_ATTEMPTS (8),
 * CHAT_OUTBOX_RETRY_BASE_MS (10000), CHAT_OUTBOX_RETRY_MAX_MS (3600000), CHAT_OUTBOX_UNCONFIGURED_RETRY_MS (300000),
 * CHAT_OUTBOX_BATCH_SIZE (20). The channel token of a merchant is stored encrypted (`chat_token`, set by the merchant or an
 * administrator), or, the legacy way, is the secret `CHAT_SECRET_<ORGANIZATION_ID>_<MERCHANT_ID>` that the merchant references as `env:` + that name.
 */
export function createChatModule(ctx: AppContext, deps: ChatContext['deps']) {
  /**
   * Chat order mirror for commerce, each in the caller's transaction: `enqueueOrderCreated(tx, input)`,
   * `enqueueStatusChanged(tx, input)`, `cancelPendingForOrder(tx, orderId)`, `cancelPendingForExpressRequest(tx, id)`.
   */
  const service = createChatService(ctx, deps);
  ctx.workers.push(createChatOutboxWorker(ctx, chatOutboxOptions(ctx)));
  // Outbox backlog per status; sub-administrators count only the messages of their territories.
  ctx.dashboard.set('chat_outbox', async (tx, actor) => {
    const rows = await outboxBacklog(tx, scopeOf(actor));
    const oldest =
      rows
        .map((r) => r.oldest)
        .filter((d): d is Date => d !== null)
        .sort((a, b) => a.getTime() - b.getTime())[0] ?? null;
    return { by_status: Object.fromEntries(rows.map((r) => [r.status, r.n])), oldest_undelivered_at: oldest?.toISOString() ?? null };
  });
  return { name: 'chat', service, routes: (app: Api) => chatRoutes(app, ctx, service) };
}
