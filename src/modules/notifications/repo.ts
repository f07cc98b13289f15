import type { Tx } from '../../platform/db/index.js';
import { selectList, type SnakeRow } from '../../platform/db/columns.js';
import type { SyncWindow } from './context.js';
import { device, notification } from './tables.js';

/** The notifications module's SQL. Devices (installs of the apps, their push tokens and heartbeats). */

/** A device as stored (derived from the table; the sync column stays in SQL). */
export type DeviceRow = Omit<SnakeRow<typeof device.$inferSelect>, 'changed_xid'>;

const DEVICE_COLUMNS = selectList(device, 'device', { omit: ['changedXid'] });
const DV_COLUMNS = selectList(device, 'dv', { omit: ['changedXid'] });

export interface HeartbeatValues {
  recordedAt: string | null;
  appVersion: string | null;
  buildNumber: number | null;
  batteryLevel: number | null;
  charging: boolean | null;
  network: string | null;
}

/**
 * Records a heartbeat unless a newer one is already recorded (`recorded_at` in the future is clamped to now). Compared
 * to the millisecond, the precision clients send: a reading from the same millisecond as the registration (whose
 * now() has microseconds) is not stale; last seen never moves back.
 */
export async function recordHeartbeat(
  tx: Tx,
  organizationId: string,
  userId: string,
  deviceId: string,
  h: HeartbeatValues,
): Promise<DeviceRow | undefined> {
  const { rows } = await tx.query<DeviceRow>(
    `UPDATE device SET last_seen_at = greatest(last_seen_at, least(coalesce($3::timestamptz, now()), now())),
            app_version = coalesce($4, app_version), build_number = coalesce($5, build_number),
            battery_level = coalesce($6, battery_level), charging = coalesce($7, charging), network = coalesce($8, network),
            heartbeat_count = heartbeat_count + 1, updated_at = now()
      WHERE organization_id = $1 AND id = $2 AND user_id = $9 AND deleted_at IS NULL
        AND (last_seen_at IS NULL OR date_trunc('milliseconds', last_seen_at) <= least(coalesce($3::timestamptz, now()), now()))
      RETURNING ${DEVICE_COLUMNS}`,
    [organizationId, deviceId, h.recordedAt, h.appVersion, h.buildNumber, h.batteryLevel, h.charging, h.network, userId],
  );
  return rows[0];
}

/** One live device of this user. */
export async function findUserDevice(tx: Tx, organizationId: string, userId: string, deviceId: string): Promise<DeviceRow | undefined> {
  const { rows } = await tx.query<DeviceRow>(
    `SELECT ${DEVICE_COLUMNS} FROM device WHERE organization_id = $1 AND id = $2 AND user_id = $3 AND deleted_at IS NULL`,
    [organizationId, deviceId, userId],
  );
  return rows[0];
}

export type NewDevice = Pick<
  DeviceRow,
  | 'organization_id'
  | 'id'
  | 'user_id'
  | 'platform'
  | 'push_token'
  | 'app_role'
  | 'app_version'
  | 'build_number'
  | 'device_model'
  | 'os_version'
>;

/**
 * Registers an install; the same push token again updates (and revives) the one row. `previousUserId`: the user the
 * token was registered to before (null for a new row).
 */
export async function upsertDevice(tx: Tx, d: NewDevice): Promise<{ device: DeviceRow; created: boolean; previousUserId: string | null }> {
  // The token's row, locked until the transaction ends: its user is the one the token leaves.
  const { rows: previous } = await tx.query<{ user_id: string }>(
    'SELECT user_id FROM device WHERE organization_id = $1 AND push_token = $2 FOR UPDATE',
    [d.organization_id, d.push_token],
  );
  const { rows } = await tx.query<DeviceRow & { created: boolean }>(
    `INSERT INTO device (organization_id, id, user_id, platform, push_token, app_role, app_version, build_number, device_model, os_version, last_seen_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, now())
     ON CONFLICT (organization_id, push_token) DO UPDATE SET
       user_id = EXCLUDED.user_id, platform = EXCLUDED.platform, app_role = EXCLUDED.app_role,
       app_version = coalesce(EXCLUDED.app_version, device.app_version), build_number = coalesce(EXCLUDED.build_number, device.build_number),
       device_model = coalesce(EXCLUDED.device_model, device.device_model), os_version = coalesce(EXCLUDED.os_version, device.os_version),
       last_seen_at = now(), deleted_at = NULL, updated_at = now()
     RETURNING ${DEVICE_COLUMNS}, (xmax = 0) AS created`,
    [d.organization_id, d.id, d.user_id, d.platform, d.push_token, d.app_role, d.app_version, d.build_number, d.device_model, d.os_version],
  );
  const { created, ...row } = rows[0];
  return { device: row, created, previousUserId: previous[0]?.user_id ?? null };
}

