import { prepared, type Tx } from '../../../platform/db/index.js';
import type { SnakeRow } from '../../../platform/db/columns.js';
import { scopeSql, type TerritoryScope } from '../../../platform/scope.js';
import type { PricedLine } from '../service/pricing.js';
import type { merchantOrder, merchantOrderItem } from '../tables.js';

export type OrderRecord = typeof merchantOrder.$inferSelect;
export type OrderStatus = OrderRecord['status'];
type OrderItemRow = Omit<SnakeRow<typeof merchantOrderItem.$inferSelect>, 'organization_id' | 'order_id' | 'line_no'>;

/** An order as ORDER_SELECT returns it: the table's columns (the drop-off point as two numbers) and its lines. */
export type OrderRow = Omit<SnakeRow<OrderRecord>, 'dropoff_location' | 'changed_xid'> & {
  dropoff_lon: number;
  dropoff_lat: number;
  items: OrderItemRow[];
};

const ORDER_COLUMNS = `o.organization_id, o.id, o.status, o.merchant_id, o.branch_id, o.customer_user_id, o.address_id, o.dropoff_address,
         (o.dropoff_location)[0] AS dropoff_lon, (o.dropoff_location)[1] AS dropoff_lat, o.territory_id, o.payment_destination, o.collected_by,
         o.payment_status, o.payment_review_id, o.order_source, o.coupon_id, o.coupon_code, o.subtotal, o.discount_total,
         o.delivery_fee, o.driver_earning, o.total, o.currency, o.quote_id, o.trip_id, o.notes, o.status_reason, o.promised_at, o.deliver_after,
         o.deliver_before, o.pickup_after, o.pickup_before, o.units, o.weight_kg, o.volume_l, o.preparation_min, o.created_at, o.updated_at`;

/** An order read as ORDER_SELECT reads it, from `source` (a table or a CTE named `o`). */
const orderSelectFrom = (source: string) => `
  SELECT ${ORDER_COLUMNS},
         COALESCE((SELECT json_agg(json_build_object('catalog_item_id', i.catalog_item_id, 'name', i.name, 'unit_price', i.unit_price::text,
                                                    'quantity', i.quantity, 'line_total', i.line_total::text) ORDER BY i.line_no)
                     FROM merchant_order_item i WHERE i.organization_id = o.organization_id AND i.order_id = o.id), '[]'::json) AS items
    FROM ${source}`;

export const ORDER_SELECT = orderSelectFrom('merchant_order o');

export async function findOrder(tx: Tx, id: string, lock = false): Promise<OrderRow | null> {
  return (await tx.query<OrderRow>(`${ORDER_SELECT} WHERE o.id = $1${lock ? ' FOR NO KEY UPDATE OF o' : ''}`, [id])).rows[0] ?? null;
}

export interface NewOrder {
  organizationId: string;
  id: string;
  merchantId: string;
  branchId: string;
  customerUserId: string;
  addressId: string;
  dropoffAddress: string;
  /** A native point literal `(lon,lat)`. */
  dropoffPoint: string;
  territoryId: string | null;
  paymentDestination: OrderRecord['paymentDestination'];
  collectedBy: OrderRecord['collectedBy'];
  subtotal: string;
  discountTotal: string;
  deliveryFee: string;
  driverEarning: string;
  total: string;
  currency: string;
  quoteId: string | null;
  notes: string | null;
  lines: PricedLine[];
  /** The delivery promise made at checkout, and the customer's window when he chose one. */
  promisedAt: Date | null;
  deliverAfter: Date | null;
  deliverBefore: Date | null;
  /** The pickup window and the load, for the trip. */
  pickupAfter: Date | null;
  pickupBefore: Date | null;
  units: number;
  weightKg: number | null;
  volumeL: number | null;
  /** The coupon redeemed with the order, with the redemption's id and the clock its validity window is checked against. */
  coupon: { id: string; code: string; redemptionId: string; now: Date } | null;
}

export type InsertedOrder =
  | { ok: true; order: OrderRow }
  /** The coupon use was refused in SQL (a concurrent redemption won): the caller rolls back. */
  | { ok: false; refusal: 'usage' | 'customer' };

/**
 * Inserts an order, its lines and (with a coupon) the coupon redemption in ONE statement. Both coupon limits
 * are decided in SQL: the usage limit by a conditional UPDATE of the coupon (which locks its row until commit,
 * so concurrent redemptions queue up; the caller sends this statement last, right before COMMIT), the
 * per-customer limit by a conditional upsert of the customer's counter. One redemption per order (unique
 * order_id). A refused coupon leaves rows written: the caller must throw (rolling back).
 */
