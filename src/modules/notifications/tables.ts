import { sql } from 'drizzle-orm';
import { bigint, boolean, foreignKey, index, integer, jsonb, pgTable, primaryKey, text, timestamp, unique } from 'drizzle-orm/pg-core';
import { changedXid } from '../../platform/tables.js';

/** The platforms a device, and an app build, are for. */
export const PLATFORMS = ['android', 'ios', 'web'] as const;
import { users } from '../identity/tables.js';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

/** The durable inbox: one row per user and notification, created in the transaction of its cause. */
export const notification = pgTable(
  'notification',
  {
    organizationId: text('organization_id').notNull(),
    id: text('id').notNull(),
    userId: text('user_id').notNull(),
    /** The event type that caused it (`trip.assigned`), or `test`, or `admin.message`. */
    type: text('type').notNull(),
    title: text('title').notNull(),
    body: text('body').notNull(),
    data: jsonb('data').notNull().default({}),
    entityType: text('entity_type'),
    entityId: text('entity_id'),
    /** The event that caused it; one notification per user and event. */
    eventSeq: bigint('event_seq', { mode: 'number' }),
    readAt: ts('read_at'),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
    /** Offline sync: the transaction that last wrote the row (trigger sync_touch_changed_xid). */
    changedXid: changedXid(),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.id] }),
    foreignKey({ columns: [t.organizationId, t.userId], foreignColumns: [users.organizationId, users.id] }),
    unique('notification_event_user_uq').on(t.organizationId, t.userId, t.eventSeq),
    index('notification_user_idx').on(t.organizationId, t.userId, t.id),
    index('notification_user_unread_idx')
      .on(t.organizationId, t.userId, t.id)
      .where(sql`read_at IS NULL`),
    /** Whether a user has an unread notification of a type (the coalesced exception alerts). */
    index('notification_user_unread_type_idx')
      .on(t.organizationId, t.userId, t.type)
      .where(sql`read_at IS NULL`),
    index('notification_user_updated_idx').on(t.organizationId, t.userId, t.updatedAt),
    index('notification_user_sync_idx').on(t.organizationId, t.userId, t.changedXid),
  ],
);

/** A registered app install. The push token identifies it: re-registering the same token updates the row. */
export const device = pgTable(
  'device',
  {
    organizationId: text('organization_id').notNull(),
    id: text('id').notNull(),
    userId: text('user_id').notNull(),
    platform: text('platform', { enum: PLATFORMS }).notNull(),
    pushToken: text('push_token').notNull(),
    /** `administrator`, `comercio`, `delivery`, `repartidor`: which of the four apps. */
    appRole: text('app_role').notNull(),
    appVersion: text('app_version'),
    buildNumber: integer('build_number'),
    deviceModel: text('device_model'),
    osVersion: text('os_version'),
    lastSeenAt: ts('last_seen_at'),
    batteryLevel: integer('battery_level'),
    charging: boolean('charging'),
    network: text('network'),
    heartbeatCount: integer('heartbeat_count').notNull().default(0),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
    /** Soft delete: kept as a tombstone for offline sync; re-registering the token revives it. */
    deletedAt: ts('deleted_at'),
    /** Offline sync: the transaction that last wrote the row (trigger sync_touch_changed_xid). */
    changedXid: changedXid(),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.id] }),
    foreignKey({ columns: [t.organizationId, t.userId], foreignColumns: [users.organizationId, users.id] }),
    unique('device_push_token_uq').on(t.organizationId, t.pushToken),
    index('device_user_idx').on(t.organizationId, t.userId),
    index('device_user_sync_idx').on(t.organizationId, t.userId, t.changedXid),
    index('device_seen_idx').on(t.organizationId, t.lastSeenAt),
  ],
);

/**
 * Physical push, one row per notification and device. States: `pending` (queued; `last_error` says why it
 * waits, e.g. `NO_GATEWAY`), `sending` (claimed by a worker at `claimed_at`), `sent`, `failed` (gave up).
 */
export const pushOutbox = pgTable(
  'push_outbox',
  {
    organizationId: text('organization_id').notNull(),
    id: text('id').notNull(),
    notificationId: text('notification_id').notNull(),
    deviceId: text('device_id').notNull(),
    userId: text('user_id').notNull(),
    platform: text('platform').notNull(),
    pushToken: text('push_token').notNull(),
    payload: jsonb('payload').notNull(),
    status: text('status', { enum: ['pending', 'sending', 'sent', 'failed'] })
      .notNull()
      .default('pending'),
    attempts: integer('attempts').notNull().default(0),
    availableAt: ts('available_at').notNull().defaultNow(),
    claimedAt: ts('claimed_at'),
    sentAt: ts('sent_at'),
    lastError: text('last_error'),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.id] }),
    foreignKey({ columns: [t.organizationId, t.notificationId], foreignColumns: [notification.organizationId, notification.id] }),
    index('push_outbox_due_idx').on(t.status, t.availableAt),
    index('push_outbox_org_status_idx').on(t.organizationId, t.status),
  ],
);
