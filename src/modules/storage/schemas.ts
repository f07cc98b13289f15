import { Type, type Static } from '@sinclair/typebox';
import { Nullable, Timestamp } from '../../platform/schemas.js';

/** What a stored object is for; it decides the size and type limits and who may link it. */
export const STORAGE_PURPOSES = [
  'pickup_evidence',
  'delivery_evidence',
  'document',
  'avatar',
  'merchant_payment_qr',
  'payment_proof',
  'coupon_asset',
  'other',
] as const;
export const StoragePurposeSchema = Type.Union(STORAGE_PURPOSES.map((p) => Type.Literal(p)));
export type StoragePurpose = Static<typeof StoragePurposeSchema>;

export const Slot = Type.Object({
  upload_id: Type.String(),
  object_id: Type.String({ description: 'id the stored object will have once the PUT succeeds (the evidence `storage_key`)' }),
  upload_token: Type.String({ description: 'single-use, valid 15 minutes; send it as `X-Upload-Token`; stored only as a hash' }),
  upload_method: Type.Literal('PUT'),
  upload_url: Type.String({ description: 'path of the PUT, e.g. /api/v1/storage/uploads/{upload_id}' }),
  required_headers: Type.Record(Type.String(), Type.String(), { description: 'headers the PUT needs besides Authorization' }),
  expires_at: Timestamp,
  purpose: Type.String(),
  mime_type: Type.String(),
  size_bytes: Type.Integer(),
  filename: Type.String({ description: 'sanitized name used in Content-Disposition; files are stored by object id only' }),
  trip_id: Nullable(Type.String()),
  stage: Nullable(Type.String()),
  proof_type: Nullable(Type.String()),
  limits: Type.Object({ max_bytes: Type.Integer(), allowed_mime_types: Type.Array(Type.String()) }),
});

export const ObjectOut = Type.Object({
  id: Type.String(),
  purpose: Type.String(),
  mime_type: Type.String(),
  size_bytes: Type.Integer(),
  sha256: Type.String({ description: 'hex SHA-256 of the content, computed by the service; also the ETag' }),
  filename: Type.String(),
  owner_type: Nullable(Type.String()),
  owner_id: Nullable(Type.String()),
  trip_id: Nullable(Type.String()),
  stage: Nullable(Type.String()),
  proof_type: Nullable(Type.String()),
  territory_id: Nullable(Type.String()),
  created_by_user_id: Type.String(),
  created_at: Timestamp,
  download_url: Type.String(),
});
