import { prepared, type Tx } from '../../platform/db/index.js';
import { selectList, type SnakeRow } from '../../platform/db/columns.js';
import { scopeSql, type TerritoryScope } from '../../platform/scope.js';
import type { SecretColumn } from '../../platform/secrets.js';
import { chatOrderOutbox, merchantChannelSettings } from './tables.js';

/** The chat module's SQL: merchants' channel settings and the order message outbox. */

/** A merchant's channel settings (derived from the table; the defaults of a merchant without a row have no timestamps). */
export type ChannelSettingsRow = Omit<SnakeRow<typeof merchantChannelSettings.$inferSelect>, 'created_at' | 'updated_at'> & {
  created_at: Date | null;
  updated_at: Date | null;
};

/** An outbox row as listed (derived from the table, without the claim). */
export type ChatOutboxRow = Omit<SnakeRow<typeof chatOrderOutbox.$inferSelect>, 'claim_token' | 'claim_expires_at' | 'payload'> & {
  payload: Record<string, unknown>;
};
export type ChatOutboxStatus = ChatOutboxRow['status'];

const SETTINGS_COLUMNS = selectList(merchantChannelSettings, 'merchant_channel_settings');
const OUTBOX_COLUMNS = selectList(chatOrderOutbox, 'chat_order_outbox', { omit: ['claimToken', 'claimExpiresAt'] });

/** The merchant's channel token, encrypted, bound to the merchant's row. */
export const CHAT_TOKEN_COLUMN: SecretColumn = {
  table: 'merchant_channel_settings',
  column: 'chat_token',
  keys: ['organization_id', 'merchant_id'],
  label: 'chat channel token',
};

export const PATCHABLE = [
  'chat_enabled',
  'chat_mode',
  'chat_phone',
  'chat_phone_number_id',
  'chat_account_id',
  'chat_secret_ref',
  'chat_token',
  'chat_token_set_at',
  'order_notifications',
  'status_notifications',
] as const;
export type PatchableKey = (typeof PATCHABLE)[number];

export async function findSettings(tx: Tx, organizationId: string, merchantId: string, lock = false): Promise<ChannelSettingsRow | null> {
  const { rows } = await tx.query<ChannelSettingsRow>(
    prepared(
      `SELECT ${SETTINGS_COLUMNS} FROM merchant_channel_settings WHERE organization_id = $1 AND merchant_id = $2${lock ? ' FOR UPDATE' : ''}`,
    ),
    [organizationId, merchantId],
  );
  return rows[0] ?? null;
}

/** Writes the settings; on a concurrent first write the upsert applies only the `given` fields. */
export async function upsertSettings(
  tx: Tx,
  organizationId: string,
  merchantId: string,
  merged: Pick<ChannelSettingsRow, PatchableKey>,
  given: readonly PatchableKey[],
): Promise<ChannelSettingsRow> {
  const { rows } = await tx.query<ChannelSettingsRow>(
    `INSERT INTO merchant_channel_settings (organization_id, merchant_id, ${PATCHABLE.join(', ')})
     VALUES ($1, $2, ${PATCHABLE.map((_, i) => `$${i + 3}`).join(', ')})
     ON CONFLICT (organization_id, merchant_id) DO UPDATE SET
       ${[...given.map((k) => `${k} = EXCLUDED.${k}`), 'updated_at = now()'].join(', ')}
     RETURNING ${SETTINGS_COLUMNS}`,
    [organizationId, merchantId, ...PATCHABLE.map((k) => merged[k])],
  );
  return rows[0];
}

/** The settings of the merchants of these rows, by `organization/merchant`. */
export async function settingsOf(
  tx: Tx,
  rows: { organization_id: string; merchant_id: string }[],
): Promise<Map<string, ChannelSettingsRow>> {
  const { rows: settings } = await tx.query<ChannelSettingsRow>(
    `SELECT ${SETTINGS_COLUMNS} FROM merchant_channel_settings
      WHERE (organization_id, merchant_id) IN (SELECT * FROM unnest($1::text[], $2::text[]))`,
    [rows.map((r) => r.organization_id), rows.map((r) => r.merchant_id)],
  );
  return new Map(settings.map((s) => [`${s.organization_id}/${s.merchant_id}`, s]));
}

export type NewOutboxMessage = Pick<
  ChatOutboxRow,
  | 'organization_id'
  | 'id'
  | 'territory_id'
  | 'merchant_id'
  | 'order_id'
  | 'express_request_id'
  | 'destination_phone'
  | 'message_type'
  | 'payload'
>;

/** Queues a message; null when one is already queued (one per order and per express request). */
export async function insertOutboxMessage(tx: Tx, m: NewOutboxMessage): Promise<string | null> {
  const { rows } = await tx.query<{ id: string }>(
    `INSERT INTO chat_order_outbox (organization_id, id, territory_id, merchant_id, order_id, express_request_id, destination_phone, message_type, payload)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
     ON CONFLICT DO NOTHING RETURNING id`,
    [
      m.organization_id,
      m.id,
      m.territory_id,
      m.merchant_id,
      m.order_id,
      m.express_request_id,
      m.destination_phone,
      m.message_type,
      JSON.stringify(m.payload),
    ],
  );
  return rows[0]?.id ?? null;
}

