import type { Static } from '@sinclair/typebox';
import type { Actor } from '../../../platform/auth.js';
import { AppError } from '../../../platform/errors.js';
import { formatMoney, money, sumMoney } from '../../../platform/money.js';
import { pageRequest, toPage } from '../../../platform/pagination.js';
import { buildWorkbook, type Column, periodOf, REPORT_MAX_ROWS, reportFileName, type SheetLabels } from '../../../platform/workbook.js';
import type { Language } from '../../messages/index.js';
import type { MoneyContext } from '../context.js';
import { listMovements, movementTotals } from '../repo/finance.js';
import { heldCashTotal, listHeldCash, listMerchantSettlements } from '../repo/merchant-money.js';
import { LedgerOut, type MerchantSettlementOutcome } from '../schemas.js';
import { WALLET_ENTRY_TYPES } from '../schemas.js';
import { ownMerchant, walletSummary } from './ledger.js';

type EntryType = (typeof WALLET_ENTRY_TYPES)[number];

/** The words of the period workbook in the merchant's language (the page passes its own). */
const WORDS: Record<
  Language,
  SheetLabels & {
    sheet: string;
    title: string;
    date: string;
    type: string;
    order: string;
    trip: string;
    amount: string;
    currency: string;
    note: string;
    types: Record<EntryType, string>;
  }
> = {
  es: {
    period: 'Periodo',
    beginning: 'inicio',
    now: 'ahora',
    scope: 'Comercio',
    total: 'TOTAL',
    sheet: 'Movimientos',
    title: 'Movimientos de la billetera',
    date: 'Fecha',
    type: 'Tipo',
    order: 'Pedido',
    trip: 'Viaje',
    amount: 'Importe',
    currency: 'Moneda',
    note: 'Nota del sistema',
    types: {
      sale_credit: 'Venta',
      platform_commission: 'Comisión',
      delivery_fee_debit: 'Costo de envío',
      merchant_debt_payment: 'Pago de deuda',
      adjustment: 'Ajuste',
      refund: 'Reembolso',
      settlement_debit: 'Liquidación',
    },
  },
  en: {
    period: 'Period',
    beginning: 'beginning',
    now: 'now',
    scope: 'Merchant',
    total: 'TOTAL',
    sheet: 'Entries',
    title: 'Wallet entries',
    date: 'Date',
    type: 'Type',
    order: 'Order',
    trip: 'Trip',
    amount: 'Amount',
    currency: 'Currency',
    note: 'System note',
    types: {
      sale_credit: 'Sale',
      platform_commission: 'Commission',
      delivery_fee_debit: 'Delivery fee',
      merchant_debt_payment: 'Debt payment',
      adjustment: 'Adjustment',
      refund: 'Refund',
      settlement_debit: 'Settlement',
    },
  },
};

type EntryLine = Static<typeof LedgerOut>;

/**
 * The merchant's own view of his money: the wallet with its entries over a period (what he was credited and charged,
 * his debt payments, the settlements paid out), and the settlements the automatic rule wrote. Read-only; the same
 * figures the administrators see in /finance/ledger, confined to the caller's merchant.
 */

export interface OwnEntriesQuery {
  type?: string;
  from?: string;
  to?: string;
  limit?: number;
  cursor?: string;
}

export function createMerchantMoneyService(ctx: MoneyContext) {
  return {
    async wallet(actor: Actor, q: OwnEntriesQuery) {
      const page = pageRequest(q);
      return ctx.db.withTenant(actor, async (tx) => {
        const m = await ownMerchant(ctx, tx, actor);
        const filter = { merchant_id: m.id, type: q.type, from: q.from, to: q.to };
        const rows = await listMovements(tx, filter, page.after, page.limit + 1);
        const totals = await movementTotals(tx, filter);
        return {
          wallet: await walletSummary(ctx, tx, m.id),
          ...toPage(rows, page),
          totals: {
            by_type: Object.fromEntries(totals.map((r) => [r.type, formatMoney(r.total)])),
            net: formatMoney(sumMoney(totals.map((r) => r.total))),
            count: totals.reduce((s, r) => s + r.n, 0),
          },
        };
      });
    },

    /** The period's entries as a workbook (oldest first), in the caller's language; more than REPORT_MAX_ROWS is 422 REPORT_TOO_LARGE. */
    async workbook(actor: Actor, q: { from: string; to: string; lang?: Language }): Promise<{ file: Buffer; name: string }> {
      const period = periodOf(q);
      const w = WORDS[q.lang ?? 'es'];
      const { rows, name } = await ctx.db.withTenant(actor, async (tx) => {
        const m = await ownMerchant(ctx, tx, actor);
        return {
          rows: await listMovements(tx, { merchant_id: m.id, from: period.from!, to: period.to! }, null, REPORT_MAX_ROWS + 1),
          name: m.name,
        };
      });
      if (rows.length > REPORT_MAX_ROWS)
        throw AppError.unprocessable(`The period has more than ${REPORT_MAX_ROWS} entries; choose a shorter period`, 'REPORT_TOO_LARGE');
      const columns: Column<EntryLine>[] = [
        { header: w.date, key: 'created_at', width: 20, type: 'date', value: (r) => new Date(r.created_at) },
        { header: w.type, key: 'type', width: 18, value: (r) => w.types[r.type as EntryType] ?? r.type },
        { header: w.order, key: 'order_id', width: 38, value: (r) => r.order_id },
        { header: w.trip, key: 'trip_id', width: 38, value: (r) => r.trip_id },
        { header: w.amount, key: 'amount', width: 14, type: 'money', value: (r) => r.amount },
        { header: w.currency, key: 'currency', width: 10, value: (r) => r.currency },
        { header: w.note, key: 'note', width: 40, value: (r) => r.note },
      ];
      const file = await buildWorkbook({
        sheet: w.sheet,
        title: w.title,
        period,
        scope: name,
        columns,
        rows: rows.reverse(),
        totalsLabelKey: 'created_at',
        labels: w,
      });
      return { file, name: reportFileName('wallet', period) };
    },

    /** The merchant's cash the platform's drivers collected and have not remitted yet (newest first) and its total. */
    async heldCash(actor: Actor, q: { limit?: number; cursor?: string }) {
      const page = pageRequest(q);
      return ctx.db.withTenant(actor, async (tx) => {
        const m = await ownMerchant(ctx, tx, actor);
        const sums = await heldCashTotal(tx, m.id);
        const currency = sums.currency ?? (await ctx.deps.organizations.settingsIn(tx)).default_currency;
        return {
          total: formatMoney(money(sums.total)),
          count: sums.count,
          currency,
          ...toPage(await listHeldCash(tx, m.id, { after: page.after, limit: page.limit + 1 }), page),
        };
      });
    },

    async settlements(actor: Actor, q: { status?: MerchantSettlementOutcome; limit?: number; cursor?: string }) {
      const page = pageRequest(q);
      return ctx.db.withTenant(actor, async (tx) => {
        const m = await ownMerchant(ctx, tx, actor);
        return toPage(
          await listMerchantSettlements(tx, m.id, { status: q.status ?? null, after: page.after, limit: page.limit + 1 }),
          page,
        );
      });
    },
  };
}
