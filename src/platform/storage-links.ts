import { AppError } from './errors.js';
import type { AppContext } from './context.js';
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

/** Implemented by the storage module: may this record point at that stored object? */
export interface ObjectLinker {
  assertLinkable(tx: Tx, actor: Actor, objectId: string, purposes: readonly StoragePurpose[], opts?: { tripId?: string; stage?: string }): Promise<void>;
}

declare module './context.js' {
  interface ServiceRegistry {
    storage?: ObjectLinker;
  }
}

/** Refuses (422) a link to an object of another organization, another purpose or another trip. */
export async function assertObjectLink(
  ctx: AppContext,
  tx: Tx,
  actor: Actor,
  objectId: string,
  purposes: readonly StoragePurpose[],
  opts?: { tripId?: string; stage?: string },
): Promise<void> {
  if (!ctx.services.storage) throw AppError.unprocessable('Private storage is not available', 'STORAGE_UNAVAILABLE');
  await ctx.services.storage.assertLinkable(tx, actor, objectId, purposes, opts);
}
