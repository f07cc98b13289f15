import type { TSchema } from '@sinclair/typebox';
import type ExcelJS from 'exceljs';
import type { FastifyReply } from 'fastify';
import { AppError } from './errors.js';
import { lazyModule } from './lazy.js';
import { money, sumMoney } from './money.js';

/** The period a report covers (ISO timestamps; null = open-ended). */
export interface ReportPeriod {
  from?: string | null;
  to?: string | null;
}

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
  period: ReportPeriod;
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

export function reportFileName(kind: string, period: ReportPeriod): string {
  const day = (v: string | null | undefined) => (v ? v.slice(0, 10) : null);
  const parts = [kind, day(period.from) ?? 'start', day(period.to) ?? 'now'];
  return `${parts.join('_')}.xlsx`;
}

/** Above this many rows a report asks for a narrower period (422 REPORT_TOO_LARGE) instead of building a huge workbook in memory. */
export const REPORT_MAX_ROWS = 50_000;

/** Validates the period (from < to) and returns it as ISO strings. */
export function periodOf(q: { from?: string; to?: string }): { from: string | null; to: string | null } {
  const from = q.from ? new Date(q.from) : null;
  const to = q.to ? new Date(q.to) : null;
  if ((from && Number.isNaN(from.getTime())) || (to && Number.isNaN(to.getTime())))
    throw AppError.badRequest('from and to must be dates', [{ field: 'from', message: 'not a date' }]);
  if (from && to && from >= to) throw AppError.badRequest('from must be before to', [{ field: 'from', message: 'must be before to' }]);
  return { from: from?.toISOString() ?? null, to: to?.toISOString() ?? null };
}
