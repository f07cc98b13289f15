import { actorOf } from '../../platform/auth.js';
import type { Api } from '../../platform/context.js';
import { IdParams, Page } from '../../platform/schemas.js';
import { DocumentOut, DocumentQuery, NewDocument, ReviewBody } from './schemas.js';
import type { DocumentService } from './service.js';

export function documentRoutes(app: Api, svc: DocumentService) {
  app.get(
    '/documents',
    {
      config: { auth: { allowUnapprovedOperator: true } },
      schema: {
        operationId: 'listDocuments',
        tags: ['documents'],
        querystring: DocumentQuery,
        response: { 200: Page(DocumentOut) },
      },
    },
    async (req) => svc.list(actorOf(req), req.query),
  );
  app.post(
    '/documents',
    {
      config: { auth: { allowUnapprovedOperator: true } },
      schema: {
        operationId: 'submitDocument',
        tags: ['documents'],
        summary: 'Submit a document about an operator, driver, merchant or user (status pending)',
        description:
          "The subject must exist in the caller's organization and be of the named kind (422 SUBJECT_NOT_FOUND). Without subject_id it is the caller's own: " +
          'the organization (operator), himself (user), his driver profile (driver) or his merchant (merchant). Only administrators may name another subject ' +
          'or submit operator documents (403 SUBJECT_NOT_YOURS). storage_object_id must be a `document` object the caller may link. Audited.',
        body: NewDocument,
        response: { 201: DocumentOut },
      },
    },
    async (req, reply) => reply.code(201).send(await svc.create(actorOf(req), req.body)),
  );
  app.post(
    '/documents/:id/review',
    {
      config: { auth: { roles: ['administrator'] } },
      schema: {
        operationId: 'reviewDocument',
        tags: ['documents'],
        params: IdParams,
        body: ReviewBody,
        response: { 200: DocumentOut },
      },
    },
    async (req) => svc.review(actorOf(req), req.params.id, req.body.decision, req.body.notes),
  );
}
