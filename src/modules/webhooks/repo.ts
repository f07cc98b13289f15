import { and, asc, desc, eq, lt, sql } from 'drizzle-orm';
import { prepared, type Prepared, type Tx } from '../../platform/db/index.js';
import type { SecretColumn } from '../../platform/secrets.js';
import { webhookAttempt, webhookDelivery, webhookSubscription } from './tables.js';

/** Every SQL statement of the webhooks module. Functions take the transaction first. */

export type SubscriptionRecord = typeof webhookSubscription.$inferSelect;
export type NewSubscription = typeof webhookSubscription.$inferInsert;
export type DeliveryRecord = typeof webhookDelivery.$inferSelect;
export type NewDelivery = typeof webhookDelivery.$inferInsert;
export type AttemptRecord = typeof webhookAttempt.$inferSelect;
export type NewAttempt = typeof webhookAttempt.$inferInsert;
export type DeliveryStatus = DeliveryRecord['status'];

// ---- subscriptions ----

/** The signing secrets, encrypted, bound to their subscription (a value may move from `secret` to `previous_secret`). */
export const WEBHOOK_SECRET_COLUMNS: SecretColumn[] = [
  { table: 'webhook_subscription', column: 'secret', keys: ['organization_id', 'id'], label: 'webhook signing secret' },
  { table: 'webhook_subscription', column: 'previous_secret', keys: ['organization_id', 'id'], label: 'previous webhook signing secret' },
];

export async function insertSubscription(tx: Tx, row: NewSubscription): Promise<SubscriptionRecord> {
  const [out] = await tx.orm.insert(webhookSubscription).values(row).returning();
  return out;
}

export async function countSubscriptions(tx: Tx, organizationId: string): Promise<number> {
  const [r] = await tx.orm
    .select({ n: sql<number>`count(*)::int` })
    .from(webhookSubscription)
    .where(eq(webhookSubscription.organizationId, organizationId));
  return Number(r.n);
}

/** One page (id descending); `ownerUserId` set = only that user's subscriptions. */
export async function listSubscriptions(
  tx: Tx,
  filter: { ownerUserId: string | null; after: string | null; limit: number },
): Promise<SubscriptionRecord[]> {
  const s = webhookSubscription;
  return tx.orm
    .select()
    .from(s)
    .where(and(filter.ownerUserId ? eq(s.ownerUserId, filter.ownerUserId) : undefined, filter.after ? lt(s.id, filter.after) : undefined))
    .orderBy(desc(s.id))
    .limit(filter.limit + 1);
}

export async function getSubscription(tx: Tx, id: string, lock = false): Promise<SubscriptionRecord | null> {
  const q = tx.orm.select().from(webhookSubscription).where(eq(webhookSubscription.id, id));
  const rows = lock ? await q.for('update') : await q;
  return rows[0] ?? null;
}

export async function updateSubscription(tx: Tx, id: string, patch: Partial<NewSubscription>): Promise<SubscriptionRecord> {
  const [out] = await tx.orm
    .update(webhookSubscription)
    .set({ ...patch, updatedAt: sql`now()` })
    .where(eq(webhookSubscription.id, id))
    .returning();
  return out;
}

export async function deleteSubscription(tx: Tx, id: string): Promise<boolean> {
  const rows = await tx.orm.delete(webhookSubscription).where(eq(webhookSubscription.id, id)).returning({ id: webhookSubscription.id });
  return rows.length > 0;
}

/** What matching an event needs of an active subscription (cached per organization by the service). */
export type ActiveSubscription = Pick<SubscriptionRecord, 'id' | 'scope' | 'ownerUserId' | 'merchantId' | 'eventTypes'>;

