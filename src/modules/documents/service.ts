import { AppError } from '../../platform/errors.js';
import { newId } from '../../platform/ids.js';
import { tenantOf, type Actor } from '../../platform/auth.js';
import { recordAudit } from '../../platform/audit.js';
import { assertTransition, type Transitions } from '../../platform/state-machine.js';
import { assertObjectLink } from '../../platform/storage-links.js';
import { pageRequest, toPage } from '../../platform/pagination.js';
import type { DocumentsContext } from './index.js';
import type { Tx } from '../../platform/db/index.js';

export type DocumentStatus = 'pending' | 'approved' | 'rejected';
export const DOCUMENT_TRANSITIONS: Transitions<DocumentStatus> = { pending: ['approved', 'rejected'], approved: [], rejected: [] };

const COLUMNS =
  'id, organization_id, owner_user_id, subject_type, subject_id, doc_type, title, storage_object_id, status, review_notes, reviewed_by_user_id, reviewed_at, created_at, updated_at';

export interface NewDocument {
  subject_type: 'operator' | 'driver' | 'merchant' | 'user';
  subject_id?: string;
  doc_type: string;
  title: string;
  storage_object_id?: string;
}

const isStaff = (a: Actor) => a.kind === 'administrator' || a.kind === 'platform';

const subjectNotFound = (type: string) =>
  AppError.unprocessable(`subject_id is not a ${type} of this organization`, 'SUBJECT_NOT_FOUND', [{ field: 'subject_id', message: `not a ${type} of this organization` }]);

export function createDocumentService(ctx: DocumentsContext) {
  const { db } = ctx;

  /**
   * The subject a document is about, checked to exist in the caller's organization and to be of the named
   * kind (422 SUBJECT_NOT_FOUND). Without subject_id it is the caller's own: his organization (operator),
   * himself (user), his driver profile or his merchant. Only administrators name someone else's subject
   * (403 SUBJECT_NOT_YOURS otherwise); operator documents are the administrators' alone.
   */
  async function resolveSubject(tx: Tx, actor: Actor, input: NewDocument): Promise<string> {
    const staff = isStaff(actor);
    const logistics = ctx.deps.logistics;
    const own = async (): Promise<string | null> => {
      if (input.subject_type === 'operator') return actor.organizationId;
      if (input.subject_type === 'user') return actor.userId;
      if (input.subject_type === 'driver') return (await logistics.driverOfUser(tx, actor.userId))?.id ?? null;
      return (await logistics.merchantOfUser(tx, actor.userId))?.id ?? null;
    };
    if (input.subject_type === 'operator' && !staff) throw AppError.forbidden('Only administrators submit operator documents', 'SUBJECT_NOT_YOURS');
    const mine = await own();
    const id = input.subject_id ?? mine;
    if (!id) throw subjectNotFound(input.subject_type);
    if (id === mine) return id;
    if (!staff) throw AppError.forbidden('You may submit documents only about yourself, your driver profile or your merchant', 'SUBJECT_NOT_YOURS');
    const exists =
      input.subject_type === 'operator'
        ? id === actor.organizationId
        : input.subject_type === 'user'
          ? await ctx.deps.identity.userExists(tx, id)
          : input.subject_type === 'driver'
            ? !!(await logistics.getDriver(tx, id))
            : !!(await logistics.getMerchant(tx, id));
    if (!exists) throw subjectNotFound(input.subject_type);
    return id;
  }

  return {
    async create(actor: Actor, input: NewDocument) {
      return db.withTenant(tenantOf(actor), async (tx) => {
        const subjectId = await resolveSubject(tx, actor, input);
        if (input.storage_object_id) await assertObjectLink(ctx, tx, actor, input.storage_object_id, ['document']);
        const { rows } = await tx.query(
          `INSERT INTO document (organization_id, id, owner_user_id, subject_type, subject_id, doc_type, title, storage_object_id)
           VALUES ($1,$2,$3,$4,$5,$6,$7,$8) RETURNING ${COLUMNS}`,
          [actor.organizationId, newId(), actor.userId, input.subject_type, subjectId, input.doc_type, input.title, input.storage_object_id ?? null],
        );
        await recordAudit(tx, actor, { action: 'document.submitted', entityType: 'document', entityId: rows[0].id, after: { doc_type: input.doc_type, status: 'pending' } });
        return rows[0];
      });
    },

    /** Administrators see every document; anyone else sees his own. */
    async list(actor: Actor, q: { status?: DocumentStatus; subject_type?: string; subject_id?: string; limit?: number; cursor?: string }) {
      const page = pageRequest(q);
      return db.withTenant(tenantOf(actor), async (tx) => {
        const { rows } = await tx.query(
          `SELECT ${COLUMNS} FROM document
            WHERE ($1::text IS NULL OR status = $1) AND ($2::text IS NULL OR subject_type = $2) AND ($3::text IS NULL OR subject_id = $3)
              AND ($4::text IS NULL OR owner_user_id = $4) AND ($5::text IS NULL OR id < $5)
            ORDER BY id DESC LIMIT $6`,
          [q.status ?? null, q.subject_type ?? null, q.subject_id ?? null, isStaff(actor) ? null : actor.userId, page.after, page.limit + 1],
        );
        return toPage(rows, page);
      });
    },

    async review(actor: Actor, id: string, decision: 'approved' | 'rejected', notes?: string) {
      return db.withTenant(tenantOf(actor), async (tx) => {
        const { rows } = await tx.query<{ status: DocumentStatus }>(`SELECT ${COLUMNS} FROM document WHERE id = $1 FOR UPDATE`, [id]);
        if (!rows[0]) throw AppError.notFound('Document');
        assertTransition('document', DOCUMENT_TRANSITIONS, rows[0].status, decision);
        const { rows: out } = await tx.query(
          `UPDATE document SET status = $2, review_notes = $3, reviewed_by_user_id = $4, reviewed_at = now(), updated_at = now()
            WHERE id = $1 RETURNING ${COLUMNS}`,
          [id, decision, notes ?? null, actor.userId],
        );
        await recordAudit(tx, actor, { action: `document.${decision}`, entityType: 'document', entityId: id, before: { status: rows[0].status }, after: { status: decision, review_notes: notes ?? null } });
        return out[0];
      });
    },
  };
}

export type DocumentService = ReturnType<typeof createDocumentService>;
