import type { Tx } from '../../../platform/db/index.js';
import { scopeSql, type TerritoryScope } from '../../../platform/scope.js';
import { driverScopeSql } from './drivers.js';
import { tripStatusCounts } from './trips.js';

/** The logistics section of the dashboard: drivers, available drivers, merchants and trips per status, in the scope. */
export async function logisticsCounts(tx: Tx, scope: TerritoryScope) {
  const count = async (sql: string) => {
    const { rows } = await tx.query<{ status: string; n: number }>(sql, [scope]);
    return Object.fromEntries(rows.map((r) => [r.status, r.n]));
  };
  return {
    drivers: await count(`SELECT d.status, count(*)::int AS n FROM driver d WHERE ${driverScopeSql(1)} GROUP BY d.status`),
    drivers_available: (
      await tx.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM driver d WHERE d.status = 'approved' AND d.available AND ${driverScopeSql(1)}`,
        [scope],
      )
    ).rows[0]!.n,
    merchants: await count(`SELECT status, count(*)::int AS n FROM merchant WHERE ${scopeSql('territory_id', 1)} GROUP BY status`),
    trips: await tripStatusCounts(tx, scope),
  };
}
