import type { TSchema } from '@sinclair/typebox';
import type ExcelJS from 'exceljs';
import type { FastifyReply } from 'fastify';
import { AppError } from '../../platform/errors.js';
import { money, sumMoney } from '../../platform/money.js';
import type { Period, TripReportRow } from '../logistics/index.js';
import type { OrderReportRow } from '../commerce/index.js';
import { lazyModule } from '../../platform/lazy.js';

/** exceljs is loaded by the first report, not at start (platform/lazy.ts). */
const loadExcel = lazyModule('exceljs', async () => (await import('exceljs')).default);

/** The served type: an Office Open XML workbook (.xlsx) served under the SPEC's `.xls` paths; Excel and LibreOffice open it. */
export const XLSX_TYPE = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';

/** The response of a route that answers a workbook (its OpenAPI body). */
export const WorkbookResponse = {
  description: `an xlsx workbook (${XLSX_TYPE})`,
  content: { [XLSX_TYPE]: { schema: { type: 'string', format: 'binary' } } },
} as unknown as TSchema;

/** Sends a workbook as an attachment named `name`, never cached. */
export function sendWorkbook(reply: FastifyReply, file: Buffer, name: string) {
  return reply
    .header('content-type', XLSX_TYPE)
    .header('content-disposition', `attachment; filename="${name}"`)
    .header('cache-control', 'private, no-store')
    .header('content-length', String(file.length))
    .send(file);
}

/** Above this many rows a report asks for a narrower period (422 REPORT_TOO_LARGE) instead of building a huge workbook in memory. */
export const REPORT_MAX_ROWS = 50_000;

export interface Column<R> {
  header: string;
  key: string;
  width: number;
  /** 'date' cells are real dates, 'money' cells real numbers with a 2-decimal format, 'int' integers; the rest text. */
  type?: 'date' | 'money' | 'int';
  /** money columns are summed in the totals row unless false (e.g. a balance at a point in time). */
  total?: boolean;
  value: (r: R) => string | number | Date | null;
}

export interface Workbook<R> {
  sheet: string;
  title: string;
  period: Period;
  scope: string;
  columns: Column<R>[];
  rows: R[];
  /** Label of the totals row, and what it carries per column key (sums for money columns are computed here). */
  totalsLabelKey: string;
  countKey?: string;
  /** The words of the title block and the totals row in the reader's language (English when absent). */
  labels?: SheetLabels;
}

export interface SheetLabels {
  period: string;
  beginning: string;
  now: string;
  scope: string;
  total: string;
}

const ENGLISH: SheetLabels = { period: 'Period', beginning: 'beginning', now: 'now', scope: 'Scope', total: 'TOTAL' };

/** Builds the workbook: one sheet per part (the first is the main one), each a title block, a header row, one row per record, a totals row with SUM formulas (and their computed results). */
export async function buildWorkbook<R>(w: Workbook<R>, ...more: Workbook<R>[]): Promise<Buffer> {
  const { Workbook } = await loadExcel();
  const wb = new Workbook();
  wb.creator = 'delivery-api';
  wb.created = new Date();
  for (const part of [w, ...more]) addSheet(wb, part);
  return Buffer.from(await wb.xlsx.writeBuffer());
}

function addSheet<R>(wb: ExcelJS.Workbook, w: Workbook<R>): void {
  const ws = wb.addWorksheet(w.sheet);
  const l = w.labels ?? ENGLISH;
  ws.columns = w.columns.map((c) => ({ key: c.key, width: c.width }));
  ws.addRow([w.title]).font = { bold: true, size: 14 };
  ws.addRow([l.period, w.period.from ?? l.beginning, w.period.to ?? l.now]);
  ws.addRow([l.scope, w.scope]);
  ws.addRow([]);
  const header = ws.addRow(w.columns.map((c) => c.header));
  header.font = { bold: true };
  const firstData = header.number + 1;
  for (const r of w.rows) {
    const row = ws.addRow(
      w.columns.map((c) => {
        const v = c.value(r);
        if (v === null) return null;
        if (c.type === 'money') return Number(money(v as string).toFixed(2));
        return v;
      }),
    );
    w.columns.forEach((c, i) => {
      const cell = row.getCell(i + 1);
      if (c.type === 'date') cell.numFmt = 'yyyy-mm-dd hh:mm:ss';
      if (c.type === 'money') cell.numFmt = '#,##0.00';
    });
  }
  const lastData = firstData + w.rows.length - 1;
  const totals = ws.addRow([]);
  totals.font = { bold: true };
  w.columns.forEach((c, i) => {
    const cell = totals.getCell(i + 1);
    const letter = ws.getColumn(i + 1).letter;
    if (c.key === w.totalsLabelKey) cell.value = l.total;
    else if (c.key === w.countKey) cell.value = w.rows.length;
    else if (c.type === 'money' && c.total !== false) {
      const sum = Number(sumMoney(w.rows.map((r) => (c.value(r) as string | null) ?? '0')).toFixed(2));
      cell.value = w.rows.length ? { formula: `SUM(${letter}${firstData}:${letter}${lastData})`, result: sum } : 0;
      cell.numFmt = '#,##0.00';
    }
  });
  ws.views = [{ state: 'frozen', ySplit: header.number }];
}

/** The scope line of a report: "organization", or the names of the sub-administrator's territories (never their ids). */
export async function scopeLabel(territoryIds: string[] | null, nameOf: (id: string) => Promise<string | null>): Promise<string> {
  if (territoryIds === null) return 'organization';
  if (territoryIds.length === 0) return 'no territories';
  const names = await Promise.all(territoryIds.map(async (id) => (await nameOf(id)) ?? 'unknown territory'));
  return names.sort((a, b) => a.localeCompare(b)).join(', ');
}

export function reportFileName(kind: string, period: Period): string {
  const day = (v: string | null | undefined) => (v ? v.slice(0, 10) : null);
  const parts = [kind, day(period.from) ?? 'start', day(period.to) ?? 'now'];
  return `${parts.join('_')}.xlsx`;
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

/** Validates the period (from < to) and returns it as ISO strings. */
export function periodOf(q: { from?: string; to?: string }): Period {
  const from = q.from ? new Date(q.from) : null;
  const to = q.to ? new Date(q.to) : null;
  if ((from && Number.isNaN(from.getTime())) || (to && Number.isNaN(to.getTime())))
    throw AppError.badRequest('from and to must be dates', [{ field: 'from', message: 'not a date' }]);
  if (from && to && from >= to) throw AppError.badRequest('from must be before to', [{ field: 'from', message: 'must be before to' }]);
  return { from: from?.toISOString() ?? null, to: to?.toISOString() ?? null };
}
