import type { Tx } from '../../platform/db/index.js';
import { selectList, type SnakeRow } from '../../platform/db/columns.js';
import { auditLog } from '../../platform/tables.js';

/** An audit entry as served (derived from the table, without the organization). */
export type AuditRow = Omit<SnakeRow<typeof auditLog.$inferSelect>, 'organization_id'>;

const AUDIT_COLUMNS = selectList(auditLog, 'a', { omit: ['organizationId'] });

export interface AuditFilter {
  action: string | null;
  entityType: string | null;
  entityId: string | null;
  actorUserId: string | null;
  from: Date | string | null;
  to: Date | string | null;
  after: string | null;
  limit: number;
}

/** Audit entries matching the filter, newest first, at most `limit`. */
export async function listAudit(tx: Tx, f: AuditFilter): Promise<AuditRow[]> {
  const { rows } = await tx.query<AuditRow>(
    `SELECT ${AUDIT_COLUMNS} FROM audit_log a
      WHERE ($1::text IS NULL OR action = $1) AND ($2::text IS NULL OR entity_type = $2) AND ($3::text IS NULL OR entity_id = $3)
        AND ($4::text IS NULL OR actor_user_id = $4) AND ($5::timestamptz IS NULL OR created_at >= $5)
        AND ($6::timestamptz IS NULL OR created_at < $6) AND ($7::text IS NULL OR id < $7)
      ORDER BY id DESC LIMIT $8`,
    [f.action, f.entityType, f.entityId, f.actorUserId, f.from, f.to, f.after, f.limit],
  );
  return rows;
}
