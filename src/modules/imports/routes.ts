import { Type, type TSchema } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import { actorOf, type Principal, type RouteAuth } from '../../platform/auth.js';
import type { Api } from '../../platform/context.js';
import { AppError } from '../../platform/errors.js';
import { IdParams, Page } from '../../platform/schemas.js';
import { COLUMNS } from './service/columns.js';
import { CSV_TYPE, MAX_FILE_BYTES, MAX_ROWS, MAX_UNZIPPED_BYTES, XLSX_TYPE } from './service/files.js';
import type { ImportService } from './service/imports.js';
import { FileQuery, ImportOut, ListQuery, UploadQuery, type ImportKind } from './schemas.js';

const STAFF: Principal[] = ['administrator', 'dispatch', 'subadmin'];
const READERS: RouteAuth = { roles: [...STAFF, 'comercio'] };

/** A spreadsheet answer: CSV or XLSX (the `format` query). */
const FileResponse = {
  description: `the file, as an attachment: CSV (${CSV_TYPE}, UTF-8) or XLSX (${XLSX_TYPE})`,
  content: { [CSV_TYPE]: { schema: { type: 'string' } }, [XLSX_TYPE]: { schema: { type: 'string', format: 'binary' } } },
} as unknown as TSchema;

const columnsDoc = (kind: ImportKind) =>
  COLUMNS[kind].map((c) => `\`${c.name}\`${c.required ? ' (required)' : ''}: ${c.description}`).join('; ');

function sendFile(reply: FastifyReply, f: { file: Buffer; type: string; name: string }) {
  return reply
    .header('content-type', f.type)
    .header('content-disposition', `attachment; filename="${f.name}"`)
    .header('cache-control', 'private, no-store')
    .send(f.file);
}

const UPLOAD_RULES =
  `The body is the file itself (not multipart): \`Content-Type: ${CSV_TYPE}\` (comma, semicolon or tab separated, UTF-8) or \`${XLSX_TYPE}\` ` +
  `(the first sheet), at most ${MAX_FILE_BYTES / (1024 * 1024)} MiB (413) and ${MAX_ROWS} data rows (413 IMPORT_TOO_MANY_ROWS); an XLSX at most ${MAX_UNZIPPED_BYTES / (1024 * 1024)} MiB once unzipped (413 IMPORT_UNZIPPED_TOO_LARGE, checked before it is inflated). The first row is the header: ` +
  'every column must be a documented one (422 IMPORT_UNKNOWN_COLUMN naming it, 422 IMPORT_DUPLICATE_COLUMN) and the required ones present ' +
  '(422 IMPORT_MISSING_COLUMN); an empty file or one without rows is 422 IMPORT_EMPTY, an unreadable workbook 422 IMPORT_UNREADABLE, a body ' +
  'that is not what its Content-Type says 415 SIGNATURE_MISMATCH. Every row is validated (phones, coordinates, amounts, dates, an external_ref ' +
  'repeated in the file) and then created through the same rules as the one-record operation; each problem is named by row and column. ' +
  '`dry_run` (default true) creates nothing and reports what would happen. Otherwise `mode=all_or_nothing` (default) creates nothing when a row ' +
  'is invalid (422 IMPORT_INVALID_ROWS with `row_errors`: row, column, code, message) and `mode=valid_only` creates the valid rows and reports ' +
  'the others. A row whose external_ref was imported before is `duplicate` with the existing record id, never created twice (also when two ' +
  'imports race). Up to IMPORT_INLINE_ROWS rows (a setting, 200 by default) are processed in the request (201); a larger file answers 202 ' +
  'with status `queued` and is processed in the background, IMPORT_CHUNK_ROWS rows per step (follow GET /imports/{id}: processed_rows). The import is audited; its row-by-row report is at report_path.';

