import { Actor } from '../../../platform/auth.js';
import { Tx } from '../../../platform/db/index.js';
import { AppError } from '../../../platform/errors.js';
import { LonLat } from '../../../platform/geo.js';
import { newId } from '../../../platform/ids.js';
import { assertMoneyInRange, money, sumMoney } from '../../../platform/money.js';
import type { CollectedBy, PaymentDestination } from '../schemas.js';
import { CommerceContext } from '../context.js';
import { AddressRow } from '../repo/addresses.js';
import { BranchRow } from '../repo/branches.js';
import { CartMerchant, insertQuote, loadCartFacts } from '../repo/checkout.js';
import { QuoteOut } from '../schemas.js';
import { openingState } from './opening-hours.js';
import { COUPON_MESSAGES, CouponRefusal, PricedLine, evaluateCoupon, orderTotals, priceLines } from './pricing.js';
import { priceDelivery } from './tariffs.js';
import { validateWindowsLoad } from '../../logistics/index.js';
import { Static } from '@sinclair/typebox';

export const QUOTE_TTL_MS = 15 * 60 * 1000;

export interface CartInput {
  branch_id: string;
  address_id: string;
  items: { catalog_item_id: string; quantity: number }[];
  coupon_code?: string | null;
  payment_destination?: PaymentDestination;
  /** A scheduled delivery window (the promise is its end). */
  deliver_after?: string | Date | null;
  deliver_before?: string | Date | null;
  /** The pickup window and the load, for the trip (validated as a trip's). */
  pickup_after?: string | Date | null;
  pickup_before?: string | Date | null;
  units?: number | null;
  weight_kg?: number | null;
  volume_l?: number | null;
}

/** The pickup window and the load an order carries to its trip. */
export interface WindowsLoad {
  pickup_after: Date | null;
  pickup_before: Date | null;
  units: number;
  weight_kg: number | null;
  volume_l: number | null;
}

/** The pickup window and load of an order or express request, by the rules of a trip's (422 naming the field). */
export function windowsLoadOf(input: Omit<CartInput, 'branch_id' | 'address_id' | 'items'>, deliverBefore: Date | null): WindowsLoad {
  const v = validateWindowsLoad(
    {
      pickup_after: input.pickup_after ?? null,
      pickup_before: input.pickup_before ?? null,
      units: input.units ?? null,
      weight_kg: input.weight_kg ?? null,
      volume_l: input.volume_l ?? null,
    },
    deliverBefore,
    new Date(),
  );
  return { pickup_after: v.pickupAfter, pickup_before: v.pickupBefore, units: v.units, weight_kg: v.weightKg, volume_l: v.volumeL };
}

export interface Cart extends WindowsLoad {
  merchant: CartMerchant;
  branch: BranchRow;
  address: AddressRow;
  territory_id: string | null;
  lines: PricedLine[];
  subtotal: string;
  coupon: { code: string; coupon_id: string | null; applied: boolean; reason_code: CouponRefusal | null } | null;
  discount_total: string;
  delivery_fee: string;
  driver_earning: string;
  total: string;
  currency: string;
  payment_destination: PaymentDestination;
  /** Cash orders: who takes the cash at the door (the merchant's payment profile; null for other destinations). */
  collected_by: CollectedBy | null;
  /** The destinations this merchant accepts now (the app offers only these). */
  payment_destinations: PaymentDestination[];
  /** The delivery promise: now + the branch's preparation + travel + dispatch buffer, or the window's end. */
  promised_at: Date;
  deliver_after: Date | null;
  deliver_before: Date | null;
  /** The SPEC rule: platform payment required before the order (and the connector is ready): no intent can exist yet, so the order is refused. */
  payment_required: boolean;
}

/**
 * Prices a cart from the catalog and the tariffs (never from the client): branch active, merchant approved,
 * every item the merchant's, available and offered at the branch, one currency; then the coupon and the delivery fee.
 */
