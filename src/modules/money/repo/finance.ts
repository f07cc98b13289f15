import type { Static } from '@sinclair/typebox';
import type { Tx } from '../../../platform/db/index.js';
import type { ChargeOut, LedgerOut } from '../schemas.js';

export interface LedgerFilter {
  merchant_id?: string;
  driver_id?: string;
  type?: string;
  from?: string;
  to?: string;
}

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

const filterArgs = (q: LedgerFilter) => [q.merchant_id ?? null, q.driver_id ?? null, q.type ?? null, q.from ?? null, q.to ?? null];

const CHARGES_SQL = `SELECT * FROM (${LEDGER_SQL}) l WHERE type IN ('platform_commission', 'delivery_fee_debit') AND ${FILTER_SQL}`;
const MOVEMENTS_SQL = `SELECT * FROM (${LEDGER_SQL}) l WHERE ${FILTER_SQL}`;

/** The platform's charges to merchants (commissions and delivery fees) as positive amounts, newest first, `limit` rows after the cursor id. */
export async function listCharges(tx: Tx, q: LedgerFilter, after: string | null, limit: number): Promise<Static<typeof ChargeOut>[]> {
  const { rows } = await tx.query<Static<typeof ChargeOut>>(
    `SELECT l.id, l.type AS charge_type, l.merchant_id, l.driver_id, l.order_id, l.trip_id, (-l.amount)::numeric(14,2) AS amount, l.currency, l.territory_id,
            CASE WHEN e.payment_destination = 'merchant_direct' OR (e.payment_destination = 'cash' AND e.collected_by IS DISTINCT FROM 'driver') THEN 'debt' ELSE 'deducted' END AS collection, e.payment_destination, l.created_at
       FROM (${CHARGES_SQL}) l JOIN merchant_wallet_entry e ON e.id = l.id
      WHERE ($6::text IS NULL OR l.id < $6) ORDER BY l.id DESC LIMIT $7`,
    [...filterArgs(q), after, limit],
  );
  return rows;
}

/** The charges' totals per type (positive) over the whole filter. */
export async function chargeTotals(tx: Tx, q: LedgerFilter): Promise<{ type: string; total: string; n: number }[]> {
  const { rows } = await tx.query<{ type: string; total: string; n: number }>(
    `SELECT type, (-sum(amount))::numeric(14,2) AS total, count(*)::int AS n FROM (${CHARGES_SQL}) l GROUP BY type`,
    filterArgs(q),
  );
  return rows;
}

/** Every money movement, newest first, `limit` rows after the cursor id. */
export async function listMovements(tx: Tx, q: LedgerFilter, after: string | null, limit: number): Promise<Static<typeof LedgerOut>[]> {
  const { rows } = await tx.query<Static<typeof LedgerOut>>(
    `${MOVEMENTS_SQL} AND ($6::text IS NULL OR id < $6) ORDER BY id DESC LIMIT $7`,
    [...filterArgs(q), after, limit],
  );
  return rows;
}

/** The movements' totals per source and type over the whole filter. */
export async function movementTotals(tx: Tx, q: LedgerFilter): Promise<{ source: string; type: string; total: string; n: number }[]> {
  const { rows } = await tx.query<{ source: string; type: string; total: string; n: number }>(
    `SELECT source, type, sum(amount)::numeric(14,2) AS total, count(*)::int AS n FROM (${MOVEMENTS_SQL}) l GROUP BY source, type`,
    filterArgs(q),
  );
  return rows;
}