/** The active subscriptions of an organization, with what matching an event needs of them. */
export async function activeSubscriptions(tx: Tx, organizationId: string): Promise<ActiveSubscription[]> {
  const { rows } = await tx.query<{
    id: string;
    scope: SubscriptionRecord['scope'];
    owner_user_id: string;
    merchant_id: string | null;
    event_types: string[];
  }>(
    prepared(`SELECT id, scope, owner_user_id, merchant_id, event_types FROM webhook_subscription
      WHERE organization_id = $1 AND active ORDER BY id`),
    [organizationId],
  );
  return rows.map((r) => ({
    id: r.id,
    scope: r.scope,
    ownerUserId: r.owner_user_id,
    merchantId: r.merchant_id,
    eventTypes: r.event_types,
  }));
}

/** Subscriptions (among `ids`) that already got this type for this resource within the last `withinMs` (throttled types). */
export async function recentlySent(
  tx: Tx,
  organizationId: string,
  ids: string[],
  eventType: string,
  resourceKey: string,
  withinMs: number,
): Promise<Set<string>> {
  const { rows } = await tx.query<{ subscription_id: string }>(
    `SELECT DISTINCT subscription_id FROM webhook_delivery
      WHERE organization_id = $1 AND subscription_id = ANY($2::text[]) AND resource_key = $3 AND event_type = $4
        AND created_at > now() - $5::int * interval '1 millisecond'`,
    [organizationId, ids, resourceKey, eventType, withinMs],
  );
  return new Set(rows.map((r) => r.subscription_id));
}

// ---- deliveries ----

export async function insertDeliveries(tx: Tx, rows: NewDelivery[]): Promise<DeliveryRecord[]> {
  if (rows.length === 0) return [];
  return tx.orm.insert(webhookDelivery).values(rows).returning();
}

/** One delivery of an event: the rest of the row is the event's. */
export interface EventDeliveryRow {
  id: string;
  subscriptionId: string;
  body: Record<string, unknown>;
}

/**
 * An event's deliveries in one statement, only to the subscriptions among `rows` that exist and still want the event
 * (active, the type listed, or `*` for a type that is not opt-in): the rows come from a cached list that may be older
 * than a committed deletion or change. Each subscription row is locked FOR KEY SHARE (the lock the deliveries' foreign
 * key takes anyway, taken here first): a subscription being deleted by another transaction is waited for and then left
 * out, instead of failing the event's transaction, a merchant's or a driver's write, at the foreign key. Nobody reads
 * its rows: it is queued ahead of the transaction's next statement (`Tx.queue`), not sent in an exchange of its own.
 */
export async function insertEventDeliveries(
  tx: Tx,
  ev: { organizationId: string; eventId: string; eventSeq: number; eventType: string; resourceKey: string; optIn: boolean },
  rows: EventDeliveryRow[],
): Promise<void> {
  if (rows.length === 0) return;
  await tx.queue(
    prepared(`INSERT INTO webhook_delivery (organization_id, id, subscription_id, event_id, event_seq, event_type, resource_key, body)
      SELECT s.organization_id, r.id, s.id, $2, $3::bigint, $4, $5, r.body
        FROM jsonb_to_recordset($7::jsonb) AS r(id text, subscription_id text, body jsonb)
        JOIN webhook_subscription s ON s.organization_id = $1 AND s.id = r.subscription_id
       WHERE s.active AND ($4 = ANY(s.event_types) OR (NOT $6::boolean AND '*' = ANY(s.event_types)))
       FOR KEY SHARE OF s`),
    [
      ev.organizationId,
      ev.eventId,
      ev.eventSeq,
      ev.eventType,
      ev.resourceKey,
      ev.optIn,
      JSON.stringify(rows.map((r) => ({ id: r.id, subscription_id: r.subscriptionId, body: r.body }))),
    ],
  );
}

