import { recordAudit } from '../../platform/audit.js';
import type { Actor } from '../../platform/auth.js';
import type { Worker } from '../../platform/context.js';
import { enterTenant, type Tx } from '../../platform/db/index.js';
import { newId } from '../../platform/ids.js';
import { formatMoney, minMoney, money } from '../../platform/money.js';
import type { MoneyContext } from './context.js';
import type { MerchantSettlementOutcome } from './schemas.js';
import { type DueRule, insertMerchantSettlement, lockNextDueRule, markRuleSettledThrough } from './repo/settlement-rules.js';
import { lockMerchantWallet } from './repo/wallet.js';
import { appendEntry, walletSummary } from './service/ledger.js';

/** Settlements run without a user: the audit rows carry no actor (the column is nullable). */
const systemActor = (organizationId: string): Pick<Actor, 'organizationId' | 'userId' | 'requestId'> => ({
  organizationId,
  userId: null as unknown as string,
  requestId: 'merchant-settlement-worker',
});

/** Settles one due rule inside the worker's transaction (the rule row is locked). */
async function settle(ctx: MoneyContext, tx: Tx, r: DueRule): Promise<MerchantSettlementOutcome | 'duplicate'> {
  const actor = systemActor(r.organization_id);
  await lockMerchantWallet(tx, r.organization_id, r.merchant_id);
  const w = await walletSummary(ctx, tx, r.merchant_id, r.period_end, r.organization_id);
  const payable = money(w.payable);
  const due = payable.gt(0) && payable.gte(money(r.minimum_balance));
  const netted = due && r.net_debt_first ? minMoney(money(w.debt), payable) : money(0);
  const id = newId();
  const inserted = await insertMerchantSettlement(tx, {
    organizationId: r.organization_id,
    id,
    merchantId: r.merchant_id,
    periodStart: r.period_start,
    periodEnd: r.period_end,
    status: due ? 'settled' : 'skipped',
    grossAmount: due ? w.payable : '0.00',
    debtNetted: formatMoney(netted),
    payoutAmount: due ? formatMoney(payable.minus(netted)) : '0.00',
    currency: w.currency,
  });
  await markRuleSettledThrough(tx, r.organization_id, r.merchant_id, r.period_end);
  if (!inserted) return 'duplicate';
  if (due) {
    const common = { merchantId: r.merchant_id, currency: w.currency, settlementId: id };
    await appendEntry(tx, actor, {
      ...common,
      entryType: 'settlement_debit',
      amount: formatMoney(payable.negated()),
      note: `settlement ${r.period_start.toISOString().slice(0, 10)}`,
    });
    if (netted.gt(0))
      await appendEntry(tx, actor, {
        ...common,
        entryType: 'merchant_debt_payment',
        amount: formatMoney(netted),
        note: 'debt netted from settlement',
      });
  }
  await recordAudit(tx, actor, {
    action: due ? 'merchant_settlement.settled' : 'merchant_settlement.skipped',
    entityType: 'merchant_settlement',
    entityId: id,
    after: {
      merchant_id: r.merchant_id,
      period_start: r.period_start,
      gross_amount: due ? w.payable : '0.00',
      debt_netted: formatMoney(netted),
    },
  });
  return due ? 'settled' : 'skipped';
}

/**
 * One round: every enabled rule whose last completed period is not handled yet, across organizations.
 * Each rule is taken in its own transaction with FOR UPDATE SKIP LOCKED, so concurrent workers never settle
 * one rule twice and one failing merchant does not hold back the others; the unique
 * (organization, merchant, period_start) makes a second settlement of a period impossible anyway.
 */
export async function runMerchantSettlements(ctx: MoneyContext, now: Date = new Date(), batch = 50): Promise<number> {
  let handled = 0;
  for (let i = 0; i < batch; i++) {
    const outcome = await ctx.db.withSystem(async (tx) => {
      const due = await lockNextDueRule(tx, now);
      if (!due) return null;
      // The rule is found and locked across tenants; the settlement itself runs under its tenant's RLS.
      await enterTenant(tx, { organizationId: due.organization_id, userId: null });
      return settle(ctx, tx, due);
    });
    if (outcome === null) break;
    if (outcome !== 'duplicate') handled++;
  }
  return handled;
}

export function merchantSettlementWorker(ctx: MoneyContext): Worker {
  return { name: 'merchant-settlements', intervalMs: 60_000, tick: () => runMerchantSettlements(ctx) };
}
