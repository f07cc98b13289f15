import { and, desc, eq, lt, sql } from 'drizzle-orm';
import type { Tx } from '../../platform/db/index.js';
import type { DocumentStatus, DocumentView, ReviewDecision, SubjectType } from './schemas.js';
import { document } from './tables.js';

/** A document as stored (derived from the table). */
export type DocumentRecord = typeof document.$inferSelect;
export type NewDocumentRecord = Pick<
  typeof document.$inferInsert,
  'organizationId' | 'id' | 'ownerUserId' | 'subjectType' | 'subjectId' | 'docType' | 'title' | 'storageObjectId'
>;

export const documentOut = (d: DocumentRecord): DocumentView => ({
  id: d.id,
  organization_id: d.organizationId,
  owner_user_id: d.ownerUserId,
  subject_type: d.subjectType,
  subject_id: d.subjectId,
  doc_type: d.docType,
  title: d.title,
  storage_object_id: d.storageObjectId,
  status: d.status,
  review_notes: d.reviewNotes,
  reviewed_by_user_id: d.reviewedByUserId,
  reviewed_at: d.reviewedAt,
  created_at: d.createdAt,
  updated_at: d.updatedAt,
});

export async function insertDocument(tx: Tx, v: NewDocumentRecord): Promise<DocumentView> {
  const rows = await tx.orm.insert(document).values(v).returning();
  return documentOut(rows[0]);
}

export interface DocumentFilter {
  status: DocumentStatus | null;
  subjectType: SubjectType | null;
  subjectId: string | null;
  ownerUserId: string | null;
  after: string | null;
  limit: number;
}

/** Newest first, `limit` rows after the cursor id. */
export async function listDocuments(tx: Tx, f: DocumentFilter): Promise<DocumentView[]> {
  const rows = await tx.orm
    .select()
    .from(document)
    .where(
      and(
        f.status === null ? undefined : eq(document.status, f.status),
        f.subjectType === null ? undefined : eq(document.subjectType, f.subjectType),
        f.subjectId === null ? undefined : eq(document.subjectId, f.subjectId),
        f.ownerUserId === null ? undefined : eq(document.ownerUserId, f.ownerUserId),
        f.after === null ? undefined : lt(document.id, f.after),
      ),
    )
    .orderBy(desc(document.id))
    .limit(f.limit);
  return rows.map(documentOut);
}

export async function lockDocument(tx: Tx, id: string): Promise<DocumentView | null> {
  const rows = await tx.orm.select().from(document).where(eq(document.id, id)).for('update');
  return rows[0] ? documentOut(rows[0]) : null;
}

export async function reviewDocument(
  tx: Tx,
  id: string,
  decision: ReviewDecision,
  notes: string | null,
  userId: string,
): Promise<DocumentView> {
  const rows = await tx.orm
    .update(document)
    .set({ status: decision, reviewNotes: notes, reviewedByUserId: userId, reviewedAt: sql`now()`, updatedAt: sql`now()` })
    .where(eq(document.id, id))
    .returning();
  return documentOut(rows[0]);
}
