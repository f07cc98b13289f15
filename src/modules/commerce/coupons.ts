import { Type } from '@sinclair/typebox';
import { actorOf, type Actor } from '../../platform/auth.js';
import { recordAudit } from '../../platform/audit.js';
import type { Api } from '../../platform/context.js';
import type { CommerceContext } from './index.js';
import type { Tx } from '../../platform/db/index.js';
import { AppError } from '../../platform/errors.js';
import { newId } from '../../platform/ids.js';
import { money } from '../../platform/money.js';
import { pageRequest, toPage } from '../../platform/pagination.js';
import { Id, IdParams, Money, NonNegativeMoney, Nullable, Page, PageQueryProps, ShortText, Strict, Timestamp } from '../../platform/schemas.js';
import type { MerchantRow } from '../logistics/index.js';
import { assertOwnIds, inTx, lit, ownMerchant } from './model.js';
import { COUPON_MESSAGES, type CouponRefusal, type CouponRule } from './pricing.js';

export const CouponCode = Type.String({ pattern: '^[A-Za-z0-9_-]{3,32}$', description: '3-32 letters, digits, _ or -; unique per merchant, case-insensitive' });

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

export interface CouponRow extends CouponRule {
  merchant_id: string;
  name: string;
  description: string | null;
  created_by_user_id: string | null;
  created_at: Date;
  updated_at: Date;
}

const COUPON_COLUMNS = `id, merchant_id, code, name, description, discount_type, discount_value, max_discount, minimum_order, product_ids, branch_ids,
  valid_from, valid_until, usage_limit, per_customer_limit, usage_count, active, created_by_user_id, created_at, updated_at`;

export const couponRefused = (code: CouponRefusal) => new AppError(422, code, COUPON_MESSAGES[code]);

/** The merchant's coupon with this code (case-insensitive), or null. */
export async function couponByCode(tx: Tx, merchantId: string, code: string): Promise<CouponRow | null> {
  return (await tx.query<CouponRow>(`SELECT ${COUPON_COLUMNS} FROM merchant_coupon WHERE merchant_id = $1 AND lower(code) = lower($2)`, [merchantId, code])).rows[0] ?? null;
}

/** Uses of a coupon by a customer that still count (not released by a cancellation). */
export async function customerUses(tx: Tx, couponId: string, customerId: string): Promise<number> {
  const { rows } = await tx.query<{ uses: number }>('SELECT uses FROM merchant_coupon_customer_usage WHERE coupon_id = $1 AND customer_id = $2', [couponId, customerId]);
  return rows[0]?.uses ?? 0;
}

/**
 * Redeems a coupon for an order, in the order's transaction. Both limits are decided in SQL: the usage
 * limit by a conditional UPDATE of the coupon (which also locks its row until commit, so concurrent
 * redemptions of one coupon queue up), the per-customer limit by a conditional upsert of the customer's
 * counter. One redemption per order (unique order_id). A refusal throws, rolling the order back.
 */
