import { Type } from '@sinclair/typebox';
import { actorOf, type Actor } from '../../platform/auth.js';
import { recordAudit } from '../../platform/audit.js';
import type { Api } from '../../platform/context.js';
import type { IdentityContext } from './index.js';
import type { Tx } from '../../platform/db/index.js';
import { AppError } from '../../platform/errors.js';
import { IdParams, ShortText, Strict } from '../../platform/schemas.js';
import { principalOf, publicUser } from './service.js';
import * as repo from './repo.js';
import type { UserView } from './repo.js';
import { UserOut } from './routes.js';

/**
 * Account lifecycle: an organization administrator deactivates and reactivates users of his organization.
 * Deactivation, in one transaction: `users.active = false`, every session of the user revoked (its refresh
 * tokens with it), a NOTIFY per session that closes the user's open SSE streams on every instance, and a
 * driver profile made unavailable with its not-yet-picked-up trips returned to dispatch. The next request
 * with an old access token answers 401 SESSION_REVOKED; login answers 401 INVALID_CREDENTIALS, exactly as
 * for a wrong password, so strangers learn nothing. Refused: deactivating oneself (422 CANNOT_DEACTIVATE_SELF),
 * the last active administrator (409 LAST_ADMINISTRATOR), a platform operator (403 PLATFORM_USER).
 */
export function createUserLifecycle(ctx: IdentityContext) {
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
      const revoked = await ctx.deps.identity.revokeUserSessions(tx, actor.organizationId, id, 'user_deactivated');
      await ctx.deps.userDeactivated.run(tx, actor, id);
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

const DEACTIVATE_DOC =
  'Organization administrators only; users of other organizations are 404. In one transaction: the user is marked inactive, every session and refresh ' +
  'token of the user is revoked, open SSE streams of the user close within a second (on every instance, through NOTIFY session_revoked), and a driver ' +
  "profile goes unavailable with its assigned/accepted trips back to pending. Afterwards any request with the user's access token is 401 `SESSION_REVOKED`, " +
  '/auth/refresh is 401 `INVALID_REFRESH_TOKEN`, and login is 401 `INVALID_CREDENTIALS` (the same answer as a wrong password). Refused: oneself ' +
  '(422 `CANNOT_DEACTIVATE_SELF`), the last active administrator (409 `LAST_ADMINISTRATOR`), platform operators (403 `PLATFORM_USER`). ' +
  'Deactivating an inactive user changes nothing. Audited (`user.deactivated`, with the reason).';

export function userLifecycleRoutes(app: Api, ctx: IdentityContext) {
  const svc = createUserLifecycle(ctx);
  const body = Strict({ reason: Type.Optional(ShortText(500)) });
  app.post(
    '/app-users/:id/deactivate',
    {
      config: { auth: { roles: ['administrator'] } },
      schema: {
        operationId: 'deactivateAppUser',
        tags: ['users'],
        summary: 'Deactivate a user of the organization: sessions revoked at once',
        description: DEACTIVATE_DOC,
        params: IdParams,
        body,
        response: { 200: UserOut },
      },
    },
    async (req) => svc.deactivate(actorOf(req), req.params.id, req.body?.reason),
  );

  app.post(
    '/app-users/:id/reactivate',
    {
      config: { auth: { roles: ['administrator'] } },
      schema: {
        operationId: 'reactivateAppUser',
        tags: ['users'],
        summary: 'Reactivate a deactivated user of the organization',
        description:
          "Organization administrators only; other organizations' users are 404. The user may log in again (old sessions stay revoked). A driver profile stays " +
          'unavailable until he or staff turn it on. Reactivating an active user changes nothing. Audited (`user.reactivated`).',
        params: IdParams,
        body,
        response: { 200: UserOut },
      },
    },
    async (req) => svc.reactivate(actorOf(req), req.params.id, req.body?.reason),
  );
}
