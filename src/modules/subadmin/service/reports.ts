import { buildWorkbook, type Column } from '../../../platform/workbook.js';
import type { OrderReportRow } from '../../commerce/index.js';
import type { Period, TripReportRow } from '../../logistics/index.js';

/** The scope line of a report: "organization", or the names of the sub-administrator's territories (never their ids). */
export async function scopeLabel(territoryIds: string[] | null, nameOf: (id: string) => Promise<string | null>): Promise<string> {
  if (territoryIds === null) return 'organization';
  if (territoryIds.length === 0) return 'no territories';
  const names = await Promise.all(territoryIds.map(async (id) => (await nameOf(id)) ?? 'unknown territory'));
  return names.sort((a, b) => a.localeCompare(b)).join(', ');
}

/**
 * A report of records with a status as three sheets, each with its own totals: the counted ones (`counted`, the first
 * sheet: the business done), the cancelled ones listed apart, and those still open: never added to the counted totals.
 */
function statusWorkbook<R extends { status: string }>(
  rows: R[],
  period: Period,
  scope: string,
  columns: Column<R>[],
  counted: string,
  sheets: { main: [sheet: string, title: string]; cancelled: [string, string]; open: [string, string] },
): Promise<Buffer> {
  const part = ([sheet, title]: [string, string], of: R[]) => ({
    sheet,
    title,
    period,
    scope,
    rows: of,
    totalsLabelKey: 'id',
    countKey: 'status',
    columns,
  });
  return buildWorkbook<R>(
    part(
      sheets.main,
      rows.filter((r) => r.status === counted),
    ),
    part(
      sheets.cancelled,
      rows.filter((r) => r.status === 'cancelled'),
    ),
    part(
      sheets.open,
      rows.filter((r) => r.status !== counted && r.status !== 'cancelled'),
    ),
  );
}

/** Deliveries: totals count completed trips only; cancelled and open trips are listed apart, with their own totals. */
export function deliveriesWorkbook(rows: TripReportRow[], period: Period, scope: string): Promise<Buffer> {
  return statusWorkbook(rows, period, scope, columns, 'completed', {
    main: ['Deliveries', 'Deliveries report (completed)'],
    cancelled: ['Cancelled', 'Cancelled trips (not counted)'],
    open: ['Open', 'Open trips (not counted yet)'],
  });
}

/**
 * Sales: the first sheet and its totals are the delivered orders only (the business done); cancelled orders are listed
 * apart on their own sheet, and orders still open on a third, each with its own totals, never added to the sales.
 */
export function salesWorkbook(rows: OrderReportRow[], period: Period, scope: string): Promise<Buffer> {
  return statusWorkbook(rows, period, scope, SALES_COLUMNS, 'delivered', {
    main: ['Sales', 'Sales report (delivered orders)'],
    cancelled: ['Cancelled', 'Cancelled orders (not counted)'],
    open: ['Open', 'Open orders (not counted yet)'],
  });
}

const SALES_COLUMNS: Column<OrderReportRow>[] = [
  { header: 'Order', key: 'id', width: 38, value: (r) => r.id },
  { header: 'Created at', key: 'created_at', width: 20, type: 'date', value: (r) => r.created_at },
  { header: 'Status', key: 'status', width: 20, value: (r) => r.status },
  { header: 'Territory', key: 'territory', width: 20, value: (r) => r.territory_name },
  { header: 'Merchant', key: 'merchant', width: 24, value: (r) => r.merchant_name },
  { header: 'Payment', key: 'payment_destination', width: 16, value: (r) => r.payment_destination },
  { header: 'Payment status', key: 'payment_status', width: 16, value: (r) => r.payment_status },
  { header: 'Coupon', key: 'coupon_code', width: 12, value: (r) => r.coupon_code },
  { header: 'Subtotal', key: 'subtotal', width: 14, type: 'money', value: (r) => r.subtotal },
  { header: 'Discount', key: 'discount_total', width: 14, type: 'money', value: (r) => r.discount_total },
  { header: 'Delivery fee', key: 'delivery_fee', width: 14, type: 'money', value: (r) => r.delivery_fee },
  { header: 'Total', key: 'total', width: 14, type: 'money', value: (r) => r.total },
  { header: 'Currency', key: 'currency', width: 10, value: (r) => r.currency },
];

const columns: Column<TripReportRow>[] = [
  { header: 'Trip', key: 'id', width: 38, value: (r) => r.id },
  { header: 'Created at', key: 'created_at', width: 20, type: 'date', value: (r) => r.created_at },
  { header: 'Status', key: 'status', width: 12, value: (r) => r.status },
  { header: 'Service mode', key: 'service_mode', width: 16, value: (r) => r.service_mode },
  { header: 'Territory', key: 'territory', width: 20, value: (r) => r.territory_name },
  { header: 'Merchant', key: 'merchant', width: 24, value: (r) => r.merchant_name },
  { header: 'Driver', key: 'driver', width: 24, value: (r) => r.driver_name },
  { header: 'Order', key: 'order_id', width: 38, value: (r) => r.order_id },
  { header: 'Pickup', key: 'pickup', width: 30, value: (r) => r.pickup_address },
  { header: 'Dropoff', key: 'dropoff', width: 30, value: (r) => r.dropoff_address },
  { header: 'Completed at', key: 'completed_at', width: 20, type: 'date', value: (r) => r.completed_at },
  { header: 'Delivery fee', key: 'delivery_fee', width: 14, type: 'money', value: (r) => r.delivery_fee },
  { header: 'Driver earning', key: 'driver_earning', width: 14, type: 'money', value: (r) => r.driver_earning },
  { header: 'Currency', key: 'currency', width: 10, value: (r) => r.currency },
];
