import { bigint, check, foreignKey, index, pgTable, primaryKey, text, timestamp, unique } from 'drizzle-orm/pg-core';
import { sql } from 'drizzle-orm';
import { organization } from '../organizations/tables.js';
import { users } from '../identity/tables.js';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

const PURPOSE_CHECK = sql`IN ('pickup_evidence','delivery_evidence','document','avatar','merchant_payment_qr','payment_proof','coupon_asset','other')`;

/**
 * An upload slot (upload session): what the client declared, the hashed single-use token and its expiry.
 * `open` -> `uploading` (one PUT claimed it) -> `completed` (object stored); a failed PUT returns it to `open`.
 */
export const storageUpload = pgTable(
  'storage_upload',
  {
    organizationId: text('organization_id').notNull(),
    id: text('id').notNull(),
    /** Id the stored object gets when the PUT succeeds; also the file/key name. */
    objectId: text('object_id').notNull(),
    purpose: text('purpose').notNull(),
    mimeType: text('mime_type').notNull(),
    sizeBytes: bigint('size_bytes', { mode: 'number' }).notNull(),
    filename: text('filename').notNull(),
    tokenHash: text('token_hash').notNull(),
    status: text('status', { enum: ['open', 'uploading', 'completed'] })
      .notNull()
      .default('open'),
    ownerType: text('owner_type'),
    ownerId: text('owner_id'),
    tripId: text('trip_id'),
    stage: text('stage'),
    proofType: text('proof_type'),
    territoryId: text('territory_id'),
    createdByUserId: text('created_by_user_id').notNull(),
    expiresAt: ts('expires_at').notNull(),
    claimedAt: ts('claimed_at'),
    completedAt: ts('completed_at'),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.id] }),
    foreignKey({ columns: [t.organizationId], foreignColumns: [organization.id] }),
    foreignKey({ columns: [t.organizationId, t.createdByUserId], foreignColumns: [users.organizationId, users.id] }),
    check('storage_upload_purpose_ck', sql`${t.purpose} ${PURPOSE_CHECK}`),
    check('storage_upload_size_ck', sql`${t.sizeBytes} > 0`),
    // The janitor worker scans expired, unfinished slots across organizations.
    index('storage_upload_expiry_idx').on(t.status, t.expiresAt),
  ],
);

/** A stored private object. The file is named by `id` only (never by a user-supplied name). */
export const privateStorageObject = pgTable(
  'private_storage_object',
  {
    organizationId: text('organization_id').notNull(),
    id: text('id').notNull(),
    purpose: text('purpose').notNull(),
    mimeType: text('mime_type').notNull(),
    sizeBytes: bigint('size_bytes', { mode: 'number' }).notNull(),
    sha256: text('sha256').notNull(),
    filename: text('filename').notNull(),
    /** Which driver holds the bytes (`local` or `s3`); the key is always the object id. */
    driver: text('driver', { enum: ['local', 's3'] }).notNull(),
    ownerType: text('owner_type'),
    ownerId: text('owner_id'),
    tripId: text('trip_id'),
    stage: text('stage'),
    proofType: text('proof_type'),
    territoryId: text('territory_id'),
    uploadId: text('upload_id').notNull(),
    createdByUserId: text('created_by_user_id').notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.id] }),
    foreignKey({ columns: [t.organizationId], foreignColumns: [organization.id] }),
    foreignKey({ columns: [t.organizationId, t.createdByUserId], foreignColumns: [users.organizationId, users.id] }),
    foreignKey({ columns: [t.organizationId, t.uploadId], foreignColumns: [storageUpload.organizationId, storageUpload.id] }),
    check('private_storage_object_purpose_ck', sql`${t.purpose} ${PURPOSE_CHECK}`),
    check('private_storage_object_sha256_ck', sql`${t.sha256} ~ '^[0-9a-f]{64}$'`),
    // One slot yields at most one object, even if two PUTs raced past the claim.
    unique('private_storage_object_upload_uq').on(t.organizationId, t.uploadId),
    index('private_storage_object_trip_idx').on(t.organizationId, t.tripId),
  ],
);
