import { foreignKey, index, pgTable, point, primaryKey, text, timestamp, unique } from 'drizzle-orm/pg-core';
import { merchant } from '../logistics/tables.js';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

export const SHOP_PLATFORMS = ['woocommerce', 'shopify'] as const;
export const SHOP_ORDER_STATUSES = ['awaiting_location', 'placed', 'cancelled'] as const;

/**
 * A merchant's online shop sending its order webhooks here. `secret` is the shop's webhook signing secret,
 * encrypted at rest (SHOP_SECRET_COLUMN) and never returned; a deleted connection keeps its row (its shop orders
 * name it) without the secret, and its webhooks are refused.
 */
export const shopConnection = pgTable(
  'shop_connection',
  {
    organizationId: text('organization_id').notNull(),
    id: text('id').notNull(),
    merchantId: text('merchant_id').notNull(),
    platform: text('platform', { enum: SHOP_PLATFORMS }).notNull(),
    shopUrl: text('shop_url').notNull(),
    branchId: text('branch_id'),
    secret: text('secret'),
    secretSetAt: ts('secret_set_at').notNull().defaultNow(),
    createdBy: text('created_by').notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
    deletedAt: ts('deleted_at'),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.id] }),
    foreignKey({ columns: [t.organizationId, t.merchantId], foreignColumns: [merchant.organizationId, merchant.id] }),
    index('shop_connection_id_idx').on(t.id),
    index('shop_connection_merchant_idx').on(t.organizationId, t.merchantId, t.id),
  ],
);

/**
 * One order of a connected shop, once per (connection, the shop's order id): the recipient and address it carried
 * last, and the express request it became (none while it awaits a location: the shop sent no coordinates).
 * `shop_updated_at` is the shop's modification time of the version applied, so an older delivery changes nothing.
 */
export const shopOrder = pgTable(
  'shop_order',
  {
    organizationId: text('organization_id').notNull(),
    id: text('id').notNull(),
    connectionId: text('connection_id').notNull(),
    merchantId: text('merchant_id').notNull(),
    shopOrderId: text('shop_order_id').notNull(),
    shopOrderNumber: text('shop_order_number'),
    status: text('status', { enum: SHOP_ORDER_STATUSES }).notNull(),
    customerName: text('customer_name').notNull(),
    customerPhone: text('customer_phone'),
    dropoffAddress: text('dropoff_address').notNull(),
    dropoffLocation: point('dropoff_location', { mode: 'xy' }),
    packageDescription: text('package_description'),
    total: text('total'),
    currency: text('currency'),
    expressRequestId: text('express_request_id'),
    note: text('note'),
    shopUpdatedAt: ts('shop_updated_at'),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.id] }),
    unique('shop_order_shop_uq').on(t.organizationId, t.connectionId, t.shopOrderId),
    foreignKey({ columns: [t.organizationId, t.connectionId], foreignColumns: [shopConnection.organizationId, shopConnection.id] }),
    index('shop_order_merchant_idx').on(t.organizationId, t.merchantId, t.id),
  ],
);

/** Each webhook delivery received, once per (connection, the shop's delivery id): a repeat is acknowledged and ignored. */
export const shopDelivery = pgTable(
  'shop_delivery',
  {
    organizationId: text('organization_id').notNull(),
    connectionId: text('connection_id').notNull(),
    deliveryId: text('delivery_id').notNull(),
    topic: text('topic').notNull(),
    shopOrderId: text('shop_order_id'),
    outcome: text('outcome').notNull(),
    receivedAt: ts('received_at').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.connectionId, t.deliveryId] }),
    foreignKey({ columns: [t.organizationId, t.connectionId], foreignColumns: [shopConnection.organizationId, shopConnection.id] }),
  ],
);
