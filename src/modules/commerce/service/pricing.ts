import { LonLat, haversineMeters } from '../../../platform/geo.js';
import { ZERO, formatMoney, maxMoney, minMoney, money, sumMoney, toCents } from '../../../platform/money.js';
import { Decimal } from 'decimal.js';
import type { AmountType } from '../schemas.js';

/** Pure pricing: cart lines, coupon eligibility and discount, delivery fee, totals. No I/O, no floats for money. */

export interface CatalogPrice {
  id: string;
  name: string;
  price: string;
}

export interface PricedLine {
  catalog_item_id: string;
  name: string;
  unit_price: string;
  quantity: number;
  line_total: string;
}

export function priceLines(items: { catalog_item_id: string; quantity: number }[], catalog: Map<string, CatalogPrice>): PricedLine[] {
  return items.map((it) => {
    const c = catalog.get(it.catalog_item_id)!;
    return {
      catalog_item_id: c.id,
      name: c.name,
      unit_price: formatMoney(c.price),
      quantity: it.quantity,
      line_total: formatMoney(money(c.price).times(it.quantity)),
    };
  });
}

export interface CouponRule {
  id: string;
  code: string;
  active: boolean;
  discount_type: AmountType;
  discount_value: string;
  max_discount: string | null;
  minimum_order: string;
  product_ids: string[];
  branch_ids: string[];
  valid_from: Date | null;
  valid_until: Date | null;
  usage_limit: number | null;
  per_customer_limit: number;
  usage_count: number;
}

export type CouponRefusal =
  | 'COUPON_NOT_FOUND'
  | 'COUPON_INACTIVE'
  | 'COUPON_EXPIRED'
  | 'COUPON_NOT_YET_VALID'
  | 'COUPON_MINIMUM_NOT_MET'
  | 'COUPON_USAGE_LIMIT_REACHED'
  | 'COUPON_CUSTOMER_LIMIT_REACHED'
  | 'COUPON_NOT_APPLICABLE';

export const COUPON_MESSAGES: Record<CouponRefusal, string> = {
  COUPON_NOT_FOUND: 'No coupon of this merchant has that code',
  COUPON_INACTIVE: 'The coupon is not active',
  COUPON_EXPIRED: 'The coupon has expired',
  COUPON_NOT_YET_VALID: 'The coupon is not valid yet',
  COUPON_MINIMUM_NOT_MET: 'The order does not reach the coupon minimum',
  COUPON_USAGE_LIMIT_REACHED: 'The coupon has been used up',
  COUPON_CUSTOMER_LIMIT_REACHED: 'You have already used this coupon as often as allowed',
  COUPON_NOT_APPLICABLE: 'The coupon does not apply to this branch or these products',
};

export type CouponOutcome = { ok: true; discount: string; eligible_subtotal: string } | { ok: false; code: CouponRefusal };

/**
 * Checks a coupon against a cart, in this order: active, validity window, usage limit, per-customer
 * limit, branch, eligible products, minimum (on the whole subtotal). The discount is taken on the
 * eligible subtotal (lines whose item is in product_ids, or all lines when the list is empty):
 * percent (capped by max_discount) or fixed, rounded half-up to cents, never above the eligible subtotal.
 */
export function evaluateCoupon(
  c: CouponRule,
  cart: { branch_id: string; lines: PricedLine[]; subtotal: string; customer_uses: number; now: Date },
): CouponOutcome {
  if (!c.active) return { ok: false, code: 'COUPON_INACTIVE' };
  if (c.valid_from && cart.now < c.valid_from) return { ok: false, code: 'COUPON_NOT_YET_VALID' };
  if (c.valid_until && cart.now >= c.valid_until) return { ok: false, code: 'COUPON_EXPIRED' };
  if (c.usage_limit !== null && c.usage_count >= c.usage_limit) return { ok: false, code: 'COUPON_USAGE_LIMIT_REACHED' };
  if (cart.customer_uses >= c.per_customer_limit) return { ok: false, code: 'COUPON_CUSTOMER_LIMIT_REACHED' };
  if (c.branch_ids.length > 0 && !c.branch_ids.includes(cart.branch_id)) return { ok: false, code: 'COUPON_NOT_APPLICABLE' };
  const eligibleLines = c.product_ids.length > 0 ? cart.lines.filter((l) => c.product_ids.includes(l.catalog_item_id)) : cart.lines;
  const eligible = sumMoney(eligibleLines.map((l) => l.line_total));
  if (eligible.lte(0)) return { ok: false, code: 'COUPON_NOT_APPLICABLE' };
  if (money(cart.subtotal).lt(c.minimum_order)) return { ok: false, code: 'COUPON_MINIMUM_NOT_MET' };
  return { ok: true, discount: formatMoney(couponDiscount(c, eligible)), eligible_subtotal: formatMoney(eligible) };
}

export function couponDiscount(c: Pick<CouponRule, 'discount_type' | 'discount_value' | 'max_discount'>, eligible: Decimal): Decimal {
  let d = c.discount_type === 'percent' ? toCents(eligible.times(c.discount_value).dividedBy(100)) : money(c.discount_value);
  if (c.discount_type === 'percent' && c.max_discount !== null) d = minMoney(d, money(c.max_discount));
  return maxMoney(ZERO, minMoney(d, eligible));
}

export interface TariffRule {
  base_fee: string;
  per_km_fee: string;
  minimum_fee: string;
  driver_share_type: AmountType;
  driver_share_value: string;
}

/**
 * Delivery fee = base_fee + per_km_fee × great-circle km, at least minimum_fee, rounded half-up to cents.
 * Driver earning: percent of the fee (rounded to cents) or a fixed amount, never above the fee.
 */
export function deliveryFee(t: TariffRule, from: LonLat, to: LonLat): { fee: string; driver_earning: string; distance_km: string } {
  const km = new Decimal(distanceKm(from, to));
  const fee = toCents(maxMoney(money(t.base_fee).plus(money(t.per_km_fee).times(km)), money(t.minimum_fee)));
  const share = t.driver_share_type === 'percent' ? toCents(fee.times(t.driver_share_value).dividedBy(100)) : money(t.driver_share_value);
  return { fee: formatMoney(fee), driver_earning: formatMoney(minMoney(share, fee)), distance_km: km.toFixed(3) };
}

/** Great-circle km as a decimal string; metres come from floating-point trigonometry and are fixed to whole metres before any money is computed. */
export const distanceKm = (from: LonLat, to: LonLat): string =>
  new Decimal(Math.round(haversineMeters(from, to))).dividedBy(1000).toFixed(3);

/** total = subtotal − discount + delivery fee; the discount is clamped to [0, subtotal]. */
export function orderTotals(subtotal: string, discount: string, fee: string) {
  const s = money(subtotal);
  const d = maxMoney(ZERO, minMoney(money(discount), s));
  return {
    subtotal: formatMoney(s),
    discount_total: formatMoney(d),
    delivery_fee: formatMoney(fee),
    total: formatMoney(s.minus(d).plus(fee)),
  };
}
