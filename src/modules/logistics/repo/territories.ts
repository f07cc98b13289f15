import { inArray } from 'drizzle-orm';
import type { Tx } from '../../../platform/db/index.js';
import type { GeoArea } from '../../../platform/geo.js';
import { scopeSql, type TerritoryScope } from '../../../platform/scope.js';
import { territory } from '../tables.js';
import { selectList, type SnakeRow } from '../../../platform/db/columns.js';

/** A territory as read (derived from the table): its GeoJSON geometry as submitted. */
export type TerritoryRow = SnakeRow<Omit<typeof territory.$inferSelect, 'organizationId' | 'createdByUserId' | 'geometry'>> & {
  geometry: GeoArea;
};

const TERRITORY_COLUMNS = selectList(territory, 'territory', { omit: ['organizationId', 'createdByUserId'] });

/** The oldest active territory whose polygon covers the point (a point literal; the same SQL function the backfill uses). */
export async function territoryForPoint(tx: Tx, point: string): Promise<string | null> {
  const { rows } = await tx.query<{ id: string | null }>(
    `SELECT logistics_territory_for_point(current_setting('app.organization_id', true), $1::point) AS id`,
    [point],
  );
  return rows[0]?.id ?? null;
}

export async function findTerritory(tx: Tx, id: string): Promise<TerritoryRow | null> {
  const { rows } = await tx.query<TerritoryRow>(`SELECT ${TERRITORY_COLUMNS} FROM territory WHERE id = $1`, [id]);
  return rows[0] ?? null;
}

/** Which of `ids` are territories of the organization. */
export async function existingTerritoryIds(tx: Tx, ids: string[]): Promise<Set<string>> {
  const rows = await tx.orm.select({ id: territory.id }).from(territory).where(inArray(territory.id, ids));
  return new Set(rows.map((r) => r.id));
}

export async function listTerritories(
  tx: Tx,
  f: { active: boolean | null; scope: TerritoryScope; after: string | null; limit: number },
): Promise<TerritoryRow[]> {
  const { rows } = await tx.query<TerritoryRow>(
    `SELECT ${TERRITORY_COLUMNS} FROM territory
      WHERE ($1::boolean IS NULL OR active = $1) AND ${scopeSql('id', 2)} AND ($3::text IS NULL OR id < $3)
      ORDER BY id DESC LIMIT $4`,
    [f.active, f.scope, f.after, f.limit],
  );
  return rows;
}

/**
 * Inserts a territory and its native rings (`rings[part][ring]`: polygon literals, ring 0 the outer ring of its
 * part); returns the row.
 */
export async function insertTerritory(
  tx: Tx,
  v: { organizationId: string; id: string; name: string; geometry: GeoArea; active: boolean; createdByUserId: string | null },
  rings: string[][],
): Promise<TerritoryRow> {
  const { rows } = await tx.query<TerritoryRow>(
    `INSERT INTO territory (organization_id, id, name, geometry, active, created_by_user_id) VALUES ($1, $2, $3, $4, $5, $6)
     RETURNING ${TERRITORY_COLUMNS}`,
    [v.organizationId, v.id, v.name, JSON.stringify(v.geometry), v.active, v.createdByUserId],
  );
  const parts: string[] = [];
  const params: unknown[] = [v.organizationId, v.id];
  rings.forEach((part, pi) =>
    part.forEach((ring, ri) => {
      params.push(pi, ri, ring);
      const n = params.length;
      parts.push(`($1, $2, $${n - 2}::int, $${n - 1}::int, $${n}::polygon)`);
    }),
  );
  await tx.query(`INSERT INTO territory_ring (organization_id, territory_id, part_no, ring_no, ring) VALUES ${parts.join(', ')}`, params);
  return rows[0]!;
}

/** Gives trips and merchants without a territory the oldest active one covering them; returns how many changed. */
export async function backfillTerritories(tx: Tx, organizationId: string): Promise<number> {
  return (await tx.query<{ n: number }>('SELECT logistics_backfill_territories($1) AS n', [organizationId])).rows[0]!.n;
}
