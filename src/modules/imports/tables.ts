import { sql } from 'drizzle-orm';
import { boolean, foreignKey, index, integer, jsonb, pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core';
import { organization } from '../organizations/tables.js';

export const IMPORT_KINDS = ['trips', 'express_requests'] as const;
export const IMPORT_STATUSES = ['queued', 'running', 'completed', 'failed'] as const;
export const IMPORT_MODES = ['all_or_nothing', 'valid_only'] as const;
export const FILE_FORMATS = ['csv', 'xlsx'] as const;
export const ROW_STATUSES = ['pending', 'valid', 'created', 'duplicate', 'error', 'skipped'] as const;

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

/**
 * One spreadsheet import: its kind (trips or express requests), how it runs (a dry run writes no trip; `valid_only`
 * imports the valid rows, `all_or_nothing` none unless all are valid) and its counters, which a large file updates
 * chunk by chunk. `actor` is the caller as he was at the upload, for the rows the worker processes after the response.
 */
export const importJob = pgTable(
  'import_job',
  {
    organizationId: text('organization_id').notNull(),
    id: text('id').notNull(),
    kind: text('kind', { enum: IMPORT_KINDS }).notNull(),
    status: text('status', { enum: IMPORT_STATUSES }).notNull(),
    dryRun: boolean('dry_run').notNull(),
    mode: text('mode', { enum: IMPORT_MODES }).notNull(),
    merchantId: text('merchant_id'),
    fileName: text('file_name'),
    format: text('format', { enum: FILE_FORMATS }).notNull(),
    totalRows: integer('total_rows').notNull(),
    processedRows: integer('processed_rows').notNull().default(0),
    validRows: integer('valid_rows').notNull().default(0),
    createdRows: integer('created_rows').notNull().default(0),
    duplicateRows: integer('duplicate_rows').notNull().default(0),
    errorRows: integer('error_rows').notNull().default(0),
    actor: jsonb('actor').notNull(),
    createdByUserId: text('created_by_user_id').notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
    finishedAt: ts('finished_at'),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.id] }),
    foreignKey({ columns: [t.organizationId], foreignColumns: [organization.id] }),
    index('import_job_id_idx').on(t.id),
    index('import_job_pending_idx')
      .on(t.createdAt)
      .where(sql`status IN ('queued', 'running')`),
  ],
);

/**
 * One data row of an import (`row_number` as the spreadsheet numbers it: the header is row 1). `data` is the row as
 * validated, kept until it is processed; `errors` name the column of each problem; `entity_id` is the trip or
 * express request created, or the existing one of a duplicate.
 */
export const importRow = pgTable(
  'import_row',
  {
    organizationId: text('organization_id').notNull(),
    importId: text('import_id').notNull(),
    rowNumber: integer('row_number').notNull(),
    externalRef: text('external_ref'),
    status: text('status', { enum: ROW_STATUSES }).notNull(),
    data: jsonb('data'),
    errors: jsonb('errors')
      .notNull()
      .default(sql`'[]'::jsonb`),
    entityId: text('entity_id'),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.importId, t.rowNumber] }),
    foreignKey({ columns: [t.organizationId, t.importId], foreignColumns: [importJob.organizationId, importJob.id] }),
  ],
);

/**
 * The idempotency of imports: one row per external reference of an organization, kind and merchant (`merchant_key`,
 * '' for a trip without one). Its primary key is the decision: of two imports racing with the same reference one
 * inserts it and creates the record, the other finds it and reports the row as a duplicate.
 */
export const importRef = pgTable(
  'import_ref',
  {
    organizationId: text('organization_id').notNull(),
    kind: text('kind', { enum: IMPORT_KINDS }).notNull(),
    merchantKey: text('merchant_key').notNull(),
    externalRef: text('external_ref').notNull(),
    entityId: text('entity_id'),
    importId: text('import_id').notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.kind, t.merchantKey, t.externalRef] }),
    foreignKey({ columns: [t.organizationId], foreignColumns: [organization.id] }),
  ],
);