export async function buildCart(ctx: CommerceContext, tx: Tx, actor: Actor, input: CartInput): Promise<Cart> {
  const ids = input.items.map((i) => i.catalog_item_id);
  const dup = ids.findIndex((id, i) => ids.indexOf(id) !== i);
  if (dup >= 0)
    throw AppError.badRequest('An item appears twice; send one line per item with its quantity', [
      { field: `items[${dup}].catalog_item_id`, message: 'duplicate' },
    ]);
  // One statement reads the branch, its merchant, the address, the items, the tariff and the coupon: the order's round trips stay few.
  const facts = await loadCartFacts(tx, {
    branchId: input.branch_id,
    addressId: input.address_id,
    customerUserId: actor.userId,
    itemIds: ids,
    couponCode: input.coupon_code ?? null,
  });
  const branch = facts.branch;
  if (!branch) throw AppError.notFound('Branch');
  if (!branch.active) throw AppError.unprocessable('The branch is not taking orders', 'BRANCH_INACTIVE');
  const settings = await ctx.deps.organizations.settingsIn(tx);
  const hours = openingState(branch.opening_hours, settings.timezone);
  if (!hours.open) {
    const next = hours.next_open_at?.toISOString() ?? null;
    throw new AppError(422, 'BRANCH_CLOSED', next ? `The branch is closed; it opens at ${next}` : 'The branch is closed', undefined, {
      next_open_at: next,
    });
  }
  const merchant = facts.merchant!;
  if (merchant.status !== 'approved') throw AppError.unprocessable('The merchant is not approved', 'MERCHANT_NOT_APPROVED');
  const address = facts.address;
  if (!address) throw AppError.notFound('Address');

  const catalog = new Map(facts.items.map((r) => [r.id, r]));
  const missing = ids.map((id, i) => ({ id, i })).filter(({ id }) => !catalog.has(id));
  if (missing.length)
    throw new AppError(
      404,
      'NOT_FOUND',
      'Catalog item not found',
      missing.map(({ id, i }) => ({ field: `items[${i}].catalog_item_id`, message: `unknown item ${id}` })),
    );
  const unavailable = ids
    .map((id, i) => ({ c: catalog.get(id)!, i }))
    .filter(({ c }) => !c.available || (c.branch_ids.length > 0 && !c.branch_ids.includes(branch.id)));
  if (unavailable.length) {
    throw AppError.unprocessable(
      'Some items are not available at this branch',
      'ITEM_NOT_AVAILABLE',
      unavailable.map(({ c, i }) => ({ field: `items[${i}].catalog_item_id`, message: `${c.name} is not available` })),
    );
  }
  // One currency per organization: an item stored in another currency (before the rule) is refused, never mixed with the fee.
  const foreign = ids.map((id, i) => ({ c: catalog.get(id)!, i })).filter(({ c }) => c.currency !== settings.default_currency);
  if (foreign.length) {
    throw AppError.unprocessable(
      `The items must be priced in ${settings.default_currency}, the organization currency`,
      'CURRENCY_MISMATCH',
      foreign.map(({ c, i }) => ({ field: `items[${i}].catalog_item_id`, message: `${c.name} is priced in ${c.currency}` })),
    );
  }

  const lines = priceLines(input.items, catalog);
  const subtotal = sumMoney(lines.map((l) => l.line_total));
  assertMoneyInRange(subtotal, 'subtotal');
  const territoryId = branch.territory_id ?? (await ctx.deps.logistics.territoryForPoint(tx, { lon: branch.lon, lat: branch.lat }));
  const from: LonLat = { lon: Number(branch.lon), lat: Number(branch.lat) };
  const to: LonLat = { lon: Number(address.lon), lat: Number(address.lat) };
  // The branch's own territory: its tariff came with the facts; a territory found by the point is looked up.
  const price = await priceDelivery(
    ctx,
    tx,
    actor.organizationId,
    territoryId,
    'marketplace',
    from,
    to,
    branch.territory_id ? facts.tariff : undefined,
  );

  let coupon: Cart['coupon'] = null;
  let discount = '0';
  if (input.coupon_code) {
    const c = facts.coupon;
    if (!c) coupon = { code: input.coupon_code, coupon_id: null, applied: false, reason_code: 'COUPON_NOT_FOUND' };
    else {
      const outcome = evaluateCoupon(c, {
        branch_id: branch.id,
        lines,
        subtotal: subtotal.toFixed(2),
        customer_uses: facts.couponUses,
        now: new Date(),
      });
      coupon = { code: c.code, coupon_id: c.id, applied: outcome.ok, reason_code: outcome.ok ? null : outcome.code };
      if (outcome.ok) discount = outcome.discount;
    }
  }
  const totals = orderTotals(subtotal.toFixed(2), discount, price.fee);
  assertMoneyInRange(money(totals.total), 'total');
  const destination = input.payment_destination ?? 'platform';
  const options = await ctx.deps.payments.paymentOptions(tx, merchant.id);
  const offered: PaymentDestination[] = options.destinations;
  if (!offered.includes(destination)) {
    throw AppError.unprocessable(
      `This merchant does not accept '${destination}' payments now (accepted: ${offered.join(', ')})`,
      'PAYMENT_DESTINATION_UNAVAILABLE',
      [{ field: 'payment_destination', message: `one of ${offered.join(', ')}` }],
    );
  }
  const connectorReady = ctx.config.settings.PAYMENT_CONNECTOR_READY;
  const promise = await ctx.deps.logistics.promiseFor(tx, actor.organizationId, {
    territoryId,
    pickup: from,
    dropoff: to,
    preparationMin: branch.preparation_min ?? 15,
    deliverAfter: input.deliver_after ?? null,
    deliverBefore: input.deliver_before ?? null,
  });
  const windowsLoad = windowsLoadOf(input, promise.deliver_before);
  return {
    merchant,
    branch,
    address,
    territory_id: territoryId,
    lines,
    ...totals,
    coupon,
    driver_earning: price.driver_earning,
    currency: settings.default_currency,
    payment_destination: destination,
    collected_by: destination === 'cash' ? options.cashCollectedBy : null,
    payment_destinations: offered,
    ...promise,
    ...windowsLoad,
    payment_required: settings.require_platform_payment_before_order && connectorReady && destination === 'platform',
  };
}

