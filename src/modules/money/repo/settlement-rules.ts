import type { Static } from '@sinclair/typebox';
import { eq, sql } from 'drizzle-orm';
import type { Tx } from '../../../platform/db/index.js';
import type { SnakeRow } from '../../../platform/db/columns.js';
import type { RuleOut } from '../schemas.js';
import { merchantSettlement, merchantSettlementRule as rule } from '../tables.js';
import { DEBT_ENTRY_SQL, PENDING_ENTRY_SQL, type WalletSums } from './wallet.js';

/** A settlement rule as stored (derived from the table) and as the API shows it, without the wallet (the response schema). */
export type RuleRecord = typeof rule.$inferSelect;
export type RuleView = Omit<Static<typeof RuleOut>, 'wallet'>;
export type Frequency = RuleRecord['frequency'];
export type RuleSettings = Pick<RuleView, 'enabled' | 'frequency' | 'minimum_balance' | 'net_debt_first'>;

export const ruleOut = (r: RuleRecord): RuleView => ({
  merchant_id: r.merchantId,
  enabled: r.enabled,
  frequency: r.frequency,
  minimum_balance: r.minimumBalance,
  net_debt_first: r.netDebtFirst,
  settled_through: r.settledThrough,
  updated_by_user_id: r.updatedByUserId,
  created_at: r.createdAt,
  updated_at: r.updatedAt,
});

/** The start of the current period of a frequency (UTC days; ISO weeks from Monday; calendar months), as SQL. */
const periodStartSql = (frequencySql: string, atSql: string) =>
  `date_trunc(CASE ${frequencySql} WHEN 'daily' THEN 'day' WHEN 'weekly' THEN 'week' ELSE 'month' END, ${atSql}, 'UTC')`;

export async function findRule(tx: Tx, merchantId: string): Promise<RuleView | null> {
  const rows = await tx.orm.select().from(rule).where(eq(rule.merchantId, merchantId));
  return rows[0] ? ruleOut(rows[0]) : null;
}

/** Creates or updates a merchant's rule. A new rule starts with the current period: it never settles periods that ended before it existed. */
export async function upsertRule(tx: Tx, organizationId: string, merchantId: string, userId: string, r: RuleSettings): Promise<RuleView> {
  const values = {
    enabled: r.enabled,
    frequency: r.frequency,
    minimumBalance: r.minimum_balance,
    netDebtFirst: r.net_debt_first,
    updatedByUserId: userId,
  };
  const rows = await tx.orm
    .insert(rule)
    .values({
      organizationId,
      merchantId,
      ...values,
      settledThrough: sql`date_trunc(CASE ${r.frequency}::text WHEN 'daily' THEN 'day' WHEN 'weekly' THEN 'week' ELSE 'month' END, now(), 'UTC')`,
    })
    .onConflictDoUpdate({ target: [rule.organizationId, rule.merchantId], set: { ...values, updatedAt: sql`now()` } })
    .returning();
  return ruleOut(rows[0]);
}

export type RuleWithSums = RuleView & WalletSums;

/** Saved rules with the sums of each merchant's wallet, by merchant id descending after the cursor. */
export async function listRulesWithSums(
  tx: Tx,
  f: { enabled: boolean | null; after: string | null; limit: number },
): Promise<(RuleWithSums & { id: string })[]> {
  const { rows } = await tx.query<RuleWithSums & { id: string }>(
    `SELECT r.merchant_id AS id, r.merchant_id, r.enabled, r.frequency, r.minimum_balance, r.net_debt_first, r.settled_through, r.updated_by_user_id, r.created_at, r.updated_at,
            COALESCE(w.balance, 0)::numeric(14,2) AS balance, COALESCE(w.debt_net, 0)::numeric(14,2) AS debt_net,
            COALESCE(w.pending, 0)::numeric(14,2) AS pending, w.currency
       FROM merchant_settlement_rule r
       LEFT JOIN LATERAL (
         SELECT sum(amount) AS balance, max(currency) AS currency,
                sum(amount) FILTER (WHERE ${DEBT_ENTRY_SQL} OR entry_type = 'merchant_debt_payment') AS debt_net,
                sum(amount) FILTER (WHERE ${PENDING_ENTRY_SQL}) AS pending
           FROM merchant_wallet_entry WHERE merchant_wallet_entry.merchant_id = r.merchant_id) w ON true
      WHERE ($1::boolean IS NULL OR r.enabled = $1) AND ($2::text IS NULL OR r.merchant_id < $2)
      ORDER BY r.merchant_id DESC LIMIT $3`,
    [f.enabled, f.after, f.limit],
  );
  return rows;
}

// ---------------------------------------------------------------- the settlement worker

/** An enabled rule whose last completed period is not handled yet, with that period. */
export type DueRule = Pick<SnakeRow<RuleRecord>, 'organization_id' | 'merchant_id' | 'frequency' | 'minimum_balance' | 'net_debt_first'> & {
  period_start: Date;
  period_end: Date;
};

const STEP: Record<Frequency, string> = { daily: '1 day', weekly: '7 days', monthly: '1 month' };
/** The last completed period at `now` (UTC): [end − 1 unit, end) with end = the start of the current unit. */
const PERIOD_END_SQL = periodStartSql('frequency', '$1::timestamptz');

/** Across organizations: the next due rule, locked (FOR UPDATE SKIP LOCKED: concurrent workers never take one rule twice). */
export async function lockNextDueRule(tx: Tx, now: Date): Promise<DueRule | null> {
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
  return rows[0] ?? null;
}

/** Records a period's settlement; false when the period has one already (unique per merchant and period start). */
export async function insertMerchantSettlement(tx: Tx, v: Omit<typeof merchantSettlement.$inferInsert, 'createdAt'>): Promise<boolean> {
  const rows = await tx.orm
    .insert(merchantSettlement)
    .values(v)
    .onConflictDoNothing({ target: [merchantSettlement.organizationId, merchantSettlement.merchantId, merchantSettlement.periodStart] })
    .returning({ id: merchantSettlement.id });
  return rows.length > 0;
}

export async function markRuleSettledThrough(tx: Tx, organizationId: string, merchantId: string, periodEnd: Date): Promise<void> {
  await tx.query('UPDATE merchant_settlement_rule SET settled_through = $3 WHERE organization_id = $1 AND merchant_id = $2', [
    organizationId,
    merchantId,
    periodEnd,
  ]);
}
