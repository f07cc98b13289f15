import type { Actor } from './auth.js';
import type { Tx } from './db/index.js';

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
export type StoragePurpose = (typeof STORAGE_PURPOSES)[number];

/** What a link must match: evidence of this trip, stage and kind of proof (the upload slot's `proof_type`). */
export interface LinkTarget {
  tripId?: string;
  stage?: string;
  proofType?: string;
}

/** Implemented by the storage module: may this record point at that stored object? */
export interface ObjectLinker {
  assertLinkable(tx: Tx, actor: Actor, objectId: string, purposes: readonly StoragePurpose[], opts?: LinkTarget): Promise<void>;
}

/** Refuses (422) a link to an object of another organization, another purpose, another trip or stage, or another kind of proof. */
export async function assertObjectLink(
  ctx: { deps: { storage: ObjectLinker } },
  tx: Tx,
  actor: Actor,
  objectId: string,
  purposes: readonly StoragePurpose[],
  opts?: LinkTarget,
): Promise<void> {
  await ctx.deps.storage.assertLinkable(tx, actor, objectId, purposes, opts);
}

/**
 * Extra readers of stored objects, decided by the module that links them (storage does not know orders):
 * e.g. money lets the merchant of a payment review read its proof. Returns true to allow. Each module exports
 * its grant; the composition root hands them to storage (`storage.addReadGrant`).
 */
export type ObjectReadGrant = (
  tx: Tx,
  actor: Actor,
  object: { id: string; purpose: StoragePurpose; created_by_user_id: string | null },
) => Promise<boolean>;
