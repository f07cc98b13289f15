import { Type } from '@sinclair/typebox';
import { actorOf } from '../../platform/auth.js';
import { Id, IdParams, Nullable, Page, PageQueryProps, ShortText, Strict, Timestamp } from '../../platform/schemas.js';
import { withDeps, type Api, type AppContext, type ModuleContext } from '../../platform/context.js';
import type { ObjectLinker } from '../../platform/storage-links.js';
import type { IdentityService } from '../identity/index.js';
import type { LogisticsApi } from '../logistics/index.js';
import { createDocumentService, type NewDocument } from './service.js';

const Status = Type.Union([Type.Literal('pending'), Type.Literal('approved'), Type.Literal('rejected')]);
const SubjectType = Type.Union(['operator', 'driver', 'merchant', 'user'].map((s) => Type.Literal(s)));
export const DocumentOut = Type.Object({
  id: Type.String(),
  organization_id: Type.String(),
  owner_user_id: Type.String(),
  subject_type: Type.String(),
  subject_id: Type.String(),
  doc_type: Type.String(),
  title: Type.String(),
  storage_object_id: Nullable(Type.String({ description: 'private storage object of purpose `document`' })),
  status: Status,
  review_notes: Nullable(Type.String()),
  reviewed_by_user_id: Nullable(Type.String()),
  reviewed_at: Nullable(Timestamp),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export type DocumentsContext = ModuleContext<{ identity: IdentityService; logistics: LogisticsApi; storage: ObjectLinker }>;

export const createDocumentsModule = (ctx: AppContext, deps: DocumentsContext['deps']) => ({
  name: 'documents',
  routes(app: Api) {
    const svc = createDocumentService(withDeps(ctx, deps));
    app.get(
      '/documents',
      {
        config: { auth: { allowUnapprovedOperator: true } },
        schema: {
          operationId: 'listDocuments',
          tags: ['documents'],
          querystring: Strict({
            ...PageQueryProps,
            status: Type.Optional(Status),
            subject_type: Type.Optional(SubjectType),
            subject_id: Type.Optional(Id),
          }),
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
          body: Strict({
            subject_type: SubjectType,
            subject_id: Type.Optional(Id),
            doc_type: Type.String({ pattern: '^[a-z][a-z0-9_]{1,49}$', description: 'e.g. license, id_card, tax_registration' }),
            title: ShortText(200),
            storage_object_id: Type.Optional(Id),
          }),
          response: { 201: DocumentOut },
        },
      },
      async (req, reply) => reply.code(201).send(await svc.create(actorOf(req), req.body as NewDocument)),
    );
    app.post(
      '/documents/:id/review',
      {
        config: { auth: { roles: ['administrator'] } },
        schema: {
          operationId: 'reviewDocument',
          tags: ['documents'],
          params: IdParams,
          body: Strict({
            decision: Type.Union([Type.Literal('approved'), Type.Literal('rejected')]),
            notes: Type.Optional(ShortText(1000)),
          }),
          response: { 200: DocumentOut },
        },
      },
      async (req) => svc.review(actorOf(req), req.params.id, req.body.decision, req.body.notes),
    );
  },
});
