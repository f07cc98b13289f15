import type { LogisticsContext } from './index.js';
import { lastPosition, withSyncXid } from '../mobile/index.js';
import { TRIP_SELECT, tripOut, type TripRow } from './model.js';

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
      const c = w.clause('t', 2);
      const { rows } = await tx.query<TripRow & { sync_xid: string }>(`${withSyncXid(TRIP_SELECT, 't')} WHERE d.user_id = $1 AND ${c.where} ${c.orderLimit}`, [actor.userId, ...c.params]);
      return { changed: rows.map((t) => tripOut(t, actor)), deleted: [], last: lastPosition(rows), read: rows.length };
    },
  });
}