export async function insertOrder(tx: Tx, o: NewOrder): Promise<InsertedOrder> {
  const c = o.coupon;
  const { rows } = await tx.query<Omit<OrderRow, 'items'> & { coupon_counted: boolean; customer_counted: boolean }>(
    prepared(`WITH o AS (
       INSERT INTO merchant_order AS o (organization_id, id, merchant_id, branch_id, customer_user_id, address_id, dropoff_address, dropoff_location, territory_id,
                                   payment_destination, order_source, coupon_id, coupon_code, subtotal, discount_total, delivery_fee, driver_earning, total, currency, quote_id, notes, collected_by,
                                   promised_at, deliver_after, deliver_before, pickup_after, pickup_before, units, weight_kg, volume_l)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8::point, $9, $10, 'core', $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $28, $29, $30, $31,
               $32, $33, $34, $35, $36)
       RETURNING ${ORDER_COLUMNS}),
     i AS (
       INSERT INTO merchant_order_item (organization_id, order_id, line_no, catalog_item_id, name, unit_price, quantity, line_total)
       SELECT $1, $2, x.n, x.catalog_item_id, x.name, x.unit_price, x.quantity, x.line_total
         FROM unnest($21::text[], $22::text[], $23::numeric[], $24::int[], $25::numeric[]) WITH ORDINALITY AS x(catalog_item_id, name, unit_price, quantity, line_total, n)),
     c AS (
       UPDATE merchant_coupon SET usage_count = usage_count + 1, updated_at = now()
        WHERE $11::text IS NOT NULL AND id = $11 AND active AND (usage_limit IS NULL OR usage_count < usage_limit)
          AND (valid_from IS NULL OR valid_from <= $26) AND (valid_until IS NULL OR valid_until > $26)
        RETURNING id, per_customer_limit),
     u AS (
       INSERT INTO merchant_coupon_customer_usage AS u (organization_id, coupon_id, customer_id, uses) SELECT $1, c.id, $5, 1 FROM c
       ON CONFLICT (organization_id, coupon_id, customer_id) DO UPDATE SET uses = u.uses + 1 WHERE u.uses < (SELECT per_customer_limit FROM c)
       RETURNING coupon_id),
     r AS (
       INSERT INTO merchant_coupon_redemption (organization_id, id, coupon_id, merchant_id, customer_id, order_id, discount_amount)
       SELECT $1, $27, u.coupon_id, $3, $5, $2, $14 FROM u)
     SELECT o.*, EXISTS (SELECT 1 FROM c) AS coupon_counted, EXISTS (SELECT 1 FROM u) AS customer_counted FROM o`),
    [
      o.organizationId,
      o.id,
      o.merchantId,
      o.branchId,
      o.customerUserId,
      o.addressId,
      o.dropoffAddress,
      o.dropoffPoint,
      o.territoryId,
      o.paymentDestination,
      c?.id ?? null,
      c?.code ?? null,
      o.subtotal,
      o.discountTotal,
      o.deliveryFee,
      o.driverEarning,
      o.total,
      o.currency,
      o.quoteId,
      o.notes,
      o.lines.map((l) => l.catalog_item_id),
      o.lines.map((l) => l.name),
      o.lines.map((l) => l.unit_price),
      o.lines.map((l) => l.quantity),
      o.lines.map((l) => l.line_total),
      c?.now ?? null,
      c?.redemptionId ?? null,
      o.collectedBy,
      o.promisedAt,
      o.deliverAfter,
      o.deliverBefore,
      o.pickupAfter,
      o.pickupBefore,
      o.units,
      o.weightKg,
      o.volumeL,
    ],
  );
  const { coupon_counted, customer_counted, ...row } = rows[0];
  if (c && !coupon_counted) return { ok: false, refusal: 'usage' };
  if (c && !customer_counted) return { ok: false, refusal: 'customer' };
  const items = o.lines.map((l) => ({
    catalog_item_id: l.catalog_item_id,
    name: l.name,
    unit_price: l.unit_price,
    quantity: l.quantity,
    line_total: l.line_total,
  }));
  return { ok: true, order: { ...row, items } };
}

/**
 * Moves an order from `from` to `to` if it is still in `from`, and returns it as it stands then (as `findOrder` reads it);
 * null when a racing request moved it first.
 */
