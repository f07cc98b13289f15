import { AppError } from '../../platform/errors.js';
import { newId } from '../../platform/ids.js';
import type { Actor } from '../../platform/auth.js';
import { recordAudit } from '../../platform/audit.js';
import { assertTransition, type Transitions } from '../../platform/state-machine.js';
import { assertObjectLink } from '../storage/index.js';
import { pageRequest, toPage } from '../../platform/pagination.js';
import type { DocumentsContext } from './context.js';
import type { Tx } from '../../platform/db/index.js';
import * as repo from './repo.js';
import type { DocumentQuery, DocumentStatus, NewDocument, ReviewDecision } from './schemas.js';

export const DOCUMENT_TRANSITIONS: Transitions<DocumentStatus> = { pending: ['approved', 'rejected'], approved: [], rejected: [] };

const isStaff = (a: Actor) => a.kind === 'administrator' || a.kind === 'platform';

const subjectNotFound = (type: string) =>
  AppError.unprocessable(`subject_id is not a ${type} of this organization`, 'SUBJECT_NOT_FOUND', [
    { field: 'subject_id', message: `not a ${type} of this organization` },
  ]);

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
    if (input.subject_type === 'operator' && !staff)
      throw AppError.forbidden('Only administrators submit operator documents', 'SUBJECT_NOT_YOURS');
    const mine = await own();
    const id = input.subject_id ?? mine;
    if (!id) throw subjectNotFound(input.subject_type);
    if (id === mine) return id;
    if (!staff)
      throw AppError.forbidden('You may submit documents only about yourself, your driver profile or your merchant', 'SUBJECT_NOT_YOURS');
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
      return db.withTenant(actor, async (tx) => {
        const subjectId = await resolveSubject(tx, actor, input);
        if (input.storage_object_id) await assertObjectLink(ctx, tx, actor, input.storage_object_id, ['document']);
        const doc = await repo.insertDocument(tx, {
          organizationId: actor.organizationId,
          id: newId(),
          ownerUserId: actor.userId,
          subjectType: input.subject_type,
          subjectId,
          docType: input.doc_type,
          title: input.title,
          storageObjectId: input.storage_object_id ?? null,
        });
        await recordAudit(tx, actor, {
          action: 'document.submitted',
          entityType: 'document',
          entityId: doc.id,
          after: { doc_type: input.doc_type, status: 'pending' },
        });
        return doc;
      });
    },

    /** Administrators see every document; anyone else sees his own. */
    async list(actor: Actor, q: DocumentQuery) {
      const page = pageRequest(q);
      return db.withTenant(actor, async (tx) => {
        const rows = await repo.listDocuments(tx, {
          status: q.status ?? null,
          subjectType: q.subject_type ?? null,
          subjectId: q.subject_id ?? null,
          ownerUserId: isStaff(actor) ? null : actor.userId,
          after: page.after,
          limit: page.limit + 1,
        });
        return toPage(rows, page);
      });
    },

    async review(actor: Actor, id: string, decision: ReviewDecision, notes?: string) {
      return db.withTenant(actor, async (tx) => {
        const before = await repo.lockDocument(tx, id);
        if (!before) throw AppError.notFound('Document');
        assertTransition('document', DOCUMENT_TRANSITIONS, before.status, decision);
        const after = await repo.reviewDocument(tx, id, decision, notes ?? null, actor.userId);
        await recordAudit(tx, actor, {
          action: `document.${decision}`,
          entityType: 'document',
          entityId: id,
          before: { status: before.status },
          after: { status: decision, review_notes: notes ?? null },
        });
        return after;
      });
    },
  };
}

export type DocumentService = ReturnType<typeof createDocumentService>;
