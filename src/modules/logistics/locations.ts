import type { Actor } from '../../platform/auth.js';
import type { Tx } from '../../platform/db/index.js';
import { AppError } from '../../platform/errors.js';
import { haversineMeters, parsePoint, toGeoPoint, type GeoPoint } from '../../platform/geo.js';
import { newId } from '../../platform/ids.js';
import { lonLatOf, TRIP_SELECT, type DriverRow, type TripRow } from './model.js';
import { getSettings } from './territories.js';
import type { TripCore } from './trips-service.js';

export interface GpsPointIn {
  client_point_id: string;
  location: GeoPoint;
  recorded_at: string;
  accuracy_m?: number;
  speed_mps?: number;
  heading?: number;
}

export const MAX_BATCH = 500;

interface IngestRow {
  accepted: number;
  active_trips: number;
  lon: number | null;
  lat: number | null;
  last_location_at: Date | null;
  latest_lon: number | null;
  latest_lat: number | null;
  latest_at: Date | null;
  points: [number, number, string][] | null;
}
const MAX_FUTURE_MS = 5 * 60_000;

export function createLocationIngest(core: TripCore) {
  /**
   * Stores GPS points of a driver, idempotent on (driver, client_point_id) in SQL (`ON CONFLICT DO NOTHING`,
   * so concurrent retries store each point once). Points may arrive out of order: the driver's last
   * position only moves to a point newer (by device time) than the one it has. For each active trip of
   * the driver: one trip.location_updated event, and trip.geofence_entered once per trip and stop.
   */
  async function ingest(tx: Tx, actor: Actor, driver: Pick<DriverRow, 'id' | 'organization_id'>, points: GpsPointIn[]) {
    if (points.length > MAX_BATCH) throw AppError.badRequest(`At most ${MAX_BATCH} points per batch`, [{ field: 'points', message: 'too many' }]);
    const now = Date.now();
    const cols = { ids: [] as string[], lons: [] as number[], lats: [] as number[], at: [] as string[], acc: [] as (number | null)[], spd: [] as (number | null)[], hdg: [] as (number | null)[] };
    points.forEach((p, i) => {
      const ll = parsePoint(p.location, `points[${i}].location`);
      const at = Date.parse(p.recorded_at);
      if (!Number.isFinite(at) || at > now + MAX_FUTURE_MS) {
        throw AppError.badRequest('recorded_at must be a past ISO 8601 timestamp', [{ field: `points[${i}].recorded_at`, message: 'invalid or in the future' }]);
      }
      cols.ids.push(p.client_point_id);
      cols.lons.push(ll.lon);
      cols.lats.push(ll.lat);
      cols.at.push(new Date(at).toISOString());
      cols.acc.push(p.accuracy_m ?? null);
      cols.spd.push(p.speed_mps ?? null);
      cols.hdg.push(p.heading ?? null);
    });
    // One statement: store the new points, move the driver's last position to the newest of them when it
    // is newer than the one he has, and return the points only when the driver has active trips.
    const { rows } = await tx.query<IngestRow>(
      `WITH ins AS (
         INSERT INTO driver_location (organization_id, driver_id, client_point_id, location, recorded_at, accuracy_m, speed_mps, heading)
         SELECT $1, $2, u.id, point(u.lon, u.lat), u.at, u.acc, u.spd, u.hdg
           FROM unnest($3::text[], $4::float8[], $5::float8[], $6::timestamptz[], $7::float8[], $8::float8[], $9::float8[]) AS u(id, lon, lat, at, acc, spd, hdg)
         ON CONFLICT DO NOTHING
         RETURNING location, recorded_at
       ), latest AS (SELECT location, recorded_at FROM ins ORDER BY recorded_at DESC LIMIT 1),
       upd AS (
         UPDATE driver d SET last_seen_at = now(),
                last_location = CASE WHEN l.recorded_at IS NOT NULL AND (d.last_location_at IS NULL OR d.last_location_at <= l.recorded_at) THEN l.location ELSE d.last_location END,
                last_location_at = CASE WHEN l.recorded_at IS NOT NULL AND (d.last_location_at IS NULL OR d.last_location_at <= l.recorded_at) THEN l.recorded_at ELSE d.last_location_at END
           FROM (SELECT 1) one LEFT JOIN latest l ON true
          WHERE d.id = $2
          RETURNING d.active_trips, (d.last_location)[0] AS lon, (d.last_location)[1] AS lat, d.last_location_at
       )
       SELECT (SELECT count(*) FROM ins)::int AS accepted, upd.*,
              (SELECT (location)[0] FROM latest) AS latest_lon, (SELECT (location)[1] FROM latest) AS latest_lat, (SELECT recorded_at FROM latest) AS latest_at,
              CASE WHEN upd.active_trips > 0 THEN (SELECT json_agg(json_build_array((location)[0], (location)[1], recorded_at)) FROM ins) END AS points
         FROM upd`,
      [driver.organization_id, driver.id, cols.ids, cols.lons, cols.lats, cols.at, cols.acc, cols.spd, cols.hdg],
    );
    const r = rows[0];
    if (!r) throw AppError.notFound('Driver');
    const geofence: { trip_id: string; stop: string }[] = [];
    if (r.accepted > 0 && r.active_trips > 0) {
      const stored = (r.points ?? []).map(([lon, lat, at]) => ({ lon: Number(lon), lat: Number(lat), at: new Date(at) }));
      const moved = r.last_location_at !== null && r.latest_at !== null && new Date(r.last_location_at).getTime() === new Date(r.latest_at).getTime();
      const latest = { location: toGeoPoint({ lon: Number(r.latest_lon), lat: Number(r.latest_lat) }), recorded_at: new Date(r.latest_at!).toISOString() };
      const { rows: trips } = await tx.query<TripRow>(`${TRIP_SELECT} WHERE t.driver_id = $1 AND t.status IN ('assigned', 'accepted', 'picked_up', 'in_transit')`, [driver.id]);
      const settings = await getSettings(tx, driver.organization_id);
      for (const t of trips) {
        const stop = t.status === 'assigned' || t.status === 'accepted' ? 'pickup' : 'dropoff';
        const target = stop === 'pickup' ? { lon: t.pickup_lon, lat: t.pickup_lat } : { lon: t.dropoff_lon, lat: t.dropoff_lat };
        let best: { d: number; at: Date } | null = null;
        for (const p of stored) {
          const d = haversineMeters(p, target);
          if (!best || d < best.d) best = { d, at: p.at };
        }
        // Late points (older than the position the driver already has) go to history only.
        if (moved) await core.emit(tx, actor, 'trip.location_updated', t, { ...latest, points: r.accepted });
        if (best && best.d <= settings.geofence_radius_m) {
          const entered = await tx.query(
            `INSERT INTO trip_geofence (organization_id, trip_id, stop, driver_id, distance_m, entered_at) VALUES ($1, $2, $3, $4, $5, $6)
             ON CONFLICT DO NOTHING RETURNING trip_id`,
            [t.organization_id, t.id, stop, driver.id, best.d, best.at],
          );
          if (entered.rowCount > 0) {
            geofence.push({ trip_id: t.id, stop });
            await core.emit(tx, actor, 'trip.geofence_entered', t, { stop, distance_m: Math.round(best.d), entered_at: best.at.toISOString() });
          }
        }
      }
    }
    return {
      accepted: r.accepted,
      duplicates: points.length - r.accepted,
      last_location: toGeoPoint(lonLatOf(r.lon, r.lat)),
      last_location_at: r.last_location_at,
      geofence_entries: geofence,
    };
  }

  /** One position (driver app or dispatch): a batch of one; without client_point_id the server names it. */
  async function single(tx: Tx, actor: Actor, driver: Pick<DriverRow, 'id' | 'organization_id'>, body: Omit<GpsPointIn, 'client_point_id' | 'recorded_at'> & { client_point_id?: string; recorded_at?: string }) {
    return ingest(tx, actor, driver, [{ ...body, client_point_id: body.client_point_id ?? `srv-${newId()}`, recorded_at: body.recorded_at ?? new Date().toISOString() }]);
  }

  return { ingest, single };
}

export type LocationIngest = ReturnType<typeof createLocationIngest>;