export async function updateOrderStatus(
  tx: Tx,
  id: string,
  from: OrderStatus,
  to: OrderStatus,
  reason: string | null,
): Promise<OrderRow | null> {
  const { rows } = await tx.query<OrderRow>(
    `WITH o AS (
       UPDATE merchant_order SET status = $3, status_reason = COALESCE($4, status_reason),
              payment_status = CASE WHEN $3 = 'delivered' AND payment_destination = 'cash' THEN 'paid' ELSE payment_status END, updated_at = now()
        WHERE id = $1 AND status = $2
       RETURNING *)
     ${orderSelectFrom('o')}`,
    [id, from, to, reason],
  );
  return rows[0] ?? null;
}

/** The preparation time the merchant gave when accepting, and the promise it moves (null: the promise stays, a scheduled window). */
export async function setOrderPreparation(tx: Tx, id: string, preparationMin: number, promisedAt: Date | null): Promise<void> {
  await tx.query(
    'UPDATE merchant_order SET preparation_min = $2, promised_at = COALESCE($3, promised_at), updated_at = now() WHERE id = $1',
    [id, preparationMin, promisedAt],
  );
}

/** Links the order's trip; the order takes the trip's territory when it had none. */
export async function setOrderTrip(tx: Tx, id: string, tripId: string, territoryId: string | null): Promise<void> {
  await tx.query('UPDATE merchant_order SET trip_id = $2, territory_id = COALESCE(territory_id, $3) WHERE id = $1', [
    id,
    tripId,
    territoryId,
  ]);
}

/** Sets the payment status (and, when `paymentReviewId` is given, the review); false for an unknown order. */
export async function setOrderPaymentStatus(
  tx: Tx,
  id: string,
  status: OrderRecord['paymentStatus'],
  paymentReviewId: string | null | undefined,
): Promise<boolean> {
  const r = await tx.query(
    `UPDATE merchant_order SET payment_status = $2, payment_review_id = CASE WHEN $3 THEN $4 ELSE payment_review_id END, updated_at = now() WHERE id = $1`,
    [id, status, paymentReviewId !== undefined, paymentReviewId ?? null],
  );
  return r.rowCount > 0;
}

interface OrderListQuery {
  status?: OrderStatus;
  after: string | null;
  limit: number;
}

/** A customer's orders, newest first (`limit` rows; the caller asks one more to detect a next page). */
export async function listCustomerOrders(tx: Tx, customerUserId: string, q: OrderListQuery): Promise<OrderRow[]> {
  const { rows } = await tx.query<OrderRow>(
    `${ORDER_SELECT} WHERE o.customer_user_id = $1 AND ($2::text IS NULL OR o.status = $2) AND ($3::text IS NULL OR o.id < $3) ORDER BY o.id DESC LIMIT $4`,
    [customerUserId, q.status ?? null, q.after, q.limit],
  );
  return rows;
}

/** A merchant's orders, newest first. */
export async function listMerchantOrders(tx: Tx, merchantId: string, q: OrderListQuery & { branchId?: string }): Promise<OrderRow[]> {
  const { rows } = await tx.query<OrderRow>(
    `${ORDER_SELECT} WHERE o.merchant_id = $1 AND ($2::text IS NULL OR o.status = $2) AND ($3::text IS NULL OR o.branch_id = $3)
        AND ($4::text IS NULL OR o.id < $4) ORDER BY o.id DESC LIMIT $5`,
    [merchantId, q.status ?? null, q.branchId ?? null, q.after, q.limit],
  );
  return rows;
}

export interface Period {
  from?: string | null;
  to?: string | null;
}

/** Orders in a territory scope, newest first (staff consoles). */
export async function listScopedOrders(
  tx: Tx,
  scope: TerritoryScope,
  q: Period & OrderListQuery & { merchantId?: string },
): Promise<OrderRow[]> {
  const { rows } = await tx.query<OrderRow>(
    `${ORDER_SELECT} WHERE ${scopeSql('o.territory_id', 1)} AND ($2::text IS NULL OR o.status = $2) AND ($3::text IS NULL OR o.merchant_id = $3)
        AND ($4::timestamptz IS NULL OR o.created_at >= $4) AND ($5::timestamptz IS NULL OR o.created_at < $5) AND ($6::text IS NULL OR o.id < $6)
      ORDER BY o.id DESC LIMIT $7`,
    [scope, q.status ?? null, q.merchantId ?? null, q.from ?? null, q.to ?? null, q.after, q.limit],
  );
  return rows;
}