export async function listUserDevices(tx: Tx, userId: string): Promise<DeviceRow[]> {
  const { rows } = await tx.query<DeviceRow>(
    `SELECT ${DEVICE_COLUMNS} FROM device WHERE user_id = $1 AND deleted_at IS NULL ORDER BY id DESC LIMIT 200`,
    [userId],
  );
  return rows;
}

/** Soft-deletes a device (the user's own, or any with `any`) and fails its pending pushes; its user, or null when there was none. */
export async function removeDevice(tx: Tx, organizationId: string, id: string, any: boolean, userId: string): Promise<string | null> {
  const { rows } = await tx.query<{ user_id: string }>(
    `UPDATE device SET deleted_at = now(), updated_at = now()
      WHERE organization_id = $1 AND id = $2 AND deleted_at IS NULL AND ($3::boolean OR user_id = $4) RETURNING user_id`,
    [organizationId, id, any, userId],
  );
  if (!rows[0]) return null;
  await tx.query(
    `UPDATE push_outbox SET status = 'failed', last_error = 'DEVICE_REMOVED', updated_at = now()
      WHERE organization_id = $1 AND device_id = $2 AND status = 'pending'`,
    [organizationId, id],
  );
  return rows[0].user_id;
}

/** The user's devices in an offline sync window (deleted ones are tombstones, except at a first sync). */
export async function devicesChangedIn(tx: Tx, userId: string, w: SyncWindow): Promise<(DeviceRow & { sync_xid: string })[]> {
  const c = w.clause('dv', 2);
  const { rows } = await tx.query<DeviceRow & { sync_xid: string }>(
    `SELECT dv.changed_xid::text AS sync_xid, ${DV_COLUMNS} FROM device dv WHERE user_id = $1 AND ${c.where}
      ${w.first ? 'AND deleted_at IS NULL' : ''} ${c.orderLimit}`,
    [userId, ...c.params],
  );
  return rows;
}

/** Devices seen in the last hour per app and version, and all registered ones. */
export async function deviceActivity(tx: Tx) {
  const { rows } = await tx.query<{ app_role: string; platform: string; app_version: string | null; devices: number }>(
    `SELECT app_role, platform, app_version, count(*)::int AS devices FROM device
      WHERE deleted_at IS NULL AND last_seen_at > now() - interval '1 hour'
      GROUP BY app_role, platform, app_version ORDER BY app_role, platform, app_version`,
  );
  const { rows: total } = await tx.query<{ n: number }>('SELECT count(*)::int AS n FROM device WHERE deleted_at IS NULL');
  return { registered: total[0].n, seen_last_hour: rows };
}

// ---------------------------------------------------------------- inbox

/** An inbox row (derived from the table; the sync column stays in SQL). */
export type NotificationRow = Omit<SnakeRow<typeof notification.$inferSelect>, 'changed_xid' | 'data'> & { data: Record<string, unknown> };

const NOTIFICATION_COLUMNS = selectList(notification, 'notification', { omit: ['changedXid'] });
const N_COLUMNS = selectList(notification, 'n', { omit: ['changedXid'] });

export interface NewNotifications {
  ids: string[];
  userIds: string[];
  type: string;
  title: string;
  body: string;
  data: Record<string, unknown>;
  entityType: string | null;
  entityId: string | null;
  eventSeq: number | null;
  /** Of userIds, skip those who already have an unread notification of this type. */
  coalesceUserIds: string[];
}

