import { Type } from '@sinclair/typebox';
import { actorOf, type Actor } from '../../platform/auth.js';
import type { Api } from '../../platform/context.js';
import type { MoneyContext } from './index.js';
import { formatMoney, sumMoney } from '../../platform/money.js';
import { pageRequest, toPage } from '../../platform/pagination.js';
import { Id, Money, Nullable, PageQueryProps, Strict, Timestamp } from '../../platform/schemas.js';
import * as repo from './repo/finance.js';
import type { LedgerFilter } from './repo/finance.js';
import { WALLET_ENTRY_TYPES } from './tables.js';

export interface FinanceFilter extends LedgerFilter {
  limit?: number;
  cursor?: string;
}

const CHARGE_TYPES = ['platform_commission', 'delivery_fee_debit'] as const;
const LEDGER_TYPES = [...WALLET_ENTRY_TYPES, 'driver_settlement'] as const;

export function createFinanceService(ctx: MoneyContext) {
  return {
    /** The platform's charges to merchants: commissions and delivery fees, as positive amounts, with totals per type. */
    async charges(actor: Actor, q: FinanceFilter) {
      const page = pageRequest(q);
      return ctx.db.withTenant(actor, async (tx) => {
        const rows = await repo.listCharges(tx, q, page.after, page.limit + 1);
        const totals = await repo.chargeTotals(tx, q);
        const byType = Object.fromEntries(CHARGE_TYPES.map((t) => [t, '0.00']));
        for (const r of totals) byType[r.type] = formatMoney(r.total);
        const total = formatMoney(sumMoney(totals.map((r) => r.total)));
        return { ...toPage(rows, page), totals: { by_type: byType, total, count: totals.reduce((s, r) => s + r.n, 0) } };
      });
    },

    /** Every money movement with totals per type; with merchant_id the wallet net equals the merchant's balance. */
    async ledger(actor: Actor, q: FinanceFilter) {
      const page = pageRequest(q);
      return ctx.db.withTenant(actor, async (tx) => {
        const rows = await repo.listMovements(tx, q, page.after, page.limit + 1);
        const totals = await repo.movementTotals(tx, q);
        const byType = Object.fromEntries(totals.map((r) => [r.type, formatMoney(r.total)]));
        const walletNet = formatMoney(sumMoney(totals.filter((r) => r.source === 'merchant_wallet').map((r) => r.total)));
        return {
          ...toPage(rows, page),
          totals: { by_type: byType, merchant_wallet_net: walletNet, count: totals.reduce((s, r) => s + r.n, 0) },
        };
      });
    },
  };
}

const Query = (types: readonly string[]) =>
  Strict({
    ...PageQueryProps,
    merchant_id: Type.Optional(Id),
    driver_id: Type.Optional(Id),
    type: Type.Optional(Type.Union(types.map((t) => Type.Literal(t)))),
    from: Type.Optional(Type.String({ format: 'date-time', description: 'inclusive' })),
    to: Type.Optional(Type.String({ format: 'date-time', description: 'exclusive' })),
  });

export const ChargeOut = Type.Object({
  id: Type.String(),
  charge_type: Type.String(),
  merchant_id: Type.String(),
  driver_id: Nullable(Type.String()),
  order_id: Nullable(Type.String()),
  trip_id: Nullable(Type.String()),
  amount: Money,
  currency: Type.String(),
  territory_id: Nullable(Type.String()),
  collection: Type.Union([Type.Literal('deducted'), Type.Literal('debt')], {
    description: '`deducted` from a platform-paid sale, or `debt` the merchant owes (merchant_direct, cash)',
  }),
  payment_destination: Nullable(Type.String()),
  created_at: Timestamp,
});

export const LedgerOut = Type.Object({
  source: Type.Union([Type.Literal('merchant_wallet'), Type.Literal('driver_settlement')]),
  id: Type.String(),
  type: Type.String(),
  merchant_id: Nullable(Type.String()),
  driver_id: Nullable(Type.String()),
  order_id: Nullable(Type.String()),
  trip_id: Nullable(Type.String()),
  settlement_id: Nullable(Type.String()),
  amount: Money,
  currency: Type.String(),
  territory_id: Nullable(Type.String()),
  note: Nullable(Type.String()),
  status: Nullable(Type.String()),
  created_at: Timestamp,
});

export function financeRoutes(app: Api, ctx: MoneyContext) {
  const svc = createFinanceService(ctx);
  app.get(
    '/finance/charges',
    {
      config: { auth: { roles: ['administrator'] } },
      schema: {
        operationId: 'listFinanceCharges',
        tags: ['finance'],
        summary:
          'Platform charges to merchants (commissions and delivery fees) as positive amounts, newest first, with totals per type over the whole filter',
        description:
          'Filters: merchant_id, driver_id (the trip driver), type (`platform_commission` | `delivery_fee_debit`), period `from` (inclusive) .. `to` (exclusive).',
        querystring: Query(CHARGE_TYPES),
        response: {
          200: Type.Object({
            data: Type.Array(ChargeOut),
            next_cursor: Nullable(Type.String()),
            totals: Type.Object({ by_type: Type.Record(Type.String(), Money), total: Money, count: Type.Integer() }),
          }),
        },
      },
    },
    async (req) => svc.charges(actorOf(req), req.query as FinanceFilter),
  );
  app.get(
    '/finance/ledger',
    {
      config: { auth: { roles: ['administrator'] } },
      schema: {
        operationId: 'listFinanceLedger',
        tags: ['finance'],
        summary:
          'Every money movement (merchant wallet entries and driver settlements), newest first, with totals per type over the whole filter',
        description:
          'Wallet amounts are signed from the merchant side (credit +, charge −), exactly as stored; driver_settlement rows carry the settled amount and status. ' +
          "`merchant_wallet_net` is the sum of the wallet rows matched: with only merchant_id it is that merchant's wallet balance. " +
          'Filters: merchant_id, driver_id, type, period `from` (inclusive) .. `to` (exclusive).',
        querystring: Query(LEDGER_TYPES),
        response: {
          200: Type.Object({
            data: Type.Array(LedgerOut),
            next_cursor: Nullable(Type.String()),
            totals: Type.Object({ by_type: Type.Record(Type.String(), Money), merchant_wallet_net: Money, count: Type.Integer() }),
          }),
        },
      },
    },
    async (req) => svc.ledger(actorOf(req), req.query as FinanceFilter),
  );
}
