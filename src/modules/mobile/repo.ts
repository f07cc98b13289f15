import type { Tx } from '../../platform/db/index.js';
import { selectList, type SnakeRow } from '../../platform/db/columns.js';
import { appBuild, syncOperation } from './tables.js';

/** The mobile module's SQL: published app builds, device counts per app, and the offline operation log. */

/** A published build as served (derived from the table). */
export type AppBuildRow = Omit<SnakeRow<typeof appBuild.$inferSelect>, 'organization_id' | 'created_at'>;

const BUILD_COLUMNS = selectList(appBuild, 'b', { omit: ['organizationId', 'createdAt'] });

export async function listBuilds(tx: Tx): Promise<AppBuildRow[]> {
  const { rows } = await tx.query<AppBuildRow>(
    `SELECT ${BUILD_COLUMNS} FROM app_build b ORDER BY app_role, platform, channel, build_number DESC`,
  );
  return rows;
}

export async function insertBuild(
  tx: Tx,
  organizationId: string,
  id: string,
  b: Pick<AppBuildRow, 'app_role' | 'platform' | 'package_name' | 'version_name' | 'build_number' | 'min_supported_build' | 'channel'>,
): Promise<void> {
  await tx.query(
    `INSERT INTO app_build (organization_id, id, app_role, platform, package_name, version_name, build_number, min_supported_build, channel)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT DO NOTHING`,
    [organizationId, id, b.app_role, b.platform, b.package_name, b.version_name, b.build_number, b.min_supported_build, b.channel],
  );
}

// ---------------------------------------------------------------- offline operations

type SyncOperationRow = SnakeRow<typeof syncOperation.$inferSelect>;
export type SyncOperationKey = Pick<SyncOperationRow, 'organization_id' | 'user_id' | 'client_operation_id'>;

/** Claims an operation id (status `applying`); false when the id was already used (the row is then locked behind its writer). */
export async function claimOperation(tx: Tx, key: SyncOperationKey, type: string, requestHash: string): Promise<boolean> {
  const ins = await tx.query(
    `INSERT INTO sync_operation (organization_id, user_id, client_operation_id, type, request_hash, status)
     VALUES ($1, $2, $3, $4, $5, 'applying') ON CONFLICT DO NOTHING RETURNING client_operation_id`,
    [key.organization_id, key.user_id, key.client_operation_id, type, requestHash],
  );
  return ins.rowCount > 0;
}

export async function storedOperation<R>(tx: Tx, key: SyncOperationKey): Promise<{ request_hash: string; result: R }> {
  const { rows } = await tx.query<{ request_hash: string; result: R }>(
    'SELECT request_hash, result FROM sync_operation WHERE organization_id = $1 AND user_id = $2 AND client_operation_id = $3',
    [key.organization_id, key.user_id, key.client_operation_id],
  );
  return rows[0];
}

export async function recordOutcome(tx: Tx, key: SyncOperationKey, status: string, result: unknown): Promise<void> {
  await tx.query(
    'UPDATE sync_operation SET status = $4, result = $5 WHERE organization_id = $1 AND user_id = $2 AND client_operation_id = $3',
    [key.organization_id, key.user_id, key.client_operation_id, status, JSON.stringify(result)],
  );
}

/** The savepoint of one offline operation (`sync_op`): taken, rolled back to, released. */
export async function savepoint(tx: Tx, action: 'begin' | 'rollback' | 'release'): Promise<void> {
  await tx.query(
    action === 'begin' ? 'SAVEPOINT sync_op' : action === 'rollback' ? 'ROLLBACK TO SAVEPOINT sync_op' : 'RELEASE SAVEPOINT sync_op',
  );
}

/** The transaction's snapshot (`xmin:xmax:xip,...`) and time. */
export async function currentSnapshot(tx: Tx): Promise<{ snap: string; now: Date }> {
  return (await tx.query<{ snap: string; now: Date }>('SELECT pg_current_snapshot()::text AS snap, now() AS now')).rows[0];
}
