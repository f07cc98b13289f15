import { AppError } from '../../platform/errors.js';
import { newId } from '../../platform/ids.js';
import { tenantOf, type Actor } from '../../platform/auth.js';
import type { AppContext } from '../../platform/context.js';
import type { Tx } from '../../platform/db/index.js';
import type { SyncWindow } from '../mobile/sync.js';

export interface DeviceRow {
  organization_id: string;
  id: string;
  user_id: string;
  platform: 'android' | 'ios' | 'web';
  push_token: string;
  app_role: string;
  app_version: string | null;
  build_number: number | null;
  device_model: string | null;
  os_version: string | null;
  last_seen_at: Date | null;
  battery_level: number | null;
  charging: boolean | null;
  network: string | null;
  heartbeat_count: number;
  created_at: Date;
  updated_at: Date;
  deleted_at: Date | null;
}

export interface RegisterDevice {
  platform: 'android' | 'ios' | 'web';
  push_token: string;
  app_version?: string;
  build_number?: number;
  device_model?: string;
  os_version?: string;
}

export interface Heartbeat {
  device_id: string;
  app_version?: string;
  build_number?: number;
  battery_level?: number;
  charging?: boolean;
  network?: string;
  /** When the app took the reading (offline heartbeats arrive late); default now. */
  recorded_at?: string;
}

const COLUMNS =
  'organization_id, id, user_id, platform, push_token, app_role, app_version, build_number, device_model, os_version, last_seen_at, battery_level, charging, network, heartbeat_count, created_at, updated_at, deleted_at';

/** The push token is a credential of the install: only its last four characters leave the server. */
export const publicDevice = (d: DeviceRow) => ({
  id: d.id,
  user_id: d.user_id,
  platform: d.platform,
  push_token_suffix: d.push_token.slice(-4),
  app_role: d.app_role,
  app_version: d.app_version,
  build_number: d.build_number,
  device_model: d.device_model,
  os_version: d.os_version,
  last_seen_at: d.last_seen_at,
  battery_level: d.battery_level,
  charging: d.charging,
  network: d.network,
  created_at: d.created_at,
  updated_at: d.updated_at,
});

const ADMIN_KINDS = new Set(['administrator']);

