import { sql } from 'drizzle-orm';
import { bigint, boolean, check, foreignKey, index, integer, jsonb, pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core';
import { sqlList } from '../../platform/tables.js';
import { organization } from '../organizations/tables.js';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

export const SUBSCRIPTION_SCOPES = ['organization', 'dispatch', 'territories', 'merchant'] as const;
export const DELIVERY_STATUSES = ['pending', 'sending', 'delivered', 'failed', 'cancelled'] as const;
export const ATTEMPT_OUTCOMES = ['delivered', 'retry', 'failed'] as const;
export type AttemptOutcome = (typeof ATTEMPT_OUTCOMES)[number];

/**
 * An outbound webhook subscription, confined to the scope of the user who created it (its owner):
 * `organization` (an administrator): every event of the organization; `dispatch` (a dispatcher): the trip and order
 * events of the organization; `territories` (a sub-administrator): the trip and order events (payment reviews with
 * `payments_review_view`) of the territories he holds when the event happens; `merchant` (a merchant user): only
 * the events of that merchant's records.
 * `secret` signs every delivery; after a rotation `previous_secret` signs too until `previous_secret_expires_at`.
 * Both are stored encrypted (`src/platform/secrets.ts`, bound to the subscription) and never returned by the API.
 */
export const webhookSubscription = pgTable(
  'webhook_subscription',
  {
    organizationId: text('organization_id').notNull(),
    id: text('id').notNull(),
    scope: text('scope', { enum: SUBSCRIPTION_SCOPES }).notNull(),
    /** Who owns it (is notified when it is disabled); for the merchant scope, the merchant's owner user. */
    ownerUserId: text('owner_user_id').notNull(),
    merchantId: text('merchant_id'),
    url: text('url').notNull(),
    description: text('description'),
    /** Event names, or `*` (every event but `trip.location_updated`, which is opt-in). */
    eventTypes: text('event_types').array().notNull(),
    secret: text('secret').notNull(),
    /** When the current secret was set (created, rotated or replaced). */
    secretSetAt: ts('secret_set_at').notNull().defaultNow(),
    previousSecret: text('previous_secret'),
    previousSecretExpiresAt: ts('previous_secret_expires_at'),
    active: boolean('active').notNull().default(true),
    /** Since when every attempt failed (null after a success); a day of failures disables the subscription. */
    failingSince: ts('failing_since'),
    disabledAt: ts('disabled_at'),
    disabledReason: text('disabled_reason'),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.id] }),
    foreignKey({ columns: [t.organizationId], foreignColumns: [organization.id] }),
    check('webhook_subscription_scope_ck', sql`scope IN ${sqlList(SUBSCRIPTION_SCOPES)}`),
    check('webhook_subscription_merchant_ck', sql`(scope = 'merchant') = (merchant_id IS NOT NULL)`),
    index('webhook_subscription_active_idx')
      .on(t.organizationId)
      .where(sql`active`),
  ],
);

/**
 * One POST of one event to one subscription (the outbox): written in the transaction of the event, delivered
 * by the webhook worker after commit. pending -> sending (claimed) -> delivered | failed, or back to pending with
 * a later next_attempt_at; pending -> cancelled when the subscription is disabled. Within a subscription, the
 * deliveries of one resource (`resource_key`) go out in `event_seq` order.
 */
export const webhookDelivery = pgTable(
  'webhook_delivery',
  {
    organizationId: text('organization_id').notNull(),
    id: text('id').notNull(),
    subscriptionId: text('subscription_id').notNull(),
    eventId: text('event_id').notNull(),
    eventSeq: bigint('event_seq', { mode: 'number' }),
    eventType: text('event_type').notNull(),
    /** `<entity_type>:<entity_id>` for ordered deliveries; null for test events and manual redeliveries. */
    resourceKey: text('resource_key'),
    body: jsonb('body').notNull(),
    status: text('status', { enum: DELIVERY_STATUSES }).notNull().default('pending'),
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAt: ts('next_attempt_at').notNull().defaultNow(),
    claimToken: text('claim_token'),
    claimExpiresAt: ts('claim_expires_at'),
    lastStatusCode: integer('last_status_code'),
    lastError: text('last_error'),
    deliveredAt: ts('delivered_at'),
    redeliveryOf: text('redelivery_of'),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.id] }),
    foreignKey({
      columns: [t.organizationId, t.subscriptionId],
      foreignColumns: [webhookSubscription.organizationId, webhookSubscription.id],
    }).onDelete('cascade'),
    check('webhook_delivery_status_ck', sql`status IN ${sqlList(DELIVERY_STATUSES)}`),
    index('webhook_delivery_subscription_idx').on(t.organizationId, t.subscriptionId, t.id),
    // The worker's queue, and the ordering check (an earlier undelivered event of the same resource).
    index('webhook_delivery_due_idx')
      .on(t.nextAttemptAt)
      .where(sql`status IN ('pending', 'sending')`),
    index('webhook_delivery_sending_idx')
      .on(t.organizationId, t.subscriptionId)
      .where(sql`status = 'sending'`),
    index('webhook_delivery_resource_idx')
      .on(t.organizationId, t.subscriptionId, t.resourceKey, t.eventSeq)
      .where(sql`status IN ('pending', 'sending')`),
    // The retention pruner's scan: finished deliveries, oldest first.
    index('webhook_delivery_finished_idx')
      .on(t.updatedAt)
      .where(sql`status IN ('delivered', 'failed', 'cancelled')`),
  ],
);

/** The delivery log: one row per attempt (HTTP status, latency, an excerpt of the response). */
export const webhookAttempt = pgTable(
  'webhook_attempt',
  {
    organizationId: text('organization_id').notNull(),
    id: text('id').notNull(),
    deliveryId: text('delivery_id').notNull(),
    subscriptionId: text('subscription_id').notNull(),
    attempt: integer('attempt').notNull(),
    url: text('url').notNull(),
    startedAt: ts('started_at').notNull(),
    durationMs: integer('duration_ms').notNull(),
    statusCode: integer('status_code'),
    error: text('error'),
    responseExcerpt: text('response_excerpt'),
    outcome: text('outcome', { enum: ATTEMPT_OUTCOMES }).notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.id] }),
    foreignKey({
      columns: [t.organizationId, t.deliveryId],
      foreignColumns: [webhookDelivery.organizationId, webhookDelivery.id],
    }).onDelete('cascade'),
    check('webhook_attempt_outcome_ck', sql`outcome IN ${sqlList(ATTEMPT_OUTCOMES)}`),
    index('webhook_attempt_delivery_idx').on(t.organizationId, t.deliveryId, t.attempt),
  ],
);
