import { and, desc, eq, lt } from 'drizzle-orm';
import type { Tx } from '../../../platform/db/index.js';
import { scopeSql, type TerritoryScope } from '../../../platform/scope.js';
import { driverCashEntry as entry } from '../tables.js';

/** A driver cash entry as stored (derived from the table). */
export type CashEntryRecord = typeof entry.$inferSelect;
export type NewCashEntry = Omit<typeof entry.$inferInsert, 'createdAt'>;

/** Appends one cash entry (append-only: there is no update); null when the trip's collection is already recorded. */
export async function insertCashEntry(tx: Tx, v: NewCashEntry): Promise<CashEntryRecord | null> {
  const rows = await tx.orm.insert(entry).values(v).onConflictDoNothing().returning();
  return rows[0] ?? null;
}

/** Serializes work on one driver's cash (remittances, adjustments, settlements, collections) for the transaction. */
export async function lockDriverCash(tx: Tx, organizationId: string, driverId: string): Promise<void> {
  await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`money:cash:${organizationId}:${driverId}`]);
}

export interface CashSums {
  cash_in_hand: string;
  collected: string;
  remitted: string;
  adjusted: string;
  /** cash_collected entries recorded with an amount different from the order's (discrepancies for review). */
  discrepancies: number;
  currency: string | null;
}

/** The sums of a driver's cash ledger: cash in hand = SUM(amount) = collected − remitted ± adjustments. */
export async function cashSums(tx: Tx, driverId: string): Promise<CashSums> {
  const { rows } = await tx.query<CashSums>(
    `SELECT COALESCE(sum(amount), 0)::numeric(14,2) AS cash_in_hand,
            COALESCE(sum(amount) FILTER (WHERE entry_type = 'cash_collected'), 0)::numeric(14,2) AS collected,
            COALESCE(-sum(amount) FILTER (WHERE entry_type = 'cash_remitted'), 0)::numeric(14,2) AS remitted,
            COALESCE(sum(amount) FILTER (WHERE entry_type = 'cash_adjustment'), 0)::numeric(14,2) AS adjusted,
            count(*) FILTER (WHERE expected_amount IS NOT NULL)::int AS discrepancies,
            max(currency) AS currency
       FROM driver_cash_entry WHERE driver_id = $1`,
    [driverId],
  );
  return rows[0];
}

/** Cash in hand of each of these drivers (drivers without entries are absent: they hold nothing). */
export async function cashInHandOf(tx: Tx, driverIds: string[]): Promise<Map<string, string>> {
  if (driverIds.length === 0) return new Map();
  const { rows } = await tx.query<{ driver_id: string; cash: string }>(
    `SELECT driver_id, sum(amount)::numeric(14,2) AS cash FROM driver_cash_entry WHERE driver_id = ANY($1::text[]) GROUP BY driver_id`,
    [driverIds],
  );
  return new Map(rows.map((r) => [r.driver_id, r.cash]));
}

/** A driver's entries, newest first, `limit` rows after the cursor id. */
export async function listCashEntries(tx: Tx, driverId: string, after: string | null, limit: number): Promise<CashEntryRecord[]> {
  return tx.orm
    .select()
    .from(entry)
    .where(and(eq(entry.driverId, driverId), after === null ? undefined : lt(entry.id, after)))
    .orderBy(desc(entry.id))
    .limit(limit);
}

/** A collection a remittance covers: the order and merchant of a `cash_collected` entry and its amount. */
export interface CoveredCollection {
  entry_id: string;
  order_id: string | null;
  merchant_id: string | null;
  amount: string;
}

/**
 * The collections that `amount` more remitted cash newly covers in full, oldest first. Coverage is derived, never stored:
 * everything remitted so far covers the driver's `cash_collected` entries in (created_at, id) order; an entry is covered
 * once the remitted total reaches the running total of collections through it.
 */
