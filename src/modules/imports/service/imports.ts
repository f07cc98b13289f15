import type { Actor } from '../../../platform/auth.js';
import { recordAudit } from '../../../platform/audit.js';
import type { Worker } from '../../../platform/context.js';
import type { Tx } from '../../../platform/db/index.js';
import { AppError } from '../../../platform/errors.js';
import { toGeoPoint, type LonLat } from '../../../platform/geo.js';
import { newId } from '../../../platform/ids.js';
import { pageRequest, toPage } from '../../../platform/pagination.js';
import { phoneCountryOf } from '../../../platform/phone.js';
import type { ImportsContext, ImportedExpress, ImportedTrip, SourceChannel } from '../context.js';
import * as repo from '../repo.js';
import {
  ERRORS_SHOWN,
  type FileFormat,
  type ImportKind,
  type ImportOutT,
  type ListQuery,
  type RowError,
  type RowStatus,
  type UploadQuery,
} from '../schemas.js';
import {
  checkHeader,
  COLUMNS,
  markRepeatedRefs,
  parseRow,
  type Draft,
  type ExpressDraft,
  type ParsedRow,
  type TripDraft,
} from './columns.js';
import { CSV_TYPE, formatOf, readSheet, writeTable, XLSX_TYPE } from './files.js';

const channelOf = (a: Actor): SourceChannel => (a.apiKey ? 'api' : a.kind === 'comercio' ? 'core' : 'admin');

const reportPath = (id: string) => `/api/v1/imports/${id}/report`;

/** The caller as the background rows act for him: what the upload request authorized, without its session. */
type StoredActor = Pick<Actor, 'userId' | 'organizationId' | 'role' | 'kind' | 'subadmin' | 'apiKey'>;
const storeActor = (a: Actor): StoredActor => ({
  apiKey: a.apiKey ?? null,
  userId: a.userId,
  organizationId: a.organizationId,
  role: a.role,
  kind: a.kind,
  subadmin: a.subadmin,
});