export async function listOutbox(
  tx: Tx,
  merchantId: string,
  f: { status: string | null; orderId: string | null; expressRequestId: string | null; after: string | null; limit: number },
): Promise<ChatOutboxRow[]> {
  const { rows } = await tx.query<ChatOutboxRow>(
    `SELECT ${OUTBOX_COLUMNS} FROM chat_order_outbox
      WHERE merchant_id = $1 AND ($2::text IS NULL OR status = $2) AND ($3::text IS NULL OR order_id = $3)
        AND ($4::text IS NULL OR express_request_id = $4) AND ($5::text IS NULL OR id < $5)
      ORDER BY id DESC LIMIT $6`,
    [merchantId, f.status, f.orderId, f.expressRequestId, f.after, f.limit],
  );
  return rows;
}

/** Cancels the messages of an order (or express request) not sent yet: `pending`, and `sending` with an expired claim. */
export async function cancelUnsent(tx: Tx, column: 'order_id' | 'express_request_id', value: string): Promise<number> {
  const { rowCount } = await tx.query(
    `UPDATE chat_order_outbox
        SET status = 'cancelled', last_error = 'the order was cancelled before the message was sent', claim_token = NULL, claim_expires_at = NULL, updated_at = now()
      WHERE ${column} = $1 AND (status = 'pending' OR (status = 'sending' AND claim_expires_at <= now()))`,
    [value],
  );
  return rowCount;
}

export type ClaimedRow = Pick<
  SnakeRow<typeof chatOrderOutbox.$inferSelect>,
  'organization_id' | 'id' | 'merchant_id' | 'destination_phone' | 'message_type' | 'attempts'
> & {
  payload: Record<string, unknown>;
  claim_token: string;
};

/** Claims up to `limit` due rows under `token` for `claimTimeoutMs` (FOR UPDATE SKIP LOCKED). */
export async function claimDue(tx: Tx, limit: number, token: string, claimTimeoutMs: number): Promise<ClaimedRow[]> {
  const { rows } = await tx.query<ClaimedRow>(
    `WITH due AS (
       SELECT organization_id, id FROM chat_order_outbox
        WHERE status IN ('pending', 'sending') AND available_at <= now()
        ORDER BY available_at LIMIT $1
        FOR UPDATE SKIP LOCKED)
     UPDATE chat_order_outbox o
        SET status = 'sending', attempts = o.attempts + 1, claim_token = $2,
            claim_expires_at = now() + $3::int * interval '1 millisecond', available_at = now() + $3::int * interval '1 millisecond', updated_at = now()
       FROM due WHERE o.organization_id = due.organization_id AND o.id = due.id
     RETURNING o.organization_id, o.id, o.merchant_id, o.destination_phone, o.message_type, o.payload, o.attempts, o.claim_token`,
    [limit, token, claimTimeoutMs],
  );
  return rows;
}

export type DeliveryOutcome =
  | { kind: 'sent'; payloadPatch: Record<string, unknown> }
  | { kind: 'retry' | 'unconfigured'; error: string; delayMs: number }
  | { kind: 'failed' | 'cancelled'; error: string };

const SET: Record<DeliveryOutcome['kind'], string> = {
  sent: `status = 'sent', sent_at = now(), last_error = NULL, payload = payload || $4::jsonb`,
  retry: `status = 'pending', last_error = $4, available_at = now() + $5::int * interval '1 millisecond'`,
  failed: `status = 'failed', last_error = $4`,
  cancelled: `status = 'cancelled', last_error = $4`,
  unconfigured: `status = 'pending', attempts = attempts - 1, last_error = $4, available_at = now() + $5::int * interval '1 millisecond'`,
};

/** Records a delivery outcome, only while the claim is still this one. */
export async function recordDelivery(
  tx: Tx,
  m: Pick<ClaimedRow, 'organization_id' | 'id' | 'claim_token'>,
  o: DeliveryOutcome,
): Promise<void> {
  const params: unknown[] = [m.organization_id, m.id, m.claim_token];
  if (o.kind === 'sent') params.push(JSON.stringify(o.payloadPatch));
  else params.push(o.error);
  if (o.kind === 'retry' || o.kind === 'unconfigured') params.push(o.delayMs);
  await tx.query(
    `UPDATE chat_order_outbox SET ${SET[o.kind]}, claim_token = NULL, claim_expires_at = NULL, updated_at = now()
      WHERE organization_id = $1 AND id = $2 AND status = 'sending' AND claim_token = $3`,
    params,
  );
}

/** Outbox rows per status and the oldest undelivered, within a territory scope (dashboard). */
export async function outboxBacklog(tx: Tx, scope: TerritoryScope): Promise<{ status: string; n: number; oldest: Date | null }[]> {
  const { rows } = await tx.query<{ status: string; n: number; oldest: Date | null }>(
    `SELECT status, count(*)::int AS n, min(created_at) FILTER (WHERE status IN ('pending', 'sending')) AS oldest
       FROM chat_order_outbox WHERE ${scopeSql('territory_id', 1)} GROUP BY status`,
    [scope],
  );
  return rows;
}
