import { withDeps, type Api, type AppContext } from '../../platform/context.js';
import type { DocumentsContext } from './context.js';
import { documentRoutes } from './routes.js';
import { createDocumentService } from './service.js';

export { DocumentOut } from './schemas.js';

export function createDocumentsModule(ctx: AppContext, deps: DocumentsContext['deps']) {
  const service = createDocumentService(withDeps(ctx, deps));
  return { name: 'documents', routes: (app: Api) => documentRoutes(app, service) };
}
