import { prepared, type Tx } from './db/index.js';

/** An event as stored (the `event` table): what the streams, the outboxes and the hooks read. */
export interface StoredEvent {
  seq: number;
  id: string;
  organization_id: string;
  type: string;
  entity_type: string;
  entity_id: string;
  territory_id: string | null;
  actor_user_id: string | null;
  audience_user_ids: string[];
  payload: Record<string, unknown>;
  created_at: Date;
}

/**
 * The SQL of the platform mechanisms that own tables of their own (audit_log, event, idempotency_key,
 * rate_limit_bucket), and the few platform reads (health, the phone country, the seed's guard). Like a module's
 * repo: functions taking the transaction first; the mechanisms (audit.ts, events.ts, ...) hold the rules.
 */

/** Announces `payload` on a NOTIFY channel; delivered to the listeners at the transaction's commit (not at all on rollback). */
export async function notifyChannel(tx: Tx, channel: string, payload: string): Promise<void> {
  await tx.query('SELECT pg_notify($1, $2)', [channel, payload]);
}

export async function insertAuditRow(
  tx: Tx,
  r: {
    organizationId: string;
    id: string;
    actorUserId: string | null;
    action: string;
    entityType: string;
    entityId: string;
    before: string;
    after: string;
    requestId: string | null;
  },
): Promise<void> {
  // Nobody reads its rows: it goes ahead of the transaction's next statement (or its COMMIT), not in an exchange of its own.
  await tx.queue(
    `INSERT INTO audit_log (organization_id, id, actor_user_id, action, entity_type, entity_id, before, after, request_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    [r.organizationId, r.id, r.actorUserId, r.action, r.entityType, r.entityId, r.before, r.after, r.requestId],
  );
}

/** The stored columns of a new event (`payload`: JSON text). */
export interface NewEventRow {
  id: string;
  type: string;
  entityType: string;
  entityId: string;
  territoryId: string | null;
  actorUserId: string | null;
  audienceUserIds: string[];
  payload: string;
}

/** One round trip: the event row and its NOTIFY (payload {"organization_id","seq"}) in one statement. */
export async function insertEventAndNotify(tx: Tx, r: NewEventRow & { organizationId: string }, channel: string): Promise<StoredEvent> {
  const { rows } = await tx.query<StoredEvent & { notified: unknown }>(INSERT_EVENT, [
    r.organizationId,
    r.id,
    r.type,
    r.entityType,
    r.entityId,
    r.territoryId,
    r.actorUserId,
    r.audienceUserIds,
    r.payload,
    channel,
  ]);
  const { notified: _, ...ev } = rows[0];
  return ev;
}

/** Every recorded event goes through it: prepared (parsed once per connection, no planning once generic). */
const INSERT_EVENT = prepared(
  `WITH e AS (
       INSERT INTO event (organization_id, id, type, entity_type, entity_id, territory_id, actor_user_id, audience_user_ids, payload)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
       RETURNING seq, id, organization_id, type, entity_type, entity_id, territory_id, actor_user_id, audience_user_ids, payload, created_at)
     SELECT e.*, pg_notify($10, json_build_object('organization_id', e.organization_id, 'seq', e.seq)::text) AS notified FROM e`,
);

/** Several events of one organization in one statement, in the given order (their sequences follow it); each NOTIFYs. */
export async function insertEventsAndNotify(tx: Tx, organizationId: string, rows: NewEventRow[], channel: string): Promise<StoredEvent[]> {
  const { rows: out } = await tx.query<StoredEvent & { notified: unknown }>(INSERT_EVENTS, [
    organizationId,
    rows.map((r) => r.id),
    rows.map((r) => r.type),
    rows.map((r) => r.entityType),
    rows.map((r) => r.entityId),
    rows.map((r) => r.territoryId),
    rows.map((r) => r.actorUserId),
    JSON.stringify(rows.map((r) => r.audienceUserIds)),
    `[${rows.map((r) => r.payload).join(',')}]`,
    channel,
  ]);
  const byId = new Map(out.map(({ notified: _, ...ev }) => [ev.id, ev]));
  return rows.map((r) => byId.get(r.id)!);
}

const INSERT_EVENTS = prepared(
  `WITH r AS (
       SELECT u.*, ARRAY(SELECT jsonb_array_elements_text($8::jsonb -> (u.n::int - 1))) AS audience, $9::jsonb -> (u.n::int - 1) AS payload
         FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[])
              WITH ORDINALITY AS u(id, type, entity_type, entity_id, territory_id, actor_user_id, n)
     ), e AS (
       INSERT INTO event (organization_id, id, type, entity_type, entity_id, territory_id, actor_user_id, audience_user_ids, payload)
       SELECT $1, r.id, r.type, r.entity_type, r.entity_id, r.territory_id, r.actor_user_id, r.audience, r.payload FROM r ORDER BY r.n
       RETURNING seq, id, organization_id, type, entity_type, entity_id, territory_id, actor_user_id, audience_user_ids, payload, created_at)
     SELECT e.*, pg_notify($10, json_build_object('organization_id', e.organization_id, 'seq', e.seq)::text) AS notified FROM e`,
);

/** Inserts the key row; false when it exists already (a repeat, or a concurrent duplicate that committed first). */
export async function claimIdempotencyKey(
  tx: Tx,
  k: { organizationId: string; scope: string; key: string; hash: string },
): Promise<boolean> {
  const inserted = await tx.query(
    `INSERT INTO idempotency_key (organization_id, scope, key, request_hash) VALUES ($1, $2, $3, $4)
     ON CONFLICT DO NOTHING RETURNING key`,
    [k.organizationId, k.scope, k.key, k.hash],
  );
  return inserted.rowCount > 0;
}

export async function findIdempotencyKey<T>(tx: Tx, k: { organizationId: string; scope: string; key: string }) {
  const { rows } = await tx.query<{ request_hash: string; status_code: number | null; response: T }>(
    'SELECT request_hash, status_code, response FROM idempotency_key WHERE organization_id = $1 AND scope = $2 AND key = $3',
    [k.organizationId, k.scope, k.key],
  );
  return rows[0] ?? null;
}

export async function storeIdempotentResponse(
  tx: Tx,
  k: { organizationId: string; scope: string; key: string },
  status: number,
  body: string,
): Promise<void> {
  await tx.query('UPDATE idempotency_key SET status_code = $4, response = $5 WHERE organization_id = $1 AND scope = $2 AND key = $3', [
    k.organizationId,
    k.scope,
    k.key,
    status,
    body,
  ]);
}

/** Counts one request for `key` in its minute window; the weighted count of the last minute and the seconds left. */
export async function countInWindow(tx: Tx, key: string): Promise<{ weighted: number; reset: number }> {
  const { rows } = await tx.query<{ weighted: number; reset: number }>(
    `WITH cur AS (
       INSERT INTO rate_limit_bucket (key, window_start, count) VALUES ($1, date_trunc('minute', now()), 1)
       ON CONFLICT (key, window_start) DO UPDATE SET count = rate_limit_bucket.count + 1
       RETURNING count, window_start)
     SELECT cur.count + coalesce((SELECT b.count FROM rate_limit_bucket b WHERE b.key = $1 AND b.window_start = cur.window_start - interval '1 minute'), 0)
            * (1 - extract(epoch FROM now() - cur.window_start) / 60) AS weighted,
            ceil(60 - extract(epoch FROM now() - cur.window_start)) AS reset
       FROM cur`,
    [key],
  );
  return rows[0];
}

export async function defaultCountryOf(tx: Tx, organizationId: string): Promise<string | null> {
  const { rows } = await tx.query<{ default_country: string }>(
    'SELECT default_country FROM organization_settings WHERE organization_id = $1',
    [organizationId],
  );
  return rows[0]?.default_country ?? null;
}

export async function ping(tx: Tx): Promise<void> {
  await tx.query('SELECT 1');
}

export async function appliedMigrations(tx: Tx): Promise<string[]> {
  return (await tx.query<{ name: string }>('SELECT name FROM _migrations')).rows.map((r) => r.name);
}

/** The seed's guard: one seeding at a time (PostgreSQL), and only on a database without organizations. */
export async function lockSeed(tx: Tx, lock: number): Promise<void> {
  if (tx.kind === 'postgres') await tx.query('SELECT pg_advisory_xact_lock($1)', [lock]);
}

export async function anyOrganizationExists(tx: Tx): Promise<boolean> {
  return (await tx.query('SELECT 1 FROM organization LIMIT 1')).rowCount > 0;
}

// ---- secrets at rest (src/platform/secret-store.ts); the columns are the modules' declarations, never input ----

type SecretColumnRef = { table: string; column: string; keys: readonly [string, string] };
const versionSql = (c: string) => `CASE WHEN ${c} LIKE 'enc:v1:%' THEN split_part(${c}, ':', 3) ELSE '' END`;

/** Per key version of a secret column ('' = plain text): how many values, and one of them with its row key (the probe). */
export async function secretVersions(
  tx: Tx,
  col: SecretColumnRef,
): Promise<{ version: string; n: number; k1: string; k2: string; value: string }[]> {
  const [a, b] = col.keys;
  const { rows } = await tx.query<{ version: string; n: number; k1: string; k2: string; value: string }>(
    `SELECT version, n, k1, k2, value FROM (
       SELECT ${versionSql(col.column)} AS version, count(*) OVER (PARTITION BY ${versionSql(col.column)})::int AS n,
              row_number() OVER (PARTITION BY ${versionSql(col.column)} ORDER BY ${a}, ${b}) AS rn, ${a} AS k1, ${b} AS k2, ${col.column} AS value
         FROM ${col.table} WHERE ${col.column} IS NOT NULL) x
      WHERE rn = 1`,
  );
  return rows;
}

/**
 * Up to `limit` values of a secret column not written under the key version `version` (plain text, or another key;
 * `plainOnly`: plain text only), in row-key order after `after`.
 */
export async function staleSecrets(
  tx: Tx,
  col: SecretColumnRef,
  f: { version: string; plainOnly: boolean; after: [string, string] | null; limit: number },
): Promise<{ k1: string; k2: string; value: string }[]> {
  const [a, b] = col.keys;
  const { rows } = await tx.query<{ k1: string; k2: string; value: string }>(
    `SELECT ${a} AS k1, ${b} AS k2, ${col.column} AS value FROM ${col.table}
      WHERE ${col.column} IS NOT NULL AND ${col.column} NOT LIKE $1
        AND ($2::text IS NULL OR (${a}, ${b}) > ($2::text, $3::text))
      ORDER BY ${a}, ${b} LIMIT $4`,
    [f.plainOnly ? 'enc:v1:%' : `enc:v1:${f.version}:%`, f.after?.[0] ?? null, f.after?.[1] ?? null, f.limit],
  );
  return rows;
}

/** Replaces a row's value only while it is still `old` (a value written meanwhile wins); true when replaced. */
export async function replaceSecret(tx: Tx, col: SecretColumnRef, k1: string, k2: string, old: string, next: string): Promise<boolean> {
  const [a, b] = col.keys;
  const { rowCount } = await tx.query(`UPDATE ${col.table} SET ${col.column} = $4 WHERE ${a} = $1 AND ${b} = $2 AND ${col.column} = $3`, [
    k1,
    k2,
    old,
    next,
  ]);
  return rowCount > 0;
}
