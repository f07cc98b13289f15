import * as repo from '../repo/coupons.js';
import { recordAudit } from '../../../platform/audit.js';
import { Actor } from '../../../platform/auth.js';
import { Tx } from '../../../platform/db/index.js';
import { AppError } from '../../../platform/errors.js';
import { newId } from '../../../platform/ids.js';
import { money } from '../../../platform/money.js';
import { pageRequest, toPage } from '../../../platform/pagination.js';
import { MerchantRow } from '../../logistics/index.js';
import { CommerceContext } from '../context.js';
import { CouponRow } from '../repo/coupons.js';
import { CouponOut } from '../schemas.js';
import { assertOwnIds, ownMerchant } from './common.js';
import { COUPON_MESSAGES, CouponRefusal } from './pricing.js';
import { Static } from '@sinclair/typebox';

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
export function addCoupon(ctx: CommerceContext, actor: Actor, body: Record<string, unknown>) {
  return ctx.db.withTenant(actor, (tx) => createCoupon(ctx, tx, actor, body));
}
