import type { Static } from '@sinclair/typebox';
import { and, desc, eq, lt, param, sql } from 'drizzle-orm';
import type { Tx } from '../../../platform/db/index.js';
import type { TerritoryScope } from '../../../platform/scope.js';
import type { SettlementOut } from '../schemas.js';
import { driverSettlement as settlement, driverSettlementItem as item } from '../tables.js';

/** A driver settlement as stored (derived from the table) and as the API shows it (the response schema). */
export type SettlementRecord = typeof settlement.$inferSelect;
export type SettlementView = Static<typeof SettlementOut>;
export type DriverSettlementStatus = SettlementRecord['status'];

export const settlementOut = (s: SettlementRecord): SettlementView => ({
  id: s.id,
  driver_id: s.driverId,
  status: s.status,
  cutoff_at: s.cutoffAt,
  amount: s.amount,
  cash_netted: s.cashNetted,
  payout_amount: s.payoutAmount,
  driver_owes: s.driverOwes,
  trip_count: s.tripCount,
  currency: s.currency,
  note: s.note,
  payment_reference: s.paymentReference,
  created_by_user_id: s.createdByUserId,
  paid_by_user_id: s.paidByUserId,
  paid_at: s.paidAt,
  created_at: s.createdAt,
  updated_at: s.updatedAt,
});

/** Of these trips, those already in a settlement. */
export async function settledTripIds(tx: Tx, tripIds: string[]): Promise<Set<string>> {
  const rows = await tx.orm
    .select({ tripId: item.tripId })
    .from(item)
    .where(sql`${item.tripId} = ANY(${param(tripIds)}::text[])`);
  return new Set(rows.map((r) => r.tripId));
}

/** A new settlement, empty until its items are in (amount and trip count 0). */
export async function insertSettlement(
  tx: Tx,
  v: Pick<typeof settlement.$inferInsert, 'organizationId' | 'id' | 'driverId' | 'cutoffAt' | 'currency' | 'note' | 'createdByUserId'>,
): Promise<void> {
  await tx.orm.insert(settlement).values({ ...v, amount: '0', tripCount: 0 });
}

/**
 * The earnings go in with INSERT ... ON CONFLICT DO NOTHING on the item's key (organization, trip): a trip already taken
 * (also by a concurrent settlement, which the insert waits for) is left out. Returns the amounts taken.
 */
export async function insertItems(
  tx: Tx,
  organizationId: string,
  settlementId: string,
  earnings: { trip_id: string; amount: string; completed_at: Date | string }[],
): Promise<string[]> {
  const { rows } = await tx.query<{ amount: string }>(
    `INSERT INTO driver_settlement_item (organization_id, trip_id, settlement_id, amount, completed_at)
     SELECT $1, x.trip_id, $2, x.amount, x.completed_at
       FROM jsonb_to_recordset($3::jsonb) AS x(trip_id text, amount numeric, completed_at timestamptz)
     ON CONFLICT (organization_id, trip_id) DO NOTHING RETURNING amount`,
    [organizationId, settlementId, JSON.stringify(earnings)],
  );
  return rows.map((r) => r.amount);
}

/** The settlement's amount becomes the sum of its items. */
export async function totalSettlement(tx: Tx, id: string, tripCount: number): Promise<SettlementView> {
  const rows = await tx.orm
    .update(settlement)
    .set({ amount: sql`(SELECT sum(${item.amount}) FROM ${item} WHERE ${item.settlementId} = ${id})`, tripCount, updatedAt: sql`now()` })
    .where(eq(settlement.id, id))
    .returning();
  return settlementOut(rows[0]);
}

export async function findSettlement(tx: Tx, id: string): Promise<SettlementView | null> {
  const rows = await tx.orm.select().from(settlement).where(eq(settlement.id, id));
  return rows[0] ? settlementOut(rows[0]) : null;
}

/** The cash netting of a settlement: what was netted, what it pays out, what the driver still owes. */
export async function setSettlementCash(
  tx: Tx,
  id: string,
  cashNetted: string,
  payoutAmount: string,
  driverOwes: string,
): Promise<SettlementView> {
  const rows = await tx.orm
    .update(settlement)
    .set({ cashNetted, payoutAmount, driverOwes, updatedAt: sql`now()` })
    .where(eq(settlement.id, id))
    .returning();
  return settlementOut(rows[0]);
}

export async function findSettlementForUpdate(tx: Tx, id: string): Promise<SettlementView | null> {
  const rows = await tx.orm.select().from(settlement).where(eq(settlement.id, id)).for('update');
  return rows[0] ? settlementOut(rows[0]) : null;
}

export async function markSettlementPaid(tx: Tx, id: string, userId: string, paymentReference: string | null): Promise<SettlementView> {
  const rows = await tx.orm
    .update(settlement)
    .set({ status: 'paid', paidAt: sql`now()`, paidByUserId: userId, paymentReference, updatedAt: sql`now()` })
    .where(eq(settlement.id, id))
    .returning();
  return settlementOut(rows[0]);
}

/** A driver's settlements, newest first, `limit` rows after the cursor id. */
export async function listDriverSettlements(
  tx: Tx,
  f: { driverId: string; status: DriverSettlementStatus | null; after: string | null; limit: number },
): Promise<SettlementView[]> {
  const rows = await tx.orm
    .select()
    .from(settlement)
    .where(
      and(
        eq(settlement.driverId, f.driverId),
        f.status === null ? undefined : eq(settlement.status, f.status),
        f.after === null ? undefined : lt(settlement.id, f.after),
      ),
    )
    .orderBy(desc(settlement.id))
    .limit(f.limit);
  return rows.map(settlementOut);
}

/** A driver's settled amounts, pending and paid. */
export async function driverSettlementTotals(tx: Tx, driverId: string): Promise<{ pending: string; paid: string }> {
  const { rows } = await tx.query<{ pending: string; paid: string }>(
    `SELECT COALESCE(sum(payout_amount) FILTER (WHERE status = 'pending'), 0)::numeric(14,2) AS pending, COALESCE(sum(payout_amount) FILTER (WHERE status = 'paid'), 0)::numeric(14,2) AS paid
       FROM driver_settlement WHERE driver_id = $1`,
    [driverId],
  );
  return rows[0];
}

/** The organization's pending driver settlements (for the dashboard); none for a territory scope (settlements have no territory). */
export async function pendingDriverSettlements(tx: Tx, scope: TerritoryScope): Promise<{ total: string; n: number }> {
  const { rows } = await tx.query<{ total: string; n: number }>(
    `SELECT COALESCE(sum(payout_amount), 0)::numeric(14,2) AS total, count(*)::int AS n FROM driver_settlement WHERE status = 'pending' AND $1::text[] IS NULL`,
    [scope],
  );
  return rows[0];
}
