import { eq, sql } from 'drizzle-orm';
import type { Tx } from '../../../platform/db/index.js';
import { scopeSql, type TerritoryScope } from '../../../platform/scope.js';
import { merchant } from '../tables.js';
import { selectList, type SnakeRow } from '../../../platform/db/columns.js';

const MERCHANT_OMIT = ['decidedByUserId', 'decidedAt'] as const;
const MERCHANT_POINTS = { location: ['lon', 'lat'] } as const;
type MerchantRecord = Omit<typeof merchant.$inferSelect, (typeof MERCHANT_OMIT)[number] | keyof typeof MERCHANT_POINTS>;

/** A merchant as the logistics reads return it: the columns of `merchant` (derived from the table), its location as numbers. */
export type MerchantRow = SnakeRow<MerchantRecord> & { lon: number | null; lat: number | null };

export const MERCHANT_SELECT = `SELECT ${selectList(merchant, 'm', { omit: MERCHANT_OMIT, points: MERCHANT_POINTS })} FROM merchant m`;

export async function findMerchant(tx: Tx, id: string): Promise<MerchantRow | null> {
  const { rows } = await tx.query<MerchantRow>(`${MERCHANT_SELECT} WHERE m.id = $1`, [id]);
  return rows[0] ?? null;
}

export async function merchantOfUser(tx: Tx, userId: string): Promise<MerchantRow | null> {
  const { rows } = await tx.query<MerchantRow>(`${MERCHANT_SELECT} WHERE m.owner_user_id = $1`, [userId]);
  return rows[0] ?? null;
}

/** Inserts a merchant (`location` a point literal or null; commission null = the default 10.00); false when the owner already has one. */
export async function insertMerchant(
  tx: Tx,
  v: Pick<typeof merchant.$inferInsert, 'organizationId' | 'id' | 'ownerUserId' | 'name' | 'phone' | 'address' | 'territoryId'> & {
    location: string | null;
    commissionPercent: string | null;
  },
): Promise<boolean> {
  const inserted = await tx.query(
    `INSERT INTO merchant (organization_id, id, owner_user_id, name, phone, address, location, territory_id, commission_percent)
     VALUES ($1, $2, $3, $4, $5, $6, $7::point, $8, COALESCE($9::numeric, 10.00)) ON CONFLICT (organization_id, owner_user_id) DO NOTHING RETURNING id`,
    [v.organizationId, v.id, v.ownerUserId, v.name, v.phone, v.address, v.location, v.territoryId, v.commissionPercent],
  );
  return inserted.rowCount > 0;
}

export async function listMerchants(
  tx: Tx,
  f: { status: string | null; territoryId: string | null; scope: TerritoryScope; after: string | null; limit: number },
): Promise<MerchantRow[]> {
  const { rows } = await tx.query<MerchantRow>(
    `${MERCHANT_SELECT}
      WHERE ($1::text IS NULL OR m.status = $1) AND ($2::text IS NULL OR m.territory_id = $2)
        AND ${scopeSql('m.territory_id', 3)} AND ($4::text IS NULL OR m.id < $4)
      ORDER BY m.id DESC LIMIT $5`,
    [f.status, f.territoryId, f.scope, f.after, f.limit],
  );
  return rows;
}

/** The merchant's row locked FOR UPDATE: its current approval status. */
export async function lockMerchantStatus(tx: Tx, id: string): Promise<MerchantRow['status']> {
  const { rows } = await tx.query<Pick<MerchantRow, 'status'>>('SELECT status FROM merchant WHERE id = $1 FOR UPDATE', [id]);
  return rows[0]!.status;
}

export async function setMerchantStatus(
  tx: Tx,
  id: string,
  to: MerchantRow['status'],
  reason: string | null,
  byUserId: string,
): Promise<void> {
  await tx.query(
    'UPDATE merchant SET status = $2, status_reason = $3, decided_by_user_id = $4, decided_at = now(), updated_at = now() WHERE id = $1',
    [id, to, reason, byUserId],
  );
}

export async function setCommission(tx: Tx, id: string, percent: string): Promise<void> {
  await tx.orm
    .update(merchant)
    .set({ commissionPercent: percent, updatedAt: sql`now()` })
    .where(eq(merchant.id, id));
}
