import * as repo from '../repo/coupons.js';
import { actorOf } from '../../../platform/auth.js';
import { Api } from '../../../platform/context.js';
import { IdParams, NonNegativeMoney, Nullable, Page, PageQueryProps, ShortText, Strict } from '../../../platform/schemas.js';
import { CommerceContext } from '../context.js';
import { CouponCode, CouponFields, CouponOut } from '../schemas.js';
import { addCoupon, listOwnCoupons, updateOwnCoupon } from '../service/coupons.js';
import { Type } from '@sinclair/typebox';

export function couponRoutes(app: Api, ctx: CommerceContext) {
  const merchantOnly = { auth: { roles: ['comercio' as const] } };

  app.get(
    '/merchant/coupons',
    {
      config: merchantOnly,
      schema: {
        operationId: 'listMerchantCoupons',
        tags: ['merchant'],
        summary: "The calling merchant's coupons, newest first",
        querystring: Strict({ ...PageQueryProps, active: Type.Optional(Type.Boolean()) }),
        response: { 200: Page(CouponOut) },
      },
    },
    async (req) => {
      return listOwnCoupons(ctx, actorOf(req), req.query);
    },
  );

  app.post(
    '/merchant/coupons',
    {
      config: merchantOnly,
      schema: {
        operationId: 'createMerchantCoupon',
        tags: ['merchant'],
        summary: 'Create a coupon of the calling merchant; audited',
        description:
          'Rules: discount_value > 0 (percent: at most 100); max_discount >= 0 caps percent discounts; minimum_order >= 0 (default 0) on the cart subtotal; ' +
          "product_ids / branch_ids restrict eligibility (empty = all; must be the merchant's, else 422); valid_until after valid_from; usage_limit > 0 " +
          '(null = unlimited); per_customer_limit > 0 (default 1). Rule violations are 400; a code already used by the merchant (case-insensitive) is 409 COUPON_CODE_TAKEN.',
        body: Strict(CouponFields),
        response: { 201: CouponOut },
      },
    },
    async (req, reply) => {
      const actor = actorOf(req);
      return reply.code(201).send(await addCoupon(ctx, actor, req.body));
    },
  );

  app.patch(
    '/merchant/coupons/:id',
    {
      config: merchantOnly,
      schema: {
        operationId: 'updateMerchantCoupon',
        tags: ['merchant'],
        summary: 'Change a coupon of the calling merchant (same rules as creation; usage_count is not writable); audited',
        description: "null clears max_discount, valid_from, valid_until or usage_limit. 404 for another merchant's coupon.",
        params: IdParams,
        body: Strict(
          {
            code: Type.Optional(CouponCode),
            name: Type.Optional(CouponFields.name),
            description: Type.Optional(Nullable(ShortText(1000))),
            discount_type: Type.Optional(CouponFields.discount_type),
            discount_value: Type.Optional(NonNegativeMoney),
            max_discount: Type.Optional(Nullable(NonNegativeMoney)),
            minimum_order: Type.Optional(NonNegativeMoney),
            product_ids: CouponFields.product_ids,
            branch_ids: CouponFields.branch_ids,
            valid_from: Type.Optional(Nullable(Type.String({ format: 'date-time' }))),
            valid_until: Type.Optional(Nullable(Type.String({ format: 'date-time' }))),
            usage_limit: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 100_000_000 }))),
            per_customer_limit: CouponFields.per_customer_limit,
            active: CouponFields.active,
          },
          { minProperties: 1 },
        ),
        response: { 200: CouponOut },
      },
    },
    async (req) => {
      return updateOwnCoupon(ctx, actorOf(req), req.params.id, req.body as repo.CouponPatch);
    },
  );
}
