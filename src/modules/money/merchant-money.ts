import { Type, type Static } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import { actorOf, type Actor } from '../../platform/auth.js';
import type { Api } from '../../platform/context.js';
import { AppError } from '../../platform/errors.js';
import { formatMoney, money, sumMoney } from '../../platform/money.js';
import { pageRequest, toPage } from '../../platform/pagination.js';
import { DateTimeParam, Money, Nullable, Page, PageQueryProps, Strict, Timestamp } from '../../platform/schemas.js';
import { WalletOut } from './debt.js';
import { LedgerOut } from './finance.js';
import type { MoneyContext } from './index.js';
import { ownMerchant, walletSummary } from './model.js';
import { listMovements, movementTotals } from './repo/finance.js';
import { heldCashTotal, listHeldCash, listMerchantSettlements } from './repo/merchant-money.js';
import { WALLET_ENTRY_TYPES } from './tables.js';
import {
  buildWorkbook,
  periodOf,
  REPORT_MAX_ROWS,
  reportFileName,
  sendWorkbook,
  WorkbookResponse,
  type Column,
  type SheetLabels,
} from '../../platform/workbook.js';

type EntryType = (typeof WALLET_ENTRY_TYPES)[number];
type Lang = 'es' | 'en';

/** The words of the period workbook in the merchant's language (the page passes its own). */
const WORDS: Record<
  Lang,
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
    async workbook(actor: Actor, q: { from: string; to: string; lang?: Lang }): Promise<{ file: Buffer; name: string }> {
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

    async settlements(actor: Actor, q: { status?: 'settled' | 'skipped'; limit?: number; cursor?: string }) {
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

export const MerchantSettlementOut = Type.Object({
  id: Type.String(),
  merchant_id: Type.String(),
  period_start: Timestamp,
  period_end: Timestamp,
  status: Type.Union([Type.Literal('settled'), Type.Literal('skipped')], {
    description: "`skipped`: the payable was below the rule's minimum (nothing paid)",
  }),
  gross_amount: Money,
  debt_netted: Money,
  payout_amount: Money,
  currency: Type.String(),
  created_at: Timestamp,
});

export const HeldCashOut = Type.Object({
  id: Type.String({ description: "the driver's collection entry" }),
  organization_id: Type.String(),
  order_id: Type.String(),
  trip_id: Nullable(Type.String()),
  driver_id: Type.String(),
  amount: Money,
  currency: Type.String(),
  collected_at: Timestamp,
});

const merchantOnly = { auth: { roles: ['comercio' as const] } };

export function merchantMoneyRoutes(app: Api, ctx: MoneyContext) {
  const svc = createMerchantMoneyService(ctx);
  app.get(
    '/merchant/wallet',
    {
      config: merchantOnly,
      schema: {
        operationId: 'getMerchantWallet',
        tags: ['payments'],
        summary:
          "The calling merchant's wallet (available, pending, debt, credit) and its entries, newest first, with totals per type over the whole filter",
        description:
          'Entries are signed from the merchant side, as stored: sale_credit +, platform_commission and delivery_fee_debit −, merchant_debt_payment + (a debt payment the ' +
          'platform recorded), settlement_debit − (a settlement paid out to the merchant), adjustment and refund either way. `wallet` is the current wallet whatever the filter; ' +
          "`totals` are over every entry the filter matches (not only this page), so a period `from` (inclusive) .. `to` (exclusive) gives the period's figures. " +
          '404 for a merchant user without a merchant.',
        querystring: Strict({
          ...PageQueryProps,
          type: Type.Optional(Type.Union(WALLET_ENTRY_TYPES.map((t) => Type.Literal(t)))),
          from: Type.Optional(DateTimeParam('inclusive')),
          to: Type.Optional(DateTimeParam('exclusive')),
        }),
        response: {
          200: Type.Object({
            wallet: WalletOut,
            data: Type.Array(LedgerOut),
            next_cursor: Nullable(Type.String()),
            totals: Type.Object({ by_type: Type.Record(Type.String(), Money), net: Money, count: Type.Integer() }),
          }),
        },
      },
    },
    async (req) => svc.wallet(actorOf(req), req.query as OwnEntriesQuery),
  );
  app.get(
    '/merchant/settlements',
    {
      config: merchantOnly,
      schema: {
        operationId: 'listMerchantSettlements',
        tags: ['payments'],
        summary: "The settlements of the calling merchant's automatic settlement rule, newest first (payout = gross − debt netted)",
        querystring: Strict({ ...PageQueryProps, status: Type.Optional(MerchantSettlementOut.properties.status) }),
        response: { 200: Page(MerchantSettlementOut) },
      },
    },
    async (req) => svc.settlements(actorOf(req), req.query as { status?: 'settled' | 'skipped' }),
  );
  app.get(
    '/merchant/wallet.xlsx',
    {
      config: merchantOnly,
      schema: {
        operationId: 'getMerchantWalletWorkbook',
        tags: ['payments'],
        summary: "The calling merchant's wallet entries of a period as a spreadsheet (oldest first, a totals row)",
        description:
          'An Office Open XML workbook, attachment wallet_<from>_<to>.xlsx: one row per entry created in [from, to), dates as date cells, amounts as number cells ' +
          `(signed as in GET /merchant/wallet) with a SUM totals row; headers and entry types in \`lang\` (es by default). Only the caller's entries. from not before to is 400; ` +
          `more than ${REPORT_MAX_ROWS} entries is 422 REPORT_TOO_LARGE.`,
        querystring: Strict({
          from: DateTimeParam('inclusive'),
          to: DateTimeParam('exclusive'),
          lang: Type.Optional(
            Type.Union([Type.Literal('es'), Type.Literal('en')], {
              description: 'the language of the headers and entry types (default es)',
            }),
          ),
        }),
        response: { 200: WorkbookResponse },
      },
    },
    async (req, reply) => {
      const { file, name } = await svc.workbook(actorOf(req), req.query as { from: string; to: string; lang?: Lang });
      return sendWorkbook(reply as unknown as FastifyReply, file, name);
    },
  );
  app.get(
    '/merchant/cash',
    {
      config: merchantOnly,
      schema: {
        operationId: 'listMerchantHeldCash',
        tags: ['payments'],
        summary:
          "Cash of the calling merchant's orders that the platform's drivers collected and the platform has not received yet, newest first",
        description:
          "Cash orders collected by the platform's driver that the platform has not received yet: the driver holds the cash until he hands it in (a remittance, or " +
          "netted by his settlement), and a short collection also waits until staff resolve its shortfall; until then the merchant's net of the order is pending in his wallet. " +
          '`total` and `count` are over every such collection (not only this page).',
        querystring: Strict(PageQueryProps),
        response: {
          200: Type.Object({
            total: Money,
            count: Type.Integer(),
            currency: Type.String(),
            data: Type.Array(HeldCashOut),
            next_cursor: Nullable(Type.String()),
          }),
        },
      },
    },
    async (req) => svc.heldCash(actorOf(req), req.query),
  );
}