/** One inbox row per user; at most one per user and event (a repeat inserts nothing). */
export async function insertNotifications(tx: Tx, organizationId: string, n: NewNotifications): Promise<NotificationRow[]> {
  const { rows } = await tx.query<NotificationRow>(
    `INSERT INTO notification (organization_id, id, user_id, type, title, body, data, entity_type, entity_id, event_seq)
     SELECT $1, x.id, x.user_id, $4, $5, $6, $7, $8, $9, $10 FROM unnest($2::text[], $3::text[]) AS x(id, user_id)
      WHERE NOT x.user_id = ANY($11::text[])
         OR NOT EXISTS (SELECT 1 FROM notification u WHERE u.organization_id = $1 AND u.user_id = x.user_id AND u.type = $4 AND u.read_at IS NULL)
     ON CONFLICT (organization_id, user_id, event_seq) DO NOTHING
     RETURNING ${NOTIFICATION_COLUMNS}`,
    [
      organizationId,
      n.ids,
      n.userIds,
      n.type,
      n.title,
      n.body,
      JSON.stringify(n.data),
      n.entityType,
      n.entityId,
      n.eventSeq,
      n.coalesceUserIds,
    ],
  );
  return rows;
}

export async function markNotificationRead(
  tx: Tx,
  organizationId: string,
  userId: string,
  id: string,
): Promise<NotificationRow | undefined> {
  const { rows } = await tx.query<NotificationRow>(
    `UPDATE notification SET read_at = coalesce(read_at, now()), updated_at = CASE WHEN read_at IS NULL THEN now() ELSE updated_at END
      WHERE organization_id = $1 AND id = $2 AND user_id = $3
      RETURNING ${NOTIFICATION_COLUMNS}`,
    [organizationId, id, userId],
  );
  return rows[0];
}

export async function listNotifications(
  tx: Tx,
  userId: string,
  f: { unread: boolean | null; after: string | null; limit: number },
): Promise<NotificationRow[]> {
  const { rows } = await tx.query<NotificationRow>(
    `SELECT ${NOTIFICATION_COLUMNS} FROM notification
      WHERE user_id = $1 AND ($2::boolean IS NOT TRUE OR read_at IS NULL) AND ($3::text IS NULL OR id < $3)
      ORDER BY id DESC LIMIT $4`,
    [userId, f.unread, f.after, f.limit],
  );
  return rows;
}

export async function unreadCount(tx: Tx, userId: string): Promise<number> {
  const { rows } = await tx.query<{ n: number }>('SELECT count(*)::int AS n FROM notification WHERE user_id = $1 AND read_at IS NULL', [
    userId,
  ]);
  return rows[0].n;
}

/** Registered devices per app, and how many were seen in the last hour. */
export async function deviceCountsByApp(tx: Tx): Promise<{ app_role: string; registered: number; seen: number }[]> {
  const { rows } = await tx.query<{ app_role: string; registered: number; seen: number }>(
    `SELECT app_role, count(*)::int AS registered, count(*) FILTER (WHERE last_seen_at > now() - interval '1 hour')::int AS seen
       FROM device WHERE deleted_at IS NULL GROUP BY app_role`,
  );
  return rows;
}

/** The user's inbox rows in an offline sync window (never deleted, so no tombstones). */
export async function notificationsChangedIn(tx: Tx, userId: string, w: SyncWindow): Promise<(NotificationRow & { sync_xid: string })[]> {
  const c = w.clause('n', 2);
  const { rows } = await tx.query<NotificationRow & { sync_xid: string }>(
    `SELECT n.changed_xid::text AS sync_xid, ${N_COLUMNS} FROM notification n
      WHERE user_id = $1 AND ${c.where} ${c.orderLimit}`,
    [userId, ...c.params],
  );
  return rows;
}

// ---------------------------------------------------------------- push outbox

/** A live device as a push target. */
export type PushTarget = Pick<DeviceRow, 'id' | 'user_id' | 'platform' | 'push_token'>;

