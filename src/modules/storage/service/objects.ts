import type { Readable } from 'node:stream';
import { AppError } from '../../../platform/errors.js';
import { newId, randomToken, safeEqual, sha256Hex } from '../../../platform/ids.js';
import type { Actor } from '../../../platform/auth.js';
import type { AppContext, Worker } from '../../../platform/context.js';
import type { Tx } from '../../../platform/db/index.js';
import type { LinkTarget, ObjectLinker, ObjectReadGrant, TripDirectory } from '../context.js';
import type { StoragePurpose } from '../schemas.js';
import type { DriverName, StorageDriver } from './drivers.js';
import {
  EVIDENCE_PURPOSE,
  EVIDENCE_PURPOSES,
  UPLOAD_TTL_SECONDS,
  safeFilename,
  type ByteRange,
  type EvidenceStage,
  type PurposeLimit,
} from './policy.js';
import { UploadVerifier } from './verify.js';
import * as repo from '../repo.js';
import type { SlotRow, StoredObject } from '../repo.js';

export type { StoredObject } from '../repo.js';

export interface EvidenceSlotInput {
  trip_id: string;
  stage: EvidenceStage;
  proof_type: string;
  mime_type: string;
  size_bytes: number;
  filename: string;
}

export interface GenericSlotInput {
  purpose: StoragePurpose;
  mime_type: string;
  size_bytes: number;
  filename: string;
  owner_type?: string;
  owner_id?: string;
}

export interface UploadRequest {
  uploadId: string;
  token: string | undefined;
  /** Media type of the request's Content-Type, without parameters. */
  mediaType: string | null;
  contentLength: number | null;
  body: Readable;
}

/** Organization staff who see every object of the organization and may open evidence slots for any trip. */
const isStaff = (a: Actor) => a.kind === 'administrator' || a.kind === 'dispatch' || a.kind === 'platform';

export const uploadUrl = (id: string) => `/api/v1/storage/uploads/${id}`;
export const downloadUrl = (id: string) => `/api/v1/storage/objects/${id}`;

