/** The dispatch module's data layer: every SQL statement of dispatch plans and dispatch settings. */
import { and, eq, sql } from 'drizzle-orm';
import type { Tx } from '../../platform/db/index.js';
import { dispatchPlan, dispatchSettings } from './tables.js';

export type DispatchSettingsRecord = typeof dispatchSettings.$inferSelect;
export type DispatchSettingsPatch = Partial<Omit<typeof dispatchSettings.$inferInsert, 'organizationId' | 'updatedAt' | 'updatedByUserId'>>;

/** A stored plan; the jsonb columns typed by the caller (what the service wrote). */
export type PlanRecord<Inputs, Result, Change> = Omit<typeof dispatchPlan.$inferSelect, 'inputs' | 'result' | 'changes'> & {
  inputs: Inputs;
  result: Result;
  changes: Change[] | null;
};

/** The organization's settings, created with the defaults on first read. */
export async function settingsOf(tx: Tx, organizationId: string): Promise<DispatchSettingsRecord> {
  const found = await tx.orm.select().from(dispatchSettings).where(eq(dispatchSettings.organizationId, organizationId));
  if (found[0]) return found[0];
  await tx.orm.insert(dispatchSettings).values({ organizationId }).onConflictDoNothing();
  return (await tx.orm.select().from(dispatchSettings).where(eq(dispatchSettings.organizationId, organizationId)))[0];
}

export async function updateSettings(
  tx: Tx,
  organizationId: string,
  userId: string,
  patch: DispatchSettingsPatch,
): Promise<DispatchSettingsRecord> {
  const rows = await tx.orm
    .update(dispatchSettings)
    .set({ ...patch, updatedByUserId: userId, updatedAt: sql`now()` })
    .where(eq(dispatchSettings.organizationId, organizationId))
    .returning();
  return rows[0];
}

export async function insertPlan<I, R, C>(
  tx: Tx,
  p: {
    organizationId: string;
    id: string;
    createdByUserId: string;
    territoryIds: string[] | null;
    request: unknown;
    inputs: I;
    result: R;
    ttlS: number;
  },
): Promise<PlanRecord<I, R, C>> {
  const rows = await tx.orm
    .insert(dispatchPlan)
    .values({
      organizationId: p.organizationId,
      id: p.id,
      status: 'proposed',
      createdByUserId: p.createdByUserId,
      territoryIds: p.territoryIds,
      request: p.request,
      inputs: p.inputs,
      result: p.result,
      expiresAt: sql`now() + make_interval(secs => ${p.ttlS}::int)`,
    })
    .returning();
  return rows[0] as PlanRecord<I, R, C>;
}

/** The plan, locked for the commit (FOR UPDATE); undefined when unknown (RLS: or another organization's). */
export async function lockPlan<I, R, C>(tx: Tx, id: string): Promise<PlanRecord<I, R, C> | undefined> {
  const rows = await tx.orm.select().from(dispatchPlan).where(eq(dispatchPlan.id, id)).for('update');
  return rows[0] as PlanRecord<I, R, C> | undefined;
}

export async function markCommitted<I, R, C>(tx: Tx, id: string, userId: string): Promise<PlanRecord<I, R, C>> {
  const rows = await tx.orm
    .update(dispatchPlan)
    .set({ status: 'committed', committedAt: sql`now()`, committedByUserId: userId, updatedAt: sql`now()` })
    .where(eq(dispatchPlan.id, id))
    .returning();
  return rows[0] as PlanRecord<I, R, C>;
}

/** Records why a commit was refused, unless the plan already left `proposed`. */
export async function markRefused(tx: Tx, id: string, status: 'stale' | 'expired', changes: unknown[]): Promise<void> {
  await tx.orm
    .update(dispatchPlan)
    .set({ status, changes, updatedAt: sql`now()` })
    .where(and(eq(dispatchPlan.id, id), eq(dispatchPlan.status, 'proposed')));
}
