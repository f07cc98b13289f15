import { sql } from 'drizzle-orm';
import { check, foreignKey, index, integer, jsonb, pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core';
import { sqlList } from '../../platform/tables.js';
import { organization } from '../organizations/tables.js';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

export const PLAN_STATUSES = ['proposed', 'committed', 'expired', 'stale'] as const;

/**
 * A batch dispatch plan: proposed by the optimizer, then committed (every trip assigned as planned),
 * or refused as expired / stale when its inputs changed.
 */
export const dispatchPlan = pgTable(
  'dispatch_plan',
  {
    organizationId: text('organization_id').notNull(),
    id: text('id').notNull(),
    status: text('status', { enum: PLAN_STATUSES }).notNull().default('proposed'),
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

export const OBJECTIVES = ['time', 'balanced', 'distance'] as const;

/**
 * Per-organization optimizer settings (one row, created on first read with these defaults); every
 * field can be overridden per optimize request.
 */
export const dispatchSettings = pgTable(
  'dispatch_settings',
  {
    organizationId: text('organization_id')
      .primaryKey()
      .references(() => organization.id),
    objective: text('objective', { enum: OBJECTIVES }).notNull().default('time'),
    /** From the plan to the end of the service at the last stop. */
    maxRouteDurationS: integer('max_route_duration_s').notNull().default(3600),
    /** Null: only the driver's free capacity limits the stops (2 per trip). */
    maxStopsPerRoute: integer('max_stops_per_route'),
    servicePickupS: integer('service_time_pickup_s').notNull().default(180),
    serviceDropoffS: integer('service_time_dropoff_s').notNull().default(120),
    /** Search budget in iterations; null = the optimizer's default for the number of trips. */
    iterations: integer('iterations'),
    updatedByUserId: text('updated_by_user_id'),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [
    check('dispatch_settings_objective_ck', sql`${t.objective} in ${sqlList(OBJECTIVES)}`),
    check(
      'dispatch_settings_ranges_ck',
      sql`${t.maxRouteDurationS} > 0 and (${t.maxStopsPerRoute} is null or ${t.maxStopsPerRoute} >= 2) and ${t.servicePickupS} >= 0 and ${t.serviceDropoffS} >= 0 and (${t.iterations} is null or ${t.iterations} >= 0)`,
    ),
  ],
);
