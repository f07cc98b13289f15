import { sql } from 'drizzle-orm';
import { bigint, customType, index, integer, jsonb, pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

/** Append-only domain events; `seq` is the global order used by SSE ids and Last-Event-ID. */
export const event = pgTable(
  'event',
  {
    organizationId: text('organization_id').notNull(),
    seq: bigint('seq', { mode: 'number' }).generatedAlwaysAsIdentity(),
    id: text('id').notNull(),
    type: text('type').notNull(),
    entityType: text('entity_type').notNull(),
    entityId: text('entity_id').notNull(),
    territoryId: text('territory_id'),
    actorUserId: text('actor_user_id'),
    audienceUserIds: text('audience_user_ids').array().notNull().default([]),
    payload: jsonb('payload').notNull().default({}),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.seq] }),
    index('event_seq_idx').on(t.seq),
    index('event_entity_idx').on(t.organizationId, t.entityType, t.entityId, t.seq),
  ],
);

export const auditLog = pgTable(
  'audit_log',
  {
    organizationId: text('organization_id').notNull(),
    id: text('id').notNull(),
    actorUserId: text('actor_user_id'),
    action: text('action').notNull(),
    entityType: text('entity_type').notNull(),
    entityId: text('entity_id').notNull(),
    before: jsonb('before'),
    after: jsonb('after'),
    requestId: text('request_id'),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.id] }),
    index('audit_entity_idx').on(t.organizationId, t.entityType, t.entityId),
    index('audit_action_idx').on(t.organizationId, t.action, t.id),
  ],
);

/** Stored results of requests carrying an idempotency key (trip creation, and any route that opts in). */
export const idempotencyKey = pgTable(
  'idempotency_key',
  {
    organizationId: text('organization_id').notNull(),
    scope: text('scope').notNull(),
    key: text('key').notNull(),
    requestHash: text('request_hash').notNull(),
    statusCode: integer('status_code'),
    response: jsonb('response'),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.organizationId, t.scope, t.key] })],
);

/** Fixed-window counters shared by every API instance (login rate limits). Not a tenant table. */
export const rateLimitBucket = pgTable(
  'rate_limit_bucket',
  {
    key: text('key').notNull(),
    windowStart: ts('window_start').notNull(),
    count: integer('count').notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.key, t.windowStart] })],
);

/**
 * Login guessing throttle, shared by every API instance. Not a tenant table. One row per key:
 * `pair:<login>|<address>` (attempts of one address on one login, exponential back-off) and
 * `account:<login>` (failures on one login from every address, the account ceiling). The login is
 * the submitted email or phone, whether or not an account has it, so the answers reveal nothing.
 */
export const loginThrottle = pgTable('login_throttle', {
  key: text('key').primaryKey(),
  failures: integer('failures').notNull().default(0),
  windowStart: ts('window_start').notNull().defaultNow(),
  blockedUntil: ts('blocked_until'),
  updatedAt: ts('updated_at').notNull().defaultNow(),
});

/** Addresses from which a login succeeded: they keep their own back-off but skip the account ceiling. Not a tenant table. */
export const loginKnownAddress = pgTable(
  'login_known_address',
  {
    login: text('login').notNull(),
    address: text('address').notNull(),
    lastSuccessAt: ts('last_success_at').notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.login, t.address] })],
);

const xid8 = customType<{ data: string; driverData: string }>({ dataType: () => 'xid8' });

/**
 * `changed_xid xid8`: the (top-level) transaction that last inserted or updated the row, set by the trigger
 * `sync_touch_changed_xid`. Offline sync reads rows by this column against snapshots (see src/modules/mobile/sync.ts).
 */
export const changedXid = () =>
  xid8('changed_xid')
    .notNull()
    .default(sql`pg_current_xact_id()`);

/**
 * A value list as SQL, `('a', 'b')`, for the check constraint of a column whose values a module lists once
 * (`sql\`${t.status} in ${sqlList(STATUSES)}\``). The values are the module's own constants, never input.
 */
export const sqlList = (values: readonly string[]) => sql.raw(`(${values.map((v) => `'${v}'`).join(', ')})`);
