import type { Tx } from '../../platform/db/index.js';
import { selectList, type SnakeRow } from '../../platform/db/columns.js';
import type { StoragePurpose } from './schemas.js';
import { privateStorageObject, storageUpload } from './tables.js';

/** The storage module's SQL: upload slots, stored objects, the quota and the slot janitor. */

/** A stored object (derived from the table; the purpose narrowed to the known purposes). */
export type StoredObject = Omit<SnakeRow<typeof privateStorageObject.$inferSelect>, 'purpose'> & { purpose: StoragePurpose };

/** An upload slot as claimed (derived from the table), with whether it expired. */
export type SlotRow = Omit<
  SnakeRow<typeof storageUpload.$inferSelect>,
  'organization_id' | 'purpose' | 'claimed_at' | 'completed_at' | 'created_at'
> & {
  purpose: StoragePurpose;
  expired: boolean;
};

const OBJECT_COLUMNS = selectList(privateStorageObject, 'private_storage_object');

/** Serializes the slots of one organization (quota check) until the transaction ends. */
export async function lockQuota(tx: Tx, organizationId: string): Promise<void> {
  await tx.query("SELECT pg_advisory_xact_lock(hashtext('storage_quota:' || $1))", [organizationId]);
}

/** Bytes stored plus bytes reserved by live slots. */
export async function usedBytes(tx: Tx, organizationId: string): Promise<number> {
  const { rows } = await tx.query<{ used: string }>(
    `SELECT (COALESCE((SELECT sum(size_bytes) FROM private_storage_object WHERE organization_id = $1), 0)
           + COALESCE((SELECT sum(size_bytes) FROM storage_upload WHERE organization_id = $1 AND status IN ('open', 'uploading') AND expires_at > now()), 0))::text AS used`,
    [organizationId],
  );
  return Number(rows[0].used);
}

export type NewSlot = Pick<
  SlotRow,
  | 'id'
  | 'object_id'
  | 'purpose'
  | 'mime_type'
  | 'size_bytes'
  | 'filename'
  | 'token_hash'
  | 'owner_type'
  | 'owner_id'
  | 'trip_id'
  | 'stage'
  | 'proof_type'
  | 'territory_id'
  | 'created_by_user_id'
>;

/** Opens a slot valid for `ttlSeconds`; returns its expiry. */
export async function insertSlot(tx: Tx, organizationId: string, s: NewSlot, ttlSeconds: number): Promise<Date> {
  const { rows } = await tx.query<{ expires_at: Date }>(
    `INSERT INTO storage_upload (organization_id, id, object_id, purpose, mime_type, size_bytes, filename, token_hash, owner_type, owner_id,
                                 trip_id, stage, proof_type, territory_id, created_by_user_id, expires_at)
     VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15, now() + make_interval(secs => $16)) RETURNING expires_at`,
    [
      organizationId,
      s.id,
      s.object_id,
      s.purpose,
      s.mime_type,
      s.size_bytes,
      s.filename,
      s.token_hash,
      s.owner_type,
      s.owner_id,
      s.trip_id,
      s.stage,
      s.proof_type,
      s.territory_id,
      s.created_by_user_id,
      ttlSeconds,
    ],
  );
  return rows[0].expires_at;
}

/** The slot, locked (FOR UPDATE). */
export async function lockSlot(tx: Tx, id: string): Promise<SlotRow | undefined> {
  const { rows } = await tx.query<SlotRow>(
    `SELECT id, object_id, purpose, mime_type, size_bytes, filename, token_hash, status, owner_type, owner_id, trip_id, stage, proof_type,
            territory_id, created_by_user_id, expires_at, expires_at <= now() AS expired,
            -- A claim lost in a crash only leaves the slot open again: no need to wait for the WAL flush.
            set_config('synchronous_commit', 'off', true) AS async_commit
       FROM storage_upload WHERE id = $1 FOR UPDATE`,
    [id],
  );
  return rows[0];
}

