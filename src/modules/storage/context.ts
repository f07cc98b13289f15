import type { Actor } from '../../platform/auth.js';
import type { ModuleContext } from '../../platform/context.js';
import type { Tx } from '../../platform/db/index.js';
import type { StoragePurpose } from './schemas.js';

/** Who takes part in a trip: decides who may upload and read a trip's evidence. */
export interface TripParticipants {
  id: string;
  status: string;
  territory_id: string | null;
  driver_id: string | null;
  driver_user_id: string | null;
  merchant_id: string | null;
  merchant_user_id: string | null;
  customer_user_id: string | null;
}

/** The trips storage asks about (provided by logistics, which is built after storage: a forward reference). */
export interface TripDirectory {
  tripParticipants(tx: Tx, tripId: string): Promise<TripParticipants | null>;
}

/** What storage uses of other modules, given by the composition root. */
export type StorageContext = ModuleContext<{ trips: TripDirectory }>;

/** What a link must match: evidence of this trip, stage and kind of proof (the upload slot's `proof_type`). */
export interface LinkTarget {
  tripId?: string;
  stage?: string;
  proofType?: string;
}

/** What storage offers the modules that link stored objects: may this record point at that stored object? */
export interface ObjectLinker {
  assertLinkable(tx: Tx, actor: Actor, objectId: string, purposes: readonly StoragePurpose[], opts?: LinkTarget): Promise<void>;
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
