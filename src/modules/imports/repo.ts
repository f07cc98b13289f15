import { and, asc, desc, eq, inArray, lt, sql } from 'drizzle-orm';
import type { Tx } from '../../platform/db/index.js';
import type { ImportKind, RowError, RowStatus } from './schemas.js';
import { importJob, importRef, importRow } from './tables.js';

/** Every SQL statement of the imports module. Functions take the transaction first. */

export type ImportJobRecord = typeof importJob.$inferSelect;
export type NewImportJob = typeof importJob.$inferInsert;
export type ImportRowRecord = typeof importRow.$inferSelect;
export type NewImportRow = typeof importRow.$inferInsert;

export async function insertJob(tx: Tx, row: NewImportJob): Promise<void> {
  await tx.orm.insert(importJob).values(row);
}

export async function insertRows(tx: Tx, rows: NewImportRow[]): Promise<void> {
  for (let i = 0; i < rows.length; i += 500) await tx.orm.insert(importRow).values(rows.slice(i, i + 500));
}

/** `lock`: FOR UPDATE SKIP LOCKED (the worker's claim; null when another holds it). */
export async function findJob(tx: Tx, id: string, lock = false): Promise<ImportJobRecord | null> {
  const q = tx.orm.select().from(importJob).where(eq(importJob.id, id));
  const rows = lock ? await q.for('update', { skipLocked: true }) : await q;
  return rows[0] ?? null;
}

/** One page (id descending); `createdBy` / `merchantId` narrow it to a sub-administrator's or a merchant's imports. */
export async function listJobs(
  tx: Tx,
  f: { createdBy?: string; merchantId?: string; kind?: ImportKind; status?: string; after: string | null; limit: number },
): Promise<ImportJobRecord[]> {
  return tx.orm
    .select()
    .from(importJob)
    .where(
      and(
        f.createdBy ? eq(importJob.createdByUserId, f.createdBy) : undefined,
        f.merchantId ? eq(importJob.merchantId, f.merchantId) : undefined,
        f.kind ? eq(importJob.kind, f.kind) : undefined,
        f.status ? eq(importJob.status, f.status as ImportJobRecord['status']) : undefined,
        f.after ? lt(importJob.id, f.after) : undefined,
      ),
    )
    .orderBy(desc(importJob.id))
    .limit(f.limit + 1);
}

export async function setJobStatus(tx: Tx, id: string, status: ImportJobRecord['status']): Promise<void> {
  await tx.orm
    .update(importJob)
    .set({ status, finishedAt: status === 'completed' || status === 'failed' ? sql`now()` : null })
    .where(eq(importJob.id, id));
}

/** The counters follow the rows (one statement, so they never disagree with the report). */
export async function refreshCounters(tx: Tx, id: string): Promise<void> {
  const count = (cond: string) =>
    sql.raw(
      `(SELECT count(*)::int FROM import_row r WHERE r.organization_id = import_job.organization_id AND r.import_id = import_job.id AND ${cond})`,
    );
  await tx.orm
    .update(importJob)
    .set({
      processedRows: count(`r.status <> 'pending'`),
      validRows: count(`r.status = 'valid'`),
      createdRows: count(`r.status = 'created'`),
      duplicateRows: count(`r.status = 'duplicate'`),
      errorRows: count(`r.status = 'error'`),
    })
    .where(eq(importJob.id, id));
}

export async function pendingRows(tx: Tx, importId: string, limit: number): Promise<ImportRowRecord[]> {
  return tx.orm
    .select()
    .from(importRow)
    .where(and(eq(importRow.importId, importId), eq(importRow.status, 'pending')))
    .orderBy(asc(importRow.rowNumber))
    .limit(limit);
}

export async function setRowResult(
  tx: Tx,
  importId: string,
  rowNumber: number,
  r: { status: RowStatus; errors?: RowError[]; entityId?: string | null },
): Promise<void> {
  await tx.orm
    .update(importRow)
    .set({ status: r.status, errors: r.errors ?? [], entityId: r.entityId ?? null, data: r.status === 'pending' ? undefined : null })
    .where(and(eq(importRow.importId, importId), eq(importRow.rowNumber, rowNumber)));
}

/** Rows not yet processed become `status` (an all-or-nothing import that failed: the valid rows are skipped). */
export async function settlePending(tx: Tx, importId: string, rowNumbers: number[], status: RowStatus): Promise<void> {
  if (!rowNumbers.length) return;
  await tx.orm
    .update(importRow)
    .set({ status, data: null })
    .where(and(eq(importRow.importId, importId), inArray(importRow.rowNumber, rowNumbers)));
}

export async function rowErrors(tx: Tx, importId: string, limit: number): Promise<RowError[]> {
  const rows = await tx.orm
    .select({ errors: importRow.errors })
    .from(importRow)
    .where(and(eq(importRow.importId, importId), eq(importRow.status, 'error')))
    .orderBy(asc(importRow.rowNumber))
    .limit(limit);
  return rows.flatMap((r) => r.errors as RowError[]).slice(0, limit);
}

export async function allRows(tx: Tx, importId: string): Promise<ImportRowRecord[]> {
  return tx.orm.select().from(importRow).where(eq(importRow.importId, importId)).orderBy(asc(importRow.rowNumber));
}

export interface RefKey {
  kind: ImportKind;
  merchantKey: string;
  externalRef: string;
}

/**
 * Takes an external reference for this import: true when it was free. The insert is the decision (the primary key):
 * a concurrent import holding the same reference makes this wait for its commit, then find it taken.
 */
export async function claimRef(tx: Tx, organizationId: string, k: RefKey, importId: string): Promise<boolean> {
  const rows = await tx.orm
    .insert(importRef)
    .values({ organizationId, ...k, importId })
    .onConflictDoNothing()
    .returning({ ref: importRef.externalRef });
  return rows.length > 0;
}

export async function refEntity(tx: Tx, k: RefKey): Promise<string | null> {
  const rows = await tx.orm
    .select({ entityId: importRef.entityId })
    .from(importRef)
    .where(and(eq(importRef.kind, k.kind), eq(importRef.merchantKey, k.merchantKey), eq(importRef.externalRef, k.externalRef)));
  return rows[0]?.entityId ?? null;
}

export async function setRefEntity(tx: Tx, k: RefKey, entityId: string): Promise<void> {
  await tx.orm
    .update(importRef)
    .set({ entityId })
    .where(and(eq(importRef.kind, k.kind), eq(importRef.merchantKey, k.merchantKey), eq(importRef.externalRef, k.externalRef)));
}

/** A savepoint around one row: its failure undoes only its own writes. */
export async function savepoint(tx: Tx, name: string, action: 'begin' | 'rollback' | 'release'): Promise<void> {
  await tx.exec(
    action === 'begin' ? `SAVEPOINT ${name}` : action === 'rollback' ? `ROLLBACK TO SAVEPOINT ${name}` : `RELEASE SAVEPOINT ${name}`,
  );
}

/** Across organizations (the worker): the oldest import waiting for the background. */
export async function nextBackgroundJob(
  tx: Tx,
  skip: string[],
): Promise<{ organizationId: string; id: string; createdByUserId: string } | null> {
  const rows = await tx.orm
    .select({ organizationId: importJob.organizationId, id: importJob.id, createdByUserId: importJob.createdByUserId })
    .from(importJob)
    .where(and(inArray(importJob.status, ['queued', 'running']), skip.length ? sql`${importJob.id} NOT IN ${skip}` : undefined))
    .orderBy(asc(importJob.createdAt))
    .limit(1);
  return rows[0] ?? null;
}
