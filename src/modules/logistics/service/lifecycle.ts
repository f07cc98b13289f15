import type { Actor } from '../../../platform/auth.js';
import type { Tx } from '../../../platform/db/index.js';
import { lockOpenTripsOfDriver } from '../repo/trips.js';
import type { TripCore } from './trips.js';

/**
 * A suspended driver keeps no work he has not started: his trips still `assigned` or `accepted` go back
 * to `pending` (trip.unassigned, capacity released). Trips already picked up stay with him, so goods in
 * his hands still reach the customer.
 */
export async function releaseOpenTrips(
  tx: Tx,
  actor: Actor,
  svc: { core: Pick<TripCore, 'unassign'> },
  driverId: string,
  reason: string,
): Promise<number> {
  const rows = await lockOpenTripsOfDriver(tx, driverId);
  for (const t of rows) await svc.core.unassign(tx, actor, t, reason, 'trip.unassigned');
  return rows.length;
}
