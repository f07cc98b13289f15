import type { Actor } from '../../platform/auth.js';
import { pageRequest, toPage } from '../../platform/pagination.js';
import type { AuditContext } from './context.js';
import { listAudit, type AuditRow } from './repo.js';
import type { AuditQuery, AuditView } from './schemas.js';

const auditOut = (a: AuditRow): AuditView => ({
  id: a.id,
  actor_user_id: a.actor_user_id,
  action: a.action,
  entity_type: a.entity_type,
  entity_id: a.entity_id,
  before: a.before as AuditView['before'],
  after: a.after as AuditView['after'],
  request_id: a.request_id,
  created_at: a.created_at,
});

export function createAuditService(ctx: AuditContext) {
  return {
    /** The organization's audit entries matching the filter, newest first. */
    async list(actor: Actor, q: AuditQuery) {
      const page = pageRequest(q);
      const rows = await ctx.db.withTenant(actor, (tx) =>
        listAudit(tx, {
          action: q.action ?? null,
          entityType: q.entity_type ?? null,
          entityId: q.entity_id ?? null,
          actorUserId: q.actor_user_id ?? null,
          from: q.from ?? null,
          to: q.to ?? null,
          after: page.after,
          limit: page.limit + 1,
        }),
      );
      return toPage(rows, page, auditOut);
    },
  };
}

export type AuditService = ReturnType<typeof createAuditService>;
