import { Type } from '@sinclair/typebox';
import { actorOf, tenantOf } from '../../platform/auth.js';
import { pageRequest, toPage } from '../../platform/pagination.js';
import { Id, Nullable, Page, PageQueryProps, Strict, Timestamp } from '../../platform/schemas.js';
import type { AppContext, Module } from '../../platform/context.js';

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
        return ctx.db.withTenant(tenantOf(actorOf(req)), async (tx) => {
          const { rows } = await tx.query(
            `SELECT id, actor_user_id, action, entity_type, entity_id, before, after, request_id, created_at FROM audit_log
              WHERE ($1::text IS NULL OR action = $1) AND ($2::text IS NULL OR entity_type = $2) AND ($3::text IS NULL OR entity_id = $3)
                AND ($4::text IS NULL OR actor_user_id = $4) AND ($5::timestamptz IS NULL OR created_at >= $5)
                AND ($6::timestamptz IS NULL OR created_at < $6) AND ($7::text IS NULL OR id < $7)
              ORDER BY id DESC LIMIT $8`,
            [q.action ?? null, q.entity_type ?? null, q.entity_id ?? null, q.actor_user_id ?? null, q.from ?? null, q.to ?? null, page.after, page.limit + 1],
          );
          return toPage(rows, page);
        });
      },
    );
  },
});
