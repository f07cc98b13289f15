import { sql } from 'drizzle-orm';
import { boolean, check, foreignKey, index, integer, jsonb, pgTable, primaryKey, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
import { organization } from '../organizations/tables.js';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

export const CHAT_MODES = ['link', 'cloud_api'] as const;
export const CHAT_OUTBOX_STATUSES = ['pending', 'sending', 'sent', 'failed', 'cancelled'] as const;

/**
 * One per merchant. The channel token: `chat_token`, set by the merchant or an administrator, stored encrypted
 * (`src/platform/secrets.ts`, bound to the merchant) and never returned; or, the legacy way, `chat_secret_ref`
 * naming the secret the operator provisioned for this merchant (`env:CHAT_SECRET_<ORG>_<MERCHANT>`) outside the database.
 */
// The merchant table belongs to logistics; the composite foreign key (organization_id, merchant_id) is added when it lands.
export const merchantChannelSettings = pgTable(
  'merchant_channel_settings',
  {
    organizationId: text('organization_id').notNull(),
    merchantId: text('merchant_id').notNull(),
    chatEnabled: boolean('chat_enabled').notNull().default(false),
    chatMode: text('chat_mode', { enum: CHAT_MODES }).notNull().default('link'),
    chatPhone: text('chat_phone'),
    chatPhoneNumberId: text('chat_phone_number_id'),
    chatAccountId: text('chat_account_id'),
    chatSecretRef: text('chat_secret_ref'),
    chatToken: text('chat_token'),
    chatTokenSetAt: ts('chat_token_set_at'),
    orderNotifications: boolean('order_notifications').notNull().default(true),
    statusNotifications: boolean('status_notifications').notNull().default(false),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.merchantId] }),
    foreignKey({ columns: [t.organizationId], foreignColumns: [organization.id] }),
    check('merchant_channel_settings_mode_ck', sql`chat_mode IN ('link', 'cloud_api')`),
  ],
);

/**
 * Chat messages mirroring merchant orders, written in the transaction of the order change and delivered by
 * the chat outbox worker: pending -> sending -> sent | failed (retries go back to pending with a later
 * available_at); pending -> cancelled. A `sending` row whose claim expired is claimed again.
 */
export const chatOrderOutbox = pgTable(
  'chat_order_outbox',
  {
    organizationId: text('organization_id').notNull(),
    id: text('id').notNull(),
    territoryId: text('territory_id'),
    merchantId: text('merchant_id').notNull(),
    orderId: text('order_id'),
    expressRequestId: text('express_request_id'),
    destinationPhone: text('destination_phone').notNull(),
    messageType: text('message_type').notNull().default('order_created'),
    payload: jsonb('payload').notNull().default({}),
    status: text('status', { enum: CHAT_OUTBOX_STATUSES }).notNull().default('pending'),
    attempts: integer('attempts').notNull().default(0),
    availableAt: ts('available_at').notNull().defaultNow(),
    lastError: text('last_error'),
    sentAt: ts('sent_at'),
    /** Set while `sending`: the claim of one worker; after it passes, another worker may claim the row. */
    claimToken: text('claim_token'),
    claimExpiresAt: ts('claim_expires_at'),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.id] }),
    foreignKey({ columns: [t.organizationId], foreignColumns: [organization.id] }),
    check('chat_order_outbox_status_ck', sql`status IN ('pending', 'sending', 'sent', 'failed', 'cancelled')`),
    check('chat_order_outbox_attempts_ck', sql`attempts >= 0`),
    index('chat_order_outbox_merchant_idx').on(t.organizationId, t.merchantId, t.id),
    index('chat_order_outbox_order_idx').on(t.organizationId, t.orderId),
    index('chat_order_outbox_express_idx').on(t.organizationId, t.expressRequestId),
    // The worker's queue: rows that can still be delivered (for `sending` rows available_at is the claim expiry).
    index('chat_order_outbox_due_idx')
      .on(t.availableAt)
      .where(sql`status IN ('pending', 'sending')`),
    // One `order_created` message per order and per express request, however often the caller asks.
    uniqueIndex('chat_order_outbox_order_created_uq')
      .on(t.organizationId, t.orderId)
      .where(sql`message_type = 'order_created' AND order_id IS NOT NULL`),
    uniqueIndex('chat_order_outbox_express_created_uq')
      .on(t.organizationId, t.expressRequestId)
      .where(sql`message_type = 'order_created' AND express_request_id IS NOT NULL`),
  ],
);
