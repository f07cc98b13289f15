import type { LogisticsContext } from '../context.js';
import { tripOut } from './mappers.js';
import { driverTripsInWindow } from '../repo/trips.js';

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

/** `SELECT a, b FROM t x ...` → `SELECT x.changed_xid::text AS sync_xid, a, b FROM t x ...` (the row's sync position). */
function withSyncXid(select: string, alias: string): string {
  return select.replace(/^\s*SELECT\s/i, `SELECT ${alias}.changed_xid::text AS sync_xid, `);
}

/** The sync position of the last of `rows` (read with `withSyncXid`). */
function lastPosition(rows: { sync_xid?: string; id: string }[]): [xid: string, id: string] | null {
  const r = rows[rows.length - 1];
  return r ? [String(r.sync_xid), r.id] : null;
}
