import type { Tx } from '../../../platform/db/index.js';
import type { SnakeRow } from '../../../platform/db/columns.js';
import type { merchantBranch } from '../tables.js';

export type BranchRecord = typeof merchantBranch.$inferSelect;
/** A branch as BRANCH_SELECT returns it: the table's columns, the point as two numbers, opening hours typed. */
export type BranchRow = Omit<SnakeRow<BranchRecord>, 'organization_id' | 'location' | 'opening_hours'> & {
  lon: number;
  lat: number;
  opening_hours: { day: number; open: string; close: string }[];
};

export const BRANCH_COLUMNS =
  'id, merchant_id, name, address, (location)[0] AS lon, (location)[1] AS lat, opening_hours, phone, active, preparation_min, territory_id, created_at, updated_at';
const BRANCH_SELECT = `SELECT b.id, b.merchant_id, b.name, b.address, (b.location)[0] AS lon, (b.location)[1] AS lat, b.opening_hours, b.phone, b.active, b.preparation_min,
                              b.territory_id, b.created_at, b.updated_at FROM merchant_branch b`;

export async function findBranch(tx: Tx, id: string): Promise<BranchRow | null> {
  return (await tx.query<BranchRow>(`${BRANCH_SELECT} WHERE b.id = $1`, [id])).rows[0] ?? null;
}

export async function listBranches(
  tx: Tx,
  merchantId: string,
  q: { active?: boolean; after: string | null; limit: number },
): Promise<BranchRow[]> {
  const { rows } = await tx.query<BranchRow>(
    `${BRANCH_SELECT} WHERE b.merchant_id = $1 AND ($2::boolean IS NULL OR b.active = $2) AND ($3::text IS NULL OR b.id < $3) ORDER BY b.id DESC LIMIT $4`,
    [merchantId, q.active ?? null, q.after, q.limit],
  );
  return rows;
}

export interface BranchWrite {
  name: string;
  address: string;
  /** A native point literal `(lon,lat)`. */
  point: string;
  openingHours: BranchRow['opening_hours'];
  phone: string | null;
  active: boolean;
  /** Null: the column's default. */
  preparationMin: number | null;
  territoryId: string | null;
}

export async function insertBranch(tx: Tx, organizationId: string, id: string, merchantId: string, b: BranchWrite): Promise<void> {
  await tx.query(
    `INSERT INTO merchant_branch (organization_id, id, merchant_id, name, address, location, opening_hours, phone, active, territory_id, preparation_min)
     VALUES ($1, $2, $3, $4, $5, $6::point, $7::jsonb, $8, $9, $10, COALESCE($11::int, 15))`,
    [
      organizationId,
      id,
      merchantId,
      b.name,
      b.address,
      b.point,
      JSON.stringify(b.openingHours),
      b.phone,
      b.active,
      b.territoryId,
      b.preparationMin,
    ],
  );
}

/** Changes the given fields (undefined = unchanged; `phone` null clears it); the territory is always written. */
export async function updateBranch(
  tx: Tx,
  id: string,
  b: Partial<Omit<BranchWrite, 'territoryId'>> & { territoryId: string | null },
): Promise<void> {
  await tx.query(
    `UPDATE merchant_branch SET name = COALESCE($2, name), address = COALESCE($3, address), location = COALESCE($4::point, location),
            opening_hours = COALESCE($5::jsonb, opening_hours), phone = CASE WHEN $6 THEN $7 ELSE phone END, active = COALESCE($8, active),
            territory_id = $9, preparation_min = COALESCE($10::int, preparation_min), updated_at = now()
      WHERE id = $1`,
    [
      id,
      b.name ?? null,
      b.address ?? null,
      b.point ?? null,
      b.openingHours ? JSON.stringify(b.openingHours) : null,
      b.phone !== undefined,
      b.phone ?? null,
      b.active ?? null,
      b.territoryId,
      b.preparationMin ?? null,
    ],
  );
}

/** The branch an order is picked up at: its name, address and point. */
export async function pickupOf(tx: Tx, branchId: string): Promise<{ name: string; address: string; lon: number; lat: number }> {
  const { rows } = await tx.query<{ name: string; address: string; lon: number; lat: number }>(
    'SELECT name, address, (location)[0] AS lon, (location)[1] AS lat FROM merchant_branch WHERE id = $1',
    [branchId],
  );
  return rows[0];
}
