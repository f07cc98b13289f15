import { Type } from '@sinclair/typebox';
import { actorOf, type Actor } from '../../platform/auth.js';
import { recordAudit } from '../../platform/audit.js';
import type { Api } from '../../platform/context.js';
import type { MoneyContext } from './index.js';
import type { Tx } from '../../platform/db/index.js';
import { AppError } from '../../platform/errors.js';
import { newId } from '../../platform/ids.js';
import { money } from '../../platform/money.js';
import type { OrderMoneyFacts } from '../../platform/order-contracts.js';
import { pageRequest, toPage } from '../../platform/pagination.js';
import {
  Currency,
  Id,
  IdParams,
  Money,
  NonNegativeMoney,
  Nullable,
  Page,
  PageQueryProps,
  ShortText,
  Strict,
  Timestamp,
} from '../../platform/schemas.js';
import { assertTransition } from '../../platform/state-machine.js';
import { assertObjectLink } from '../../platform/storage-links.js';
import { ordersOf, ownMerchant, PAYMENT_STATUS_TRANSITIONS, REVIEW_TRANSITIONS, scopeOf, type ReviewStatus } from './model.js';
import * as reviewRepo from './repo/reviews.js';
import type { ReviewView } from './repo/reviews.js';

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

const ReviewStatusSchema = Type.Union([
  Type.Literal('pending'),
  Type.Literal('approved'),
  Type.Literal('rejected'),
  Type.Literal('cancelled'),
]);
export const ReviewOut = Type.Object({
  id: Type.String(),
  territory_id: Nullable(Type.String()),
  order_id: Type.String(),
  merchant_id: Type.String(),
  customer_id: Type.String(),
  amount: Money,
  currency: Type.String(),
  proof_storage_object_id: Nullable(Type.String()),
  customer_reference: Nullable(Type.String()),
  status: ReviewStatusSchema,
  review_notes: Nullable(Type.String()),
  submissions: Type.Integer(),
  submitted_at: Timestamp,
  reviewed_by_user_id: Nullable(Type.String()),
  reviewed_at: Nullable(Timestamp),
  updated_at: Timestamp,
});
const ListQuery = Strict({ ...PageQueryProps, status: Type.Optional(ReviewStatusSchema), order_id: Type.Optional(Id) });
const STATES =
  'Review status: `pending → approved | rejected | cancelled` (cancelled when the order is cancelled), `rejected → pending` (the customer submits a new proof). ' +
  'Approve sets the order payment status `pending_review → paid`; reject sets it to `failed`. Any other move is 409 INVALID_TRANSITION.';

export function reviewRoutes(app: Api, ctx: MoneyContext) {
  const svc = createReviewService(ctx);
  app.post(
    '/customer/orders/:id/payment-proof',
    {
      config: { auth: { roles: ['delivery'] } },
      schema: {
        operationId: 'submitPaymentProof',
        tags: ['payments'],
        summary:
          'Submits the proof of a direct payment to the merchant (merchant_direct orders); 201 creates the review, 200 reopens a rejected one',
        description:
          'The amount must equal the order total (422 AMOUNT_MISMATCH). `proof_storage_object_id` is a storage object of purpose `payment_proof`; ' +
          'it may be omitted when `customer_reference` is given (one of both is required, 422 PROOF_REQUIRED). The order payment status goes ' +
          '`pending | failed → pending_review` (409 INVALID_TRANSITION otherwise). One review per order. ' +
          STATES,
        params: IdParams,
        body: Strict({
          amount: NonNegativeMoney,
          currency: Type.Optional(Currency),
          proof_storage_object_id: Type.Optional(Id),
          customer_reference: Type.Optional(ShortText(200)),
        }),
        response: { 200: ReviewOut, 201: ReviewOut },
      },
    },
    async (req, reply) => {
      const out = await svc.submitProof(actorOf(req), req.params.id, req.body as ProofInput);
      return reply.code(out.created ? 201 : 200).send(out.review);
    },
  );
  app.get(
    '/merchant/payment-reviews',
    {
      config: { auth: { roles: ['comercio'] } },
      schema: {
        operationId: 'listMerchantPaymentReviews',
        tags: ['payments'],
        summary: "The calling merchant's payment reviews, newest first. " + STATES,
        querystring: ListQuery,
        response: { 200: Page(ReviewOut) },
      },
    },
    async (req) => svc.list(actorOf(req), req.query as ReviewFilter),
  );
  for (const [action, to] of [
    ['approve', 'approved'],
    ['reject', 'rejected'],
  ] as const) {
    app.post(
      `/merchant/payment-reviews/:id/${action}`,
      {
        // Sub-administrators decide only with payments_review_decide (default false), within their territories.
        config: { auth: { roles: ['comercio', 'administrator', 'subadmin'], permission: 'payments_review_decide' } },
        schema: {
          operationId: action === 'approve' ? 'approvePaymentReview' : 'rejectPaymentReview',
          tags: ['payments'],
          summary: `${action === 'approve' ? 'Approves' : 'Rejects'} a pending payment review (the merchant his own; administrators any)`,
          description: STATES + (action === 'reject' ? ' `notes` is required for a rejection.' : ''),
          params: IdParams,
          body: action === 'reject' ? Strict({ notes: ShortText(1000) }) : Strict({ notes: Type.Optional(ShortText(1000)) }),
          response: { 200: ReviewOut },
        },
      },
      async (req) => svc.decide(actorOf(req), req.params.id, to, (req.body as { notes?: string } | undefined)?.notes ?? null),
    );
  }
  app.get(
    '/admin/payment-reviews',
    {
      config: { auth: { roles: ['administrator', 'subadmin'], permission: 'payments_review_view' } },
      schema: {
        operationId: 'listPaymentReviews',
        tags: ['payments'],
        summary: 'Every payment review (sub-administrators: those of their territories), newest first. ' + STATES,
        querystring: Strict({
          ...PageQueryProps,
          status: Type.Optional(ReviewStatusSchema),
          merchant_id: Type.Optional(Id),
          order_id: Type.Optional(Id),
        }),
        response: { 200: Page(ReviewOut) },
      },
    },
    async (req) => svc.list(actorOf(req), req.query as ReviewFilter),
  );
}