export function createStorageService(
  ctx: AppContext,
  deps: {
    primary: StorageDriver;
    byName: Partial<Record<DriverName, StorageDriver>>;
    limits: Record<StoragePurpose, PurposeLimit>;
    quotaBytes?: number;
    /** Trip participants (logistics): who may upload and read evidence. */
    trips: TripDirectory;
    /** Extra readers decided by the modules that link objects (filled by the composition root). */
    readGrants: readonly ObjectReadGrant[];
  },
) {
  const { db } = ctx;
  const { primary, limits } = deps;
  const quotaBytes = deps.quotaBytes ?? 0;

  /** The declared type and size are checked when the slot is opened, so a client learns early. */
  function checkDeclared(purpose: StoragePurpose, mime: string, size: number) {
    const limit = limits[purpose];
    if (!limit.mimeTypes.includes(mime)) {
      throw new AppError(
        415,
        'MEDIA_TYPE_NOT_ALLOWED',
        `'${mime}' is not allowed for ${purpose}; allowed: ${limit.mimeTypes.join(', ')}`,
        undefined,
        {
          allowed_mime_types: limit.mimeTypes,
        },
      );
    }
    if (size > limit.maxBytes) {
      throw new AppError(413, 'UPLOAD_TOO_LARGE', `${purpose} uploads are limited to ${limit.maxBytes} bytes`, undefined, {
        max_bytes: limit.maxBytes,
      });
    }
  }

  /**
   * The organization's storage quota: stored objects plus the bytes reserved by open slots must leave
   * room for the new slot. Slots of one organization are opened one at a time (advisory lock), so two
   * concurrent slots cannot both take the last room.
   */
  async function checkQuota(tx: Tx, organizationId: string, size: number) {
    if (!quotaBytes) return;
    await repo.lockQuota(tx, organizationId);
    const used = await repo.usedBytes(tx, organizationId);
    if (used + size > quotaBytes) {
      throw new AppError(
        507,
        'STORAGE_QUOTA_EXCEEDED',
        `The organization's storage quota of ${quotaBytes} bytes would be exceeded (${used} used or reserved)`,
        undefined,
        {
          quota_bytes: quotaBytes,
          used_bytes: used,
          requested_bytes: size,
        },
      );
    }
  }

  async function insertSlot(
    tx: Tx,
    actor: Actor,
    slot: Omit<SlotRow, 'id' | 'object_id' | 'token_hash' | 'status' | 'created_by_user_id' | 'expires_at' | 'expired'>,
  ) {
    await checkQuota(tx, actor.organizationId, slot.size_bytes);
    const id = newId();
    const objectId = newId();
    const token = randomToken();
    const filename = safeFilename(slot.filename, objectId, slot.mime_type);
    const expiresAt = await repo.insertSlot(
      tx,
      actor.organizationId,
      { ...slot, id, object_id: objectId, filename, token_hash: sha256Hex(token), created_by_user_id: actor.userId },
      UPLOAD_TTL_SECONDS,
    );
    const limit = limits[slot.purpose];
    return {
      upload_id: id,
      object_id: objectId,
      upload_token: token,
      upload_method: 'PUT' as const,
      upload_url: uploadUrl(id),
      required_headers: { 'Content-Type': slot.mime_type, 'Content-Length': String(slot.size_bytes), 'X-Upload-Token': token },
      expires_at: expiresAt,
      purpose: slot.purpose,
      mime_type: slot.mime_type,
      size_bytes: slot.size_bytes,
      filename,
      trip_id: slot.trip_id,
      stage: slot.stage,
      proof_type: slot.proof_type,
      limits: { max_bytes: limit.maxBytes, allowed_mime_types: [...limit.mimeTypes] },
    };
  }

  /** Claims the slot for one PUT (row lock + conditional update: of two concurrent PUTs exactly one gets it). */
  async function claimSlot(actor: Actor, r: UploadRequest): Promise<SlotRow> {
    return db.withTenant(actor, async (tx) => {
      const slot = await repo.lockSlot(tx, r.uploadId);
      // Only the user who opened the slot may fill it; anyone else does not see it.
      if (!slot || slot.created_by_user_id !== actor.userId) throw AppError.notFound('Upload');
      if (!r.token || !safeEqual(sha256Hex(r.token), slot.token_hash))
        throw AppError.forbidden('The upload token is missing or wrong', 'UPLOAD_TOKEN_INVALID');
      if (slot.status === 'completed')
        throw AppError.conflict('This upload slot was already used', 'UPLOAD_ALREADY_COMPLETED', { object_id: slot.object_id });
      if (slot.status === 'uploading') throw AppError.conflict('Another upload to this slot is in progress', 'UPLOAD_IN_PROGRESS');
      if (slot.expired) throw new AppError(410, 'UPLOAD_EXPIRED', 'The upload slot expired; request a new one');
      if (r.mediaType !== slot.mime_type) {
        throw new AppError(415, 'CONTENT_TYPE_MISMATCH', `Content-Type must be the declared '${slot.mime_type}'`);
      }
      if (!limits[slot.purpose].mimeTypes.includes(slot.mime_type)) {
        throw new AppError(415, 'MEDIA_TYPE_NOT_ALLOWED', `'${slot.mime_type}' is no longer allowed for ${slot.purpose}`);
      }
      const max = Math.min(slot.size_bytes, limits[slot.purpose].maxBytes);
      if (r.contentLength !== null && r.contentLength > max) {
        throw new AppError(413, 'UPLOAD_TOO_LARGE', `The upload is larger than the declared size of ${max} bytes`, undefined, {
          max_bytes: max,
        });
      }
      if (r.contentLength !== null && r.contentLength < slot.size_bytes) {
        throw new AppError(400, 'SIZE_MISMATCH', `Content-Length ${r.contentLength} is less than the declared ${slot.size_bytes} bytes`);
      }
      if (!(await repo.markSlotUploading(tx, slot.id)))
        throw AppError.conflict('Another upload to this slot is in progress', 'UPLOAD_IN_PROGRESS');
      return { ...slot, size_bytes: max };
    });
  }

  /** A failed PUT gives the slot back (same token, until it expires), so a client may retry. */
  async function releaseSlot(actor: Actor, slotId: string) {
    await db.withTenant(actor, (tx) => repo.reopenSlot(tx, slotId));
  }

  /**
   * One read rule for every purpose: the uploader, staff, a sub-administrator for objects of his territories, the
   * participants of the trip an evidence belongs to, and whoever the module that links the object says may act on
   * its record (read grants, e.g. the merchant or the deciding sub-administrator of a payment review reads its proof).
   */
  async function canRead(tx: Tx, actor: Actor, o: StoredObject): Promise<boolean> {
    if (o.created_by_user_id === actor.userId || isStaff(actor)) return true;
    if (actor.kind === 'subadmin' && !!o.territory_id && !!actor.subadmin?.territoryIds.includes(o.territory_id)) return true;
    if (o.trip_id && EVIDENCE_PURPOSES.includes(o.purpose)) {
      const trip = await deps.trips.tripParticipants(tx, o.trip_id);
      if (trip && (trip.merchant_user_id === actor.userId || trip.customer_user_id === actor.userId)) return true;
    }
    for (const grant of deps.readGrants) if (await grant(tx, actor, o)) return true;
    return false;
  }

  const driverOf = (o: StoredObject): StorageDriver => {
    const d = deps.byName[o.driver];
    if (!d) throw new AppError(503, 'STORAGE_DRIVER_UNAVAILABLE', `Objects of the '${o.driver}' store cannot be read by this instance`);
    return d;
  };

  return {
    limits,
    driver: primary.name,

    async createEvidenceSlot(actor: Actor, input: EvidenceSlotInput) {
      const trips = deps.trips;
      const purpose = EVIDENCE_PURPOSE[input.stage];
      checkDeclared(purpose, input.mime_type, input.size_bytes);
      return db.withTenant(actor, async (tx) => {
        const trip = await trips.tripParticipants(tx, input.trip_id);
        if (!trip) throw AppError.notFound('Trip');
        if (!isStaff(actor) && trip.driver_user_id !== actor.userId) {
          throw AppError.forbidden("Only the trip's assigned driver, dispatch or an administrator may upload evidence", 'NOT_TRIP_DRIVER');
        }
        return insertSlot(tx, actor, {
          purpose,
          mime_type: input.mime_type,
          size_bytes: input.size_bytes,
          filename: input.filename,
          owner_type: 'trip',
          owner_id: trip.id,
          trip_id: trip.id,
          stage: input.stage,
          proof_type: input.proof_type,
          territory_id: trip.territory_id,
        });
      });
    },

    async createGenericSlot(actor: Actor, input: GenericSlotInput) {
      if (EVIDENCE_PURPOSES.includes(input.purpose)) {
        throw AppError.unprocessable('Evidence is uploaded through POST /storage/evidence/uploads', 'USE_EVIDENCE_UPLOADS');
      }
      if ((input.owner_type === undefined) !== (input.owner_id === undefined)) {
        throw AppError.badRequest('owner_type and owner_id go together', [
          { field: input.owner_type ? 'owner_id' : 'owner_type', message: 'required with the other' },
        ]);
      }
      checkDeclared(input.purpose, input.mime_type, input.size_bytes);
      return db.withTenant(actor, (tx) =>
        insertSlot(tx, actor, {
          purpose: input.purpose,
          mime_type: input.mime_type,
          size_bytes: input.size_bytes,
          filename: input.filename,
          owner_type: input.owner_type ?? null,
          owner_id: input.owner_id ?? null,
          trip_id: null,
          stage: null,
          proof_type: null,
          territory_id: null,
        }),
      );
    },

    /**
     * PUT of the binary: claim the slot, stream through the verifier into the driver (no transaction
     * is held while bytes flow), then record the object and consume the slot in one transaction.
     * On any failure the partial file is removed, no object row exists and the slot is open again.
     */
    async upload(actor: Actor, r: UploadRequest): Promise<StoredObject> {
      const slot = await claimSlot(actor, r);
      const verifier = new UploadVerifier(slot.size_bytes, slot.mime_type);
      const onClientError = (err: Error) =>
        verifier.destroy(verifier.failure ?? new AppError(400, 'UPLOAD_ABORTED', `The upload was interrupted: ${err.message}`));
      const onAborted = () => onClientError(new Error('client aborted'));
      r.body.once('error', onClientError);
      r.body.once('aborted', onAborted);
      // Stop reading the request at the first refusal; the rest of the body is discarded by the HTTP server.
      verifier.once('error', () => r.body.unpipe(verifier));
      r.body.pipe(verifier);
      try {
        try {
          await primary.put(slot.object_id, verifier, slot.size_bytes, slot.mime_type);
        } catch (err) {
          throw verifier.failure ?? err;
        }
        const sha256 = verifier.digest();
        try {
          return await db.withTenant(actor, async (tx) => {
            // Consume the slot and record the object in one statement: no object without a consumed slot.
            const o = await repo.completeUpload(tx, slot.id, {
              organization_id: actor.organizationId,
              id: slot.object_id,
              purpose: slot.purpose,
              mime_type: slot.mime_type,
              size_bytes: slot.size_bytes,
              sha256,
              filename: slot.filename,
              driver: primary.name,
              owner_type: slot.owner_type,
              owner_id: slot.owner_id,
              trip_id: slot.trip_id,
              stage: slot.stage,
              proof_type: slot.proof_type,
              territory_id: slot.territory_id,
              created_by_user_id: actor.userId,
            });
            if (!o) throw new AppError(410, 'UPLOAD_EXPIRED', 'The upload slot expired during the upload; request a new one');
            return o;
          });
        } catch (err) {
          await primary.delete(slot.object_id).catch(() => undefined);
          throw err;
        }
      } catch (err) {
        await releaseSlot(actor, slot.id).catch(() => undefined);
        throw err;
      } finally {
        r.body.off('error', onClientError);
        r.body.off('aborted', onAborted);
      }
    },

    /** The object if this caller may read it; anything else (missing, other organization, not allowed) is 404. */
    async objectForReader(actor: Actor, objectId: string): Promise<StoredObject> {
      return db.withTenant(actor, async (tx) => {
        const o = await repo.findObject(tx, objectId);
        if (!o || !(await canRead(tx, actor, o))) throw AppError.notFound('Object');
        return o;
      });
    },

    async openContent(o: StoredObject, range?: ByteRange): Promise<Readable> {
      try {
        return await driverOf(o).get(o.id, range);
      } catch (err) {
        const e = err as { code?: string; name?: string; $metadata?: { httpStatusCode?: number } };
        // Recorded but not in the store (a lost file, or another instance's local disk): 404, not 500.
        if (e.code === 'ENOENT' || e.name === 'NoSuchKey' || e.$metadata?.httpStatusCode === 404) {
          throw new AppError(404, 'OBJECT_CONTENT_MISSING', 'The object is recorded but its content is missing from the store');
        }
        throw err;
      }
    },

    /** ObjectLinker: may `actor` make a record point at this object? Refusals are 422 with a precise code. */
    async assertLinkable(tx: Tx, actor: Actor, objectId: string, purposes: readonly StoragePurpose[], opts: LinkTarget = {}) {
      const o = await repo.findObject(tx, objectId, actor.organizationId);
      if (!o) throw AppError.unprocessable('The storage object does not exist', 'STORAGE_OBJECT_NOT_FOUND');
      if (!purposes.includes(o.purpose)) {
        throw AppError.unprocessable(
          `The storage object has purpose '${o.purpose}'; expected ${purposes.join(' or ')}`,
          'STORAGE_OBJECT_WRONG_PURPOSE',
        );
      }
      if (opts.tripId !== undefined && o.trip_id !== opts.tripId)
        throw AppError.unprocessable('The storage object is evidence of another trip', 'STORAGE_OBJECT_WRONG_TRIP');
      if (opts.stage !== undefined && o.stage !== opts.stage)
        throw AppError.unprocessable(`The storage object is evidence of another stage ('${o.stage}')`, 'STORAGE_OBJECT_WRONG_STAGE');
      if (opts.proofType !== undefined && o.proof_type !== null && o.proof_type !== opts.proofType) {
        throw AppError.unprocessable(
          `The storage object was uploaded as a '${o.proof_type}', not a '${opts.proofType}'`,
          'STORAGE_OBJECT_WRONG_TYPE',
        );
      }
      if (!isStaff(actor) && o.created_by_user_id !== actor.userId) {
        throw AppError.unprocessable('The storage object was uploaded by someone else', 'STORAGE_OBJECT_NOT_OWNED');
      }
    },

    /** Deletes expired unused slots (and partial files). `uploading` slots get an hour of grace for slow uploads. */
    async sweepExpiredSlots(limit = 200): Promise<number> {
      const objectIds = await db.withSystem((tx) => repo.deleteExpiredSlots(tx, limit));
      for (const id of objectIds) await primary.delete(id).catch(() => undefined);
      return objectIds.length;
    },
  } satisfies ObjectLinker & Record<string, unknown>;
}

export type StorageService = ReturnType<typeof createStorageService>;

export function slotJanitor(svc: StorageService): Worker {
  return { name: 'storage-slot-janitor', intervalMs: 60_000, tick: () => svc.sweepExpiredSlots() };
}
