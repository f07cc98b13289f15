import { Type, type Static } from '@sinclair/typebox';
import { actorOf, type Actor } from '../../platform/auth.js';
import { recordAudit } from '../../platform/audit.js';
import type { Api } from '../../platform/context.js';
import type { CommerceContext } from './index.js';
import type { Tx } from '../../platform/db/index.js';
import { AppError } from '../../platform/errors.js';
import { newId } from '../../platform/ids.js';
import { money } from '../../platform/money.js';
import { pageRequest, toPage } from '../../platform/pagination.js';
import {
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
import type { MerchantRow } from '../logistics/index.js';
import { assertOwnIds, lit, ownMerchant } from './model.js';
import * as repo from './repo/coupons.js';
import type { CouponRow } from './repo/coupons.js';
import { COUPON_MESSAGES, type CouponRefusal } from './pricing.js';

export const CouponCode = Type.String({
  pattern: '^[A-Za-z0-9_-]{3,32}$',
  description: '3-32 letters, digits, _ or -; unique per merchant, case-insensitive',
});

export const CouponOut = Type.Object({
  id: Type.String(),
  merchant_id: Type.String(),
  code: Type.String(),
  name: Type.String(),
  description: Nullable(Type.String()),
  discount_type: lit(['percent', 'fixed'] as const),
  discount_value: Money,
  max_discount: Nullable(Money),
  minimum_order: Money,
  product_ids: Type.Array(Type.String()),
  branch_ids: Type.Array(Type.String()),
  valid_from: Nullable(Timestamp),
  valid_until: Nullable(Timestamp),
  usage_limit: Nullable(Type.Integer()),
  per_customer_limit: Type.Integer(),
  usage_count: Type.Integer(),
  active: Type.Boolean(),
  created_by_user_id: Nullable(Type.String()),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export type { CouponRow };
/** A coupon row is its output (typed against CouponOut: a column missing from either fails to compile). */
export const couponOut = (c: CouponRow): Static<typeof CouponOut> => c;

export const couponRefused = (code: CouponRefusal) => new AppError(422, code, COUPON_MESSAGES[code]);

/** Why a coupon use was refused in SQL after the cart was priced (a concurrent change): the coupon as it is now tells. */
export async function refusalNow(tx: Tx, couponId: string, now: Date): Promise<AppError> {
  const cur = await repo.findCoupon(tx, couponId);
  if (!cur?.active) return couponRefused('COUPON_INACTIVE');
  if (cur.valid_until && now >= cur.valid_until) return couponRefused('COUPON_EXPIRED');
  if (cur.valid_from && now < cur.valid_from) return couponRefused('COUPON_NOT_YET_VALID');
  return couponRefused('COUPON_USAGE_LIMIT_REACHED');
}

export const CouponFields = {
  code: CouponCode,
  name: ShortText(120),
  description: Type.Optional(ShortText(1000)),
  discount_type: lit(['percent', 'fixed'] as const, 'percent of the eligible subtotal, or a fixed amount'),
  discount_value: NonNegativeMoney,
  max_discount: Type.Optional(NonNegativeMoney),
  minimum_order: Type.Optional(NonNegativeMoney),
  product_ids: Type.Optional(Type.Array(Id, { maxItems: 500, uniqueItems: true })),
  branch_ids: Type.Optional(Type.Array(Id, { maxItems: 200, uniqueItems: true })),
  valid_from: Type.Optional(Type.String({ format: 'date-time' })),
  valid_until: Type.Optional(Type.String({ format: 'date-time' })),
  usage_limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000_000 })),
  per_customer_limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000_000 })),
  active: Type.Optional(Type.Boolean()),
};

/** Rules JSON Schema cannot say: value > 0, percent <= 100, window order. */
function checkRules(c: {
  discount_type: string;
  discount_value: string;
  valid_from: Date | string | null;
  valid_until: Date | string | null;
}) {
  const errors = [];
  if (money(c.discount_value).lte(0)) errors.push({ field: 'discount_value', message: 'must be > 0' });
  if (c.discount_type === 'percent' && money(c.discount_value).gt(100))
    errors.push({ field: 'discount_value', message: 'a percent must be <= 100' });
  if (c.valid_from && c.valid_until && new Date(c.valid_until) <= new Date(c.valid_from))
    errors.push({ field: 'valid_until', message: 'must be after valid_from' });
  if (errors.length) throw AppError.badRequest('Invalid coupon', errors);
}

