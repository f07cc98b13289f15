import { createAnnouncedCache } from '../../../platform/cache.js';
import type { AppContext } from '../../../platform/context.js';
import type { Tx } from '../../../platform/db/index.js';
import * as repo from '../repo.js';
import type { PushTarget } from '../repo.js';

/**
 * The live devices of each user (`organization:user`), read by every notification's pushes: cached per user (an
 * empty list too), the missing users loaded in one statement in the caller's transaction. Registering, moving a
 * push token to another user and removing a device announce the users whose devices changed (`devices_changed`).
 */
export function createPushTargets(ctx: Pick<AppContext, 'db' | 'onClose'>) {
  const cache = createAnnouncedCache<PushTarget[]>(ctx, 'devices_changed');
  const keyOf = (organizationId: string, userId: string) => `${organizationId}:${userId}`;

  return {
    /** The live devices of these users, in the order of `userIds`. */
    async of(tx: Tx, organizationId: string, userIds: string[]): Promise<PushTarget[]> {
      const ids = [...new Set(userIds)];
      const byKey = await cache.getMany(
        ids.map((u) => keyOf(organizationId, u)),
        async (missing) => {
          const users = missing.map((k) => k.slice(organizationId.length + 1));
          const rows = await repo.pushTargets(tx, organizationId, users);
          const byUser = new Map<string, PushTarget[]>(missing.map((k) => [k, []]));
          for (const d of rows) byUser.get(keyOf(organizationId, d.user_id))?.push(d);
          return byUser;
        },
        [],
      );
      return ids.flatMap((u) => byKey.get(keyOf(organizationId, u)) ?? []);
    },

    /** In the transaction of a change of these users' devices: every instance forgets their lists at commit. */
    async changed(tx: Tx, organizationId: string, userIds: (string | null)[]): Promise<void> {
      for (const u of new Set(userIds)) if (u) await cache.changed(tx, keyOf(organizationId, u));
    },
  };
}

export type PushTargets = ReturnType<typeof createPushTargets>;
