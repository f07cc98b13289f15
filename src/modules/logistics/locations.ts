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
const MAX_FUTURE_MS = 5 * 60_000;

export function createLocationIngest(core: TripCore) {
  /**
   * Stores GPS points of a driver, idempotent on (driver, client_point_id) in SQL (`ON CONFLICT DO NOTHING`,
   * so concurrent retries store each point once). Points may arrive out of order: the driver's last
   * position only moves to a point newer (by device time) than the one it has. For each active trip of
   * the driver: one trip.location_updated event, and trip.geofence_entered once per trip and stop.
   */
  async function ingest(tx: Tx, actor: Actor, driver: DriverRow, points: GpsPointIn[]) {
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
    const { rows: stored } = await tx.query<{ client_point_id: string; lon: number; lat: number; recorded_at: Date }>(
      `INSERT INTO driver_location (organization_id, driver_id, client_point_id, location, recorded_at, accuracy_m, speed_mps, heading)
       SELECT $1, $2, u.id, point(u.lon, u.lat), u.at, u.acc, u.spd, u.hdg
         FROM unnest($3::text[], $4::float8[], $5::float8[], $6::timestamptz[], $7::float8[], $8::float8[], $9::float8[]) AS u(id, lon, lat, at, acc, spd, hdg)
       ON CONFLICT DO NOTHING
       RETURNING client_point_id, (location)[0] AS lon, (location)[1] AS lat, recorded_at`,
      [driver.organization_id, driver.id, cols.ids, cols.lons, cols.lats, cols.at, cols.acc, cols.spd, cols.hdg],
    );
    const geofence: { trip_id: string; stop: string }[] = [];
    let latest = stored[0];
    for (const p of stored) if (new Date(p.recorded_at) > new Date(latest.recorded_at)) latest = p;
    if (stored.length > 0) {
      const { rows: trips } = await tx.query<TripRow>(`${TRIP_SELECT} WHERE t.driver_id = $1 AND t.status IN ('assigned', 'accepted', 'picked_up', 'in_transit')`, [driver.id]);
      const settings = trips.length ? await getSettings(tx, driver.organization_id) : null;
      for (const t of trips) {
        const stop = t.status === 'assigned' || t.status === 'accepted' ? 'pickup' : 'dropoff';
        const target = stop === 'pickup' ? { lon: t.pickup_lon, lat: t.pickup_lat } : { lon: t.dropoff_lon, lat: t.dropoff_lat };
        let best: { d: number; at: Date } | null = null;
        for (const p of stored) {
          const d = haversineMeters({ lon: Number(p.lon), lat: Number(p.lat) }, target);
          if (!best || d < best.d) best = { d, at: new Date(p.recorded_at) };
        }
        await core.emit(tx, actor, 'trip.location_updated', t, {
          location: toGeoPoint({ lon: Number(latest.lon), lat: Number(latest.lat) }),
          recorded_at: new Date(latest.recorded_at).toISOString(),
          points: stored.length,
        });
        if (best && best.d <= settings!.geofence_radius_m) {
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
    // Last: the driver row (lock order trip → driver, the same as assignment).
    const { rows: pos } = await tx.query<{ lon: number | null; lat: number | null; last_location_at: Date | null }>(
      `UPDATE driver SET last_seen_at = now(),
              last_location = CASE WHEN $2::timestamptz IS NOT NULL AND (last_location_at IS NULL OR last_location_at <= $2) THEN point($3, $4) ELSE last_location END,
              last_location_at = CASE WHEN $2::timestamptz IS NOT NULL AND (last_location_at IS NULL OR last_location_at <= $2) THEN $2 ELSE last_location_at END
        WHERE id = $1
        RETURNING (last_location)[0] AS lon, (last_location)[1] AS lat, last_location_at`,
      [driver.id, latest ? new Date(latest.recorded_at).toISOString() : null, latest ? Number(latest.lon) : null, latest ? Number(latest.lat) : null],
    );
    return {
      accepted: stored.length,
      duplicates: points.length - stored.length,
      last_location: toGeoPoint(lonLatOf(pos[0].lon, pos[0].lat)),
      last_location_at: pos[0].last_location_at,
      geofence_entries: geofence,
    };
  }

  /** One position (driver app or dispatch): a batch of one; without client_point_id the server names it. */
  async function single(tx: Tx, actor: Actor, driver: DriverRow, body: Omit<GpsPointIn, 'client_point_id' | 'recorded_at'> & { client_point_id?: string; recorded_at?: string }) {
    return ingest(tx, actor, driver, [{ ...body, client_point_id: body.client_point_id ?? `srv-${newId()}`, recorded_at: body.recorded_at ?? new Date().toISOString() }]);
  }

  return { ingest, single };
}

export type LocationIngest = ReturnType<typeof createLocationIngest>;