async function assertCodeFree(tx: Tx, merchantId: string, code: string, exceptId: string | null) {
  const hit = await repo.findCouponByCode(tx, merchantId, code);
  if (hit && hit.id !== exceptId)
    throw AppError.conflict(`The code '${code}' is already used by another coupon of this merchant`, 'COUPON_CODE_TAKEN');
}

/** Creates a coupon of the calling merchant, or of `merchant` when staff create it on its behalf. */
export async function createCoupon(
  ctx: CommerceContext,
  tx: Tx,
  actor: Actor,
  b: Record<string, any>,
  merchant?: MerchantRow,
): Promise<CouponRow> {
  const m = merchant ?? (await ownMerchant(ctx, tx, actor));
  checkRules({
    discount_type: b.discount_type,
    discount_value: b.discount_value,
    valid_from: b.valid_from ?? null,
    valid_until: b.valid_until ?? null,
  });
  await assertOwnIds(tx, 'catalog_item', m.id, b.product_ids ?? [], 'product_ids');
  await assertOwnIds(tx, 'merchant_branch', m.id, b.branch_ids ?? [], 'branch_ids');
  await assertCodeFree(tx, m.id, b.code, null);
  const row = await repo.insertCoupon(tx, actor.organizationId, {
    id: newId(),
    merchant_id: m.id,
    code: b.code,
    name: b.name,
    description: b.description ?? null,
    discount_type: b.discount_type,
    discount_value: b.discount_value,
    max_discount: b.max_discount ?? null,
    minimum_order: b.minimum_order ?? '0',
    product_ids: b.product_ids ?? [],
    branch_ids: b.branch_ids ?? [],
    valid_from: b.valid_from ?? null,
    valid_until: b.valid_until ?? null,
    usage_limit: b.usage_limit ?? null,
    per_customer_limit: b.per_customer_limit ?? 1,
    active: b.active ?? true,
    created_by_user_id: actor.userId,
  });
  await recordAudit(tx, actor, { action: 'coupon.created', entityType: 'merchant_coupon', entityId: row.id, after: { ...row } });
  return row;
}

/** GET /merchant/coupons. */
export function listOwnCoupons(ctx: CommerceContext, actor: Actor, q: { active?: boolean; limit?: number; cursor?: string }) {
  const page = pageRequest(q);
  return ctx.db.withTenant(actor, async (tx) => {
    const m = await ownMerchant(ctx, tx, actor);
    return toPage(
      await repo.listMerchantCoupons(tx, m.id, { active: q.active, after: page.after, limit: page.limit + 1 }),
      page,
      couponOut,
    );
  });
}

/** PATCH /merchant/coupons/:id: same rules as creation; audited. */
export function updateOwnCoupon(ctx: CommerceContext, actor: Actor, id: string, b: repo.CouponPatch) {
  return ctx.db.withTenant(actor, async (tx) => {
    const m = await ownMerchant(ctx, tx, actor);
    const before = await repo.lockMerchantCoupon(tx, m.id, id);
    if (!before) throw AppError.notFound('Coupon');
    const next = { ...before, ...b } as Record<string, any>;
    checkRules({
      discount_type: next.discount_type,
      discount_value: next.discount_value,
      valid_from: next.valid_from,
      valid_until: next.valid_until,
    });
    if (b.product_ids) await assertOwnIds(tx, 'catalog_item', m.id, b.product_ids as string[], 'product_ids');
    if (b.branch_ids) await assertOwnIds(tx, 'merchant_branch', m.id, b.branch_ids as string[], 'branch_ids');
    if (typeof b.code === 'string') await assertCodeFree(tx, m.id, b.code, before.id);
    const after = await repo.updateCoupon(tx, before.id, b);
    await recordAudit(tx, actor, {
      action: 'coupon.updated',
      entityType: 'merchant_coupon',
      entityId: before.id,
      before: { ...before },
      after: { ...after },
    });
    return after;
  });
}

/** POST /merchant/coupons; audited. */
function addCoupon(ctx: CommerceContext, actor: Actor, body: Record<string, unknown>) {
  return ctx.db.withTenant(actor, (tx) => createCoupon(ctx, tx, actor, body));
}

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
