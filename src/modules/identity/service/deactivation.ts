import type { Actor } from '../../../platform/auth.js';
import { recordAudit } from '../../../platform/audit.js';
import type { Tx } from '../../../platform/db/index.js';
import { AppError } from '../../../platform/errors.js';
import type { IdentityContext } from '../context.js';
import * as repo from '../repo.js';
import type { UserView } from '../repo.js';
import { principalOf, publicUser, type IdentityService } from './accounts.js';

/**
 * Account lifecycle: an organization administrator deactivates and reactivates users of his organization.
 * Deactivation, in one transaction: `users.active = false`, every session of the user revoked (its refresh
 * tokens with it), a NOTIFY per session that closes the user's open SSE streams on every instance, and a
 * driver profile made unavailable with its not-yet-picked-up trips returned to dispatch. The next request
 * with an old access token answers 401 SESSION_REVOKED; login answers 401 INVALID_CREDENTIALS, exactly as
 * for a wrong password, so strangers learn nothing. Refused: deactivating oneself (422 CANNOT_DEACTIVATE_SELF),
 * the last active administrator (409 LAST_ADMINISTRATOR), a platform operator (403 PLATFORM_USER).
 */
export function createUserDeactivation(ctx: IdentityContext, identity: Pick<IdentityService, 'revokeUserSessions'>) {
  async function lockUser(tx: Tx, id: string): Promise<UserView> {
    const user = await repo.findUser(tx, id, true);
    if (!user) throw AppError.notFound('User');
    return user;
  }

  async function deactivate(actor: Actor, id: string, reason?: string) {
    return ctx.db.withTenant(actor, async (tx) => {
      if (id === actor.userId) throw AppError.unprocessable('You cannot deactivate your own account', 'CANNOT_DEACTIVATE_SELF');
      const found = await repo.findUser(tx, id);
      if (!found) throw AppError.notFound('User');
      if (principalOf(found) === 'administrator') {
        // Every administrator row locked in id order (no deadlock): two administrators removing each other
        // concurrently serialize here, and the second finds that he is no longer active himself.
        const rows = await repo.lockAdministrators(tx);
        if (!rows.some((r) => r.active && r.id !== id))
          throw AppError.conflict('The organization would have no active administrator left', 'LAST_ADMINISTRATOR');
      }
      const before = await lockUser(tx, id);
      if (before.platform_admin) throw AppError.forbidden('Platform operators are managed by the platform', 'PLATFORM_USER');
      if (!before.active) return publicUser(before);
      const after = await repo.setUserActive(tx, id, false);
      const revoked = await identity.revokeUserSessions(tx, actor.organizationId, id, 'user_deactivated');
      await ctx.deps.hooks.userDeactivated.run(tx, actor, id);
      await recordAudit(tx, actor, {
        action: 'user.deactivated',
        entityType: 'user',
        entityId: id,
        before: { active: true },
        after: { active: false, reason: reason ?? null, sessions_revoked: revoked },
      });
      return publicUser(after);
    });
  }

  async function reactivate(actor: Actor, id: string, reason?: string) {
    return ctx.db.withTenant(actor, async (tx) => {
      const before = await lockUser(tx, id);
      if (before.platform_admin) throw AppError.forbidden('Platform operators are managed by the platform', 'PLATFORM_USER');
      if (before.active) return publicUser(before);
      const after = await repo.setUserActive(tx, id, true);
      await recordAudit(tx, actor, {
        action: 'user.reactivated',
        entityType: 'user',
        entityId: id,
        before: { active: false },
        after: { active: true, reason: reason ?? null },
      });
      return publicUser(after);
    });
  }

  return { deactivate, reactivate };
}

export type UserDeactivation = ReturnType<typeof createUserDeactivation>;
