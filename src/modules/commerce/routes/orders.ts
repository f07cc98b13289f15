import { actorOf } from '../../../platform/auth.js';
import { Api } from '../../../platform/context.js';
import { AppError } from '../../../platform/errors.js';
import { Id, IdParams, OneOf, Page, PageQueryProps, ShortText, Strict } from '../../../platform/schemas.js';
import { CommerceContext } from '../context.js';
import {
  CartBodyProps,
  CartItems,
  CouponCode,
  OrderOut,
  OrderStatusSchema,
  PaymentDestinationSchema,
  PreparationMinutes,
  WindowsLoadIn,
} from '../schemas.js';
import { orderOut } from '../service/common.js';
import { OrderService } from '../service/orders.js';
import { Type } from '@sinclair/typebox';

type OrderBody = {
  quote_id?: string;
  branch_id?: string;
  address_id?: string;
  items?: { catalog_item_id: string; quantity: number }[];
  coupon_code?: string;
  payment_destination?: 'platform' | 'merchant_direct' | 'cash';
  notes?: string;
  deliver_after?: string;
  deliver_before?: string;
  pickup_after?: string;
  pickup_before?: string;
  units?: number;
  weight_kg?: number;
  volume_l?: number;
};

export function orderRoutes(app: Api, ctx: CommerceContext, orders: OrderService) {
  app.post(
    '/customer/orders',
    {
      config: { auth: { roles: ['delivery'] } },
      schema: {
        operationId: 'createCustomerOrder',
        tags: ['customer'],
        summary:
          'Place an order (status pending_confirmation, payment_status pending) from a quote_id or from branch_id + address_id + items',
        description:
          'Prices always come from the catalog and the tariffs, recomputed now: price, subtotal or total fields are refused (400, unknown field). ' +
          'From a quote: 404 unknown, 422 QUOTE_EXPIRED, 409 QUOTE_ALREADY_USED, 409 QUOTE_PRICE_CHANGED when the total moved. A coupon that does not apply ' +
          'refuses the order with 422 and its reason code (COUPON_EXPIRED, COUPON_USAGE_LIMIT_REACHED, ...); the coupon use is redeemed in the order transaction. ' +
          'When require_platform_payment_before_order is on and the payment connector is ready, a `platform` order needs an authorized or paid payment intent: ' +
          'intents are not released, so it is refused with 422 PAYMENT_REQUIRED (merchant_direct and cash are accepted). A destination the merchant does not ' +
          'accept (merchant_direct without direct payment enabled in his payment profile) is 422 PAYMENT_DESTINATION_UNAVAILABLE; the preflight lists the accepted ones. ' +
          'Optional windows and load (a quote keeps those of its preflight): deliver_after/deliver_before, pickup_after/pickup_before, units, weight_kg, volume_l, ' +
          "validated as a trip's (422 WINDOW_INVALID, PROMISE_IN_PAST or LOAD_INVALID naming the field; nothing is written); the order keeps them and its trip carries them.",
        body: OneOf(
          [
            Strict({ quote_id: Id, notes: Type.Optional(ShortText(1000)) }, { title: 'OrderFromQuote' }),
            Strict(
              {
                branch_id: Id,
                address_id: Id,
                items: CartItems,
                coupon_code: Type.Optional(CouponCode),
                payment_destination: Type.Optional(PaymentDestinationSchema),
                notes: Type.Optional(ShortText(1000)),
                deliver_after: CartBodyProps.deliver_after,
                deliver_before: CartBodyProps.deliver_before,
                ...WindowsLoadIn,
              },
              { title: 'OrderFromCart' },
            ),
          ],
          {
            description:
              'a `quote_id` (the quote fixes branch, address, items, coupon and payment) or the cart: `branch_id`, `address_id` and `items`',
          },
        ),
        response: { 201: OrderOut },
      },
    },
    async (req, reply) => {
      const actor = actorOf(req);
      const b = req.body as OrderBody;
      const cartFields = (
        [
          'branch_id',
          'address_id',
          'items',
          'coupon_code',
          'payment_destination',
          'deliver_after',
          'deliver_before',
          'pickup_after',
          'pickup_before',
          'units',
          'weight_kg',
          'volume_l',
        ] as const
      ).filter((k) => b[k] !== undefined);
      if (b.quote_id && cartFields.length) {
        throw AppError.badRequest(
          'Send either quote_id or the cart, not both',
          cartFields.map((f) => ({ field: f, message: 'not allowed with quote_id' })),
        );
      }
      if (!b.quote_id && (!b.branch_id || !b.address_id || !b.items)) {
        const missing = (['branch_id', 'address_id', 'items'] as const).filter((k) => !b[k]);
        throw AppError.badRequest(
          'quote_id or branch_id, address_id and items are required',
          missing.map((f) => ({ field: f, message: 'required' })),
        );
      }
      const order = await orders.place(
        actor,
        b.quote_id
          ? { quote_id: b.quote_id, notes: b.notes }
          : {
              branch_id: b.branch_id!,
              address_id: b.address_id!,
              items: b.items!,
              coupon_code: b.coupon_code,
              payment_destination: b.payment_destination,
              notes: b.notes,
              deliver_after: b.deliver_after,
              deliver_before: b.deliver_before,
              pickup_after: b.pickup_after,
              pickup_before: b.pickup_before,
              units: b.units,
              weight_kg: b.weight_kg,
              volume_l: b.volume_l,
            },
      );
      return reply.code(201).send(orderOut(order));
    },
  );

  app.get(
    '/customer/orders',
    {
      config: { auth: { roles: ['delivery'] } },
      schema: {
        operationId: 'listCustomerOrders',
        tags: ['customer'],
        summary: "The calling customer's orders, newest first",
        querystring: Strict({ ...PageQueryProps, status: Type.Optional(OrderStatusSchema) }),
        response: { 200: Page(OrderOut) },
      },
    },
    async (req) => {
      return orders.listForCustomer(actorOf(req), req.query);
    },
  );

  app.get(
    '/merchant/orders',
    {
      config: { auth: { roles: ['comercio'], apiKeyScope: 'orders:read' } },
      schema: {
        operationId: 'listMerchantOrders',
        tags: ['merchant'],
        summary: "The calling merchant's orders, newest first",
        querystring: Strict({ ...PageQueryProps, status: Type.Optional(OrderStatusSchema), branch_id: Type.Optional(Id) }),
        response: { 200: Page(OrderOut) },
      },
    },
    async (req) => {
      return orders.listForMerchant(actorOf(req), req.query);
    },
  );

  app.patch(
    '/merchant/orders/:id/status',
    {
      config: { auth: { roles: ['comercio'] } },
      schema: {
        operationId: 'updateMerchantOrderStatus',
        tags: ['merchant'],
        summary: 'Move an order: pending_confirmation → confirmed → preparing → ready, or cancel it from any non-terminal state',
        description:
          '`ready` creates the trip in the logistics core in the same transaction (pickup = branch, dropoff = the customer address, fee and driver earning ' +
          'from the tariff), exactly once even when two updates race. in_delivery and delivered follow the trip (pickup verified, completed) and are ' +
          '409 INVALID_TRANSITION here, as is any move the machine does not allow (the problem names current_status). Cancelling cancels the open trip ' +
          'and releases the coupon use. 404 for an order of another merchant or organization. ' +
          'Accepting (→ confirmed) may say how long the order takes to prepare (`preparation_min`, 1–240): the order keeps it and its promise ' +
          '(`promised_at`) moves to now + the preparation + travel + the dispatch buffer, which the trip inherits when the order is ready; ' +
          'a scheduled window keeps its promise. With any other status it is 400.',
        params: IdParams,
        body: Strict({
          status: OrderStatusSchema,
          reason: Type.Optional(ShortText(500)),
          preparation_min: Type.Optional(PreparationMinutes),
        }),
        response: { 200: OrderOut },
      },
    },
    async (req) => {
      return orderOut(
        await orders.updateByMerchant(
          actorOf(req),
          req.params.id,
          req.body.status,
          req.body.reason ?? null,
          req.body.preparation_min ?? null,
        ),
      );
    },
  );

  app.post(
    '/admin/orders/:id/cancel',
    {
      config: { auth: { roles: ['administrator'] } },
      schema: {
        operationId: 'cancelOrderAsAdmin',
        tags: ['payments'],
        summary: 'Cancels an open order (any non-terminal state) with a reason; audited',
        description:
          'Same effects as a merchant cancellation, in one transaction: the open trip is cancelled, the coupon use released, a pending payment review ' +
          'cancelled and the payment status follows (pending_review | authorized → failed; a received platform payment → refunded, nothing having reached ' +
          'the merchant wallet). Delivered orders are refunded instead (POST /admin/orders/{id}/refunds): 409 INVALID_TRANSITION.',
        params: IdParams,
        body: Strict({ reason: ShortText(500) }),
        response: { 200: OrderOut },
      },
    },
    async (req) => {
      return orderOut(await orders.cancelByAdmin(actorOf(req), req.params.id, req.body.reason));
    },
  );
}
