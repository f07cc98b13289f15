import { sql } from 'drizzle-orm';
import {
  boolean,
  check,
  doublePrecision,
  foreignKey,
  index,
  integer,
  jsonb,
  numeric,
  pgTable,
  point,
  primaryKey,
  text,
  timestamp,
  unique,
  uniqueIndex,
} from 'drizzle-orm/pg-core';
import { changedXid } from '../../platform/tables.js';
import { merchant, SERVICE_MODES, SOURCE_CHANNELS, territory } from '../logistics/tables.js';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });
const pt = (name: string) => point(name, { mode: 'xy' });
const moneyCol = (name: string) => numeric(name, { precision: 12, scale: 2 });
/** The pickup window and the load handed to the trip (validated as a trip's; units default 1, kilograms and litres optional). */
const windowsLoad = () => ({
  pickupAfter: ts('pickup_after'),
  pickupBefore: ts('pickup_before'),
  units: integer('units').notNull().default(1),
  weightKg: doublePrecision('weight_kg'),
  volumeL: doublePrecision('volume_l'),
});
const textArray = (name: string) =>
  text(name)
    .array()
    .notNull()
    .default(sql`'{}'::text[]`);

export const ORDER_STATUSES = [
  'pending_confirmation',
  'confirmed',
  'preparing',
  'ready',
  'in_delivery',
  'delivered',
  'cancelled',
  'delivery_failed',
  'returned',
] as const;
export const PAYMENT_DESTINATIONS = ['platform', 'merchant_direct', 'cash'] as const;
export const COLLECTED_BY = ['driver', 'merchant'] as const;
/** How an amount is given: a percent of a base (a coupon's eligible subtotal, a tariff's fee), or a fixed amount. */
export const AMOUNT_TYPES = ['percent', 'fixed'] as const;
export const PAYMENT_STATUSES = ['pending', 'pending_review', 'authorized', 'paid', 'failed', 'partially_refunded', 'refunded'] as const;
export const ORDER_SOURCES = ['core', 'chat', 'delivery_express', 'admin', 'api'] as const;
export const EXPRESS_STATUSES = ['requested', 'created', 'cancelled', 'completed', 'delivery_failed', 'returned'] as const;

export const merchantBranch = pgTable(
  'merchant_branch',
  {
    organizationId: text('organization_id').notNull(),
    id: text('id').notNull(),
    merchantId: text('merchant_id').notNull(),
    name: text('name').notNull(),
    address: text('address').notNull(),
    location: pt('location').notNull(),
    /** [{ day: 0..6 (Sunday = 0), open: "HH:MM", close: "HH:MM" }] in the organization's time zone. */
    openingHours: jsonb('opening_hours')
      .notNull()
      .default(sql`'[]'::jsonb`),
    phone: text('phone'),
    active: boolean('active').notNull().default(true),
    /** Minutes the branch needs to prepare an order (part of the delivery promise). */
    preparationMin: integer('preparation_min').notNull().default(15),
    territoryId: text('territory_id'),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.id] }),
    foreignKey({ columns: [t.organizationId, t.merchantId], foreignColumns: [merchant.organizationId, merchant.id] }),
    foreignKey({ columns: [t.organizationId, t.territoryId], foreignColumns: [territory.organizationId, territory.id] }),
    index('merchant_branch_merchant_idx').on(t.organizationId, t.merchantId, t.id),
    index('merchant_branch_territory_idx').on(t.organizationId, t.territoryId),
    index('merchant_branch_location_gist').using('gist', t.location),
  ],
);

export const catalogItem = pgTable(
  'catalog_item',
  {
    organizationId: text('organization_id').notNull(),
    id: text('id').notNull(),
    merchantId: text('merchant_id').notNull(),
    name: text('name').notNull(),
    description: text('description'),
    price: moneyCol('price').notNull(),
    currency: text('currency').notNull().default('BOB'),
    available: boolean('available').notNull().default(true),
    /** Branches that offer the item; empty = every branch of the merchant. */
    branchIds: textArray('branch_ids'),
    imageObjectId: text('image_object_id'),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
    /** Offline sync: the transaction that last wrote the row (trigger sync_touch_changed_xid). */
    changedXid: changedXid(),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.id] }),
    foreignKey({ columns: [t.organizationId, t.merchantId], foreignColumns: [merchant.organizationId, merchant.id] }),
    index('catalog_item_merchant_idx').on(t.organizationId, t.merchantId, t.id),
    index('catalog_item_merchant_sync_idx').on(t.organizationId, t.merchantId, t.changedXid),
    check('catalog_item_price_ck', sql`${t.price} >= 0`),
  ],
);

