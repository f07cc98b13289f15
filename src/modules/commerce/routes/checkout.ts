import { actorOf } from '../../../platform/auth.js';
import { Api } from '../../../platform/context.js';
import { AppError } from '../../../platform/errors.js';
import { Money, Nullable, Problem, ShortText, Strict } from '../../../platform/schemas.js';
import { CommerceContext } from '../context.js';
import { CartBodyProps, QuoteOut } from '../schemas.js';
import { preflight } from '../service/checkout.js';
import { Type } from '@sinclair/typebox';

export function checkoutRoutes(app: Api, ctx: CommerceContext) {
  app.post(
    '/customer/checkout/preflight',
    {
      config: { auth: { roles: ['delivery'] } },
      schema: {
        operationId: 'checkoutPreflight',
        tags: ['customer'],
        summary: 'Price a cart and persist a checkout quote (valid 15 minutes) for POST /customer/orders',
        description:
          'Line prices come from the catalog, the delivery fee from the territory tariff (marketplace mode; organization default without one). A coupon that does ' +
          'not apply does not fail the preflight: `coupon.applied` is false and `coupon.reason_code` says why. Prices sent by the client are not accepted ' +
          '(unknown fields are 400). 404 for a branch, address or item that is not visible to the caller; 422 BRANCH_INACTIVE, BRANCH_CLOSED (outside its opening hours; `next_open_at` in the body), MERCHANT_NOT_APPROVED, ITEM_NOT_AVAILABLE, CURRENCY_MISMATCH, PAYMENT_DESTINATION_UNAVAILABLE (a destination the merchant does not accept; `payment_destinations` of a quote lists those he does).',
        body: Strict(CartBodyProps),
        response: { 201: QuoteOut },
      },
    },
    async (req, reply) => {
      const actor = actorOf(req);
      const quote = await preflight(ctx, actor, req.body);
      return reply.code(201).send(quote);
    },
  );

  // The shape the reserved contract will answer once a connector is released; today every call is 501.
  const PaymentIntentOut = Type.Object({
    id: Type.String(),
    status: Type.String({ description: 'authorized or paid lets a platform order through, once released' }),
    amount: Money,
    currency: Type.String(),
    quote_id: Nullable(Type.String()),
  });
  const reserved = () => {
    throw new AppError(
      501,
      'FUTURE_INTEGRATION_NOT_RELEASED',
      'Platform payment intents belong to a payment connector that is not released; orders do not use them',
    );
  };
  app.post(
    '/customer/checkout/payment-intent',
    {
      config: { auth: { roles: ['delivery'] } },
      schema: {
        operationId: 'createPaymentIntent',
        tags: ['customer'],
        summary: 'Reserved contract: always 501 FUTURE_INTEGRATION_NOT_RELEASED; takes no part in order creation',
        body: Type.Optional(Type.Object({}, { additionalProperties: true })),
        response: { 201: PaymentIntentOut, 501: Problem },
      },
    },
    reserved,
  );
  app.get(
    '/customer/checkout/payment-intents/:id',
    {
      config: { auth: { roles: ['delivery'] } },
      schema: {
        operationId: 'getPaymentIntent',
        tags: ['customer'],
        summary: 'Reserved contract: always 501 FUTURE_INTEGRATION_NOT_RELEASED',
        params: Strict({ id: ShortText(100) }),
        response: { 200: PaymentIntentOut, 501: Problem },
      },
    },
    reserved,
  );
}
