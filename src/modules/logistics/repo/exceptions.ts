import type { Tx } from '../../../platform/db/index.js';
import { scopeSql, type TerritoryScope } from '../../../platform/scope.js';
import { driverScopeSql, LOCATION_STALE_SQL } from './drivers.js';

export const EXCEPTION_KINDS = ['failed', 'returning', 'late', 'stale_gps', 'rejected_again', 'pin_locked'] as const;
export type ExceptionKind = (typeof EXCEPTION_KINDS)[number];

/** A failed (closed) delivery stays listed this long after it failed. */
export const FAILED_LISTED_H = 24;

export interface ExceptionRow {
  /** Sort key and cursor: zero-padded epoch ms of `since`, kind, entity id (newest first). */
  id: string;
  kind: ExceptionKind;
  trip_id: string | null;
  driver_id: string | null;
  since: Date;
  detail: Record<string, unknown>;
}

const ACTIVE = `('pending', 'assigned', 'accepted', 'picked_up', 'in_transit')`;
const key = (since: string, code: string, entity: string) =>
  `lpad((extract(epoch FROM ${since}) * 1000)::bigint::text, 13, '0') || '_${code}_' || ${entity}`;

/**
 * The open exceptions of the organization within the scope ($1: territories or null), $2: rejections alert threshold,
 * $3: wrong PIN attempts that lock. One row per (kind, trip or driver).
 */
const OPEN_SQL = `
  SELECT ${key('t.failed_at', 'f', 't.id')} AS id, 'failed' AS kind, t.id AS trip_id, t.driver_id, t.failed_at AS since,
         jsonb_build_object('failure_reason', t.failure_reason, 'failure_note', t.failure_note) AS detail
    FROM trip t WHERE t.status = 'failed' AND t.failed_at > now() - interval '${FAILED_LISTED_H} hours' AND ${scopeSql('t.territory_id', 1)}
  UNION ALL
  SELECT ${key('COALESCE(t.failed_at, t.updated_at)', 'r', 't.id')}, 'returning', t.id, t.driver_id, COALESCE(t.failed_at, t.updated_at),
         jsonb_build_object('failure_reason', t.failure_reason, 'failure_note', t.failure_note)
    FROM trip t WHERE t.status = 'returning' AND ${scopeSql('t.territory_id', 1)}
  UNION ALL
  SELECT ${key('t.delayed_at', 'l', 't.id')}, 'late', t.id, t.driver_id, t.delayed_at,
         jsonb_build_object('promised_at', t.promised_at, 'eta_dropoff_at', t.eta_dropoff_at,
                            'late_by_s', extract(epoch FROM GREATEST(COALESCE(t.eta_dropoff_at, now()), now()) - t.promised_at)::int)
    FROM trip t WHERE t.status IN ${ACTIVE} AND t.delayed_at IS NOT NULL AND ${scopeSql('t.territory_id', 1)}
  UNION ALL
  SELECT ${key('r.last_at', 'j', 't.id')}, 'rejected_again', t.id, t.driver_id, r.last_at,
         jsonb_build_object('rejections', r.n, 'last_reason', r.last_reason)
    FROM trip t
    JOIN LATERAL (SELECT count(*)::int AS n, max(x.created_at) AS last_at,
                         (SELECT y.reason FROM trip_rejection y WHERE y.organization_id = t.organization_id AND y.trip_id = t.id AND y.kind = 'rejected' ORDER BY y.created_at DESC LIMIT 1) AS last_reason
                    FROM trip_rejection x WHERE x.organization_id = t.organization_id AND x.trip_id = t.id AND x.kind = 'rejected') r ON r.n >= $2
   WHERE t.status IN ('pending', 'assigned') AND ${scopeSql('t.territory_id', 1)}
  UNION ALL
  SELECT ${key('t.updated_at', 'p', 't.id')}, 'pin_locked', t.id, t.driver_id, t.updated_at,
         jsonb_build_object('stage', CASE WHEN t.pickup_pin_attempts >= $3 AND t.delivery_pin_attempts >= $3 THEN 'both' WHEN t.pickup_pin_attempts >= $3 THEN 'pickup' ELSE 'delivery' END)
    FROM trip t WHERE t.status IN ('assigned', 'accepted', 'picked_up', 'in_transit', 'returning')
     AND (t.pickup_pin_attempts >= $3 OR t.delivery_pin_attempts >= $3) AND ${scopeSql('t.territory_id', 1)}
  UNION ALL
  SELECT ${key('COALESCE(d.last_location_at, d.updated_at)', 's', 'd.id')}, 'stale_gps', NULL, d.id, COALESCE(d.last_location_at, d.updated_at),
         jsonb_build_object('last_location_at', d.last_location_at, 'available', d.available, 'active_trips', d.active_trips)
    FROM driver d WHERE ${LOCATION_STALE_SQL('d')} AND ${driverScopeSql(1)}`;

