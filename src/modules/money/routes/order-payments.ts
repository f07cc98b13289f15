import { Type } from '@sinclair/typebox';
import { actorOf } from '../../../platform/auth.js';
import type { Api } from '../../../platform/context.js';
import { Id, IdParams, NonNegativeMoney, ShortText, Strict } from '../../../platform/schemas.js';
import type { MoneyContext } from '../context.js';
import { EntryOut, PaymentStatusOut, type ReceiptMethod, ReceiptOut, WalletOut } from '../schemas.js';
import { createOrderPaymentService } from '../service/order-payments.js';
import { RECEIPT_METHODS } from '../schemas.js';

export const PAYMENT_STATES_DOC =
  'Order payment status: `pending → pending_review` (direct-payment proof) `→ paid | failed`; `failed → pending_review` (new proof); ' +
  '`pending | authorized → paid` (platform payment recorded as received; cash orders at delivery); `paid → partially_refunded | refunded`; ' +
  '`partially_refunded → partially_refunded | refunded`. A cancelled order: `pending_review | authorized → failed` and its pending review is cancelled; ' +
  'a received payment of an order cancelled before delivery becomes `refunded`. Any other move is 409 INVALID_TRANSITION.';

export function orderPaymentRoutes(app: Api, ctx: MoneyContext) {
  const svc = createOrderPaymentService(ctx);
  const adminOnly = { auth: { roles: ['administrator' as const] } };
  app.post(
    '/admin/orders/:id/payment-received',
    {
      config: adminOnly,
      schema: {
        operationId: 'recordOrderPaymentReceived',
        tags: ['payments'],
        summary: 'Records that the platform received the payment of a platform-destination order (payment status → paid); audited',
        description:
          'While the payment connector is not active, a `platform` order is paid outside it: the driver collects the total at the door and hands it in, ' +
          "or the customer transfers it. Until this is recorded, the order's wallet entries are `pending` in the merchant wallet and no settlement pays them out. " +
          '`amount`, when sent, must equal the order total (422 AMOUNT_MISMATCH). 422 NOT_PLATFORM_PAYMENT for merchant_direct and cash orders; ' +
          '409 ORDER_CANCELLED; 409 PAYMENT_ALREADY_RECEIVED or INVALID_TRANSITION when the payment is not pending. ' +
          PAYMENT_STATES_DOC,
        params: IdParams,
        body: Strict({
          method: Type.Union(
            RECEIPT_METHODS.map((m) => Type.Literal(m)),
            { description: 'driver_cash: the driver collected it at delivery and handed it in' },
          ),
          amount: Type.Optional(NonNegativeMoney),
          reference: Type.Optional(ShortText(200)),
          note: Type.Optional(ShortText(500)),
        }),
        response: {
          201: Type.Object({
            receipt: ReceiptOut,
            payment_status: PaymentStatusOut,
            wallet: WalletOut,
          }),
        },
      },
    },
    async (req, reply) => reply.code(201).send(await svc.recordReceipt(actorOf(req), req.params.id, req.body as { method: ReceiptMethod })),
  );
  app.post(
    '/admin/orders/:id/refunds',
    {
      config: adminOnly,
      schema: {
        operationId: 'refundOrder',
        tags: ['payments'],
        summary:
          'Refunds a delivered order the platform collected, fully (no amount) or partly; a `refund` wallet entry and the payment status in one transaction; audited with the reason',
        description:
          'Only delivered orders whose payment the platform received (payment status paid or partially_refunded; 409 INVALID_TRANSITION otherwise): platform payments, ' +
          'and cash orders its driver collected at the door (`collected_by: driver`; the platform pays the customer back). ' +
          'The refunds of an order never exceed its total (422 REFUND_EXCEEDS_TOTAL). The merchant bears the refund (−amount); a shortfall beyond his available ' +
          'balance shows as debt. 422 NOT_PLATFORM_PAYMENT for merchant_direct orders and cash orders the merchant collected, REFUND_NOT_ALLOWED for an undelivered order (cancel it instead). ' +
          PAYMENT_STATES_DOC,
        params: IdParams,
        body: Strict({ amount: Type.Optional(NonNegativeMoney), reason: ShortText(500) }),
        response: { 201: Type.Object({ entry: EntryOut, payment_status: PaymentStatusOut, wallet: WalletOut }) },
      },
    },
    async (req, reply) =>
      reply.code(201).send(await svc.refund(actorOf(req), req.params.id, req.body as { amount?: string; reason: string })),
  );
  app.post(
    '/admin/merchants/:id/adjustments',
    {
      config: adminOnly,
      schema: {
        operationId: 'adjustMerchantWallet',
        tags: ['payments'],
        summary: 'A signed correction of a merchant wallet (an `adjustment` entry) with its reason; audited',
        description:
          'Positive credits the merchant, negative charges him (a shortfall beyond his available balance shows as debt). 400 for a zero amount; 404 for an order of another merchant.',
        params: IdParams,
        body: Strict({
          amount: Type.String({ pattern: '^-?\\d{1,10}(\\.\\d{1,2})?$', description: 'signed decimal string, not zero' }),
          reason: ShortText(500),
          order_id: Type.Optional(Id),
        }),
        response: { 201: Type.Object({ entry: EntryOut, wallet: WalletOut }) },
      },
    },
    async (req, reply) =>
      reply
        .code(201)
        .send(await svc.adjust(actorOf(req), req.params.id, req.body as { amount: string; reason: string; order_id?: string })),
  );
}
