import { recordAudit } from '../../../platform/audit.js';
import type { Actor } from '../../../platform/auth.js';
import type { Tx } from '../../../platform/db/index.js';
import { AppError } from '../../../platform/errors.js';
import { newId } from '../../../platform/ids.js';
import { money } from '../../../platform/money.js';
import type { OrderMoneyFacts } from '../../commerce/index.js';
import { pageRequest, toPage } from '../../../platform/pagination.js';
import { assertTransition } from '../../../platform/state-machine.js';
import { assertObjectLink } from '../../storage/index.js';
import type { MoneyContext } from '../context.js';
import { scopeOf } from '../../../platform/scope.js';
import * as reviewRepo from '../repo/reviews.js';
import type { ReviewView } from '../repo/reviews.js';
import type { ReviewStatus } from '../schemas.js';
import { ordersOf, ownMerchant, PAYMENT_STATUS_TRANSITIONS, REVIEW_TRANSITIONS } from './ledger.js';

/** A payment review as the API shows it (other modules list them). */
export type ReviewRow = ReviewView;

export interface ProofInput {
  amount: string;
  currency?: string;
  proof_storage_object_id?: string;
  customer_reference?: string;
}

export interface ReviewFilter {
  status?: ReviewStatus;
  merchant_id?: string;
  order_id?: string;
  limit?: number;
  cursor?: string;
}

const auditView = (r: ReviewRow) => ({ status: r.status, amount: r.amount, review_notes: r.review_notes, order_id: r.order_id });

