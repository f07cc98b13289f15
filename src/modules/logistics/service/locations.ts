import type { Actor } from '../../../platform/auth.js';
import type { Tx } from '../../../platform/db/index.js';
import { AppError } from '../../../platform/errors.js';
import { haversineMeters, parsePoint, toGeoPoint, type GeoPoint } from '../../../platform/geo.js';
import { newId } from '../../../platform/ids.js';
import { lonLatOf } from './mappers.js';
import {
  insertGeofenceEntry,
  mergeLateIntoTracks,
  moveDriver,
  moveDriverAndCommit,
  storePoints,
  type DriverRef,
  type MovedDriver,
} from '../repo/locations.js';
import { noDriverProfile } from './drivers.js';
import type { TripCore } from './trips.js';
import type { Eta } from './eta.js';

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

export function createLocationIngest(core: TripCore, eta: Eta) {
  /**
   * Stores GPS points of a driver, idempotent on (driver, client_point_id) in SQL (`ON CONFLICT DO NOTHING`,
   * so concurrent retries store each point once). Points may arrive out of order: the driver's last
   * position only moves to a point newer (by device time) than the one it has. For each active trip of
   * the driver: one trip.location_updated event, and trip.geofence_entered once per trip and stop; when the position
   * moved, the ETAs of his active trips are recomputed once for the batch (and trip.delayed raised on a crossing).
   * The driver's row is written by the last statements (his position, then the late-point merge), so the row lock that
   * a capacity claim on him waits for is held from there to the COMMIT only; a driver without trips under way has it
   * written by the first statement, after which only the merge may come.
   *
   * `gpsOnly`: the caller's transaction holds nothing but this ingest (a GPS request), so it commits asynchronously:
   * it does not wait for the WAL flush behind the driver's row. A PostgreSQL crash may lose the points acknowledged in
   * the last moments before it (docs/OPERATIONS.md); money and trip transitions keep synchronous commits.
   * `commits`: nothing follows the ingest in the caller's transaction, so its last statement carries the COMMIT
   * (`Tx.queryAndCommit`): the driver's row is released by the server right after it is written.
   */
  async function ingest(
    tx: Tx,
    actor: Actor,
    driverRef: DriverRef,
    points: GpsPointIn[],
    { gpsOnly = false, commits = false }: { gpsOnly?: boolean; commits?: boolean } = {},
  ) {
    if (points.length > MAX_BATCH)
      throw AppError.badRequest(`At most ${MAX_BATCH} points per batch`, [{ field: 'points', message: 'too many' }]);
    const now = Date.now();
    const cols = {
      ids: [] as string[],
      lons: [] as number[],
      lats: [] as number[],
      at: [] as string[],
      acc: [] as (number | null)[],
      spd: [] as (number | null)[],
      hdg: [] as (number | null)[],
    };
    points.forEach((p, i) => {
      const ll = parsePoint(p.location, `points[${i}].location`);
      const at = Date.parse(p.recorded_at);
      if (!Number.isFinite(at) || at > now + MAX_FUTURE_MS) {
        throw AppError.badRequest('recorded_at must be a past ISO 8601 timestamp', [
          { field: `points[${i}].recorded_at`, message: 'invalid or in the future' },
        ]);
      }
      cols.ids.push(p.client_point_id);
      cols.lons.push(ll.lon);
      cols.lats.push(ll.lat);
      cols.at.push(new Date(at).toISOString());
      cols.acc.push(p.accuracy_m ?? null);
      cols.spd.push(p.speed_mps ?? null);
      cols.hdg.push(p.heading ?? null);
    });
    // One statement: find the driver, store the new points and read (unlocked) his load, whether they move his position,
    // and his trips under way; the points and trips come back only when a point was new and he has active trips.
    const r = await storePoints(tx, driverRef, cols, gpsOnly);
    if (!r) throw 'userId' in driverRef ? noDriverProfile() : AppError.notFound('Driver');
    const driver = { id: r.driver_id, organization_id: r.organization_id };
    const geofence: { trip_id: string; stop: string }[] = [];
    if (r.accepted > 0 && r.active_trips > 0) {
      const stored = (r.points ?? []).map(([lon, lat, at]) => ({ lon: Number(lon), lat: Number(lat), at: new Date(at) }));
      const moved = r.moves;
      const latest = {
        location: toGeoPoint({ lon: Number(r.latest_lon), lat: Number(r.latest_lat) }),
        recorded_at: new Date(r.latest_at!).toISOString(),
      };
      const trips = r.trips;
      const settings = await core.settings(tx, driver.organization_id);
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
          const entered = await insertGeofenceEntry(tx, {
            organizationId: t.organization_id,
            tripId: t.id,
            stop,
            driverId: driver.id,
            distanceM: best.d,
            enteredAt: best.at,
          });
          if (entered) {
            geofence.push({ trip_id: t.id, stop });
            await core.emit(tx, actor, 'trip.geofence_entered', t, {
              stop,
              distance_m: Math.round(best.d),
              entered_at: best.at.toISOString(),
            });
          }
        }
      }
      if (moved)
        await eta.refreshDriver(tx, actor, driver, { lon: Number(r.latest_lon), lat: Number(r.latest_lat) }, new Date(r.latest_at!), trips);
    }
    // The driver's row last (his contact, his position), unless the first statement wrote it (no trips under way): a
    // capacity claim on him waits for this batch's COMMIT only, not for its events and ETAs.
    const latest = r.latest_at === null ? null : { lon: Number(r.latest_lon), lat: Number(r.latest_lat), at: new Date(r.latest_at) };
    // A batch with nothing new (a resend) has nothing to merge; otherwise points of an ended trip's window join its kept
    // track, when one of them is not after the end of the driver's newest kept track (as his row says once written). After
    // the driver's row, which a trip's end holds while it copies its track (keepTripTrack) and notes its end: a trip that
    // ended meanwhile has its track committed and its end on the row, and a trip ending after waits for this batch's points.
    // When the ingest ends the transaction and the row is written here, the merge goes behind it with the COMMIT, in
    // the same exchange, and decides on the row itself.
    const late = r.accepted > 0 ? cols : null;
    if (!r.moved && commits) {
      const pos = await moveDriverAndCommit(tx, { organizationId: driver.organization_id, driverId: driver.id, latest, late });
      return answer(r.accepted, pos);
    }
    const pos = r.moved ?? (await moveDriver(tx, driver.id, latest));
    const oldest = Math.min(...cols.at.map((at) => Date.parse(at)));
    if (late && pos.last_track_ended_at && new Date(pos.last_track_ended_at).getTime() >= oldest)
      await mergeLateIntoTracks(tx, driver.organization_id, driver.id, late, { commit: commits });
    return answer(r.accepted, pos);

    function answer(accepted: number, pos: MovedDriver) {
      return {
        accepted,
        duplicates: points.length - accepted,
        last_location: toGeoPoint(lonLatOf(pos.lon, pos.lat)),
        last_location_at: pos.last_location_at,
        geofence_entries: geofence,
      };
    }
  }

  /** One position (driver app or dispatch): a batch of one; without client_point_id the server names it. */
  async function single(
    tx: Tx,
    actor: Actor,
    driver: DriverRef,
    body: Omit<GpsPointIn, 'client_point_id' | 'recorded_at'> & { client_point_id?: string; recorded_at?: string },
    opts: { gpsOnly?: boolean; commits?: boolean } = {},
  ) {
    return ingest(
      tx,
      actor,
      driver,
      [{ ...body, client_point_id: body.client_point_id ?? `srv-${newId()}`, recorded_at: body.recorded_at ?? new Date().toISOString() }],
      opts,
    );
  }

  return { ingest, single };
}

export type LocationIngest = ReturnType<typeof createLocationIngest>;
