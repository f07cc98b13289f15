import type { AppContext } from '../../platform/context.js';
import { syncRegistry } from '../mobile/index.js';
import { TRIP_SELECT, tripOut, type TripRow } from './model.js';

/**
 * Offline sync entity `trips` (GET /mobile/sync/pull) for drivers: the trips assigned to the caller that changed
 * after `since`, oldest change first, in the driver's view (tripOut). Trips are never deleted, so there are no
 * tombstones; a trip reassigned to another driver stops appearing (the `trip.reassigned` event tells the app).
 */
export function registerLogisticsSync(ctx: AppContext) {
  syncRegistry(ctx).registerProvider({
    entity: 'trips',
    kinds: ['repartidor'],
    async pull(tx, actor, { since, limit }) {
      const { rows } = await tx.query<TripRow>(`${TRIP_SELECT} WHERE d.user_id = $1 AND ($2::timestamptz IS NULL OR t.updated_at > $2) ORDER BY t.updated_at, t.id LIMIT $3`, [
        actor.userId,
        since,
        limit,
      ]);
      return { changed: rows.map((t) => tripOut(t, actor)), deleted: [] };
    },
  });
}