/** Order counts per status in a territory scope and period. */
export async function countOrdersByStatus(tx: Tx, scope: TerritoryScope, period: Period = {}): Promise<Record<string, number>> {
  const { rows } = await tx.query<{ status: string; n: number }>(
    `SELECT status, count(*)::int AS n FROM merchant_order
      WHERE ${scopeSql('territory_id', 1)} AND ($2::timestamptz IS NULL OR created_at >= $2) AND ($3::timestamptz IS NULL OR created_at < $3)
      GROUP BY status`,
    [scope, period.from ?? null, period.to ?? null],
  );
  return Object.fromEntries(rows.map((r) => [r.status, r.n]));
}

export type OrderReportRow = Pick<
  SnakeRow<OrderRecord>,
  | 'id'
  | 'created_at'
  | 'status'
  | 'territory_id'
  | 'merchant_id'
  | 'payment_destination'
  | 'payment_status'
  | 'coupon_code'
  | 'subtotal'
  | 'discount_total'
  | 'delivery_fee'
  | 'total'
  | 'currency'
> & { territory_name: string | null; merchant_name: string | null };

/** The order report lines of a territory scope and period, oldest first (the names are the service's to fill). */
export async function orderReportRows(tx: Tx, scope: TerritoryScope, period: Period = {}, limit = 100_000): Promise<OrderReportRow[]> {
  const { rows } = await tx.query<OrderReportRow>(
    `SELECT o.id, o.created_at, o.status, o.territory_id, NULL::text AS territory_name, o.merchant_id, NULL::text AS merchant_name, o.payment_destination,
            o.payment_status, o.coupon_code, o.subtotal, o.discount_total, o.delivery_fee, o.total, o.currency
       FROM merchant_order o
      WHERE ${scopeSql('o.territory_id', 1)} AND ($2::timestamptz IS NULL OR o.created_at >= $2) AND ($3::timestamptz IS NULL OR o.created_at < $3)
      ORDER BY o.created_at, o.id LIMIT $4`,
    [scope, period.from ?? null, period.to ?? null, limit],
  );
  return rows;
}

/** Offline sync: a merchant's (or a customer's) orders changed in a pull window (`clause` parameters from $2). */
export async function syncOrders(
  tx: Tx,
  owner: { merchantId: string } | { customerUserId: string },
  c: { where: string; orderLimit: string; params: unknown[] },
): Promise<(OrderRow & { sync_xid: string })[]> {
  const select = ORDER_SELECT.replace(/^\s*SELECT\s/i, 'SELECT o.changed_xid::text AS sync_xid, ');
  const { rows } = await tx.query<OrderRow & { sync_xid: string }>(
    `${select} WHERE ${'merchantId' in owner ? 'o.merchant_id = $1' : 'o.customer_user_id = $1'} AND ${c.where} ${c.orderLimit}`,
    ['merchantId' in owner ? owner.merchantId : owner.customerUserId, ...c.params],
  );
  return rows;
}

/** A customer's orders that have a trip, newest first. */
export async function customerOrderTrips(
  tx: Tx,
  customerUserId: string,
  q: { after: string | null; limit: number },
): Promise<{ id: string; trip_id: string }[]> {
  const { rows } = await tx.query<{ id: string; trip_id: string }>(
    'SELECT id, trip_id FROM merchant_order WHERE customer_user_id = $1 AND trip_id IS NOT NULL AND ($2::text IS NULL OR id < $2) ORDER BY id DESC LIMIT $3',
    [customerUserId, q.after, q.limit],
  );
  return rows;
}

/** Orders and express requests per status in a territory scope (the dashboard's commerce section). */
export async function commerceStatusCounts(
  tx: Tx,
  scope: TerritoryScope,
): Promise<{ orders: Record<string, number>; delivery_express: Record<string, number> }> {
  const count = async (table: 'merchant_order' | 'delivery_express_request') => {
    const { rows } = await tx.query<{ status: string; n: number }>(
      `SELECT status, count(*)::int AS n FROM ${table} WHERE ${scopeSql('territory_id', 1)} GROUP BY status`,
      [scope],
    );
    return Object.fromEntries(rows.map((r) => [r.status, r.n]));
  };
  return { orders: await count('merchant_order'), delivery_express: await count('delivery_express_request') };
}
