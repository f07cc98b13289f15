import { Type, type Static } from '@sinclair/typebox';
import { actorOf } from '../../platform/auth.js';
import { pageRequest, toPage } from '../../platform/pagination.js';
import { Id, Nullable, Page, PageQueryProps, Strict, Timestamp } from '../../platform/schemas.js';
import type { AppContext, Module } from '../../platform/context.js';
import { listAudit, type AuditRow } from './repo.js';

export const AuditOut = Type.Object({
  id: Type.String(),
  actor_user_id: Nullable(Type.String()),
  action: Type.String(),
  entity_type: Type.String(),
  entity_id: Type.String(),
  before: Nullable(Type.Object({}, { additionalProperties: true })),
  after: Nullable(Type.Object({}, { additionalProperties: true })),
  request_id: Nullable(Type.String()),
  created_at: Timestamp,
});

const auditOut = (a: AuditRow): Static<typeof AuditOut> => ({
  id: a.id,
  actor_user_id: a.actor_user_id,
  action: a.action,
  entity_type: a.entity_type,
  entity_id: a.entity_id,
  before: a.before as Static<typeof AuditOut>['before'],
  after: a.after as Static<typeof AuditOut>['after'],
  request_id: a.request_id,
  created_at: a.created_at,
});

export const createAuditModule = (ctx: AppContext): Module => ({
  name: 'audit',
  routes(app) {
    app.get(
      '/audit',
      {
        config: { auth: { roles: ['administrator'] } },
        schema: {
          operationId: 'listAudit',
          tags: ['audit'],
          querystring: Strict({
            ...PageQueryProps,
            action: Type.Optional(Type.String({ maxLength: 100 })),
            entity_type: Type.Optional(Type.String({ maxLength: 100 })),
            entity_id: Type.Optional(Id),
            actor_user_id: Type.Optional(Id),
            from: Type.Optional(Timestamp),
            to: Type.Optional(Timestamp),
          }),
          response: { 200: Page(AuditOut) },
        },
      },
      async (req) => {
        const q = req.query;
        const page = pageRequest(q);
        const rows = await ctx.db.withTenant(actorOf(req), (tx) =>
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
    );
  },
});