/** open → uploading; false when the slot was not open. */
export async function markSlotUploading(tx: Tx, id: string): Promise<boolean> {
  const claimed = await tx.query(`UPDATE storage_upload SET status = 'uploading', claimed_at = now() WHERE id = $1 AND status = 'open'`, [
    id,
  ]);
  return claimed.rowCount === 1;
}

/** uploading → open (a failed PUT gives the slot back). */
export async function reopenSlot(tx: Tx, id: string): Promise<void> {
  await tx.query(`UPDATE storage_upload SET status = 'open', claimed_at = NULL WHERE id = $1 AND status = 'uploading'`, [id]);
}

export type NewObject = Omit<StoredObject, 'upload_id' | 'created_at'>;

/** Consumes the slot and records the object in one statement (no object without a consumed slot); undefined when the slot is no longer uploading. */
export async function completeUpload(tx: Tx, slotId: string, o: NewObject): Promise<StoredObject | undefined> {
  const { rows } = await tx.query<StoredObject>(
    `WITH done AS (UPDATE storage_upload SET status = 'completed', completed_at = now() WHERE id = $15 AND status = 'uploading' RETURNING id)
     INSERT INTO private_storage_object (organization_id, id, purpose, mime_type, size_bytes, sha256, filename, driver, owner_type, owner_id,
                                         trip_id, stage, proof_type, territory_id, upload_id, created_by_user_id)
     SELECT $1,$2,$3,$4,$5::bigint,$6,$7,$8,$9,$10,$11,$12,$13,$14, done.id, $16 FROM done RETURNING ${OBJECT_COLUMNS}`,
    [
      o.organization_id,
      o.id,
      o.purpose,
      o.mime_type,
      o.size_bytes,
      o.sha256,
      o.filename,
      o.driver,
      o.owner_type,
      o.owner_id,
      o.trip_id,
      o.stage,
      o.proof_type,
      o.territory_id,
      slotId,
      o.created_by_user_id,
    ],
  );
  return rows[0];
}

/** The object (under the tenant's row-level security), optionally checked against an organization. */
export async function findObject(tx: Tx, id: string, organizationId?: string): Promise<StoredObject | undefined> {
  const { rows } =
    organizationId === undefined
      ? await tx.query<StoredObject>(`SELECT ${OBJECT_COLUMNS} FROM private_storage_object WHERE id = $1`, [id])
      : await tx.query<StoredObject>(`SELECT ${OBJECT_COLUMNS} FROM private_storage_object WHERE id = $1 AND organization_id = $2`, [
          id,
          organizationId,
        ]);
  return rows[0];
}

/** Deletes up to `limit` expired unused slots (`uploading` ones get an hour of grace); returns their object ids. */
export async function deleteExpiredSlots(tx: Tx, limit: number): Promise<string[]> {
  const { rows } = await tx.query<{ object_id: string }>(
    `DELETE FROM storage_upload u USING (
       SELECT organization_id, id FROM storage_upload
        WHERE (status = 'open' AND expires_at < now()) OR (status = 'uploading' AND expires_at < now() - interval '1 hour')
        LIMIT $1 FOR UPDATE SKIP LOCKED) x
      WHERE u.organization_id = x.organization_id AND u.id = x.id RETURNING u.object_id`,
    [limit],
  );
  return rows.map((r) => r.object_id);
}

/** Stored objects and bytes per purpose, and live slots (the organization's storage health). */
export async function usageByPurpose(
  tx: Tx,
): Promise<{ byPurpose: { purpose: string; objects: number; bytes: string }[]; openSlots: number }> {
  const { rows } = await tx.query<{ purpose: string; objects: number; bytes: string }>(
    'SELECT purpose, count(*)::int AS objects, COALESCE(sum(size_bytes), 0)::text AS bytes FROM private_storage_object GROUP BY purpose ORDER BY purpose',
  );
  const slots = await tx.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM storage_upload WHERE status IN ('open', 'uploading') AND expires_at > now()",
  );
  return { byPurpose: rows, openSlots: slots.rows[0].n };
}
