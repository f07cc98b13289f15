import { Type, type Static } from '@sinclair/typebox';
import { Id, Nullable, PageQueryProps, ShortText, Strict, Timestamp } from '../../platform/schemas.js';

export const DOCUMENT_STATUSES = ['pending', 'approved', 'rejected'] as const;
export const DocumentStatus = Type.Union(DOCUMENT_STATUSES.map((s) => Type.Literal(s)));
export type DocumentStatus = Static<typeof DocumentStatus>;

/** What a document is about. */
export const SUBJECT_TYPES = ['operator', 'driver', 'merchant', 'user'] as const;
export const SubjectType = Type.Union(SUBJECT_TYPES.map((s) => Type.Literal(s)));
export type SubjectType = Static<typeof SubjectType>;

export const ReviewDecision = Type.Union([Type.Literal('approved'), Type.Literal('rejected')]);
export type ReviewDecision = Static<typeof ReviewDecision>;

export const DocumentOut = Type.Object({
  id: Type.String(),
  organization_id: Type.String(),
  owner_user_id: Type.String(),
  subject_type: Type.String(),
  subject_id: Type.String(),
  doc_type: Type.String(),
  title: Type.String(),
  storage_object_id: Nullable(Type.String({ description: 'private storage object of purpose `document`' })),
  status: DocumentStatus,
  review_notes: Nullable(Type.String()),
  reviewed_by_user_id: Nullable(Type.String()),
  reviewed_at: Nullable(Timestamp),
  created_at: Timestamp,
  updated_at: Timestamp,
});
export type DocumentView = Static<typeof DocumentOut>;

export const DocumentQuery = Strict({
  ...PageQueryProps,
  status: Type.Optional(DocumentStatus),
  subject_type: Type.Optional(SubjectType),
  subject_id: Type.Optional(Id),
});
export type DocumentQuery = Static<typeof DocumentQuery>;

export const NewDocument = Strict({
  subject_type: SubjectType,
  subject_id: Type.Optional(Id),
  doc_type: Type.String({ pattern: '^[a-z][a-z0-9_]{1,49}$', description: 'e.g. license, id_card, tax_registration' }),
  title: ShortText(200),
  storage_object_id: Type.Optional(Id),
});
export type NewDocument = Static<typeof NewDocument>;

export const ReviewBody = Strict({ decision: ReviewDecision, notes: Type.Optional(ShortText(1000)) });
