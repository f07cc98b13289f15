import { Type, type Static } from '@sinclair/typebox';
import { Id, Literals, Nullable, PageQueryProps, Strict, Timestamp } from '../../platform/schemas.js';
import { FILE_FORMATS, IMPORT_KINDS, IMPORT_MODES, IMPORT_STATUSES, ROW_STATUSES } from './tables.js';

export const ImportKindSchema = Literals(IMPORT_KINDS, '`trips` (staff) or `express_requests` (a merchant, or staff for a merchant)');
export type ImportKind = Static<typeof ImportKindSchema>;

export const ImportModeSchema = Literals(
  IMPORT_MODES,
  '`all_or_nothing` (default): nothing is created unless every row is valid; `valid_only`: the valid rows are created, the others reported',
);
export type ImportMode = Static<typeof ImportModeSchema>;

export const ImportStatusSchema = Literals(
  IMPORT_STATUSES,
  '`queued`/`running`: a large file processed in the background; `completed`; `failed`: an all-or-nothing import with an invalid row (nothing created)',
);
export type ImportStatus = Static<typeof ImportStatusSchema>;

export const RowStatusSchema = Literals(
  ROW_STATUSES,
  '`valid`: would be created (dry run); `created`; `duplicate`: its external_ref was imported before (entity_id is that record); `error`; ' +
    '`skipped`: valid but not created because another row failed an all-or-nothing import; `pending`: not processed yet',
);
export type RowStatus = Static<typeof RowStatusSchema>;

export const FileFormatSchema = Literals(FILE_FORMATS);
export type FileFormat = Static<typeof FileFormatSchema>;

export const RowError = Type.Object({
  row: Type.Integer({ description: 'the spreadsheet row (the header is row 1)' }),
  column: Nullable(Type.String({ description: 'the column at fault, null when the row as a whole is refused' })),
  code: Type.String({
    description: 'e.g. REQUIRED, INVALID_PHONE, INVALID_COORDINATE, INVALID_MONEY, DUPLICATE_IN_FILE, MERCHANT_NOT_APPROVED',
  }),
  message: Type.String(),
});
export type RowError = Static<typeof RowError>;

/** The most row errors an import's JSON carries; the report has them all. */
export const ERRORS_SHOWN = 200;

export const ImportOut = Type.Object({
  id: Type.String(),
  kind: ImportKindSchema,
  status: ImportStatusSchema,
  dry_run: Type.Boolean({ description: 'true: validated only, nothing created' }),
  mode: ImportModeSchema,
  merchant_id: Nullable(Type.String()),
  file_name: Nullable(Type.String()),
  format: FileFormatSchema,
  total_rows: Type.Integer(),
  processed_rows: Type.Integer({ description: 'progress: rows processed so far' }),
  valid_rows: Type.Integer({ description: 'rows a dry run found valid' }),
  created_rows: Type.Integer(),
  duplicate_rows: Type.Integer(),
  error_rows: Type.Integer(),
  created_by_user_id: Type.String(),
  created_at: Timestamp,
  finished_at: Nullable(Timestamp),
  errors: Type.Array(RowError, { description: `the first ${ERRORS_SHOWN} row errors, in row order (the report has them all)` }),
  report_path: Type.String({ description: 'where the row-by-row report is downloaded (CSV, or XLSX with format=xlsx)' }),
});
export type ImportOutT = Static<typeof ImportOut>;

export const UploadQuery = Strict({
  dry_run: Type.Optional(Type.Boolean({ default: true, description: 'true (default): validate and report only; false: import' })),
  mode: Type.Optional(ImportModeSchema),
  merchant_id: Type.Optional(Id),
  file_name: Type.Optional(
    Type.String({ minLength: 1, maxLength: 200, description: 'the name of the uploaded file, kept with the import' }),
  ),
});
export type UploadQuery = Static<typeof UploadQuery>;

export const ListQuery = Strict({ ...PageQueryProps, kind: Type.Optional(ImportKindSchema), status: Type.Optional(ImportStatusSchema) });
export type ListQuery = Static<typeof ListQuery>;

export const FileQuery = Strict({ format: Type.Optional(FileFormatSchema) });
