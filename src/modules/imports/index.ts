import { withDeps, type Api, type AppContext, type Module } from '../../platform/context.js';
import type { ImportsContext } from './context.js';
import { importRoutes } from './routes.js';
import { createImportService } from './service/imports.js';

export type { Geocoder, ImportedExpress, ImportedTrip } from './context.js';
export { ImportOut } from './schemas.js';

/**
 * Spreadsheet imports of trips and express requests (CSV and XLSX): validated row by row, idempotent by each row's
 * external_ref, large files processed in the background by the `imports` worker. docs/IMPORTS.md.
 */
export function createImportsModule(base: AppContext, deps: ImportsContext['deps']) {
  const ctx: ImportsContext = withDeps(base, deps);
  const service = createImportService(ctx);
  ctx.workers.push(service.worker);
  return {
    name: 'imports',
    service,
    routes: (app: Api) => importRoutes(app, service),
  } satisfies Module & Record<string, unknown>;
}
