import { and, desc, eq, lt, sql } from 'drizzle-orm';
import type { Tx } from '../../platform/db/index.js';
import type { PreferenceChanger } from './schemas.js';
import { recipientMessage, recipientMessageSettings, recipientPreference } from './tables.js';

export type MessageSettingsRow = typeof recipientMessageSettings.$inferSelect;
export type PreferenceRow = typeof recipientPreference.$inferSelect;

export async function findSettings(tx: Tx, organizationId: string, forUpdate = false): Promise<MessageSettingsRow | null> {
  const q = tx.orm.select().from(recipientMessageSettings).where(eq(recipientMessageSettings.organizationId, organizationId));
  const rows = forUpdate ? await q.for('update') : await q;
  return rows[0] ?? null;
}

export async function upsertSettings(tx: Tx, v: Omit<MessageSettingsRow, 'updatedAt'>): Promise<MessageSettingsRow> {
  const { organizationId: _org, ...set } = v;
  const rows = await tx.orm
    .insert(recipientMessageSettings)
    .values(v)
    .onConflictDoUpdate({ target: recipientMessageSettings.organizationId, set: { ...set, updatedAt: sql`now()` } })
    .returning();
  return rows[0]!;
}

export async function findPreference(tx: Tx, phone: string): Promise<PreferenceRow | null> {
  const rows = await tx.orm.select().from(recipientPreference).where(eq(recipientPreference.phone, phone));
  return rows[0] ?? null;
}

/** Sets the given fields of a phone's preference (creating it); `undefined` fields are left as they are. */
export async function upsertPreference(
  tx: Tx,
  v: { organizationId: string; id: string; phone: string; language?: string | null; optedOut?: boolean; changedBy: PreferenceChanger },
): Promise<PreferenceRow> {
  const optedOutAt = v.optedOut === undefined ? undefined : v.optedOut ? sql`now()` : null;
  const set: Record<string, unknown> = { changedBy: v.changedBy, updatedAt: sql`now()` };
  if (v.language !== undefined) set.language = v.language;
  // Opting out again keeps the first time.
  if (optedOutAt !== undefined) set.optedOutAt = v.optedOut ? sql`coalesce(${recipientPreference.optedOutAt}, now())` : null;
  const rows = await tx.orm
    .insert(recipientPreference)
    .values({
      organizationId: v.organizationId,
      id: v.id,
      phone: v.phone,
      language: v.language ?? null,
      optedOutAt: optedOutAt ?? null,
      changedBy: v.changedBy,
    })
    .onConflictDoUpdate({ target: [recipientPreference.organizationId, recipientPreference.phone], set })
    .returning();
  return rows[0]!;
}

export async function listPreferences(
  tx: Tx,
  q: { optedOut: boolean | null; after: string | null; limit: number },
): Promise<PreferenceRow[]> {
  const where = [
    q.after ? lt(recipientPreference.id, q.after) : undefined,
    q.optedOut === null
      ? undefined
      : q.optedOut
        ? sql`${recipientPreference.optedOutAt} IS NOT NULL`
        : sql`${recipientPreference.optedOutAt} IS NULL`,
  ].filter((w) => w !== undefined);
  return tx.orm
    .select()
    .from(recipientPreference)
    .where(and(...where))
    .orderBy(desc(recipientPreference.id))
    .limit(q.limit);
}

/** Records a message about to be queued; false when one of this subject, kind and channel exists (once per trigger). */
export async function claimMessage(tx: Tx, v: typeof recipientMessage.$inferInsert): Promise<boolean> {
  const rows = await tx.orm.insert(recipientMessage).values(v).onConflictDoNothing().returning({ id: recipientMessage.id });
  return rows.length > 0;
}

/** When the last message of a kind went to a trip (any channel), or null. */
export async function lastMessageAt(tx: Tx, subjectId: string, kind: string): Promise<Date | null> {
  const rows = await tx.orm
    .select({ at: recipientMessage.createdAt })
    .from(recipientMessage)
    .where(and(eq(recipientMessage.subjectId, subjectId), eq(recipientMessage.kind, kind)))
    .orderBy(desc(recipientMessage.createdAt))
    .limit(1);
  return rows[0]?.at ?? null;
}

/** Serializes the ETA messages of one trip until the transaction ends (two GPS fixes racing send one message). */
export async function lockSubject(tx: Tx, subjectId: string): Promise<void> {
  await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`recipient-message:${subjectId}`]);
}