export function createDeviceService(ctx: AppContext) {
  /**
   * A stale heartbeat (taken before the one the server already has) changes nothing and is a conflict:
   * the server's newer state wins. `recorded_at` in the future is clamped to now.
   */
  async function heartbeatIn(tx: Tx, actor: Actor, input: Heartbeat): Promise<{ device: DeviceRow } | { conflict: DeviceRow }> {
    const { rows } = await tx.query<DeviceRow>(
      `UPDATE device SET last_seen_at = least(coalesce($3::timestamptz, now()), now()),
              app_version = coalesce($4, app_version), build_number = coalesce($5, build_number),
              battery_level = coalesce($6, battery_level), charging = coalesce($7, charging), network = coalesce($8, network),
              heartbeat_count = heartbeat_count + 1, updated_at = now()
        WHERE organization_id = $1 AND id = $2 AND user_id = $9 AND deleted_at IS NULL
          AND (last_seen_at IS NULL OR last_seen_at <= least(coalesce($3::timestamptz, now()), now()))
        RETURNING ${COLUMNS}`,
      [
        actor.organizationId,
        input.device_id,
        input.recorded_at ?? null,
        input.app_version ?? null,
        input.build_number ?? null,
        input.battery_level ?? null,
        input.charging ?? null,
        input.network ?? null,
        actor.userId,
      ],
    );
    if (rows[0]) return { device: rows[0] };
    const { rows: cur } = await tx.query<DeviceRow>(`SELECT ${COLUMNS} FROM device WHERE organization_id = $1 AND id = $2 AND user_id = $3 AND deleted_at IS NULL`, [
      actor.organizationId,
      input.device_id,
      actor.userId,
    ]);
    if (!cur[0]) throw AppError.notFound('Device');
    return { conflict: cur[0] };
  }

  return {
    heartbeatIn,

    /** Registers the caller's install; the same push token again updates (and revives) the one row. */
    async register(actor: Actor, input: RegisterDevice): Promise<{ device: DeviceRow; created: boolean }> {
      return ctx.db.withTenant(tenantOf(actor), async (tx) => {
        const { rows } = await tx.query<DeviceRow & { created: boolean }>(
          `INSERT INTO device (organization_id, id, user_id, platform, push_token, app_role, app_version, build_number, device_model, os_version, last_seen_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, now())
           ON CONFLICT (organization_id, push_token) DO UPDATE SET
             user_id = EXCLUDED.user_id, platform = EXCLUDED.platform, app_role = EXCLUDED.app_role,
             app_version = coalesce(EXCLUDED.app_version, device.app_version), build_number = coalesce(EXCLUDED.build_number, device.build_number),
             device_model = coalesce(EXCLUDED.device_model, device.device_model), os_version = coalesce(EXCLUDED.os_version, device.os_version),
             last_seen_at = now(), deleted_at = NULL, updated_at = now()
           RETURNING ${COLUMNS}, (xmax = 0) AS created`,
          [
            actor.organizationId,
            newId(),
            actor.userId,
            input.platform,
            input.push_token,
            actor.role,
            input.app_version ?? null,
            input.build_number ?? null,
            input.device_model ?? null,
            input.os_version ?? null,
          ],
        );
        const { created, ...device } = rows[0];
        return { device, created };
      });
    },

    /** The caller's devices; an administrator may list another user's (`user_id`). */
    async list(actor: Actor, q: { user_id?: string }) {
      const userId = q.user_id ?? actor.userId;
      if (userId !== actor.userId && !ADMIN_KINDS.has(actor.kind)) throw AppError.forbidden('Only administrators list the devices of other users');
      const { rows } = await ctx.db.withTenant(tenantOf(actor), (tx) =>
        tx.query<DeviceRow>(`SELECT ${COLUMNS} FROM device WHERE user_id = $1 AND deleted_at IS NULL ORDER BY id DESC LIMIT 200`, [userId]),
      );
      return { data: rows.map(publicDevice) };
    },

    /** Unregisters (soft delete, a tombstone for sync); its queued pushes are cancelled. Administrators may remove any device. */
    async remove(actor: Actor, id: string) {
      await ctx.db.withTenant(tenantOf(actor), async (tx) => {
        const { rows } = await tx.query<DeviceRow>(
          `UPDATE device SET deleted_at = now(), updated_at = now()
            WHERE organization_id = $1 AND id = $2 AND deleted_at IS NULL AND ($3::boolean OR user_id = $4) RETURNING id`,
          [actor.organizationId, id, ADMIN_KINDS.has(actor.kind), actor.userId],
        );
        if (!rows[0]) throw AppError.notFound('Device');
        await tx.query(
          `UPDATE push_outbox SET status = 'failed', last_error = 'DEVICE_REMOVED', updated_at = now()
            WHERE organization_id = $1 AND device_id = $2 AND status = 'pending'`,
          [actor.organizationId, id],
        );
      });
    },

    async heartbeat(actor: Actor, input: Heartbeat) {
      const r = await ctx.db.withTenant(tenantOf(actor), (tx) => heartbeatIn(tx, actor, input));
      if ('conflict' in r) {
        throw AppError.conflict('A newer heartbeat of this device is already recorded', 'STALE_HEARTBEAT', { last_seen_at: r.conflict.last_seen_at });
      }
      return publicDevice(r.device);
    },

    /** For sync pull: the caller's devices changed after `since`, and tombstones of removed ones. */
    /** The caller's devices in an offline sync window (deleted ones are tombstones, except at a first sync). */
    async changedIn(tx: Tx, actor: Actor, w: SyncWindow) {
      const c = w.clause('dv', 2);
      const { rows } = await tx.query<DeviceRow & { sync_xid: string }>(
        `SELECT dv.changed_xid::text AS sync_xid, ${COLUMNS} FROM device dv WHERE user_id = $1 AND ${c.where}
          ${w.first ? 'AND deleted_at IS NULL' : ''} ${c.orderLimit}`,
        [actor.userId, ...c.params],
      );
      return rows;
    },

    /** Devices seen in the last hour per app and version (mobile health). */
    async seenLastHour(tx: Tx) {
      const { rows } = await tx.query<{ app_role: string; platform: string; app_version: string | null; devices: number }>(
        `SELECT app_role, platform, app_version, count(*)::int AS devices FROM device
          WHERE deleted_at IS NULL AND last_seen_at > now() - interval '1 hour'
          GROUP BY app_role, platform, app_version ORDER BY app_role, platform, app_version`,
      );
      const { rows: total } = await tx.query<{ n: number }>('SELECT count(*)::int AS n FROM device WHERE deleted_at IS NULL');
      return { registered: total[0].n, seen_last_hour: rows };
    },
  };
}

export type DeviceService = ReturnType<typeof createDeviceService>;