/** Pending deliveries of a subscription are cancelled (it was disabled or deactivated). */
export async function cancelPending(tx: Tx, subscriptionId: string, reason: string): Promise<number> {
  const rows = await tx.orm
    .update(webhookDelivery)
    .set({ status: 'cancelled', lastError: reason, claimToken: null, claimExpiresAt: null, updatedAt: sql`now()` })
    .where(and(eq(webhookDelivery.subscriptionId, subscriptionId), sql`${webhookDelivery.status} IN ('pending', 'sending')`))
    .returning({ id: webhookDelivery.id });
  return rows.length;
}

export async function listDeliveries(
  tx: Tx,
  filter: { subscriptionId: string; status?: DeliveryStatus; after: string | null; limit: number },
): Promise<DeliveryRecord[]> {
  const d = webhookDelivery;
  return tx.orm
    .select()
    .from(d)
    .where(
      and(
        eq(d.subscriptionId, filter.subscriptionId),
        filter.status ? eq(d.status, filter.status) : undefined,
        filter.after ? lt(d.id, filter.after) : undefined,
      ),
    )
    .orderBy(desc(d.id))
    .limit(filter.limit + 1);
}

export async function getDelivery(tx: Tx, id: string): Promise<DeliveryRecord | null> {
  const rows = await tx.orm.select().from(webhookDelivery).where(eq(webhookDelivery.id, id));
  return rows[0] ?? null;
}

export async function listAttempts(tx: Tx, deliveryId: string): Promise<AttemptRecord[]> {
  return tx.orm.select().from(webhookAttempt).where(eq(webhookAttempt.deliveryId, deliveryId)).orderBy(asc(webhookAttempt.attempt));
}

// ---- the worker ----

export interface ClaimedDelivery {
  organization_id: string;
  id: string;
  subscription_id: string;
  event_id: string;
  event_type: string;
  body: Record<string, unknown>;
  attempts: number;
  created_at: Date;
  claim_token: string;
  url: string;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
}

/**
 * Claims due deliveries (cross-tenant, system transaction): `pending` ones whose time has come, and `sending` ones
 * whose claim expired (their worker died). A delivery waits while an earlier event of the same resource (same
 * subscription) is undelivered; at most `perSubscription` per subscription in flight (claimed and unexpired), so one
 * slow receiver cannot take the whole batch. The candidates are chosen without locks; only the rows taken are locked
 * (SKIP LOCKED, and checked again once locked), so two instances never take the same one, and a claim does not lock
 * the backlog it looked at (four times its batch) to take a few rows of it.
 */
export async function claimDue(
  tx: Tx,
  opts: { now: Date; limit: number; perSubscription: number; claimMs: number; token: string },
): Promise<ClaimedDelivery[]> {
  const { rows } = await tx.query<ClaimedDelivery>(
    `WITH busy AS (
       SELECT organization_id, subscription_id, count(*)::int AS n FROM webhook_delivery
        WHERE status = 'sending' AND claim_expires_at > $1::timestamptz GROUP BY organization_id, subscription_id),
     due AS (
       SELECT d.organization_id, d.id, d.subscription_id, d.next_attempt_at FROM webhook_delivery d
        WHERE d.status IN ('pending', 'sending') AND d.next_attempt_at <= $1::timestamptz
          AND (d.status = 'pending' OR d.claim_expires_at <= $1::timestamptz)
          AND NOT EXISTS (
            SELECT 1 FROM webhook_delivery e
             WHERE e.organization_id = d.organization_id AND e.subscription_id = d.subscription_id
               AND e.resource_key = d.resource_key AND e.status IN ('pending', 'sending') AND e.event_seq < d.event_seq)
        ORDER BY d.next_attempt_at
        LIMIT $2::int * 4),
     ranked AS (
       SELECT due.organization_id, due.id, coalesce(b.n, 0) AS busy,
              row_number() OVER (PARTITION BY due.organization_id, due.subscription_id ORDER BY due.next_attempt_at, due.id) AS rn
         FROM due LEFT JOIN busy b ON b.organization_id = due.organization_id AND b.subscription_id = due.subscription_id),
     picked AS (SELECT organization_id, id FROM ranked WHERE rn + busy <= $3 ORDER BY rn LIMIT $2::int),
     locked AS (
       SELECT k.organization_id, k.id FROM webhook_delivery k JOIN picked p ON p.organization_id = k.organization_id AND p.id = k.id
        WHERE k.status IN ('pending', 'sending') AND k.next_attempt_at <= $1::timestamptz
          AND (k.status = 'pending' OR k.claim_expires_at <= $1::timestamptz)
        FOR UPDATE OF k SKIP LOCKED)
     UPDATE webhook_delivery w
        SET status = 'sending', attempts = w.attempts + 1, claim_token = $4,
            claim_expires_at = $1::timestamptz + $5::int * interval '1 millisecond', updated_at = now()
       FROM locked p, webhook_subscription s
      WHERE w.organization_id = p.organization_id AND w.id = p.id
        AND s.organization_id = w.organization_id AND s.id = w.subscription_id
      RETURNING w.organization_id, w.id, w.subscription_id, w.event_id, w.event_type, w.body, w.attempts, w.created_at, w.claim_token,
                s.url, s.secret, s.previous_secret, s.previous_secret_expires_at`,
    [opts.now.toISOString(), opts.limit, opts.perSubscription, opts.token, opts.claimMs],
  );
  return rows;
}

