import { and, desc, eq, inArray, isNull, lt, or, sql } from 'drizzle-orm';
import type { Tx } from '../../platform/db/index.js';
import { apiKey } from './tables.js';

/** Every SQL statement of the API keys module. Functions take the transaction first. */

export type ApiKeyRecord = typeof apiKey.$inferSelect;
export type NewApiKey = typeof apiKey.$inferInsert;

export async function insertKey(tx: Tx, row: NewApiKey): Promise<ApiKeyRecord> {
  const [out] = await tx.orm.insert(apiKey).values(row).returning();
  return out;
}

/** One page (id descending); `ownerUserId` set = only that user's keys. */
export async function listKeys(tx: Tx, f: { ownerUserId: string | null; after: string | null; limit: number }): Promise<ApiKeyRecord[]> {
  return tx.orm
    .select()
    .from(apiKey)
    .where(and(f.ownerUserId ? eq(apiKey.ownerUserId, f.ownerUserId) : undefined, f.after ? lt(apiKey.id, f.after) : undefined))
    .orderBy(desc(apiKey.id))
    .limit(f.limit + 1);
}

export async function getKey(tx: Tx, id: string): Promise<ApiKeyRecord | null> {
  const rows = await tx.orm.select().from(apiKey).where(eq(apiKey.id, id)).for('update');
  return rows[0] ?? null;
}

/** Revokes a key and announces it as a revoked session (`api-key:<id>`): its open event streams close on every instance. */
export async function revokeKey(tx: Tx, id: string): Promise<ApiKeyRecord> {
  const [out] = await tx.orm
    .update(apiKey)
    .set({ revokedAt: sql`now()` })
    .where(eq(apiKey.id, id))
    .returning();
  await tx.query("SELECT pg_notify('session_revoked', $1)", [`api-key:${id}`]);
  return out;
}

/** Across organizations: which of these keys are live (not revoked), with their owners. */
export async function liveKeys(tx: Tx, ids: string[]): Promise<Pick<ApiKeyRecord, 'organizationId' | 'id' | 'ownerUserId'>[]> {
  if (!ids.length) return [];
  return tx.orm
    .select({ organizationId: apiKey.organizationId, id: apiKey.id, ownerUserId: apiKey.ownerUserId })
    .from(apiKey)
    .where(and(inArray(apiKey.id, ids), isNull(apiKey.revokedAt)));
}

export async function countLiveKeys(tx: Tx, ownerUserId: string): Promise<number> {
  const [r] = await tx.orm
    .select({ n: sql<number>`count(*)::int` })
    .from(apiKey)
    .where(and(eq(apiKey.ownerUserId, ownerUserId), isNull(apiKey.revokedAt)));
  return Number(r.n);
}

/** Across organizations (the key names its own): the live key with this id, for authentication. */
export async function liveKeyById(
  tx: Tx,
  id: string,
): Promise<Pick<ApiKeyRecord, 'organizationId' | 'id' | 'ownerUserId' | 'scopes' | 'secretHash'> | null> {
  const rows = await tx.orm
    .select({
      organizationId: apiKey.organizationId,
      id: apiKey.id,
      ownerUserId: apiKey.ownerUserId,
      scopes: apiKey.scopes,
      secretHash: apiKey.secretHash,
    })
    .from(apiKey)
    .where(and(eq(apiKey.id, id), isNull(apiKey.revokedAt)));
  return rows[0] ?? null;
}

/** Records a use, at most once a minute per key (a write per request would serialize a busy integration). */
export async function touchKey(tx: Tx, organizationId: string, id: string): Promise<void> {
  await tx.orm
    .update(apiKey)
    .set({ lastUsedAt: sql`now()` })
    .where(
      and(
        eq(apiKey.organizationId, organizationId),
        eq(apiKey.id, id),
        or(isNull(apiKey.lastUsedAt), lt(apiKey.lastUsedAt, sql`now() - interval '1 minute'`)),
      ),
    );
}
