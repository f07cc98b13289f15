import type { Actor } from '../../../platform/auth.js';
import type { Tx } from '../../../platform/db/index.js';
import type { LinkTarget, ObjectLinker } from '../context.js';
import type { StoragePurpose } from '../schemas.js';

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
