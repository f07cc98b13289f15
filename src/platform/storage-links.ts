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

declare module './context.js' {
  interface ServiceRegistry {
    storage?: ObjectLinker;
  }
}

/** Refuses (422) a link to an object of another organization, another purpose, another trip or stage, or another kind of proof. */
export async function assertObjectLink(
  ctx: AppContext,
  tx: Tx,
  actor: Actor,
  objectId: string,
  purposes: readonly StoragePurpose[],
  opts?: LinkTarget,
): Promise<void> {
  if (!ctx.services.storage) throw AppError.unprocessable('Private storage is not available', 'STORAGE_UNAVAILABLE');
  await ctx.services.storage.assertLinkable(tx, actor, objectId, purposes, opts);
}

/**
 * Extra readers of stored objects, decided by the module that links them (storage does not know orders):
 * e.g. money lets the merchant of a payment review read its proof. Returns true to allow.
 */
export type ObjectReadGrant = (tx: Tx, actor: Actor, object: { id: string; purpose: StoragePurpose; created_by_user_id: string | null }) => Promise<boolean>;

const grants = new WeakMap<AppContext, ObjectReadGrant[]>();

export function registerObjectReadGrant(ctx: AppContext, grant: ObjectReadGrant): void {
  const list = grants.get(ctx) ?? [];
  list.push(grant);
  grants.set(ctx, list);
}

export async function objectReadGranted(ctx: AppContext, tx: Tx, actor: Actor, object: Parameters<ObjectReadGrant>[2]): Promise<boolean> {
  for (const grant of grants.get(ctx) ?? []) if (await grant(tx, actor, object)) return true;
  return false;
}
