import { WALLET_ENTRY_TYPES } from '../schemas.js';
import type { Actor } from '../../../platform/auth.js';
import { formatMoney, sumMoney } from '../../../platform/money.js';
import { pageRequest, toPage } from '../../../platform/pagination.js';
import type { MoneyContext } from '../context.js';
import * as repo from '../repo/finance.js';
import type { LedgerFilter } from '../repo/finance.js';

export interface FinanceFilter extends LedgerFilter {
  limit?: number;
  cursor?: string;
}

export const CHARGE_TYPES = ['platform_commission', 'delivery_fee_debit'] as const;

export const LEDGER_TYPES = [...WALLET_ENTRY_TYPES, 'driver_settlement'] as const;

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
