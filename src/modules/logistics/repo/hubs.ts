import { and, desc, eq, lt, sql } from 'drizzle-orm';
import type { Tx } from '../../../platform/db/index.js';
import { inScope, type TerritoryScope } from '../../../platform/scope.js';
import { hub } from '../tables.js';

export type HubRecord = typeof hub.$inferSelect;
export type NewHubRecord = typeof hub.$inferInsert;

export async function insertHub(tx: Tx, row: NewHubRecord): Promise<HubRecord> {
  const [out] = await tx.orm.insert(hub).values(row).returning();
  return out;
}

/** A hub in the scope (sub-administrators: of their territories), optionally locked for a change. */
export async function findHub(tx: Tx, id: string, scope: TerritoryScope, lock = false): Promise<HubRecord | null> {
  const q = tx.orm
    .select()
    .from(hub)
    .where(and(eq(hub.id, id), inScope(hub.territoryId, scope)));
  const rows = lock ? await q.for('update') : await q;
  return rows[0] ?? null;
}

export async function listHubs(
  tx: Tx,
  f: { scope: TerritoryScope; active: boolean | null; territoryId: string | null; after: string | null; limit: number },
): Promise<HubRecord[]> {
  return tx.orm
    .select()
    .from(hub)
    .where(
      and(
        inScope(hub.territoryId, f.scope),
        f.active === null ? undefined : eq(hub.active, f.active),
        f.territoryId ? eq(hub.territoryId, f.territoryId) : undefined,
        f.after ? lt(hub.id, f.after) : undefined,
      ),
    )
    .orderBy(desc(hub.id))
    .limit(f.limit + 1);
}

export async function updateHub(
  tx: Tx,
  id: string,
  change: Partial<Pick<HubRecord, 'name' | 'address' | 'location' | 'territoryId' | 'openingHours' | 'active'>>,
): Promise<HubRecord> {
  const [out] = await tx.orm
    .update(hub)
    .set({ ...change, updatedAt: sql`now()` })
    .where(eq(hub.id, id))
    .returning();
  return out;
}

export async function deleteHub(tx: Tx, id: string): Promise<void> {
  await tx.orm.delete(hub).where(eq(hub.id, id));
}
