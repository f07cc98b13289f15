import { foreignKey, index, pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core';
import { organization } from '../organizations/tables.js';
import { DOCUMENT_STATUSES, SUBJECT_TYPES } from './schemas.js';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

export const document = pgTable(
  'document',
  {
    organizationId: text('organization_id').notNull(),
    id: text('id').notNull(),
    ownerUserId: text('owner_user_id').notNull(),
    subjectType: text('subject_type', { enum: SUBJECT_TYPES }).notNull(),
    subjectId: text('subject_id').notNull(),
    docType: text('doc_type').notNull(),
    title: text('title').notNull(),
    storageObjectId: text('storage_object_id'),
    status: text('status', { enum: DOCUMENT_STATUSES }).notNull().default('pending'),
    reviewNotes: text('review_notes'),
    reviewedByUserId: text('reviewed_by_user_id'),
    reviewedAt: ts('reviewed_at'),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.id] }),
    foreignKey({ columns: [t.organizationId], foreignColumns: [organization.id] }),
    index('document_status_idx').on(t.organizationId, t.status, t.id),
  ],
);
