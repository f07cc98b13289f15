import { bigint, index, integer, jsonb, pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core';

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