export const customerAddress = pgTable(
  'customer_address',
  {
    organizationId: text('organization_id').notNull(),
    id: text('id').notNull(),
    userId: text('user_id').notNull(),
    label: text('label'),
    address: text('address').notNull(),
    location: pt('location').notNull(),
    notes: text('notes'),
    createdAt: ts('created_at').notNull().defaultNow(),
    /** Offline sync: the transaction that last wrote the row (trigger sync_touch_changed_xid). */
    changedXid: changedXid(),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.id] }),
    index('customer_address_user_idx').on(t.organizationId, t.userId, t.id),
    index('customer_address_user_sync_idx').on(t.organizationId, t.userId, t.changedXid),
  ],
);

export const territoryTariff = pgTable(
  'territory_tariff',
  {
    organizationId: text('organization_id').notNull(),
    id: text('id').notNull(),
    territoryId: text('territory_id').notNull(),
    serviceMode: text('service_mode', { enum: SERVICE_MODES }).notNull(),
    baseFee: moneyCol('base_fee').notNull(),
    perKmFee: moneyCol('per_km_fee').notNull(),
    minimumFee: moneyCol('minimum_fee').notNull().default('0'),
    driverShareType: text('driver_share_type', { enum: AMOUNT_TYPES }).notNull().default('percent'),
    driverShareValue: moneyCol('driver_share_value').notNull(),
    active: boolean('active').notNull().default(true),
    createdByUserId: text('created_by_user_id'),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.id] }),
    unique('territory_tariff_mode_uq').on(t.organizationId, t.territoryId, t.serviceMode),
    foreignKey({ columns: [t.organizationId, t.territoryId], foreignColumns: [territory.organizationId, territory.id] }),
    check(
      'territory_tariff_fees_ck',
      sql`${t.baseFee} >= 0 and ${t.perKmFee} >= 0 and ${t.minimumFee} >= 0 and ${t.driverShareValue} >= 0`,
    ),
    check('territory_tariff_percent_ck', sql`${t.driverShareType} <> 'percent' or ${t.driverShareValue} <= 100`),
  ],
);

export const merchantCoupon = pgTable(
  'merchant_coupon',
  {
    organizationId: text('organization_id').notNull(),
    id: text('id').notNull(),
    merchantId: text('merchant_id').notNull(),
    code: text('code').notNull(),
    name: text('name').notNull(),
    description: text('description'),
    discountType: text('discount_type', { enum: AMOUNT_TYPES }).notNull(),
    discountValue: moneyCol('discount_value').notNull(),
    maxDiscount: moneyCol('max_discount'),
    minimumOrder: moneyCol('minimum_order').notNull().default('0'),
    productIds: textArray('product_ids'),
    branchIds: textArray('branch_ids'),
    validFrom: ts('valid_from'),
    validUntil: ts('valid_until'),
    usageLimit: integer('usage_limit'),
    perCustomerLimit: integer('per_customer_limit').notNull().default(1),
    usageCount: integer('usage_count').notNull().default(0),
    active: boolean('active').notNull().default(true),
    createdByUserId: text('created_by_user_id'),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.id] }),
    uniqueIndex('merchant_coupon_code_uq').on(t.organizationId, t.merchantId, sql`lower(${t.code})`),
    foreignKey({ columns: [t.organizationId, t.merchantId], foreignColumns: [merchant.organizationId, merchant.id] }),
    check('merchant_coupon_value_ck', sql`${t.discountValue} > 0 and (${t.discountType} <> 'percent' or ${t.discountValue} <= 100)`),
    check('merchant_coupon_max_ck', sql`${t.maxDiscount} is null or ${t.maxDiscount} >= 0`),
    check('merchant_coupon_minimum_ck', sql`${t.minimumOrder} >= 0`),
    check(
      'merchant_coupon_limits_ck',
      sql`(${t.usageLimit} is null or ${t.usageLimit} > 0) and ${t.perCustomerLimit} > 0 and ${t.usageCount} >= 0`,
    ),
    check('merchant_coupon_window_ck', sql`${t.validFrom} is null or ${t.validUntil} is null or ${t.validUntil} > ${t.validFrom}`),
  ],
);

