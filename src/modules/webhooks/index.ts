import { withDeps, type Api, type AppContext, type Module } from '../../platform/context.js';
import { tripOut, type TripRow } from '../logistics/index.js';
import { fillOrganizationId } from '../../platform/tenant-fields.js';
import type { WebhooksContext } from './context.js';
import { createSubscriptionCache, createWebhookService } from './service/webhooks.js';
import { webhookRoutes } from './routes.js';
import client from 'prom-client';
import {
  createWebhookPruner,
  createWebhookWorker,
  prunerOptions,
  webhookWorkerOptions,
  type PrunerOptions,
  type WebhookWorker,
  type WebhookWorkerOptions,
} from './worker.js';
import { backlog, oldestPendingSeconds } from './repo.js';
import { closeAgents } from './service/sender.js';

export { WEBHOOK_EVENT_TYPES } from './schemas.js';
export { WEBHOOK_SECRET_COLUMNS } from './repo.js';

/**
 * Outbound webhooks. Settings (environment): WEBHOOK_ALLOW_HTTP (default: development only),
 * WEBHOOK_ALLOW_PRIVATE_TARGETS (off), WEBHOOK_TIMEOUT_MS (10000), WEBHOOK_CLAIM_TIMEOUT_MS (60000),
 * WEBHOOK_CONCURRENCY (32), WEBHOOK_PER_SUBSCRIPTION_CONCURRENCY (16), WEBHOOK_RETRY_BASE_MS (30000),
 * WEBHOOK_RETRY_MAX_MS (6 h), WEBHOOK_RETRY_WINDOW_MS (24 h), WEBHOOK_DISABLE_AFTER_MS (24 h),
 * WEBHOOK_WORKER_INTERVAL_MS (500), WEBHOOK_MAX_SUBSCRIPTIONS (25 per organization),
 * WEBHOOK_LOCATION_INTERVAL_MS (30000: at most one trip.location_updated per trip and subscription),
 * WEBHOOK_TEST_PER_MINUTE (20), WEBHOOK_DELIVERY_RETENTION_DAYS (30), WEBHOOK_PRUNE_INTERVAL_MS (600000).
 */
export function createWebhooksModule(base: AppContext, deps: WebhooksContext['deps']) {
  const ctx: WebhooksContext = withDeps(base, deps);
  // Each organization's active subscriptions, as matching an event reads them (the service and the worker announce changes).
  const subscriptions = createSubscriptionCache(ctx);
  const service = createWebhookService(ctx, subscriptions);
  // A trip is sent as GET /trips/:id returns it to the subscription's owner.
  service.registerResource('trip', async (tx, id, viewer, current) => {
    // The trip events of a state change carry the trip as their transaction holds it (TripCore's emitMoved).
    const t = (current as TripRow | undefined) ?? (await ctx.deps.logistics.getTrip(tx, id));
    return t ? { ...tripOut(t, viewer), organization_id: t.organization_id } : null;
  });
  for (const [family, { schema, read }] of Object.entries(ctx.deps.resources)) {
    service.registerResource(family, async (tx, id, viewer, current) => {
      const out = (await read(tx, id, current)) as Record<string, unknown> | null;
      // What the response serializer adds to every resource of a GET (src/platform/tenant-fields.ts).
      if (out) fillOrganizationId(schema, out, viewer.organizationId);
      return out;
    });
  }
  service.assertResources();
  // The outbox rows commit with the event that causes them; a rolled-back event is never sent.
  ctx.events.onRecorded((tx, ev, input) => service.onEvent(tx, ev, input.current));
  // Metrics of this instance's sends (registered in the app's /metrics registry with the routes).
  const latency = new client.Histogram({
    name: 'webhook_delivery_latency_seconds',
    help: 'From the event to its successful delivery (retries included), per delivery',
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800, 3600, 21600, 86400],
    registers: [],
  });
  const attempts = new client.Histogram({
    name: 'webhook_attempt_duration_seconds',
    help: 'One HTTP exchange with a receiver, by outcome (delivered, retry, failed)',
    labelNames: ['outcome'],
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [],
  });
  const onAttempt: WebhookWorkerOptions['onAttempt'] = (a) => {
    attempts.observe({ outcome: a.outcome }, a.durationMs / 1000);
    if (a.deliveredAfterMs !== null) latency.observe(a.deliveredAfterMs / 1000);
  };
  const worker = createWebhookWorker(ctx, subscriptions, webhookWorkerOptions(ctx, { onAttempt }));
  ctx.workers.push(worker);
  const pruner = createWebhookPruner(ctx, prunerOptions(ctx));
  ctx.workers.push(pruner);
  ctx.onClose.push(async () => {
    await worker.idle();
    closeAgents();
  });
  return {
    name: 'webhooks',
    service,
    /** Another worker over the same outbox (tests and the bench: several instances, a controllable clock). */
    newWorker: (overrides: Partial<WebhookWorkerOptions> = {}): WebhookWorker =>
      createWebhookWorker(ctx, subscriptions, webhookWorkerOptions(ctx, { onAttempt, ...overrides })),
    /** Another retention pruner (tests: a controllable clock). */
    newPruner: (overrides: Partial<PrunerOptions> = {}) => createWebhookPruner(ctx, prunerOptions(ctx, overrides)),
    routes: (app: Api) => {
      const metrics = (app as unknown as { metrics?: client.Registry }).metrics;
      if (metrics && !metrics.getSingleMetric('webhook_backlog')) {
        metrics.registerMetric(latency);
        metrics.registerMetric(attempts);
        new client.Gauge({
          name: 'webhook_backlog',
          help: 'Deliveries not yet finished, of every instance, by status (pending: waiting for an attempt; sending: being sent)',
          labelNames: ['status'],
          registers: [metrics],
          async collect() {
            const counts = await ctx.db.withSystem((tx) => backlog(tx));
            for (const status of ['pending', 'sending']) this.set({ status }, counts[status] ?? 0);
          },
        });
        new client.Gauge({
          name: 'webhook_backlog_oldest_seconds',
          help: 'Age of the oldest unfinished delivery (0 when none): how far the receivers lag behind',
          registers: [metrics],
          async collect() {
            this.set(await ctx.db.withSystem((tx) => oldestPendingSeconds(tx)));
          },
        });
      }
      webhookRoutes(app, ctx, service);
    },
  } satisfies Module & Record<string, unknown>;
}
