import type { Static } from '@sinclair/typebox';
import { and, count, desc, eq, lt, sql } from 'drizzle-orm';
import type { Tx } from '../../../platform/db/index.js';
import { inScope, type TerritoryScope } from '../../../platform/scope.js';
import type { ReviewOut } from '../schemas.js';
import type { ReviewStatus } from '../schemas.js';
import { merchantPaymentReview as review } from '../tables.js';

/** A payment review as stored (derived from the table). */
export type ReviewRecord = typeof review.$inferSelect;
/** A payment review as the API shows it (the response schema). */
export type ReviewView = Static<typeof ReviewOut>;

export const reviewOut = (r: ReviewRecord): ReviewView => ({
  id: r.id,
  territory_id: r.territoryId,
  order_id: r.orderId,
  merchant_id: r.merchantId,
  customer_id: r.customerId,
  amount: r.amount,
  currency: r.currency,
  proof_storage_object_id: r.proofStorageObjectId,
  customer_reference: r.customerReference,
  status: r.status,
  review_notes: r.reviewNotes,
  submissions: r.submissions,
  submitted_at: r.submittedAt,
  reviewed_by_user_id: r.reviewedByUserId,
  reviewed_at: r.reviewedAt,
  updated_at: r.updatedAt,
});

const one = (rows: ReviewRecord[]): ReviewView | null => (rows[0] ? reviewOut(rows[0]) : null);

export type NewReview = Pick<
  typeof review.$inferInsert,
  | 'organizationId'
  | 'id'
  | 'territoryId'
  | 'orderId'
  | 'merchantId'
  | 'customerId'
  | 'amount'
  | 'currency'
  | 'proofStorageObjectId'
  | 'customerReference'
>;

/** The order's first review; null when the order has one already (one review per order). */
export async function insertReview(tx: Tx, v: NewReview): Promise<ReviewView | null> {
  return one(
    await tx.orm
      .insert(review)
      .values(v)
      .onConflictDoNothing({ target: [review.organizationId, review.orderId] })
      .returning(),
  );
}

export async function findReview(tx: Tx, id: string, lock = false): Promise<ReviewView | null> {
  const q = tx.orm.select().from(review).where(eq(review.id, id));
  return one(lock ? await q.for('update') : await q);
}

export async function findReviewOfOrderForUpdate(tx: Tx, orderId: string): Promise<ReviewView | null> {
  return one(await tx.orm.select().from(review).where(eq(review.orderId, orderId)).for('update'));
}

/** A rejected review reopened by a new proof. */
export async function reopenReview(
  tx: Tx,
  id: string,
  v: { amount: string; proofStorageObjectId: string | null; customerReference: string | null },
): Promise<ReviewView> {
  const rows = await tx.orm
    .update(review)
    .set({
      status: 'pending',
      amount: v.amount,
      proofStorageObjectId: v.proofStorageObjectId,
      customerReference: v.customerReference,
      submissions: sql`${review.submissions} + 1`,
      submittedAt: sql`now()`,
      reviewedByUserId: null,
      reviewedAt: null,
      updatedAt: sql`now()`,
    })
    .where(eq(review.id, id))
    .returning();
  return reviewOut(rows[0]);
}

export async function decideReview(
  tx: Tx,
  id: string,
  to: 'approved' | 'rejected',
  notes: string | null,
  userId: string,
): Promise<ReviewView> {
  const rows = await tx.orm
    .update(review)
    .set({ status: to, reviewNotes: notes, reviewedByUserId: userId, reviewedAt: sql`now()`, updatedAt: sql`now()` })
    .where(eq(review.id, id))
    .returning();
  return reviewOut(rows[0]);
}

/** The pending review of an order becomes `cancelled`; null when it has none pending. */
export async function cancelPendingReviewOfOrder(tx: Tx, orderId: string): Promise<ReviewView | null> {
  return one(
    await tx.orm
      .update(review)
      .set({ status: 'cancelled', updatedAt: sql`now()` })
      .where(and(eq(review.orderId, orderId), eq(review.status, 'pending')))
      .returning(),
  );
}

export interface ReviewListFilter {
  status: ReviewStatus | null;
  merchantId: string | null;
  orderId: string | null;
  scope: TerritoryScope;
  after: string | null;
  limit: number;
}

/** Newest first, `limit` rows after the cursor id. */
export async function listReviews(tx: Tx, f: ReviewListFilter): Promise<ReviewView[]> {
  const rows = await tx.orm
    .select()
    .from(review)
    .where(
      and(
        f.status === null ? undefined : eq(review.status, f.status),
        f.merchantId === null ? undefined : eq(review.merchantId, f.merchantId),
        f.orderId === null ? undefined : eq(review.orderId, f.orderId),
        inScope(review.territoryId, f.scope),
        f.after === null ? undefined : lt(review.id, f.after),
      ),
    )
    .orderBy(desc(review.id))
    .limit(f.limit);
  return rows.map(reviewOut);
}

/** The reviews whose proof is this storage object (for the object read grant). */
export async function reviewsWithProof(tx: Tx, objectId: string): Promise<{ merchantId: string; territoryId: string | null }[]> {
  return tx.orm
    .select({ merchantId: review.merchantId, territoryId: review.territoryId })
    .from(review)
    .where(eq(review.proofStorageObjectId, objectId));
}

/** Reviews per status in the scope. */
export async function reviewCountsByStatus(tx: Tx, scope: TerritoryScope): Promise<Record<string, number>> {
  const rows = await tx.orm
    .select({ status: review.status, n: count() })
    .from(review)
    .where(inScope(review.territoryId, scope))
    .groupBy(review.status);
  return Object.fromEntries(rows.map((r) => [r.status, r.n]));
}

export async function pendingReviewCount(tx: Tx, scope: TerritoryScope): Promise<number> {
  const rows = await tx.orm
    .select({ n: count() })
    .from(review)
    .where(and(eq(review.status, 'pending'), inScope(review.territoryId, scope)));
  return rows[0].n;
}
