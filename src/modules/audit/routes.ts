import { actorOf } from '../../platform/auth.js';
import type { Api } from '../../platform/context.js';
import { Page } from '../../platform/schemas.js';
import { AuditOut, AuditQuery } from './schemas.js';
import type { AuditService } from './service.js';

export function auditRoutes(app: Api, svc: AuditService) {
  app.get(
    '/audit',
    {
      config: { auth: { roles: ['administrator'] } },
      schema: {
        operationId: 'listAudit',
        tags: ['audit'],
        querystring: AuditQuery,
        response: { 200: Page(AuditOut) },
      },
    },
    async (req) => svc.list(actorOf(req), req.query),
  );
}