export function createImportService(ctx: ImportsContext) {
  const { trips, express, merchants, geocoder } = ctx.deps;
  /** Files of up to this many rows are processed in the request; larger ones in the background, CHUNK_ROWS rows per step. */
  const INLINE_ROWS = ctx.config.settings.IMPORT_INLINE_ROWS;
  const CHUNK_ROWS = ctx.config.settings.IMPORT_CHUNK_ROWS;

  async function jobOut(tx: Tx, j: repo.ImportJobRecord): Promise<ImportOutT> {
    return {
      id: j.id,
      kind: j.kind,
      status: j.status,
      dry_run: j.dryRun,
      mode: j.mode,
      merchant_id: j.merchantId,
      file_name: j.fileName,
      format: j.format,
      total_rows: j.totalRows,
      processed_rows: j.processedRows,
      valid_rows: j.validRows,
      created_rows: j.createdRows,
      duplicate_rows: j.duplicateRows,
      error_rows: j.errorRows,
      created_by_user_id: j.createdByUserId,
      created_at: j.createdAt,
      finished_at: j.finishedAt,
      errors: await repo.rowErrors(tx, j.id, ERRORS_SHOWN),
      report_path: reportPath(j.id),
    };
  }

  /** The merchant of an express import: a merchant's own (naming another is 403); staff must name one. */
  async function importMerchant(tx: Tx, actor: Actor, kind: ImportKind, merchantId: string | undefined): Promise<string | null> {
    if (kind === 'trips') {
      if (merchantId)
        throw AppError.badRequest('merchant_id of a trip import is a column of the file', [
          { field: 'merchant_id', message: 'not for trips' },
        ]);
      return null;
    }
    if (actor.kind === 'comercio') {
      const own = await merchants.merchantOfUser(tx, actor.userId);
      if (!own) throw new AppError(404, 'MERCHANT_PROFILE_NOT_FOUND', 'You have no merchant profile');
      if (merchantId && merchantId !== own.id) throw AppError.forbidden('A merchant may only import his own express requests');
      return own.id;
    }
    if (!merchantId)
      throw AppError.unprocessable('Staff name the merchant of an express import', 'MERCHANT_REQUIRED', [
        { field: 'merchant_id', message: 'required for staff' },
      ]);
    if (!(await merchants.getMerchant(tx, merchantId)))
      throw AppError.unprocessable('Unknown merchant', 'MERCHANT_NOT_FOUND', [{ field: 'merchant_id', message: 'unknown' }]);
    return merchantId;
  }

  /** Fills missing coordinates through the geocoding hook (only rows that passed the other checks). */
  async function geocode(organizationId: string, country: string, rows: ParsedRow[]) {
    if (!geocoder) return;
    for (const r of rows) {
      if (!r.draft) continue;
      const d = r.draft as TripDraft & ExpressDraft;
      for (const prefix of ['pickup', 'dropoff'] as const) {
        const address = d[`${prefix}_address`];
        if (d[prefix] !== null || !address) continue;
        const found = await geocoder.geocode({ organizationId, address, country });
        if (found) d[prefix] = found;
        else {
          r.errors.push({
            row: r.row,
            column: `${prefix}_address`,
            code: 'GEOCODE_FAILED',
            message: `${prefix}_address was not found by the geocoder`,
          });
          r.draft = null;
          break;
        }
      }
    }
  }

  /** The body the one-record operation takes. */
  function toTrip(actor: Actor, d: TripDraft): ImportedTrip {
    const { pickup, dropoff, ...rest } = d;
    return { ...rest, pickup: pickup!, dropoff: dropoff!, source_channel: channelOf(actor) };
  }
  function toExpress(d: ExpressDraft): ImportedExpress {
    const { pickup, dropoff, ...rest } = d;
    return {
      ...rest,
      dropoff_location: toGeoPoint(dropoff)!,
      ...(pickup ? { pickup_location: toGeoPoint(pickup as LonLat)! } : {}),
    };
  }

  /** An error of the record's own rules, named by its column when the error names a field of the file. */
  function rowError(kind: ImportKind, row: number, err: AppError): RowError {
    const names = new Set(COLUMNS[kind].map((c) => c.name));
    const field = err.errors?.[0]?.field?.replace(/^(pickup|dropoff)(_location)?$/, '$1_lat') ?? null;
    return { row, column: field && names.has(field) ? field : null, code: err.code, message: err.message };
  }

  /**
   * Processes rows of an import in the caller's transaction, each in a savepoint: its external reference is taken
   * (or found taken: a duplicate), then the record is created through its module; a dry run undoes the row after.
   * All-or-nothing (not a dry run): any error undoes every row, the others are `skipped`. Returns whether a row failed.
   */
  async function processRows(tx: Tx, actor: Actor, job: repo.ImportJobRecord, rows: repo.ImportRowRecord[]): Promise<boolean> {
    const undoAll = !job.dryRun && job.mode === 'all_or_nothing';
    const results: { row: number; status: RowStatus; errors?: RowError[]; entityId?: string | null }[] = [];
    if (undoAll) await repo.savepoint(tx, 'import_all', 'begin');
    for (const r of rows) {
      const draft = r.data as Draft;
      const key: repo.RefKey = {
        kind: job.kind,
        merchantKey: job.kind === 'trips' ? ((draft as TripDraft).merchant_id ?? '') : job.merchantId!,
        externalRef: r.externalRef!,
      };
      await repo.savepoint(tx, 'import_row', 'begin');
      try {
        if (!(await repo.claimRef(tx, actor.organizationId, key, job.id))) {
          await repo.savepoint(tx, 'import_row', 'release');
          results.push({ row: r.rowNumber, status: 'duplicate', entityId: await repo.refEntity(tx, key) });
          continue;
        }
        const created =
          job.kind === 'trips'
            ? await trips.createTrip(tx, actor, toTrip(actor, draft as TripDraft))
            : await express.request(tx, actor, toExpress(draft as ExpressDraft), channelOf(actor), job.merchantId);
        await repo.setRefEntity(tx, key, created.id);
        await repo.savepoint(tx, 'import_row', job.dryRun ? 'rollback' : 'release');
        results.push({ row: r.rowNumber, status: job.dryRun ? 'valid' : 'created', entityId: job.dryRun ? null : created.id });
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
        await repo.savepoint(tx, 'import_row', 'rollback');
        results.push({ row: r.rowNumber, status: 'error', errors: [rowError(job.kind, r.rowNumber, err)] });
      }
    }
    const failed = results.some((x) => x.status === 'error');
    if (undoAll) await repo.savepoint(tx, 'import_all', failed ? 'rollback' : 'release');
    for (const x of results) {
      const status = undoAll && failed && x.status === 'created' ? 'skipped' : x.status;
      await repo.setRowResult(tx, job.id, x.row, { status, errors: x.errors, entityId: status === 'skipped' ? null : x.entityId });
    }
    return failed;
  }

  /** Marks a finished job and records it in the audit log. */
  async function finish(tx: Tx, actor: Pick<Actor, 'organizationId' | 'userId' | 'requestId'>, job: repo.ImportJobRecord, failed: boolean) {
    await repo.refreshCounters(tx, job.id);
    const status = failed && !job.dryRun && job.mode === 'all_or_nothing' ? 'failed' : 'completed';
    await repo.setJobStatus(tx, job.id, status);
    const done = (await repo.findJob(tx, job.id))!;
    await recordAudit(tx, actor, {
      action: job.dryRun ? 'import.validated' : `import.${status}`,
      entityType: 'import',
      entityId: job.id,
      after: {
        kind: done.kind,
        mode: done.mode,
        dry_run: done.dryRun,
        merchant_id: done.merchantId,
        total_rows: done.totalRows,
        created_rows: done.createdRows,
        duplicate_rows: done.duplicateRows,
        error_rows: done.errorRows,
      },
    });
    return done;
  }

  function invalidRows(errors: RowError[]) {
    return new AppError(
      422,
      'IMPORT_INVALID_ROWS',
      `${new Set(errors.map((e) => e.row)).size} row(s) are invalid; nothing was imported (mode=valid_only imports the valid rows)`,
      errors
        .slice(0, ERRORS_SHOWN)
        .map((e) => ({ field: `row ${e.row}${e.column ? ` ${e.column}` : ''}`, message: `${e.code}: ${e.message}` })),
      { row_errors: errors.slice(0, ERRORS_SHOWN) },
    );
  }

  /**
   * POST /imports/{kind}: the file is read, its header checked and every row validated before anything is written;
   * a small file is then processed in this request (one transaction), a large one queued for the background.
   */
  async function upload(
    actor: Actor,
    kind: ImportKind,
    q: UploadQuery,
    file: { mediaType: string; body: Buffer },
  ): Promise<{ status: 201 | 202; body: ImportOutT }> {
    const format = formatOf(file.mediaType, file.body);
    const sheet = await readSheet(format, file.body);
    const names = checkHeader(kind, sheet.header);
    const dryRun = q.dry_run ?? true;
    const mode = q.mode ?? 'all_or_nothing';
    const { merchantId, phoneCountry } = await ctx.db.readTenant(actor, async (tx) => ({
      merchantId: await importMerchant(tx, actor, kind, q.merchant_id),
      phoneCountry: await phoneCountryOf(tx, actor.organizationId),
    }));
    const parsed = sheet.rows.map(({ row, cells }) =>
      parseRow(kind, row, Object.fromEntries(names.map((n, i) => [n, cells[i] ?? ''])), { phoneCountry, geocoding: !!geocoder }),
    );
    markRepeatedRefs(parsed);
    await geocode(actor.organizationId, phoneCountry, parsed);
    const errors = parsed.flatMap((p) => p.errors);
    if (errors.length && !dryRun && mode === 'all_or_nothing') throw invalidRows(errors);

    const id = newId();
    const job: repo.NewImportJob = {
      organizationId: actor.organizationId,
      id,
      kind,
      status: parsed.length <= INLINE_ROWS ? 'running' : 'queued',
      dryRun,
      mode,
      merchantId,
      fileName: q.file_name ?? null,
      format,
      totalRows: parsed.length,
      actor: storeActor(actor),
      createdByUserId: actor.userId,
    };
    const rows: repo.NewImportRow[] = parsed.map((p) => ({
      organizationId: actor.organizationId,
      importId: id,
      rowNumber: p.row,
      externalRef: p.externalRef,
      status: p.draft ? 'pending' : 'error',
      data: p.draft,
      errors: p.errors,
    }));
    return ctx.db.withTenant(actor, async (tx) => {
      await repo.insertJob(tx, job);
      await repo.insertRows(tx, rows);
      const record = (await repo.findJob(tx, id))!;
      if (job.status === 'queued') {
        await repo.refreshCounters(tx, id);
        await recordAudit(tx, actor, {
          action: 'import.queued',
          entityType: 'import',
          entityId: id,
          after: { kind, mode, dry_run: dryRun, merchant_id: merchantId, total_rows: parsed.length },
        });
        return { status: 202 as const, body: await jobOut(tx, (await repo.findJob(tx, id))!) };
      }
      const failed = await processRows(tx, actor, record, await repo.pendingRows(tx, id, INLINE_ROWS));
      const done = await finish(tx, actor, record, failed || errors.length > 0);
      // All or nothing, and a row failed its record's rules: the whole request is undone (the import too).
      if (done.status === 'failed') throw invalidRows(await repo.rowErrors(tx, id, ERRORS_SHOWN));
      return { status: 201 as const, body: await jobOut(tx, done) };
    });
  }

  /** Whether the caller may see an import: administrators and dispatchers all, a sub-administrator his own, a merchant his merchant's. */
  async function visible(tx: Tx, actor: Actor, j: repo.ImportJobRecord | null): Promise<repo.ImportJobRecord> {
    if (j) {
      if (actor.kind === 'administrator' || actor.kind === 'dispatch') return j;
      if (actor.kind === 'subadmin' && j.createdByUserId === actor.userId) return j;
      if (actor.kind === 'comercio' && j.merchantId && j.merchantId === (await merchants.merchantOfUser(tx, actor.userId))?.id) return j;
    }
    throw AppError.notFound('Import');
  }

  async function listFilter(tx: Tx, actor: Actor): Promise<{ createdBy?: string; merchantId?: string }> {
    if (actor.kind === 'subadmin') return { createdBy: actor.userId };
    if (actor.kind === 'comercio') {
      const own = await merchants.merchantOfUser(tx, actor.userId);
      return { merchantId: own?.id ?? '-' };
    }
    return {};
  }

  /** One step of the background: the next chunk of a queued import (all of it when all-or-nothing), in its own transaction. */
  async function step(): Promise<number> {
    const tried: string[] = [];
    for (;;) {
      const next = await ctx.db.withSystem((tx) => repo.nextBackgroundJob(tx, tried));
      if (!next) return 0;
      tried.push(next.id);
      const handled = await ctx.db.withTenant({ organizationId: next.organizationId, userId: next.createdByUserId }, async (tx) => {
        const job = await repo.findJob(tx, next.id, true);
        if (!job || (job.status !== 'queued' && job.status !== 'running')) return 0;
        const stored = job.actor as StoredActor;
        const actor: Actor = { ...stored, sessionId: `import:${job.id}`, requestId: `import:${job.id}` };
        const undoAll = !job.dryRun && job.mode === 'all_or_nothing';
        const rows = await repo.pendingRows(tx, job.id, undoAll ? job.totalRows : CHUNK_ROWS);
        if (job.status === 'queued') await repo.setJobStatus(tx, job.id, 'running');
        const failed = rows.length ? await processRows(tx, actor, job, rows) : false;
        await repo.refreshCounters(tx, job.id);
        const left = undoAll ? 0 : (await repo.pendingRows(tx, job.id, 1)).length;
        if (!left) await finish(tx, actor, job, failed || (await repo.rowErrors(tx, job.id, 1)).length > 0);
        return rows.length || 1;
      });
      if (handled) return handled;
    }
  }

  const worker: Worker = { name: 'imports', intervalMs: 1000, tick: step };

  return {
    upload,
    get: (actor: Actor, id: string) =>
      ctx.db.readTenant(actor, async (tx) => jobOut(tx, await visible(tx, actor, await repo.findJob(tx, id)))),
    list: (actor: Actor, q: ListQuery) => {
      const page = pageRequest(q);
      return ctx.db.readTenant(actor, async (tx) => {
        const rows = await repo.listJobs(tx, {
          ...(await listFilter(tx, actor)),
          kind: q.kind,
          status: q.status,
          after: page.after,
          limit: page.limit,
        });
        const out = toPage(rows, page);
        return { data: await Promise.all(out.data.map((j) => jobOut(tx, j))), next_cursor: out.next_cursor };
      });
    },
    /** The row-by-row report: row, external_ref, status, error column and message, the record's id. */
    report: (actor: Actor, id: string, format: FileFormat) =>
      ctx.db.readTenant(actor, async (tx) => {
        const job = await visible(tx, actor, await repo.findJob(tx, id));
        const rows = await repo.allRows(tx, job.id);
        const lines = rows.flatMap((r) => {
          const errs = r.errors as RowError[];
          const base = [r.rowNumber, r.externalRef, r.status];
          if (!errs.length) return [[...base, null, null, null, r.entityId]];
          return errs.map((e) => [...base, e.column, e.code, e.message, r.entityId]);
        });
        const file = await writeTable(
          format,
          'report',
          ['row', 'external_ref', 'status', 'error_column', 'error_code', 'error_message', 'entity_id'],
          lines,
        );
        return { file, type: format === 'csv' ? `${CSV_TYPE}; charset=utf-8` : XLSX_TYPE, name: `import-${job.id}-report.${format}` };
      }),
    /** The template: the documented columns and one example row. */
    template: async (kind: ImportKind, format: FileFormat) => {
      const cols = COLUMNS[kind];
      const file = await writeTable(
        format,
        kind,
        cols.map((c) => c.name),
        [cols.map((c) => c.example || null)],
      );
      return { file, type: format === 'csv' ? `${CSV_TYPE}; charset=utf-8` : XLSX_TYPE, name: `${kind}-template.${format}` };
    },
    worker,
  };
}

export type ImportService = ReturnType<typeof createImportService>;
