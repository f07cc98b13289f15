import { Type } from '@sinclair/typebox';
import { Id, Strict } from '../../../platform/schemas.js';
import type { MobileContext } from '../context.js';
import { HeartbeatProps, publicDevice, publicNotification } from '../../notifications/index.js';
import { lastPosition, type SyncRegistry } from './sync.js';

/** The sync entities and operations of the inbox and devices; trips, orders, catalog... are registered by their modules. */
export function registerMobileSync(ctx: MobileContext, registry: SyncRegistry) {
  registry.registerProvider({
    entity: 'notifications',
    async pull(tx, actor, w) {
      // Inbox rows are never deleted, so there are no tombstones.
      const rows = await ctx.deps.notifications.changedIn(tx, actor.userId, w);
      return { changed: rows.map(publicNotification), deleted: [], last: lastPosition(rows), read: rows.length };
    },
  });

  registry.registerProvider({
    entity: 'devices',
    async pull(tx, actor, w) {
      const rows = await ctx.deps.devices.changedIn(tx, actor, w);
      return {
        last: lastPosition(rows),
        read: rows.length,
        changed: rows.filter((d) => d.deleted_at === null).map(publicDevice),
        deleted: rows.filter((d) => d.deleted_at !== null).map((d) => ({ id: d.id, deleted_at: d.deleted_at! })),
      };
    },
  });

  registry.registerOperation({
    type: 'notification.read',
    payload: Strict({ notification_id: Id }),
    async apply(tx, actor, p: { notification_id: string }) {
      const n = await ctx.deps.notifications.markReadIn(tx, actor, p.notification_id);
      return { status: 'applied', data: publicNotification(n) };
    },
  });

  registry.registerOperation({
    type: 'device.heartbeat',
    payload: Strict({
      ...HeartbeatProps,
      recorded_at: Type.String({ format: 'date-time', description: 'required offline: when the reading was taken' }),
    }),
    async apply(tx, actor, p) {
      const r = await ctx.deps.devices.heartbeatIn(tx, actor, p);
      if ('conflict' in r) {
        return {
          status: 'conflict',
          code: 'STALE_UPDATE',
          message: 'The server has a newer heartbeat of this device',
          server: publicDevice(r.conflict),
        };
      }
      return { status: 'applied', data: publicDevice(r.device) };
    },
  });
}