export async function redeemCoupon(tx: Tx, c: { organizationId: string; couponId: string; merchantId: string; customerId: string; orderId: string; discount: string }): Promise<void> {
  const now = new Date();
  const { rows } = await tx.query<{ per_customer_limit: number }>(
    `UPDATE merchant_coupon SET usage_count = usage_count + 1, updated_at = now()
      WHERE id = $1 AND active AND (usage_limit IS NULL OR usage_count < usage_limit)
        AND (valid_from IS NULL OR valid_from <= $2) AND (valid_until IS NULL OR valid_until > $2)
      RETURNING per_customer_limit`,
    [c.couponId, now],
  );
  if (!rows[0]) {
    const cur = (await tx.query<CouponRow>(`SELECT ${COUPON_COLUMNS} FROM merchant_coupon WHERE id = $1`, [c.couponId])).rows[0];
    if (!cur?.active) throw couponRefused('COUPON_INACTIVE');
    if (cur.valid_until && now >= cur.valid_until) throw couponRefused('COUPON_EXPIRED');
    if (cur.valid_from && now < cur.valid_from) throw couponRefused('COUPON_NOT_YET_VALID');
    throw couponRefused('COUPON_USAGE_LIMIT_REACHED');
  }
  const counted = await tx.query(
    `INSERT INTO merchant_coupon_customer_usage AS u (organization_id, coupon_id, customer_id, uses) VALUES ($1, $2, $3, 1)
     ON CONFLICT (organization_id, coupon_id, customer_id) DO UPDATE SET uses = u.uses + 1 WHERE u.uses < $4
     RETURNING uses`,
    [c.organizationId, c.couponId, c.customerId, rows[0].per_customer_limit],
  );
  if (counted.rowCount === 0) throw couponRefused('COUPON_CUSTOMER_LIMIT_REACHED');
  await tx.query(
    `INSERT INTO merchant_coupon_redemption (organization_id, id, coupon_id, merchant_id, customer_id, order_id, discount_amount)
     VALUES ($1, $2, $3, $4, $5, $6, $7)`,
    [c.organizationId, newId(), c.couponId, c.merchantId, c.customerId, c.orderId, c.discount],
  );
}

