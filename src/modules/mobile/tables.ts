import { foreignKey, index, integer, jsonb, pgTable, primaryKey, text, timestamp, unique } from 'drizzle-orm/pg-core';
import { APP_ROLES } from '../../platform/auth.js';
import { users } from '../identity/tables.js';
import { PLATFORMS } from '../notifications/tables.js';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

/** Published builds of the four apps per organization (white label); seeded with defaults. */
export const appBuild = pgTable(
  'app_build',
  {
    organizationId: text('organization_id').notNull(),
    id: text('id').notNull(),
    appRole: text('app_role', { enum: APP_ROLES }).notNull(),
    platform: text('platform', { enum: PLATFORMS }).notNull(),
    packageName: text('package_name').notNull(),
    versionName: text('version_name').notNull(),
    buildNumber: integer('build_number').notNull(),
    /** Older builds must update before they may call the API. */
    minSupportedBuild: integer('min_supported_build').notNull(),
    channel: text('channel').notNull().default('production'),
    releasedAt: ts('released_at').notNull().defaultNow(),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.id] }),
    unique('app_build_uq').on(t.organizationId, t.appRole, t.platform, t.channel, t.buildNumber),
  ],
);

/** Offline operations pushed by the apps, keyed by the client's id: a repeat returns the stored result. */
export const syncOperation = pgTable(
  'sync_operation',
  {
    organizationId: text('organization_id').notNull(),
    userId: text('user_id').notNull(),
    clientOperationId: text('client_operation_id').notNull(),
    type: text('type').notNull(),
    requestHash: text('request_hash').notNull(),
    /** `applied`, `conflict`, `rejected` (the stored outcome replayed on repeats). */
    status: text('status').notNull(),
    result: jsonb('result'),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.userId, t.clientOperationId] }),
    foreignKey({ columns: [t.organizationId, t.userId], foreignColumns: [users.organizationId, users.id] }),
    index('sync_operation_created_idx').on(t.organizationId, t.createdAt),
  ],
);