export async function newlyCoveredCollections(tx: Tx, driverId: string, amount: string): Promise<CoveredCollection[]> {
  const { rows } = await tx.query<CoveredCollection>(
    `WITH c AS (
       SELECT id, order_id, merchant_id, amount, sum(amount) OVER (ORDER BY created_at, id) AS cum
         FROM driver_cash_entry WHERE driver_id = $1 AND entry_type = 'cash_collected'),
     p AS (SELECT COALESCE(-sum(amount), 0) AS paid FROM driver_cash_entry WHERE driver_id = $1 AND entry_type = 'cash_remitted')
     SELECT c.id AS entry_id, c.order_id, c.merchant_id, c.amount::numeric(14,2) AS amount
       FROM c, p WHERE c.cum > p.paid AND c.cum <= p.paid + $2::numeric ORDER BY c.cum, c.id`,
    [driverId, amount],
  );
  return rows;
}

export interface ReconciliationRow {
  day: string;
  driver_id: string;
  territory_id: string | null;
  currency: string;
  collected: string;
  remitted: string;
  adjusted: string;
  /** Net change of cash in hand that day (collected − remitted ± adjustments). */
  net: string;
  /** Cash in hand at the end of the day (every entry up to then). */
  outstanding: string;
  collections: number;
  discrepancies: number;
  /** Sum of (expected − collected) of that day's discrepancies: what is missing (negative: collected more). */
  discrepancy_amount: string;
}

/**
 * Per driver, territory and day (in the organization's time zone): collected, remitted, adjustments, discrepancies, and what the
 * driver held at the end of the day. Days in [from, to); `scope`: a sub-administrator's territories (null = all).
 */
export async function reconciliationRows(tx: Tx, f: { from: string; to: string; timeZone: string; scope: TerritoryScope; territoryId: string | null; driverId: string | null }): Promise<ReconciliationRow[]> {
  const { rows } = await tx.query<ReconciliationRow>(
    `WITH e AS (
       SELECT e.*, (e.created_at AT TIME ZONE $3)::date AS day FROM driver_cash_entry e
        WHERE ${scopeSql('e.territory_id', 4)} AND ($5::text IS NULL OR e.territory_id = $5) AND ($6::text IS NULL OR e.driver_id = $6)),
     d AS (
       SELECT day, driver_id, territory_id, max(currency) AS currency,
              COALESCE(sum(amount) FILTER (WHERE entry_type = 'cash_collected'), 0) AS collected,
              COALESCE(-sum(amount) FILTER (WHERE entry_type = 'cash_remitted'), 0) AS remitted,
              COALESCE(sum(amount) FILTER (WHERE entry_type = 'cash_adjustment'), 0) AS adjusted,
              sum(amount) AS net,
              count(*) FILTER (WHERE entry_type = 'cash_collected')::int AS collections,
              count(*) FILTER (WHERE expected_amount IS NOT NULL)::int AS discrepancies,
              COALESCE(sum(expected_amount - amount) FILTER (WHERE expected_amount IS NOT NULL), 0) AS discrepancy_amount
         FROM e GROUP BY day, driver_id, territory_id),
     o AS (
       SELECT d.*, sum(net) OVER (PARTITION BY driver_id, territory_id ORDER BY day) AS running FROM d)
     SELECT to_char(day, 'YYYY-MM-DD') AS day, driver_id, territory_id, currency, collected::numeric(14,2) AS collected, remitted::numeric(14,2) AS remitted,
            adjusted::numeric(14,2) AS adjusted, net::numeric(14,2) AS net,
            (SELECT COALESCE(sum(x.net), 0) FROM d x WHERE x.driver_id = o.driver_id AND x.day <= o.day)::numeric(14,2) AS outstanding,
            collections, discrepancies, discrepancy_amount::numeric(14,2) AS discrepancy_amount
       FROM o WHERE day >= $1::date AND day < $2::date
      ORDER BY day, driver_id, territory_id NULLS LAST`,
    [f.from, f.to, f.timeZone, f.scope, f.territoryId, f.driverId],
  );
  return rows;
}
