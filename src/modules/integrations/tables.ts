import { foreignKey, index, jsonb, pgTable, primaryKey, text, timestamp, unique } from 'drizzle-orm/pg-core';
import { organization } from '../organizations/tables.js';

export const RECEIPT_STATUSES = ['received', 'ignored', 'processed'] as const;

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

/**
 * Verified inbound connector callbacks. Stored once per (connector, event id) of an organization;
 * while the connectors are not active they are acknowledged and kept (`status` = `ignored`), never applied.
 */
export const integrationWebhookEvent = pgTable(
  'integration_webhook_event',
  {
    organizationId: text('organization_id').notNull(),
    id: text('id').notNull(),
    connector: text('connector', { enum: ['partner-pay', 'partner-chef-pay'] }).notNull(),
    eventId: text('event_id').notNull(),
    eventType: text('event_type'),
    payload: jsonb('payload').notNull(),
    bodySha256: text('body_sha256').notNull(),
    signedAt: ts('signed_at').notNull(),
    status: text('status', { enum: RECEIPT_STATUSES }).notNull().default('ignored'),
    statusReason: text('status_reason'),
    receivedAt: ts('received_at').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.id] }),
    foreignKey({ columns: [t.organizationId], foreignColumns: [organization.id] }),
    unique('integration_webhook_event_dedup').on(t.organizationId, t.connector, t.eventId),
    index('integration_webhook_event_received_idx').on(t.organizationId, t.receivedAt),
  ],
);