export function couponView(c: Cart['coupon']) {
  return c ? { ...c, reason: c.reason_code ? COUPON_MESSAGES[c.reason_code] : null } : null;
}

export async function saveQuote(tx: Tx, actor: Actor, cart: Cart): Promise<Static<typeof QuoteOut>> {
  const id = newId();
  const applied = cart.coupon?.applied ? cart.coupon : null;
  const stamps = await insertQuote(tx, {
    organization_id: actor.organizationId,
    id,
    customer_user_id: actor.userId,
    merchant_id: cart.merchant.id,
    branch_id: cart.branch.id,
    address_id: cart.address.id,
    payment_destination: cart.payment_destination,
    lines: cart.lines,
    subtotal: cart.subtotal,
    coupon_id: applied?.coupon_id ?? null,
    coupon_code: cart.coupon?.code ?? null,
    coupon_error: cart.coupon?.reason_code ?? null,
    discount_total: cart.discount_total,
    delivery_fee: cart.delivery_fee,
    total: cart.total,
    currency: cart.currency,
    ttl_ms: QUOTE_TTL_MS,
    promised_at: cart.promised_at,
    deliver_after: cart.deliver_after,
    deliver_before: cart.deliver_before,
    pickup_after: cart.pickup_after,
    pickup_before: cart.pickup_before,
    units: cart.units,
    weight_kg: cart.weight_kg,
    volume_l: cart.volume_l,
  });
  return {
    id,
    merchant_id: cart.merchant.id,
    branch_id: cart.branch.id,
    address_id: cart.address.id,
    payment_destination: cart.payment_destination,
    payment_destinations: cart.payment_destinations,
    lines: cart.lines,
    subtotal: cart.subtotal,
    coupon: couponView(cart.coupon),
    coupon_id: applied?.coupon_id ?? null,
    coupon_code: applied?.code ?? null,
    discount_total: cart.discount_total,
    delivery_fee: cart.delivery_fee,
    total: cart.total,
    currency: cart.currency,
    payment_required: cart.payment_required,
    promised_at: cart.promised_at,
    deliver_after: cart.deliver_after,
    deliver_before: cart.deliver_before,
    pickup_after: cart.pickup_after,
    pickup_before: cart.pickup_before,
    units: cart.units,
    weight_kg: cart.weight_kg,
    volume_l: cart.volume_l,
    ...stamps,
  };
}

/** POST /customer/checkout/preflight: prices the cart and keeps the quote 15 minutes. */
export function preflight(ctx: CommerceContext, actor: Actor, input: CartInput) {
  return ctx.db.withTenant(actor, async (tx) => saveQuote(tx, actor, await buildCart(ctx, tx, actor, input)));
}
