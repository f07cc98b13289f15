import type { Actor } from '../../platform/auth.js';
import type { AppContext, Worker } from '../../platform/context.js';
import { enterTenant, type Tx } from '../../platform/db/index.js';
import { newId } from '../../platform/ids.js';
import { formatMoney, minMoney, money } from '../../platform/money.js';
import { recordAudit } from '../../platform/audit.js';
import { lockMerchantWallet, walletSummary } from './model.js';
import { appendEntry } from './wallet.js';
import type { Frequency } from './settlement-rules.js';

const STEP: Record<Frequency, string> = { daily: '1 day', weekly: '7 days', monthly: '1 month' };

/** The last completed period at `now` (UTC): [end − 1 unit, end) with end = the start of the current unit. */
const PERIOD_END_SQL = `date_trunc(CASE frequency WHEN 'daily' THEN 'day' WHEN 'weekly' THEN 'week' ELSE 'month' END, $1::timestamptz, 'UTC')`;

interface DueRule {
  organization_id: string;
  merchant_id: string;
  frequency: Frequency;
  minimum_balance: string;
  net_debt_first: boolean;
  period_start: Date;
  period_end: Date;
}

/** Settlements run without a user: the audit rows carry no actor (the column is nullable). */
const systemActor = (organizationId: string): Pick<Actor, 'organizationId' | 'userId' | 'requestId'> => ({
  organizationId,
  userId: null as unknown as string,
  requestId: 'merchant-settlement-worker',
});

/** Settles one due rule inside the worker's transaction (the rule row is locked). */
async function settle(tx: Tx, r: DueRule): Promise<'settled' | 'skipped' | 'duplicate'> {
  const actor = systemActor(r.organization_id);
  await lockMerchantWallet(tx, r.organization_id, r.merchant_id);
  const w = await walletSummary(tx, r.merchant_id, r.period_end, r.organization_id);
  const payable = money(w.payable);
  const due = payable.gt(0) && payable.gte(money(r.minimum_balance));
  const netted = due && r.net_debt_first ? minMoney(money(w.debt), payable) : money(0);
  const id = newId();
  const inserted = await tx.query(
    `INSERT INTO merchant_settlement (organization_id, id, merchant_id, period_start, period_end, status, gross_amount, debt_netted, payout_amount, currency)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT (organization_id, merchant_id, period_start) DO NOTHING RETURNING id`,
    [r.organization_id, id, r.merchant_id, r.period_start, r.period_end, due ? 'settled' : 'skipped', due ? w.payable : '0.00', formatMoney(netted), due ? formatMoney(payable.minus(netted)) : '0.00', w.currency],
  );
  await tx.query('UPDATE merchant_settlement_rule SET settled_through = $3 WHERE organization_id = $1 AND merchant_id = $2', [r.organization_id, r.merchant_id, r.period_end]);
  if (inserted.rowCount === 0) return 'duplicate';
  if (due) {
    const common = { merchantId: r.merchant_id, currency: w.currency, settlementId: id };
    await appendEntry(tx, actor, { ...common, entryType: 'settlement_debit', amount: formatMoney(payable.negated()), note: `settlement ${r.period_start.toISOString().slice(0, 10)}` });
    if (netted.gt(0)) await appendEntry(tx, actor, { ...common, entryType: 'merchant_debt_payment', amount: formatMoney(netted), note: 'debt netted from settlement' });
  }
  await recordAudit(tx, actor, {
    action: due ? 'merchant_settlement.settled' : 'merchant_settlement.skipped',
    entityType: 'merchant_settlement',
    entityId: id,
    after: { merchant_id: r.merchant_id, period_start: r.period_start, gross_amount: due ? w.payable : '0.00', debt_netted: formatMoney(netted) },
  });
  return due ? 'settled' : 'skipped';
}

/**
 * One round: every enabled rule whose last completed period is not handled yet, across organizations.
 * Each rule is taken in its own transaction with FOR UPDATE SKIP LOCKED, so concurrent workers never settle
 * one rule twice and one failing merchant does not hold back the others; the unique
 * (organization, merchant, period_start) makes a second settlement of a period impossible anyway.
 */
export async function runMerchantSettlements(ctx: AppContext, now: Date = new Date(), batch = 50): Promise<number> {
  let handled = 0;
  for (let i = 0; i < batch; i++) {
    const outcome = await ctx.db.withSystem(async (tx) => {
      const { rows } = await tx.query<DueRule>(
        `SELECT organization_id, merchant_id, frequency, minimum_balance, net_debt_first,
                ${PERIOD_END_SQL} - (CASE frequency WHEN 'daily' THEN interval '${STEP.daily}' WHEN 'weekly' THEN interval '${STEP.weekly}' ELSE interval '${STEP.monthly}' END) AS period_start,
                ${PERIOD_END_SQL} AS period_end
           FROM merchant_settlement_rule
          WHERE enabled AND (settled_through IS NULL OR settled_through < ${PERIOD_END_SQL})
          ORDER BY organization_id, merchant_id
          LIMIT 1 FOR UPDATE SKIP LOCKED`,
        [now],
      );
      if (!rows[0]) return null;
      // The rule is found and locked across tenants; the settlement itself runs under its tenant's RLS.
      await enterTenant(tx, { organizationId: rows[0].organization_id, userId: null });
      return settle(tx, rows[0]);
    });
    if (outcome === null) break;
    if (outcome !== 'duplicate') handled++;
  }
  return handled;
}

export function merchantSettlementWorker(ctx: AppContext): Worker {
  return { name: 'merchant-settlements', intervalMs: 60_000, tick: () => runMerchantSettlements(ctx) };
}