export const merchantCouponRedemption = pgTable(
  'merchant_coupon_redemption',
  {
    organizationId: text('organization_id').notNull(),
    id: text('id').notNull(),
    couponId: text('coupon_id').notNull(),
    merchantId: text('merchant_id').notNull(),
    customerId: text('customer_id').notNull(),
    orderId: text('order_id').notNull(),
    discountAmount: moneyCol('discount_amount').notNull(),
    /** Set when the order is cancelled: the use no longer counts (usage_count was decremented). */
    releasedAt: ts('released_at'),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.id] }),
    unique('merchant_coupon_redemption_order_uq').on(t.organizationId, t.orderId),
    foreignKey({ columns: [t.organizationId, t.couponId], foreignColumns: [merchantCoupon.organizationId, merchantCoupon.id] }),
    index('merchant_coupon_redemption_customer_idx').on(t.organizationId, t.couponId, t.customerId),
    check('merchant_coupon_redemption_amount_ck', sql`${t.discountAmount} >= 0`),
  ],
);

/** Uses of a coupon per customer that still count: checked and incremented in one conditional upsert (O(1), whatever the history). */
export const merchantCouponCustomerUsage = pgTable(
  'merchant_coupon_customer_usage',
  {
    organizationId: text('organization_id').notNull(),
    couponId: text('coupon_id').notNull(),
    customerId: text('customer_id').notNull(),
    uses: integer('uses').notNull().default(0),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.couponId, t.customerId] }),
    foreignKey({ columns: [t.organizationId, t.couponId], foreignColumns: [merchantCoupon.organizationId, merchantCoupon.id] }),
    check('merchant_coupon_customer_usage_ck', sql`${t.uses} >= 0`),
  ],
);

export const checkoutQuote = pgTable(
  'checkout_quote',
  {
    organizationId: text('organization_id').notNull(),
    id: text('id').notNull(),
    customerUserId: text('customer_user_id').notNull(),
    merchantId: text('merchant_id').notNull(),
    branchId: text('branch_id').notNull(),
    addressId: text('address_id').notNull(),
    paymentDestination: text('payment_destination', { enum: PAYMENT_DESTINATIONS }).notNull().default('platform'),
    /** [{ catalog_item_id, name, unit_price, quantity, line_total }] priced from the catalog. */
    lines: jsonb('lines').notNull(),
    subtotal: moneyCol('subtotal').notNull(),
    couponId: text('coupon_id'),
    couponCode: text('coupon_code'),
    /** Why the requested coupon does not apply (COUPON_EXPIRED, ...), null when it applies or none was asked. */
    couponError: text('coupon_error'),
    discountTotal: moneyCol('discount_total').notNull().default('0'),
    deliveryFee: moneyCol('delivery_fee').notNull(),
    total: moneyCol('total').notNull(),
    currency: text('currency').notNull(),
    orderId: text('order_id'),
    /** The delivery promised with the quote; a scheduled window when the customer chose one. */
    promisedAt: ts('promised_at'),
    deliverAfter: ts('deliver_after'),
    deliverBefore: ts('deliver_before'),
    ...windowsLoad(),
    expiresAt: ts('expires_at').notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.id] }),
    index('checkout_quote_customer_idx').on(t.organizationId, t.customerUserId, t.id),
  ],
);

