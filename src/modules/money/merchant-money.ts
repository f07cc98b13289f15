import { Type } from '@sinclair/typebox';
import { actorOf, type Actor } from '../../platform/auth.js';
import type { Api } from '../../platform/context.js';
import { formatMoney, sumMoney } from '../../platform/money.js';
import { pageRequest, toPage } from '../../platform/pagination.js';
import { DateTimeParam, Money, Nullable, Page, PageQueryProps, Strict, Timestamp } from '../../platform/schemas.js';
import { WalletOut } from './debt.js';
import { LedgerOut } from './finance.js';
import type { MoneyContext } from './index.js';
import { ownMerchant, walletSummary } from './model.js';
import { listMovements, movementTotals } from './repo/finance.js';
import { listMerchantSettlements } from './repo/merchant-money.js';
import { WALLET_ENTRY_TYPES } from './tables.js';

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

    async settlements(actor: Actor, q: { status?: 'settled' | 'skipped'; limit?: number; cursor?: string }) {
      const page = pageRequest(q);
      return ctx.db.withTenant(actor, async (tx) => {
        const m = await ownMerchant(ctx, tx, actor);
        return toPage(await listMerchantSettlements(tx, m.id, { status: q.status ?? null, after: page.after, limit: page.limit + 1 }), page);
      });
    },
  };
}

export const MerchantSettlementOut = Type.Object({
  id: Type.String(),
  merchant_id: Type.String(),
  period_start: Timestamp,
  period_end: Timestamp,
  status: Type.Union([Type.Literal('settled'), Type.Literal('skipped')], { description: '`skipped`: the payable was below the rule\'s minimum (nothing paid)' }),
  gross_amount: Money,
  debt_netted: Money,
  payout_amount: Money,
  currency: Type.String(),
  created_at: Timestamp,
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
        summary: "The calling merchant's wallet (available, pending, debt, credit) and its entries, newest first, with totals per type over the whole filter",
        description:
          'Entries are signed from the merchant side, as stored: sale_credit +, platform_commission and delivery_fee_debit −, merchant_debt_payment + (a debt payment the ' +
          'platform recorded), settlement_debit − (a settlement paid out to the merchant), adjustment and refund either way. `wallet` is the current wallet whatever the filter; ' +
          '`totals` are over every entry the filter matches (not only this page), so a period `from` (inclusive) .. `to` (exclusive) gives the period\'s figures. ' +
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
}
