import { AppError } from '../../../platform/errors.js';
import { newId } from '../../../platform/ids.js';
import type { Actor } from '../../../platform/auth.js';
import type { AppContext } from '../../../platform/context.js';
import type { Tx } from '../../../platform/db/index.js';
import type { SyncWindow } from '../context.js';
import * as repo from '../repo.js';
import type { DeviceRow } from '../repo.js';
import type { PushTargets } from './push-targets.js';

export type { DeviceRow } from '../repo.js';

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

export function createDeviceService(ctx: AppContext, pushTargets: PushTargets) {
  /**
   * A stale heartbeat (taken before the one the server already has) changes nothing and is a conflict:
   * the server's newer state wins. `recorded_at` in the future is clamped to now.
   */
  async function heartbeatIn(tx: Tx, actor: Actor, input: Heartbeat): Promise<{ device: DeviceRow } | { conflict: DeviceRow }> {
    const updated = await repo.recordHeartbeat(tx, actor.organizationId, actor.userId, input.device_id, {
      recordedAt: input.recorded_at ?? null,
      appVersion: input.app_version ?? null,
      buildNumber: input.build_number ?? null,
      batteryLevel: input.battery_level ?? null,
      charging: input.charging ?? null,
      network: input.network ?? null,
    });
    if (updated) return { device: updated };
    const cur = await repo.findUserDevice(tx, actor.organizationId, actor.userId, input.device_id);
    if (!cur) throw AppError.notFound('Device');
    return { conflict: cur };
  }

  return {
    heartbeatIn,

    /** Registers the caller's install; the same push token again updates (and revives) the one row. */
    async register(actor: Actor, input: RegisterDevice): Promise<{ device: DeviceRow; created: boolean }> {
      return ctx.db.withTenant(actor, async (tx) => {
        const { device, created, previousUserId } = await repo.upsertDevice(tx, {
          organization_id: actor.organizationId,
          id: newId(),
          user_id: actor.userId,
          platform: input.platform,
          push_token: input.push_token,
          app_role: actor.role,
          app_version: input.app_version ?? null,
          build_number: input.build_number ?? null,
          device_model: input.device_model ?? null,
          os_version: input.os_version ?? null,
        });
        // The token's user gains (or keeps) the device; a user it was registered to before loses it.
        await pushTargets.changed(tx, actor.organizationId, [actor.userId, previousUserId]);
        return { device, created };
      });
    },

    /** The caller's devices; an administrator may list another user's (`user_id`). */
    async list(actor: Actor, q: { user_id?: string }) {
      const userId = q.user_id ?? actor.userId;
      if (userId !== actor.userId && !ADMIN_KINDS.has(actor.kind))
        throw AppError.forbidden('Only administrators list the devices of other users');
      const rows = await ctx.db.withTenant(actor, (tx) => repo.listUserDevices(tx, userId));
      return { data: rows.map(publicDevice) };
    },

    /** Unregisters (soft delete, a tombstone for sync); its queued pushes are cancelled. Administrators may remove any device. */
    async remove(actor: Actor, id: string) {
      await ctx.db.withTenant(actor, async (tx) => {
        const userId = await repo.removeDevice(tx, actor.organizationId, id, ADMIN_KINDS.has(actor.kind), actor.userId);
        if (!userId) throw AppError.notFound('Device');
        await pushTargets.changed(tx, actor.organizationId, [userId]);
      });
    },

    async heartbeat(actor: Actor, input: Heartbeat) {
      const r = await ctx.db.withTenant(actor, (tx) => heartbeatIn(tx, actor, input));
      if ('conflict' in r) {
        throw AppError.conflict('A newer heartbeat of this device is already recorded', 'STALE_HEARTBEAT', {
          last_seen_at: r.conflict.last_seen_at,
        });
      }
      return publicDevice(r.device);
    },

    /** The caller's devices in an offline sync window (deleted ones are tombstones, except at a first sync). */
    async changedIn(tx: Tx, actor: Actor, w: SyncWindow) {
      return repo.devicesChangedIn(tx, actor.userId, w);
    },

    /** Registered devices per app, and how many were seen in the last hour (mobile health). */
    countsByApp: (tx: Tx) => repo.deviceCountsByApp(tx),

    /** Devices seen in the last hour per app and version (mobile health). */
    async seenLastHour(tx: Tx) {
      return repo.deviceActivity(tx);
    },
  };
}

export type DeviceService = ReturnType<typeof createDeviceService>;