export const merchantOrder = pgTable(
  'merchant_order',
  {
    organizationId: text('organization_id').notNull(),
    id: text('id').notNull(),
    merchantId: text('merchant_id').notNull(),
    branchId: text('branch_id').notNull(),
    customerUserId: text('customer_user_id').notNull(),
    addressId: text('address_id').notNull(),
    dropoffAddress: text('dropoff_address').notNull(),
    dropoffLocation: pt('dropoff_location').notNull(),
    status: text('status', { enum: ORDER_STATUSES }).notNull().default('pending_confirmation'),
    territoryId: text('territory_id'),
    paymentDestination: text('payment_destination', { enum: PAYMENT_DESTINATIONS }).notNull().default('platform'),
    paymentStatus: text('payment_status', { enum: PAYMENT_STATUSES }).notNull().default('pending'),
    /** Cash orders: who takes the cash at the door, the platform's driver or the merchant's own staff (null for other destinations). */
    collectedBy: text('collected_by', { enum: COLLECTED_BY }),
    paymentReviewId: text('payment_review_id'),
    orderSource: text('order_source', { enum: ORDER_SOURCES }).notNull().default('core'),
    couponId: text('coupon_id'),
    couponCode: text('coupon_code'),
    subtotal: moneyCol('subtotal').notNull(),
    discountTotal: moneyCol('discount_total').notNull().default('0'),
    deliveryFee: moneyCol('delivery_fee').notNull(),
    driverEarning: moneyCol('driver_earning').notNull(),
    total: moneyCol('total').notNull(),
    currency: text('currency').notNull(),
    quoteId: text('quote_id'),
    tripId: text('trip_id'),
    notes: text('notes'),
    statusReason: text('status_reason'),
    /** The delivery promised at checkout (a scheduled window: deliver_before); the trip inherits it. */
    promisedAt: ts('promised_at'),
    deliverAfter: ts('deliver_after'),
    deliverBefore: ts('deliver_before'),
    ...windowsLoad(),
    /** Minutes the merchant said he needs when he accepted the order (the promise moved with it); null until accepted with one. */
    preparationMin: integer('preparation_min'),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
    /** Offline sync: the transaction that last wrote the row (trigger sync_touch_changed_xid). */
    changedXid: changedXid(),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.id] }),
    foreignKey({ columns: [t.organizationId, t.branchId], foreignColumns: [merchantBranch.organizationId, merchantBranch.id] }),
    index('merchant_order_merchant_idx').on(t.organizationId, t.merchantId, t.id),
    index('merchant_order_customer_idx').on(t.organizationId, t.customerUserId, t.id),
    index('merchant_order_merchant_sync_idx').on(t.organizationId, t.merchantId, t.changedXid),
    index('merchant_order_customer_sync_idx').on(t.organizationId, t.customerUserId, t.changedXid),
    index('merchant_order_status_idx').on(t.organizationId, t.status),
    uniqueIndex('merchant_order_quote_uq')
      .on(t.organizationId, t.quoteId)
      .where(sql`quote_id IS NOT NULL`),
    check(
      'merchant_order_totals_ck',
      sql`${t.subtotal} >= 0 and ${t.discountTotal} >= 0 and ${t.discountTotal} <= ${t.subtotal} and ${t.deliveryFee} >= 0 and ${t.driverEarning} >= 0 and ${t.total} >= 0`,
    ),
    check('merchant_order_preparation_ck', sql`${t.preparationMin} IS NULL OR ${t.preparationMin} BETWEEN 1 AND 240`),
  ],
);

export const merchantOrderItem = pgTable(
  'merchant_order_item',
  {
    organizationId: text('organization_id').notNull(),
    orderId: text('order_id').notNull(),
    lineNo: integer('line_no').notNull(),
    catalogItemId: text('catalog_item_id').notNull(),
    name: text('name').notNull(),
    unitPrice: moneyCol('unit_price').notNull(),
    quantity: integer('quantity').notNull(),
    lineTotal: moneyCol('line_total').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.orderId, t.lineNo] }),
    foreignKey({ columns: [t.organizationId, t.orderId], foreignColumns: [merchantOrder.organizationId, merchantOrder.id] }),
    check('merchant_order_item_ck', sql`${t.quantity} > 0 and ${t.unitPrice} >= 0 and ${t.lineTotal} >= 0`),
  ],
);

export const deliveryExpressRequest = pgTable(
  'delivery_express_request',
  {
    organizationId: text('organization_id').notNull(),
    id: text('id').notNull(),
    territoryId: text('territory_id'),
    merchantId: text('merchant_id').notNull(),
    branchId: text('branch_id'),
    requestedByUserId: text('requested_by_user_id'),
    customerName: text('customer_name').notNull(),
    customerPhone: text('customer_phone'),
    pickupAddress: text('pickup_address').notNull(),
    dropoffAddress: text('dropoff_address').notNull(),
    pickupLocation: pt('pickup_location'),
    dropoffLocation: pt('dropoff_location'),
    packageDescription: text('package_description'),
    declaredValue: moneyCol('declared_value').notNull().default('0'),
    deliveryFee: moneyCol('delivery_fee').notNull().default('0'),
    sourceChannel: text('source_channel', { enum: SOURCE_CHANNELS }).notNull().default('core'),
    tripId: text('trip_id'),
    status: text('status', { enum: EXPRESS_STATUSES }).notNull().default('requested'),
    /** The delivery window (its end is the trip's promise), the pickup window and the load, as given to the trip. */
    deliverAfter: ts('deliver_after'),
    deliverBefore: ts('deliver_before'),
    ...windowsLoad(),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.id] }),
    unique('delivery_express_request_trip_uq').on(t.organizationId, t.tripId),
    foreignKey({ columns: [t.organizationId, t.merchantId], foreignColumns: [merchant.organizationId, merchant.id] }),
    index('delivery_express_request_merchant_idx').on(t.organizationId, t.merchantId, t.id),
    check('delivery_express_request_money_ck', sql`${t.declaredValue} >= 0 and ${t.deliveryFee} >= 0`),
  ],
);