export function createReviewService(ctx: MoneyContext) {
  const { db } = ctx;

  async function merchantOwner(tx: Tx, merchantId: string): Promise<string[]> {
    const m = await ctx.deps.logistics.getMerchant(tx, merchantId);
    return m ? [m.owner_user_id] : [];
  }

  async function emit(tx: Tx, actor: Actor, type: string, r: ReviewRow, audience: string[]) {
    await ctx.events.record(tx, actor.organizationId, {
      type,
      entityType: 'merchant_payment_review',
      entityId: r.id,
      territoryId: r.territory_id,
      actorUserId: actor.userId,
      audienceUserIds: audience,
      payload: { order_id: r.order_id, merchant_id: r.merchant_id, status: r.status, amount: r.amount, currency: r.currency },
    });
  }

  /** The customer's proof for a merchant_direct order: creates the review, or reopens a rejected one. */
  async function submitProof(actor: Actor, orderId: string, input: ProofInput): Promise<{ created: boolean; review: ReviewRow }> {
    if (!input.proof_storage_object_id && !input.customer_reference) {
      throw AppError.unprocessable('A proof object or a customer reference is required', 'PROOF_REQUIRED', [
        { field: 'proof_storage_object_id', message: 'required when customer_reference is absent' },
      ]);
    }
    return db.withTenant(actor, async (tx) => {
      const orders = ordersOf(ctx);
      const facts = await orders.getOrderFacts(tx, orderId);
      if (!facts || facts.customerUserId !== actor.userId) throw AppError.notFound('Order');
      if (facts.paymentDestination !== 'merchant_direct') {
        throw AppError.unprocessable(
          `The order is paid by '${facts.paymentDestination}', not directly to the merchant`,
          'NOT_DIRECT_PAYMENT',
        );
      }
      if (facts.status === 'cancelled') throw AppError.conflict('The order is cancelled', 'ORDER_CANCELLED');
      if (!money(input.amount).eq(money(facts.total))) {
        throw AppError.unprocessable(`The amount must equal the order total ${facts.total}`, 'AMOUNT_MISMATCH', [
          { field: 'amount', message: `must be ${facts.total}` },
        ]);
      }
      if ((input.currency ?? facts.currency) !== facts.currency) {
        throw AppError.unprocessable(`The currency must be ${facts.currency}`, 'CURRENCY_MISMATCH', [
          { field: 'currency', message: `must be ${facts.currency}` },
        ]);
      }
      assertTransition('Order payment', PAYMENT_STATUS_TRANSITIONS, facts.paymentStatus, 'pending_review');
      if (input.proof_storage_object_id) await assertObjectLink(ctx, tx, actor, input.proof_storage_object_id, ['payment_proof']);

      const inserted = await reviewRepo.insertReview(tx, {
        organizationId: actor.organizationId,
        id: newId(),
        territoryId: facts.territoryId,
        orderId,
        merchantId: facts.merchantId,
        customerId: actor.userId,
        amount: input.amount,
        currency: facts.currency,
        proofStorageObjectId: input.proof_storage_object_id ?? null,
        customerReference: input.customer_reference ?? null,
      });
      let review: ReviewRow;
      let created = true;
      if (inserted) {
        review = inserted;
      } else {
        // One review per order: a new proof reopens a rejected review (a pending or decided one refuses it).
        created = false;
        const existing = (await reviewRepo.findReviewOfOrderForUpdate(tx, orderId))!;
        assertTransition('Payment review', REVIEW_TRANSITIONS, existing.status, 'pending');
        review = await reviewRepo.reopenReview(tx, existing.id, {
          amount: input.amount,
          proofStorageObjectId: input.proof_storage_object_id ?? null,
          customerReference: input.customer_reference ?? null,
        });
      }
      await orders.setPaymentStatus(tx, orderId, 'pending_review', review.id);
      await recordAudit(tx, actor, {
        action: created ? 'payment_review.submitted' : 'payment_review.resubmitted',
        entityType: 'merchant_payment_review',
        entityId: review.id,
        after: auditView(review),
      });
      await emit(tx, actor, 'payment_review.submitted', review, await merchantOwner(tx, review.merchant_id));
      return { created, review };
    });
  }

  /** A review the actor may see: the merchant his own; staff all (sub-administrators in their territories). Else 404. */
  async function loadVisible(tx: Tx, actor: Actor, id: string, lock: boolean): Promise<ReviewRow> {
    const r = await reviewRepo.findReview(tx, id, lock);
    if (!r) throw AppError.notFound('Payment review');
    if (actor.kind === 'comercio') {
      const m = await ownMerchant(ctx, tx, actor);
      if (m.id !== r.merchant_id) throw AppError.notFound('Payment review');
    }
    const scope = scopeOf(actor);
    if (scope && (!r.territory_id || !scope.includes(r.territory_id))) throw AppError.notFound('Payment review');
    return r;
  }

  /** approve: review approved, order paid. reject: review rejected, order payment failed (the customer may submit a new proof). */
  async function decide(actor: Actor, id: string, to: 'approved' | 'rejected', notes: string | null): Promise<ReviewRow> {
    return db.withTenant(actor, async (tx) => {
      const before = await loadVisible(tx, actor, id, true);
      assertTransition('Payment review', REVIEW_TRANSITIONS, before.status, to);
      const orders = ordersOf(ctx);
      const facts = await orders.getOrderFacts(tx, before.order_id);
      if (!facts) throw AppError.notFound('Order');
      const paymentTo = to === 'approved' ? 'paid' : 'failed';
      assertTransition('Order payment', PAYMENT_STATUS_TRANSITIONS, facts.paymentStatus, paymentTo);
      const after = await reviewRepo.decideReview(tx, id, to, notes, actor.userId);
      await orders.setPaymentStatus(tx, before.order_id, paymentTo, id);
      await recordAudit(tx, actor, {
        action: `payment_review.${to}`,
        entityType: 'merchant_payment_review',
        entityId: id,
        before: auditView(before),
        after: auditView(after),
      });
      await emit(tx, actor, `payment_review.${to}`, after, [before.customer_id]);
      return after;
    });
  }

  async function list(actor: Actor, q: ReviewFilter) {
    const page = pageRequest(q);
    return db.withTenant(actor, async (tx) => {
      const merchantId = actor.kind === 'comercio' ? (await ownMerchant(ctx, tx, actor)).id : (q.merchant_id ?? null);
      const rows = await reviewRepo.listReviews(tx, {
        status: q.status ?? null,
        merchantId,
        orderId: q.order_id ?? null,
        scope: scopeOf(actor),
        after: page.after,
        limit: page.limit + 1,
      });
      return toPage(rows, page);
    });
  }

  /** MoneyHooks.orderCancelled: a pending review of the order becomes `cancelled` (other states stay). */
  async function cancelForOrder(tx: Tx, actor: Actor, facts: OrderMoneyFacts): Promise<void> {
    const cancelled = await reviewRepo.cancelPendingReviewOfOrder(tx, facts.orderId);
    if (cancelled) {
      await recordAudit(tx, actor, {
        action: 'payment_review.cancelled',
        entityType: 'merchant_payment_review',
        entityId: cancelled.id,
        before: { status: 'pending' },
        after: { status: 'cancelled' },
      });
    }
  }

  return { submitProof, decide, list, cancelForOrder };
}
