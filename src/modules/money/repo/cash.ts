import { and, desc, eq, lt } from 'drizzle-orm';
import type { Tx } from '../../../platform/db/index.js';
import { scopeSql, type TerritoryScope } from '../../../platform/scope.js';
import type { ShortfallChargedTo } from '../schemas.js';
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
  /** Short collections (less than the order asked for) not resolved yet by staff: their orders stay pending. */
  open_shortfalls: number;
  open_shortfall_amount: string;
  currency: string | null;
}

/**
 * A short collection (cash_collected below its expected amount) is resolved when staff charged the shortfall to the driver
 * (a `cash_adjustment` of his carrying the trip) or to the merchant (a wallet `adjustment` carrying the trip; the merchant
 * adjustments route never sets a trip). SQL over an entry aliased `c`.
 */
const RESOLVED_SQL = `(EXISTS (SELECT 1 FROM driver_cash_entry a WHERE a.organization_id = c.organization_id AND a.driver_id = c.driver_id AND a.entry_type = 'cash_adjustment' AND a.trip_id = c.trip_id)
   OR EXISTS (SELECT 1 FROM merchant_wallet_entry w WHERE w.organization_id = c.organization_id AND w.entry_type = 'adjustment' AND w.trip_id = c.trip_id))`;
const SHORT_SQL = `(c.entry_type = 'cash_collected' AND c.expected_amount > c.amount)`;

/** The sums of a driver's cash ledger: cash in hand = SUM(amount) = collected − remitted ± adjustments. */
export async function cashSums(tx: Tx, driverId: string): Promise<CashSums> {
  const { rows } = await tx.query<CashSums>(
    `SELECT COALESCE(sum(amount), 0)::numeric(14,2) AS cash_in_hand,
            COALESCE(sum(amount) FILTER (WHERE entry_type = 'cash_collected'), 0)::numeric(14,2) AS collected,
            COALESCE(-sum(amount) FILTER (WHERE entry_type = 'cash_remitted'), 0)::numeric(14,2) AS remitted,
            COALESCE(sum(amount) FILTER (WHERE entry_type = 'cash_adjustment'), 0)::numeric(14,2) AS adjusted,
            count(*) FILTER (WHERE expected_amount IS NOT NULL)::int AS discrepancies,
            count(*) FILTER (WHERE ${SHORT_SQL} AND NOT ${RESOLVED_SQL})::int AS open_shortfalls,
            COALESCE(sum(expected_amount - amount) FILTER (WHERE ${SHORT_SQL} AND NOT ${RESOLVED_SQL}), 0)::numeric(14,2) AS open_shortfall_amount,
            max(currency) AS currency
       FROM driver_cash_entry c WHERE driver_id = $1`,
    [driverId],
  );
  return rows[0];
}

/** One of a driver's entries. */
export async function findCashEntry(tx: Tx, driverId: string, id: string): Promise<CashEntryRecord | null> {
  const rows = await tx.orm
    .select()
    .from(entry)
    .where(and(eq(entry.driverId, driverId), eq(entry.id, id)));
  return rows[0] ?? null;
}

/** The collection of a trip (its cash_collected entry). */
export async function findCollection(tx: Tx, tripId: string): Promise<CashEntryRecord | null> {
  const rows = await tx.orm
    .select()
    .from(entry)
    .where(and(eq(entry.tripId, tripId), eq(entry.entryType, 'cash_collected')));
  return rows[0] ?? null;
}

/** Who a short collection's shortfall was charged to (see RESOLVED_SQL); null while unresolved. */
export async function shortfallResolution(tx: Tx, driverId: string, tripId: string): Promise<ShortfallChargedTo | null> {
  const { rows } = await tx.query<{ to: ShortfallChargedTo }>(
    `SELECT 'driver' AS to FROM driver_cash_entry WHERE driver_id = $1 AND entry_type = 'cash_adjustment' AND trip_id = $2
     UNION ALL SELECT 'merchant' FROM merchant_wallet_entry WHERE entry_type = 'adjustment' AND trip_id = $2 LIMIT 1`,
    [driverId, tripId],
  );
  return rows[0]?.to ?? null;
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

/** An entry of the coverage sequence: a collection, or a shortfall charged to the driver (a cash_adjustment carrying the trip). */
export interface CoveredCollection {
  entry_id: string;
  entry_type: CashEntryRecord['entryType'];
  order_id: string | null;
  trip_id: string | null;
  merchant_id: string | null;
  amount: string;
  expected_amount: string | null;
}

/**
 * What remitted cash covers, oldest first: the driver's collections and the shortfalls charged to him (what each order's cash
 * is owed for). Coverage is derived, never stored: everything remitted so far covers these entries in (created_at, id) order;
 * an entry is covered once the remitted total reaches the running total through it.
 */
const COVERAGE_SQL = `WITH c AS (
       SELECT id, entry_type, order_id, trip_id, merchant_id, amount, expected_amount, sum(amount) OVER (ORDER BY created_at, id) AS cum
         FROM driver_cash_entry WHERE driver_id = $1 AND (entry_type = 'cash_collected' OR (entry_type = 'cash_adjustment' AND trip_id IS NOT NULL AND amount > 0))),
     p AS (SELECT COALESCE(-sum(amount), 0) AS paid FROM driver_cash_entry WHERE driver_id = $1 AND entry_type = 'cash_remitted')`;
const COVERED_COLUMNS = `c.id AS entry_id, c.entry_type, c.order_id, c.trip_id, c.merchant_id, c.amount::numeric(14,2) AS amount, c.expected_amount::numeric(14,2) AS expected_amount`;

/** The entries of the coverage sequence that `amount` more remitted cash newly covers in full, oldest first. */
export async function newlyCoveredCollections(tx: Tx, driverId: string, amount: string): Promise<CoveredCollection[]> {
  const { rows } = await tx.query<CoveredCollection>(
    `${COVERAGE_SQL}
     SELECT ${COVERED_COLUMNS} FROM c, p WHERE c.cum > p.paid AND c.cum <= p.paid + $2::numeric ORDER BY c.cum, c.id`,
    [driverId, amount],
  );
  return rows;
}

/** Whether the remittances so far cover this entry of the coverage sequence. */
export async function entryCovered(tx: Tx, driverId: string, entryId: string): Promise<boolean> {
  const { rowCount } = await tx.query(`${COVERAGE_SQL} SELECT 1 FROM c, p WHERE c.id = $2 AND c.cum <= p.paid`, [driverId, entryId]);
  return rowCount > 0;
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
export async function reconciliationRows(
  tx: Tx,
  f: { from: string; to: string; timeZone: string; scope: TerritoryScope; territoryId: string | null; driverId: string | null },
): Promise<ReconciliationRow[]> {
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