/** The live devices of these users (push targets). */
export async function pushTargets(tx: Tx, organizationId: string, userIds: string[]): Promise<PushTarget[]> {
  const { rows } = await tx.query<PushTarget>(
    'SELECT id, user_id, platform, push_token FROM device WHERE organization_id = $1 AND user_id = ANY($2::text[]) AND deleted_at IS NULL',
    [organizationId, userIds],
  );
  return rows;
}

export interface NewPush {
  id: string;
  notification_id: string;
  device_id: string;
  user_id: string;
  platform: string;
  push_token: string;
  /** JSON text. */
  payload: string;
}

export async function queuePushRows(tx: Tx, organizationId: string, out: NewPush[], lastError: string | null): Promise<void> {
  const col = <K extends keyof NewPush>(k: K) => out.map((o) => o[k]);
  await tx.query(
    `INSERT INTO push_outbox (organization_id, id, notification_id, device_id, user_id, platform, push_token, payload, last_error)
     SELECT $1, x.id, x.nid, x.did, x.uid, x.platform, x.token, x.payload::jsonb, $9
       FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[]) AS x(id, nid, did, uid, platform, token, payload)`,
    [
      organizationId,
      col('id'),
      col('notification_id'),
      col('device_id'),
      col('user_id'),
      col('platform'),
      col('push_token'),
      col('payload'),
      lastError,
    ],
  );
}

/** Push outbox figures per status, and failures of the last 24 hours. */
export async function pushOutboxFigures(tx: Tx) {
  const { rows } = await tx.query<{ status: string; n: number; oldest: Date | null; no_gateway: number }>(
    `SELECT status, count(*)::int AS n, min(created_at) AS oldest, count(*) FILTER (WHERE last_error = 'NO_GATEWAY')::int AS no_gateway
       FROM push_outbox GROUP BY status`,
  );
  const { rows: recent } = await tx.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM push_outbox WHERE status = 'failed' AND updated_at > now() - interval '24 hours'`,
  );
  return { byStatus: rows, failedLast24h: recent[0].n };
}

export interface ClaimedPush {
  organization_id: string;
  id: string;
  platform: string;
  push_token: string;
  payload: Record<string, unknown>;
  attempts: number;
}

/** Claims due rows (and rows whose claim timed out) for sending, shared among instances (SKIP LOCKED). */
export async function claimPushes(tx: Tx, claimTimeoutMs: number, batchSize: number): Promise<ClaimedPush[]> {
  const { rows } = await tx.query<ClaimedPush>(
    `UPDATE push_outbox p SET status = 'sending', claimed_at = now(), attempts = p.attempts + 1, updated_at = now()
       FROM (SELECT organization_id, id FROM push_outbox
              WHERE (status = 'pending' AND available_at <= now())
                 OR (status = 'sending' AND claimed_at < now() - $1 * interval '1 millisecond')
              ORDER BY available_at
              LIMIT $2
              FOR UPDATE SKIP LOCKED) c
      WHERE p.organization_id = c.organization_id AND p.id = c.id
      RETURNING p.organization_id, p.id, p.platform, p.push_token, p.payload, p.attempts`,
    [claimTimeoutMs, batchSize],
  );
  return rows;
}

/** Records a push as sent, if the row is still this claim's (`attempts` unchanged). */
export async function markPushSent(tx: Tx, row: ClaimedPush): Promise<void> {
  await tx.query(
    `UPDATE push_outbox SET status = 'sent', sent_at = now(), last_error = NULL, updated_at = now()
      WHERE organization_id = $1 AND id = $2 AND status = 'sending' AND attempts = $3`,
    [row.organization_id, row.id, row.attempts],
  );
}

/** Records a failed attempt (retry after `delayMs`, or given up), if the row is still this claim's. */
export async function markPushFailed(
  tx: Tx,
  row: ClaimedPush,
  status: 'failed' | 'pending',
  error: string,
  delayMs: number,
): Promise<void> {
  await tx.query(
    `UPDATE push_outbox SET status = $4, last_error = $5, claimed_at = NULL, updated_at = now(),
            available_at = now() + $6 * interval '1 millisecond'
      WHERE organization_id = $1 AND id = $2 AND status = 'sending' AND attempts = $3`,
    [row.organization_id, row.id, row.attempts, status, error, delayMs],
  );
}
