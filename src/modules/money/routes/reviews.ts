import { Type } from '@sinclair/typebox';
import { actorOf } from '../../../platform/auth.js';
import type { Api } from '../../../platform/context.js';
import { Currency, Id, IdParams, NonNegativeMoney, Page, PageQueryProps, ShortText, Strict } from '../../../platform/schemas.js';
import type { MoneyContext } from '../context.js';
import { ReviewListQuery, ReviewOut, ReviewStatusSchema } from '../schemas.js';
import { createReviewService, type ProofInput, type ReviewFilter } from '../service/reviews.js';

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
        querystring: ReviewListQuery,
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
