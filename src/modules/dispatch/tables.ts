import { foreignKey, index, jsonb, pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core';
import { organization } from '../organizations/tables.js';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

/**
 * A batch dispatch plan: proposed by the optimizer, then committed (every trip assigned as planned),
 * or refused as expired / stale when its inputs changed.
 */
export const dispatchPlan = pgTable(
  'dispatch_plan',
  {
    organizationId: text('organization_id').notNull(),
    id: text('id').notNull(),
    status: text('status', { enum: ['proposed', 'committed', 'expired', 'stale'] }).notNull().default('proposed'),
    createdByUserId: text('created_by_user_id').notNull(),
    /** Sub-administrator plans: the territories they were confined to; null = organization-wide. */
    territoryIds: text('territory_ids').array(),
    /** The request (selection and options) as received. */
    request: jsonb('request').notNull(),
    /** What the plan assumed: trips (id, status, updated_at) and drivers (id, status, available, capacity, active_trips, planned). */
    inputs: jsonb('inputs').notNull(),
    /** The plan as returned by the optimize route. */
    result: jsonb('result').notNull(),
    /** Why a commit was refused (status stale or expired). */
    changes: jsonb('changes'),
    expiresAt: ts('expires_at').notNull(),
    committedAt: ts('committed_at'),
    committedByUserId: text('committed_by_user_id'),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.id] }),
    foreignKey({ columns: [t.organizationId], foreignColumns: [organization.id] }),
    index('dispatch_plan_status_idx').on(t.organizationId, t.status, t.expiresAt),
  ],
);