export function importRoutes(app: Api, svc: ImportService) {
  const template = (path: string, kind: ImportKind, operationId: string) =>
    app.get(
      path,
      {
        config: { auth: READERS },
        schema: {
          operationId,
          tags: ['imports'],
          summary: `The spreadsheet template of ${kind === 'trips' ? 'trip' : 'express request'} imports: the documented columns and one example row`,
          description: `CSV by default, XLSX with format=xlsx. Columns: ${columnsDoc(kind)}.`,
          querystring: FileQuery,
          response: { 200: FileResponse },
        },
      },
      async (req, reply) => sendFile(reply, await svc.template(kind, req.query.format ?? 'csv')),
    );
  template('/imports/trips/template', 'trips', 'getTripImportTemplate');
  template('/imports/express-requests/template', 'express_requests', 'getExpressImportTemplate');

  // The uploads live in their own scope: the body is the file, buffered up to the import limit whatever the global body limit.
  app.register(async (scope) => {
    const raw = scope.withTypeProvider<TypeBoxTypeProvider>();
    raw.removeAllContentTypeParsers();
    raw.addContentTypeParser(
      [CSV_TYPE, 'application/vnd.ms-excel', XLSX_TYPE],
      { parseAs: 'buffer', bodyLimit: MAX_FILE_BYTES },
      (_req, body, done) => done(null, body),
    );
    const upload = (path: string, kind: ImportKind, auth: RouteAuth, operationId: string, who: string) =>
      raw.post(
        path,
        {
          bodyLimit: MAX_FILE_BYTES,
          config: { auth },
          schema: {
            operationId,
            tags: ['imports'],
            summary: `Import ${kind === 'trips' ? 'trips' : 'express requests'} from a CSV or XLSX file (dry run by default)`,
            description: `${who} ${UPLOAD_RULES} Columns: ${columnsDoc(kind)}.`,
            querystring: UploadQuery,
            consumes: [CSV_TYPE, XLSX_TYPE],
            body: Type.Unsafe<Buffer>({ format: 'binary', description: 'the CSV or XLSX file (not multipart)' }),
            response: { 201: ImportOut, 202: ImportOut },
          },
        },
        async (req, reply) => {
          const body = req.body;
          if (!Buffer.isBuffer(body) || body.length === 0) throw new AppError(400, 'EMPTY_UPLOAD', 'The request has no file');
          const mediaType = String(req.headers['content-type'] ?? '')
            .split(';')[0]
            .trim()
            .toLowerCase();
          const out = await svc.upload(actorOf(req), kind, req.query, { mediaType, body });
          return reply.code(out.status).send(out.body);
        },
      );
    upload(
      '/imports/trips',
      'trips',
      { roles: STAFF, apiKeyScope: 'trips:write' },
      'importTrips',
      'Staff; a sub-administrator only within his territories (a pickup outside them is an error of its row, OUTSIDE_TERRITORY). `merchant_id` is a column here.',
    );
    upload(
      '/imports/express-requests',
      'express_requests',
      { roles: [...STAFF, 'comercio'], apiKeyScope: 'express:write' },
      'importExpressRequests',
      "A merchant imports his own express requests (another merchant's `merchant_id` is 403); staff name the merchant in `merchant_id` " +
        '(422 MERCHANT_REQUIRED without it, 422 MERCHANT_NOT_FOUND for an unknown one).',
    );
  });

  app.get(
    '/imports',
    {
      config: { auth: READERS },
      schema: {
        operationId: 'listImports',
        tags: ['imports'],
        summary: 'Spreadsheet imports, newest first (cursor pagination)',
        description:
          "Administrators and dispatchers see the organization's imports, a sub-administrator his own, a merchant his merchant's express imports.",
        querystring: ListQuery,
        response: { 200: Page(ImportOut) },
      },
    },
    async (req) => svc.list(actorOf(req), req.query),
  );

  app.get(
    '/imports/:id',
    {
      config: { auth: READERS },
      schema: {
        operationId: 'getImport',
        tags: ['imports'],
        summary: 'One import: its status, counters and progress (processed_rows of total_rows), and its first row errors',
        description: 'Visible as in GET /imports; anyone else, and an import of another organization, gets 404.',
        params: IdParams,
        response: { 200: ImportOut },
      },
    },
    async (req) => svc.get(actorOf(req), req.params.id),
  );

  app.get(
    '/imports/:id/report',
    {
      config: { auth: READERS },
      schema: {
        operationId: 'getImportReport',
        tags: ['imports'],
        summary: 'The row-by-row report of an import (CSV, or XLSX with format=xlsx)',
        description:
          'Columns: row, external_ref, status (valid, created, duplicate, error, skipped, pending), error_column, error_code, error_message, ' +
          'entity_id (the trip or express request created, or the existing one of a duplicate); a row with several errors has one line each. ' +
          'Visible as in GET /imports (404 otherwise).',
        params: IdParams,
        querystring: FileQuery,
        response: { 200: FileResponse },
      },
    },
    async (req, reply) => sendFile(reply, await svc.report(actorOf(req), req.params.id, req.query.format ?? 'csv')),
  );
}