/** A page of open exceptions (newest first), optionally of one kind, after the cursor key. */
export async function openExceptions(
  tx: Tx,
  q: { scope: TerritoryScope; threshold: number; pinMax: number; kind: ExceptionKind | null; after: string | null; limit: number },
): Promise<ExceptionRow[]> {
  const { rows } = await tx.query<ExceptionRow>(
    `SELECT * FROM (${OPEN_SQL}) x WHERE ($4::text IS NULL OR x.kind = $4) AND ($5::text IS NULL OR x.id < $5) ORDER BY x.id DESC LIMIT $6`,
    [q.scope, q.threshold, q.pinMax, q.kind, q.after, q.limit],
  );
  return rows;
}

/** Open exceptions per kind in the scope. */
export async function exceptionCounts(
  tx: Tx,
  q: { scope: TerritoryScope; threshold: number; pinMax: number },
): Promise<Record<ExceptionKind, number>> {
  const { rows } = await tx.query<{ kind: ExceptionKind; n: number }>(
    `SELECT kind, count(*)::int AS n FROM (${OPEN_SQL}) x GROUP BY kind`,
    [q.scope, q.threshold, q.pinMax],
  );
  const out = Object.fromEntries(EXCEPTION_KINDS.map((k) => [k, 0])) as Record<ExceptionKind, number>;
  for (const r of rows) out[r.kind] = r.n;
  return out;
}

/** Drivers who rejected the trip so far (expired offers have their own limit, acceptance_max_offers). */
export async function rejectionCount(tx: Tx, tripId: string): Promise<number> {
  const { rows } = await tx.query<{ n: number }>("SELECT count(*)::int AS n FROM trip_rejection WHERE trip_id = $1 AND kind = 'rejected'", [
    tripId,
  ]);
  return rows[0]!.n;
}

/** Across organizations (system transaction): on-duty drivers gone stale without an alert yet. */
export async function dueStaleDrivers(tx: Tx, batch: number): Promise<{ organization_id: string; id: string }[]> {
  const { rows } = await tx.query<{ organization_id: string; id: string }>(
    `SELECT d.organization_id, d.id FROM driver d WHERE d.location_stale_at IS NULL AND ${LOCATION_STALE_SQL('d')} ORDER BY d.last_location_at NULLS FIRST LIMIT $1`,
    [batch],
  );
  return rows;
}

/** Claims the stale alert of a driver (the marker decides between instances); false when he is not stale or already alerted. */
export async function claimStaleDriver(tx: Tx, driverId: string): Promise<boolean> {
  const r = await tx.query(
    `UPDATE driver d SET location_stale_at = now() WHERE d.id = $1 AND d.location_stale_at IS NULL AND ${LOCATION_STALE_SQL('d')} RETURNING d.id`,
    [driverId],
  );
  return r.rowCount > 0;
}

/** Across organizations: unfinished trips whose promise plus the grace has passed, not yet marked late. */
export async function dueOverdueTrips(tx: Tx, now: Date, batch: number): Promise<{ organization_id: string; id: string }[]> {
  const { rows } = await tx.query<{ organization_id: string; id: string }>(
    `SELECT t.organization_id, t.id FROM trip t JOIN logistics_settings s ON s.organization_id = t.organization_id
      WHERE t.status IN ${ACTIVE} AND t.delayed_at IS NULL AND t.promised_at IS NOT NULL AND t.promised_at + make_interval(mins => s.delay_grace_min) < $1
      ORDER BY t.promised_at LIMIT $2`,
    [now, batch],
  );
  return rows;
}

/** Claims the delay alert of an overdue trip (conditional update); false when it is not overdue or already marked. */
export async function claimOverdueTrip(tx: Tx, tripId: string, now: Date): Promise<boolean> {
  const r = await tx.query(
    `UPDATE trip t SET delayed_at = $2 FROM logistics_settings s
      WHERE t.id = $1 AND s.organization_id = t.organization_id AND t.status IN ${ACTIVE} AND t.delayed_at IS NULL
        AND t.promised_at + make_interval(mins => s.delay_grace_min) < $2 RETURNING t.id`,
    [tripId, now],
  );
  return r.rowCount > 0;
}
