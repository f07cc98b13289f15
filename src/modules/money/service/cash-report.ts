import { buildWorkbook, type Column, reportFileName } from '../../../platform/workbook.js';
import type { Language } from '../../messages/index.js';
import type { Reconciliation, ReconciliationLine } from './cash.js';

const WORDS = {
  es: {
    sheet: 'Conciliación',
    title: 'Conciliación de efectivo contra entrega por repartidor y día',
    labels: { period: 'Periodo', scope: 'Alcance', beginning: 'inicio', now: 'ahora', total: 'TOTAL' },
    organization: 'organización',
    day: 'Día',
    territory: 'Territorio',
    driver: 'Repartidor',
    collected: 'Cobrado',
    remitted: 'Entregado a caja',
    adjusted: 'Ajustes',
    net: 'Neto del día',
    outstanding: 'Pendiente al cierre',
    collections: 'Cobros',
    discrepancies: 'Diferencias',
    missing: 'Faltante',
    currency: 'Moneda',
  },
  en: {
    sheet: 'Reconciliation',
    title: 'Cash on delivery reconciliation per driver and day',
    labels: { period: 'Period', scope: 'Scope', beginning: 'beginning', now: 'now', total: 'TOTAL' },
    organization: 'organization',
    day: 'Day',
    territory: 'Territory',
    driver: 'Driver',
    collected: 'Collected',
    remitted: 'Remitted',
    adjusted: 'Adjustments',
    net: 'Net of the day',
    outstanding: 'Outstanding at day end',
    collections: 'Collections',
    discrepancies: 'Discrepancies',
    missing: 'Missing',
    currency: 'Currency',
  },
} as const;

/**
 * The reconciliation as a workbook: one row per driver, territory and day (the same rows as GET /admin/cash-reconciliation),
 * money as number cells, a totals row summing the flows (collected, remitted, adjustments, net, missing) — never the
 * outstanding column, which is a balance at the end of each day.
 */
export function reconciliationWorkbook(r: Reconciliation, lang: Language): Promise<Buffer> {
  const w = WORDS[lang];
  const columns: Column<ReconciliationLine>[] = [
    { header: w.day, key: 'day', width: 12, value: (x) => x.day },
    { header: w.territory, key: 'territory', width: 22, value: (x) => x.territory_name ?? x.territory_id },
    { header: w.driver, key: 'driver', width: 26, value: (x) => x.driver_name ?? x.driver_id },
    { header: w.collected, key: 'collected', width: 14, type: 'money', value: (x) => x.collected },
    { header: w.remitted, key: 'remitted', width: 16, type: 'money', value: (x) => x.remitted },
    { header: w.adjusted, key: 'adjusted', width: 12, type: 'money', value: (x) => x.adjusted },
    { header: w.net, key: 'net', width: 14, type: 'money', value: (x) => x.net },
    { header: w.outstanding, key: 'outstanding', width: 20, type: 'money', total: false, value: (x) => x.outstanding },
    { header: w.collections, key: 'collections', width: 10, type: 'int', value: (x) => x.collections },
    { header: w.discrepancies, key: 'discrepancies', width: 12, type: 'int', value: (x) => x.discrepancies },
    { header: w.missing, key: 'missing', width: 12, type: 'money', value: (x) => x.discrepancy_amount },
    { header: w.currency, key: 'currency', width: 9, value: (x) => x.currency },
  ];
  return buildWorkbook({
    sheet: w.sheet,
    title: w.title,
    period: { from: r.from, to: r.to },
    scope: r.scope === null ? w.organization : r.scope.join(', '),
    columns,
    rows: r.data,
    totalsLabelKey: 'day',
    labels: w.labels,
  });
}

export const reconciliationFileName = (q: { from: string; to: string }) =>
  reportFileName('cash-reconciliation', { from: q.from, to: q.to });
