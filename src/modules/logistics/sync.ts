import type { LogisticsContext } from './index.js';
import { lastPosition, withSyncXid } from '../mobile/index.js';
import { tripOut } from './model.js';
import { driverTripsInWindow } from './repo/trips.js';

/**
 * Offline sync entity `trips` (GET /mobile/sync/pull) for drivers: the trips assigned to the caller that changed
 * in the pull's window (commit order), in the driver's view (tripOut). Trips are never deleted, so there are no
 * tombstones; a trip reassigned to another driver stops appearing (the `trip.reassigned` event tells the app).
 */
export function registerLogisticsSync(ctx: LogisticsContext) {
  ctx.deps.sync.registerProvider({
    entity: 'trips',
    kinds: ['repartidor'],
    async pull(tx, actor, w) {
      const rows = await driverTripsInWindow(tx, (select) => withSyncXid(select, 't'), actor.userId, w.clause('t', 2));
      return { changed: rows.map((t) => tripOut(t, actor)), deleted: [], last: lastPosition(rows), read: rows.length };
    },
  });
}
