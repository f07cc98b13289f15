import type { Tx } from '../../../platform/db/index.js';
import type { SnakeRow } from '../../../platform/db/columns.js';
import { scopeSql, type TerritoryScope } from '../../../platform/scope.js';
import type { territoryTariff } from '../tables.js';

export type TariffRecord = typeof territoryTariff.$inferSelect;
export type TariffRow = Omit<SnakeRow<TariffRecord>, 'organization_id' | 'created_by_user_id'>;

export const TARIFF_COLUMNS =
  'id, territory_id, service_mode, base_fee, per_km_fee, minimum_fee, driver_share_type, driver_share_value, active, created_at, updated_at';

/** The active tariff of a territory for a service mode, or null. */
export async function activeTariff(tx: Tx, territoryId: string, mode: TariffRecord['serviceMode']): Promise<TariffRow | null> {
  return (
    (
      await tx.query<TariffRow>(`SELECT ${TARIFF_COLUMNS} FROM territory_tariff WHERE territory_id = $1 AND service_mode = $2 AND active`, [
        territoryId,
        mode,
      ])
    ).rows[0] ?? null
  );
}

export async function findTariffForUpdate(tx: Tx, id: string): Promise<TariffRow | null> {
  return (await tx.query<TariffRow>(`SELECT ${TARIFF_COLUMNS} FROM territory_tariff WHERE id = $1 FOR UPDATE`, [id])).rows[0] ?? null;
}

/** Tariffs, newest first, in a territory scope (null = all) and the filters. */
export async function listTariffs(
  tx: Tx,
  scope: TerritoryScope,
  q: { territoryId?: string; serviceMode?: string; active?: boolean; after: string | null; limit: number },
): Promise<TariffRow[]> {
  const { rows } = await tx.query<TariffRow>(
    `SELECT ${TARIFF_COLUMNS} FROM territory_tariff
      WHERE ${scopeSql('territory_id', 1)} AND ($2::text IS NULL OR territory_id = $2) AND ($3::text IS NULL OR service_mode = $3)
        AND ($4::boolean IS NULL OR active = $4) AND ($5::text IS NULL OR id < $5)
      ORDER BY id DESC LIMIT $6`,
    [scope, q.territoryId ?? null, q.serviceMode ?? null, q.active ?? null, q.after, q.limit],
  );
  return rows;
}

export type NewTariff = Pick<
  TariffRow,
  'id' | 'territory_id' | 'service_mode' | 'base_fee' | 'per_km_fee' | 'minimum_fee' | 'driver_share_type' | 'driver_share_value' | 'active'
>;

export async function insertTariff(tx: Tx, organizationId: string, createdByUserId: string, t: NewTariff): Promise<TariffRow> {
  const { rows } = await tx.query<TariffRow>(
    `INSERT INTO territory_tariff (organization_id, id, territory_id, service_mode, base_fee, per_km_fee, minimum_fee, driver_share_type, driver_share_value, active, created_by_user_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING ${TARIFF_COLUMNS}`,
    [
      organizationId,
      t.id,
      t.territory_id,
      t.service_mode,
      t.base_fee,
      t.per_km_fee,
      t.minimum_fee,
      t.driver_share_type,
      t.driver_share_value,
      t.active,
      createdByUserId,
    ],
  );
  return rows[0];
}

/** Changes the given fields (undefined = unchanged). */
export async function updateTariff(
  tx: Tx,
  id: string,
  p: Partial<Pick<TariffRow, 'base_fee' | 'per_km_fee' | 'minimum_fee' | 'driver_share_type' | 'driver_share_value' | 'active'>>,
): Promise<TariffRow> {
  const { rows } = await tx.query<TariffRow>(
    `UPDATE territory_tariff SET base_fee = COALESCE($2::numeric, base_fee), per_km_fee = COALESCE($3::numeric, per_km_fee), minimum_fee = COALESCE($4::numeric, minimum_fee),
            driver_share_type = COALESCE($5, driver_share_type), driver_share_value = COALESCE($6::numeric, driver_share_value), active = COALESCE($7, active), updated_at = now()
      WHERE id = $1 RETURNING ${TARIFF_COLUMNS}`,
    [
      id,
      p.base_fee ?? null,
      p.per_km_fee ?? null,
      p.minimum_fee ?? null,
      p.driver_share_type ?? null,
      p.driver_share_value ?? null,
      p.active ?? null,
    ],
  );
  return rows[0];
}