/** A cancelled order gives its use back: the redemption is marked released, usage_count and the customer's count decremented (once). */
export async function releaseRedemption(tx: Tx, orderId: string): Promise<boolean> {
  const { rows } = await tx.query<{ coupon_id: string; customer_id: string }>(
    'UPDATE merchant_coupon_redemption SET released_at = now() WHERE order_id = $1 AND released_at IS NULL RETURNING coupon_id, customer_id',
    [orderId],
  );
  if (!rows[0]) return false;
  await tx.query('UPDATE merchant_coupon SET usage_count = greatest(usage_count - 1, 0), updated_at = now() WHERE id = $1', [rows[0].coupon_id]);
  await tx.query('UPDATE merchant_coupon_customer_usage SET uses = greatest(uses - 1, 0) WHERE coupon_id = $1 AND customer_id = $2', [rows[0].coupon_id, rows[0].customer_id]);
  return true;
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
function checkRules(c: { discount_type: string; discount_value: string; valid_from: Date | string | null; valid_until: Date | string | null }) {
  const errors = [];
  if (money(c.discount_value).lte(0)) errors.push({ field: 'discount_value', message: 'must be > 0' });
  if (c.discount_type === 'percent' && money(c.discount_value).gt(100)) errors.push({ field: 'discount_value', message: 'a percent must be <= 100' });
  if (c.valid_from && c.valid_until && new Date(c.valid_until) <= new Date(c.valid_from)) errors.push({ field: 'valid_until', message: 'must be after valid_from' });
  if (errors.length) throw AppError.badRequest('Invalid coupon', errors);
}

async function assertCodeFree(tx: Tx, merchantId: string, code: string, exceptId: string | null) {
  const hit = await couponByCode(tx, merchantId, code);
  if (hit && hit.id !== exceptId) throw AppError.conflict(`The code '${code}' is already used by another coupon of this merchant`, 'COUPON_CODE_TAKEN');
}

/** Creates a coupon of the calling merchant, or of `merchant` when staff create it on its behalf. */
export async function createCoupon(ctx: CommerceContext, tx: Tx, actor: Actor, b: Record<string, any>, merchant?: MerchantRow): Promise<CouponRow> {
  const m = merchant ?? (await ownMerchant(ctx, tx, actor));
  checkRules({ discount_type: b.discount_type, discount_value: b.discount_value, valid_from: b.valid_from ?? null, valid_until: b.valid_until ?? null });
  await assertOwnIds(tx, 'catalog_item', m.id, b.product_ids ?? [], 'product_ids');
  await assertOwnIds(tx, 'merchant_branch', m.id, b.branch_ids ?? [], 'branch_ids');
  await assertCodeFree(tx, m.id, b.code, null);
  const { rows } = await tx.query<CouponRow>(
    `INSERT INTO merchant_coupon (organization_id, id, merchant_id, code, name, description, discount_type, discount_value, max_discount, minimum_order,
                                  product_ids, branch_ids, valid_from, valid_until, usage_limit, per_customer_limit, active, created_by_user_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11::text[], $12::text[], $13, $14, $15, $16, $17, $18) RETURNING ${COUPON_COLUMNS}`,
    [
      actor.organizationId, newId(), m.id, b.code, b.name, b.description ?? null, b.discount_type, b.discount_value, b.max_discount ?? null, b.minimum_order ?? '0',
      b.product_ids ?? [], b.branch_ids ?? [], b.valid_from ?? null, b.valid_until ?? null, b.usage_limit ?? null, b.per_customer_limit ?? 1, b.active ?? true, actor.userId,
    ],
  );
  await recordAudit(tx, actor, { action: 'coupon.created', entityType: 'merchant_coupon', entityId: rows[0].id, after: { ...rows[0] } });
  return rows[0];
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
      const actor = actorOf(req);
      const page = pageRequest(req.query);
      return inTx(ctx, actor, async (tx) => {
        const m = await ownMerchant(ctx, tx, actor);
        const { rows } = await tx.query<CouponRow>(
          `SELECT ${COUPON_COLUMNS} FROM merchant_coupon WHERE merchant_id = $1 AND ($2::boolean IS NULL OR active = $2) AND ($3::text IS NULL OR id < $3) ORDER BY id DESC LIMIT $4`,
          [m.id, req.query.active ?? null, page.after, page.limit + 1],
        );
        return toPage(rows, page);
      });
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
          'product_ids / branch_ids restrict eligibility (empty = all; must be the merchant\'s, else 422); valid_until after valid_from; usage_limit > 0 ' +
          '(null = unlimited); per_customer_limit > 0 (default 1). Rule violations are 400; a code already used by the merchant (case-insensitive) is 409 COUPON_CODE_TAKEN.',
        body: Strict(CouponFields),
        response: { 201: CouponOut },
      },
    },
    async (req, reply) => {
      const actor = actorOf(req);
      return reply.code(201).send(await inTx(ctx, actor, (tx) => createCoupon(ctx, tx, actor, req.body)));
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
        description: 'null clears max_discount, valid_from, valid_until or usage_limit. 404 for another merchant\'s coupon.',
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
      const actor = actorOf(req);
      const b = req.body as Record<string, unknown>;
      return inTx(ctx, actor, async (tx) => {
        const m = await ownMerchant(ctx, tx, actor);
        const before = (await tx.query<CouponRow>(`SELECT ${COUPON_COLUMNS} FROM merchant_coupon WHERE id = $1 AND merchant_id = $2 FOR UPDATE`, [req.params.id, m.id])).rows[0];
        if (!before) throw AppError.notFound('Coupon');
        const next = { ...before, ...b } as Record<string, any>;
        checkRules({ discount_type: next.discount_type, discount_value: next.discount_value, valid_from: next.valid_from, valid_until: next.valid_until });
        if (b.product_ids) await assertOwnIds(tx, 'catalog_item', m.id, b.product_ids as string[], 'product_ids');
        if (b.branch_ids) await assertOwnIds(tx, 'merchant_branch', m.id, b.branch_ids as string[], 'branch_ids');
        if (typeof b.code === 'string') await assertCodeFree(tx, m.id, b.code, before.id);
        const keys = Object.keys(b);
        const cast = (k: string) => (k === 'product_ids' || k === 'branch_ids' ? '::text[]' : '');
        const { rows } = await tx.query<CouponRow>(
          `UPDATE merchant_coupon SET ${keys.map((k, i) => `${k} = $${i + 2}${cast(k)}`).join(', ')}, updated_at = now() WHERE id = $1 RETURNING ${COUPON_COLUMNS}`,
          [before.id, ...keys.map((k) => b[k])],
        );
        await recordAudit(tx, actor, { action: 'coupon.updated', entityType: 'merchant_coupon', entityId: before.id, before: { ...before }, after: { ...rows[0] } });
        return rows[0];
      });
    },
  );
}
