import type { Tx } from '../../../platform/db/index.js';
import { HAVERSINE_SQL } from '../../../platform/geo.js';

export interface SpeedSampleRow {
  territory_id: string | null;
  picked_up_at: Date;
  speed_mps: number;
}

/**
 * The organization's completed trips since `since` as speed samples: straight-line pickup→dropoff metres over the seconds
 * from pickup to completion (legs under a minute are left out), newest first, at most `limit`.
 */
export async function speedSamples(tx: Tx, since: Date, limit: number): Promise<SpeedSampleRow[]> {
  const { rows } = await tx.query<SpeedSampleRow>(
    `SELECT territory_id, picked_up_at,
            ${HAVERSINE_SQL('pickup_location', 'dropoff_location')} / extract(epoch FROM completed_at - picked_up_at) AS speed_mps
       FROM trip
      WHERE status = 'completed' AND completed_at >= $1 AND picked_up_at IS NOT NULL AND completed_at > picked_up_at + interval '1 minute'
      ORDER BY completed_at DESC LIMIT $2`,
    [since, limit],
  );
  return rows.map((r) => ({ ...r, speed_mps: Number(r.speed_mps) }));
}

export interface EtaWrite {
  id: string;
  pickup: Date | null;
  dropoff: Date | null;
}

/**
 * Writes the ETAs of trips (one statement) and keeps the delay marker: `delayed_at` is set when the ETA passes the promise
 * plus `graceMin` and it was not set, cleared when the ETA is back under. Returns the trips written and those whose
 * marker was set now (trip.delayed is raised once per crossing: the conditional update decides, also between instances).
 * A trip locked by a change in progress (its delivery being verified, say) is skipped: the GPS batch that calls this
 * holds the driver's row, which that change takes next, so waiting here would deadlock; the next batch writes its ETA.
 */
export async function writeEtas(
  tx: Tx,
  rows: EtaWrite[],
  graceMin: number,
): Promise<{ written: Set<string>; raised: { id: string; late_by_s: number }[] }> {
  if (rows.length === 0) return { written: new Set(), raised: [] };
  const { rows: out } = await tx.query<{ id: string; raised: boolean; late_by_s: number }>(
    `WITH u AS (SELECT * FROM unnest($1::text[], $2::timestamptz[], $3::timestamptz[]) AS u(id, p, d)),
     cur AS (
       SELECT t.id, u.p, u.d, t.delayed_at IS NULL AS was_clear,
              (u.d IS NOT NULL AND t.promised_at IS NOT NULL AND u.d > t.promised_at + make_interval(mins => $4)) AS late,
              (u.d IS NULL OR t.promised_at IS NULL) AS unknown,
              extract(epoch FROM u.d - t.promised_at)::int AS late_by_s
         FROM trip t JOIN u ON u.id = t.id
        ORDER BY t.id FOR NO KEY UPDATE OF t SKIP LOCKED
     ), upd AS (
       UPDATE trip t SET eta_pickup_at = cur.p, eta_dropoff_at = cur.d, eta_updated_at = now(),
              delayed_at = CASE WHEN cur.unknown THEN t.delayed_at WHEN cur.late THEN COALESCE(t.delayed_at, now()) ELSE NULL END
         FROM cur WHERE t.id = cur.id
       RETURNING t.id
     )
     SELECT cur.id, cur.late AND cur.was_clear AS raised, cur.late_by_s FROM cur JOIN upd ON upd.id = cur.id`,
    [rows.map((r) => r.id), rows.map((r) => r.pickup), rows.map((r) => r.dropoff), graceMin],
  );
  return {
    written: new Set(out.map((r) => r.id)),
    raised: out.filter((r) => r.raised).map((r) => ({ id: r.id, late_by_s: r.late_by_s })),
  };
}
