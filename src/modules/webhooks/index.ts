import { withDeps, type Api, type AppContext, type Module, type ModuleContext } from '../../platform/context.js';
import type { LogisticsApi } from '../logistics/index.js';
import type { NotificationService } from '../notifications/index.js';
import { tripOut } from '../logistics/model.js';
import { createWebhookService } from './service.js';
import { webhookRoutes } from './routes.js';
import { createWebhookWorker, webhookWorkerOptions, type WebhookWorker, type WebhookWorkerOptions } from './worker.js';
import { closeAgents } from './sender.js';

export { WEBHOOK_EVENT_TYPES } from './service.js';

/** What webhooks uses of other modules, given by the composition root. */
export type WebhooksContext = ModuleContext<{
  /** The trip as GET /trips/:id returns it (logistics). */
  logistics: Pick<LogisticsApi, 'getTrip' | 'merchantOfUser'>;
  /** The owner of a disabled subscription is told (notifications). */
  notifications: Pick<NotificationService, 'notifyIn'>;
}>;

/**
 * Outbound webhooks (issue 23). Settings (environment): WEBHOOK_ALLOW_HTTP (default: development only),
 * WEBHOOK_ALLOW_PRIVATE_TARGETS (off), WEBHOOK_TIMEOUT_MS (10000), WEBHOOK_CLAIM_TIMEOUT_MS (60000),
 * WEBHOOK_CONCURRENCY (16), WEBHOOK_PER_SUBSCRIPTION_CONCURRENCY (4), WEBHOOK_RETRY_BASE_MS (30000),
 * WEBHOOK_RETRY_MAX_MS (6 h), WEBHOOK_RETRY_WINDOW_MS (24 h), WEBHOOK_DISABLE_AFTER_MS (24 h),
 * WEBHOOK_WORKER_INTERVAL_MS (500), WEBHOOK_MAX_SUBSCRIPTIONS (25 per organization),
 * WEBHOOK_LOCATION_INTERVAL_MS (30000: at most one trip.location_updated per trip and subscription),
 * WEBHOOK_TEST_PER_MINUTE (20).
 */
export function createWebhooksModule(base: AppContext, deps: WebhooksContext['deps']) {
  const ctx: WebhooksContext = withDeps(base, deps);
  const service = createWebhookService(ctx);
  // A trip is sent as GET /trips/:id returns it to the subscription's owner.
  service.registerResource('trip', async (tx, id, viewer) => {
    const t = await ctx.deps.logistics.getTrip(tx, id);
    return t ? { ...tripOut(t, viewer), organization_id: t.organization_id } : null;
  });
  // The outbox rows commit with the event that causes them; a rolled-back event is never sent.
  ctx.events.onRecorded((tx, ev) => service.onEvent(tx, ev));
  const worker = createWebhookWorker(ctx, webhookWorkerOptions(ctx));
  ctx.workers.push(worker);
  ctx.onClose.push(async () => {
    await worker.idle();
    closeAgents();
  });
  return {
    name: 'webhooks',
    service,
    /** Another worker over the same outbox (tests and the bench: several instances, a controllable clock). */
    newWorker: (overrides: Partial<WebhookWorkerOptions> = {}): WebhookWorker => createWebhookWorker(ctx, webhookWorkerOptions(ctx, overrides)),
    routes: (app: Api) => webhookRoutes(app, ctx, service),
  } satisfies Module & Record<string, unknown>;
}