export interface Outcome {
  status: 'delivered' | 'pending' | 'failed';
  nextAttemptAt: Date | null;
  statusCode: number | null;
  error: string | null;
}

export type AttemptLog = Pick<
  NewAttempt,
  'id' | 'attempt' | 'url' | 'startedAt' | 'durationMs' | 'statusCode' | 'error' | 'responseExcerpt' | 'outcome'
>;

/**
 * Prepared, run once per webhook attempt: writes the outcome of a claimed attempt and its log row in one statement,
 * only while the claim is still ours (no row back = someone else owns it now: nothing is written); a delivered
 * attempt also ends the subscription's failure streak.
 */
const FINISH_ATTEMPT = prepared(
  `WITH done AS (
     UPDATE webhook_delivery
        SET status = $4, next_attempt_at = coalesce($5::timestamptz, next_attempt_at), last_status_code = $6, last_error = $7,
            delivered_at = CASE WHEN $4 = 'delivered' THEN $8::timestamptz ELSE delivered_at END,
            claim_token = NULL, claim_expires_at = NULL, updated_at = now()
      WHERE organization_id = $1 AND id = $2 AND status = 'sending' AND claim_token = $3
      RETURNING organization_id, id, subscription_id),
   healthy AS (
     UPDATE webhook_subscription s SET failing_since = NULL, updated_at = now()
       FROM done WHERE $4 = 'delivered' AND s.organization_id = done.organization_id AND s.id = done.subscription_id AND s.failing_since IS NOT NULL)
   INSERT INTO webhook_attempt (organization_id, id, delivery_id, subscription_id, attempt, url, started_at, duration_ms, status_code, error, response_excerpt, outcome)
   SELECT done.organization_id, $9, done.id, done.subscription_id, $10, $11, $12::timestamptz, $13, $6, $7, $14, $15 FROM done
   RETURNING id`,
);

/**
 * The statement that records an attempt's outcome (`FINISH_ATTEMPT`) and its parameters: run in a transaction
 * (`finishAttempt`) or, when nothing else is written with it, on its own (`Database.tenantWrite`).
 */
export function finishAttemptStatement(
  d: Pick<ClaimedDelivery, 'organization_id' | 'id' | 'claim_token'>,
  o: Outcome,
  log: AttemptLog,
  now: Date,
): [Prepared, unknown[]] {
  return [
    FINISH_ATTEMPT,
    [
      d.organization_id,
      d.id,
      d.claim_token,
      o.status,
      o.nextAttemptAt?.toISOString() ?? null,
      o.statusCode,
      o.error,
      now.toISOString(),
      log.id,
      log.attempt,
      log.url,
      log.startedAt.toISOString(),
      log.durationMs,
      log.responseExcerpt ?? null,
      log.outcome,
    ],
  ];
}

