import type { Tx } from '../../../platform/db/index.js';
import { tripProof } from '../tables.js';
import { selectList, type SnakeRow } from '../../../platform/db/columns.js';

/** A proof of pickup or delivery (derived from the table). */
export type ProofRow = SnakeRow<Omit<typeof tripProof.$inferSelect, 'organizationId'>>;

const PROOF_COLUMNS = selectList(tripProof, 'p', { omit: ['organizationId'] });

export async function insertProof(tx: Tx, v: Omit<typeof tripProof.$inferInsert, 'createdAt'> & { pinVerified: boolean }): Promise<void> {
  await tx.query(
    `INSERT INTO trip_proof (organization_id, id, trip_id, stage, pin_verified, evidence_type, storage_key, driver_id, verified_by_user_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    [
      v.organizationId,
      v.id,
      v.tripId,
      v.stage,
      v.pinVerified,
      v.evidenceType ?? null,
      v.storageKey ?? null,
      v.driverId ?? null,
      v.verifiedByUserId ?? null,
    ],
  );
}

export async function proofsOfTrip(tx: Tx, tripId: string): Promise<ProofRow[]> {
  const { rows } = await tx.query<ProofRow>(`SELECT ${PROOF_COLUMNS} FROM trip_proof p WHERE p.trip_id = $1 ORDER BY p.created_at, p.id`, [
    tripId,
  ]);
  return rows;
}
