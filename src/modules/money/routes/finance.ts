import { Type } from '@sinclair/typebox';
import { actorOf } from '../../../platform/auth.js';
import type { Api } from '../../../platform/context.js';
import { Money, Nullable } from '../../../platform/schemas.js';
import type { MoneyContext } from '../context.js';
import { ChargeOut, FinanceQuery, LedgerOut } from '../schemas.js';
import { CHARGE_TYPES, createFinanceService, type FinanceFilter, LEDGER_TYPES } from '../service/finance.js';

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
        querystring: FinanceQuery(CHARGE_TYPES),
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
        querystring: FinanceQuery(LEDGER_TYPES),
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