/** Records an attempt's outcome (`FINISH_ATTEMPT`) in the transaction; false when the claim is no longer ours. */
export async function finishAttempt(
  tx: Tx,
  d: Pick<ClaimedDelivery, 'organization_id' | 'id' | 'claim_token'>,
  o: Outcome,
  log: AttemptLog,
  now: Date,
): Promise<boolean> {
  const { rows } = await tx.query<{ id: string }>(...finishAttemptStatement(d, o, log, now));
  return rows.length > 0;
}

/**
 * A failure starts the streak (or keeps it). The subscription is disabled when the streak is older than
 * `disableAfterMs`, or when `exhaustedDeliveryId` (a delivery that has just used up its retry window) has failed on
 * every attempt within the streak: a day of failures. Returned once: only the transaction that flips `active` gets it.
 */
export async function markSubscriptionFailing(
  tx: Tx,
  subscriptionId: string,
  now: Date,
  disableAfterMs: number,
  exhaustedDeliveryId: string | null,
): Promise<SubscriptionRecord | null> {
  await tx.query(
    `UPDATE webhook_subscription SET failing_since = $2::timestamptz, updated_at = now() WHERE id = $1 AND failing_since IS NULL`,
    [subscriptionId, now.toISOString()],
  );
  const { rows } = await tx.query<{ id: string }>(
    `UPDATE webhook_subscription s SET active = false, disabled_at = $2::timestamptz, disabled_reason = 'failing', updated_at = now()
      WHERE s.id = $1 AND s.active
        AND (s.failing_since <= $2::timestamptz - $3::int * interval '1 millisecond'
             OR s.failing_since <= (SELECT min(a.started_at) FROM webhook_attempt a WHERE a.organization_id = s.organization_id AND a.delivery_id = $4))
      RETURNING s.id`,
    [subscriptionId, now.toISOString(), disableAfterMs, exhaustedDeliveryId],
  );
  return rows[0] ? getSubscription(tx, rows[0].id) : null;
}

/** Undelivered rows per status (dashboard and metrics). */
export async function backlog(tx: Tx): Promise<Record<string, number>> {
  const { rows } = await tx.query<{ status: string; n: number }>(
    `SELECT status, count(*)::int AS n FROM webhook_delivery WHERE status IN ('pending', 'sending') GROUP BY status`,
  );
  return Object.fromEntries(rows.map((r) => [r.status, r.n]));
}

/**
 * Deletes up to `limit` finished deliveries (delivered, failed, cancelled) that finished before `before`, with their
 * attempt logs (cascade), oldest first. SKIP LOCKED: instances pruning at once take different rows and never wait.
 */
export async function pruneFinished(tx: Tx, before: Date, limit: number): Promise<number> {
  const { rows } = await tx.query<{ id: string }>(
    `DELETE FROM webhook_delivery d
      USING (SELECT organization_id, id FROM webhook_delivery
              WHERE status IN ('delivered', 'failed', 'cancelled') AND updated_at < $1::timestamptz
              ORDER BY updated_at LIMIT $2::int FOR UPDATE SKIP LOCKED) old
      WHERE d.organization_id = old.organization_id AND d.id = old.id
      RETURNING d.id`,
    [before.toISOString(), limit],
  );
  return rows.length;
}

/** The age in seconds of the oldest delivery waiting for its first or next attempt (0 when none): the backlog's lag. */
export async function oldestPendingSeconds(tx: Tx): Promise<number> {
  const { rows } = await tx.query<{ s: number | null }>(
    `SELECT extract(epoch FROM now() - min(created_at))::float8 AS s FROM webhook_delivery WHERE status IN ('pending', 'sending')`,
  );
  return Math.max(0, Number(rows[0]?.s ?? 0));
}
