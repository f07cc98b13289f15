import { Type } from '@sinclair/typebox';
import { actorOf, tenantOf, type Actor } from '../../platform/auth.js';
import type { Api } from '../../platform/context.js';
import type { MoneyContext } from './index.js';
import { formatMoney, sumMoney } from '../../platform/money.js';
import { pageRequest, toPage } from '../../platform/pagination.js';
import { Id, Money, Nullable, PageQueryProps, Strict, Timestamp } from '../../platform/schemas.js';
import { WALLET_ENTRY_TYPES } from './tables.js';

export interface FinanceFilter {
  merchant_id?: string;
  driver_id?: string;
  type?: string;
  from?: string;
  to?: string;
  limit?: number;
  cursor?: string;
}

const CHARGE_TYPES = ['platform_commission', 'delivery_fee_debit'] as const;
const LEDGER_TYPES = [...WALLET_ENTRY_TYPES, 'driver_settlement'] as const;

/**
 * Every money movement as one list (ids are UUIDv7, so `id DESC` orders both sources by time):
 * merchant wallet entries (signed from the merchant's side, as stored) and driver settlements (the settled amount).
 */
const LEDGER_SQL = `
  SELECT 'merchant_wallet' AS source, id, entry_type AS type, merchant_id, driver_id, order_id, trip_id, settlement_id, amount, currency,
         territory_id, note, NULL::text AS status, created_at
    FROM merchant_wallet_entry
  UNION ALL
  SELECT 'driver_settlement', id, 'driver_settlement', NULL, driver_id, NULL, NULL, id, amount, currency, NULL, note, status, created_at
    FROM driver_settlement`;

const FILTER_SQL = `($1::text IS NULL OR merchant_id = $1) AND ($2::text IS NULL OR driver_id = $2) AND ($3::text IS NULL OR type = $3)
  AND ($4::timestamptz IS NULL OR created_at >= $4) AND ($5::timestamptz IS NULL OR created_at < $5)`;

const filterArgs = (q: FinanceFilter) => [q.merchant_id ?? null, q.driver_id ?? null, q.type ?? null, q.from ?? null, q.to ?? null];

export function createFinanceService(ctx: MoneyContext) {
  return {
    /** The platform's charges to merchants: commissions and delivery fees, as positive amounts, with totals per type. */
    async charges(actor: Actor, q: FinanceFilter) {
      const page = pageRequest(q);
      return ctx.db.withTenant(tenantOf(actor), async (tx) => {
        const base = `SELECT * FROM (${LEDGER_SQL}) l WHERE type IN ('platform_commission', 'delivery_fee_debit') AND ${FILTER_SQL}`;
        const { rows } = await tx.query(
          `SELECT l.id, l.type AS charge_type, l.merchant_id, l.driver_id, l.order_id, l.trip_id, (-l.amount)::numeric(14,2) AS amount, l.currency, l.territory_id,
                  CASE WHEN e.payment_destination IN ('merchant_direct', 'cash') THEN 'debt' ELSE 'deducted' END AS collection, e.payment_destination, l.created_at
             FROM (${base}) l JOIN merchant_wallet_entry e ON e.id = l.id
            WHERE ($6::text IS NULL OR l.id < $6) ORDER BY l.id DESC LIMIT $7`,
          [...filterArgs(q), page.after, page.limit + 1],
        );
        const totals = await tx.query<{ type: string; total: string; n: number }>(`SELECT type, (-sum(amount))::numeric(14,2) AS total, count(*)::int AS n FROM (${base}) l GROUP BY type`, filterArgs(q));
        const byType = Object.fromEntries(CHARGE_TYPES.map((t) => [t, '0.00']));
        for (const r of totals.rows) byType[r.type] = formatMoney(r.total);
        const total = formatMoney(sumMoney(totals.rows.map((r) => r.total)));
        return { ...toPage(rows, page), totals: { by_type: byType, total, count: totals.rows.reduce((s, r) => s + r.n, 0) } };
      });
    },

    /** Every money movement with totals per type; with merchant_id the wallet net equals the merchant's balance. */
    async ledger(actor: Actor, q: FinanceFilter) {
      const page = pageRequest(q);
      return ctx.db.withTenant(tenantOf(actor), async (tx) => {
        const base = `SELECT * FROM (${LEDGER_SQL}) l WHERE ${FILTER_SQL}`;
        const { rows } = await tx.query(`${base} AND ($6::text IS NULL OR id < $6) ORDER BY id DESC LIMIT $7`, [...filterArgs(q), page.after, page.limit + 1]);
        const totals = await tx.query<{ source: string; type: string; total: string; n: number }>(
          `SELECT source, type, sum(amount)::numeric(14,2) AS total, count(*)::int AS n FROM (${base}) l GROUP BY source, type`,
          filterArgs(q),
        );
        const byType = Object.fromEntries(totals.rows.map((r) => [r.type, formatMoney(r.total)]));
        const walletNet = formatMoney(sumMoney(totals.rows.filter((r) => r.source === 'merchant_wallet').map((r) => r.total)));
        return { ...toPage(rows, page), totals: { by_type: byType, merchant_wallet_net: walletNet, count: totals.rows.reduce((s, r) => s + r.n, 0) } };
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
  collection: Type.Union([Type.Literal('deducted'), Type.Literal('debt')], { description: '`deducted` from a platform-paid sale, or `debt` the merchant owes (merchant_direct, cash)' }),
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
        summary: 'Platform charges to merchants (commissions and delivery fees) as positive amounts, newest first, with totals per type over the whole filter',
        description: 'Filters: merchant_id, driver_id (the trip driver), type (`platform_commission` | `delivery_fee_debit`), period `from` (inclusive) .. `to` (exclusive).',
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
        summary: 'Every money movement (merchant wallet entries and driver settlements), newest first, with totals per type over the whole filter',
        description:
          'Wallet amounts are signed from the merchant side (credit +, charge −), exactly as stored; driver_settlement rows carry the settled amount and status. ' +
          '`merchant_wallet_net` is the sum of the wallet rows matched: with only merchant_id it is that merchant\'s wallet balance. ' +
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
