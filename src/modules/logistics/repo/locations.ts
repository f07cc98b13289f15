import { prepared, type Tx } from '../../../platform/db/index.js';
import type { tripGeofence } from '../tables.js';
import type { SnakeRow } from '../../../platform/db/columns.js';
import { TRIP_SELECT, type TripRow } from './trips.js';

/** The columns of a batch of GPS points (same length each). */
export interface PointColumns {
  ids: string[];
  lons: number[];
  lats: number[];
  at: string[];
  acc: (number | null)[];
  spd: (number | null)[];
  hdg: (number | null)[];
}

export interface IngestRow {
  driver_id: string;
  organization_id: string;
  accepted: number;
  active_trips: number;
  /** The newest stored point is newer than the driver's position (as read, unlocked): it is about to become it. */
  moves: boolean;
  latest_lon: number | null;
  latest_lat: number | null;
  latest_at: Date | null;
  points: [number, number, string][] | null;
  /** The driver's trips under way, read with the points when some were new and he has any (else empty). */
  trips: TripRow[];
  /** A driver without trips under way: his row as this statement wrote it (`moveDriver` is not needed); else null. */
  moved: MovedDriver | null;
}

/** The driver whose points a batch stores: by his id (dispatch, a GPS device) or as the calling user (the driver app). */
export type DriverRef = { id: string } | { userId: string };

/**
 * What every GPS batch writes on the driver's row: his contact, and his position moved to the fix (`at`, `location`:
 * SQL expressions, null when the batch stored nothing new) when it is newer than the one he has.
 */
const moveDriverSet = (at: string, location: string) => {
  const newer = `${at} IS NOT NULL AND (d.last_location_at IS NULL OR d.last_location_at <= ${at})`;
  return `last_seen_at = now(),
          last_location = CASE WHEN ${newer} THEN ${location} ELSE d.last_location END,
          last_location_at = CASE WHEN ${newer} THEN ${at} ELSE d.last_location_at END,
          -- A newer fix ends the silence: the next one may raise trip.location_stale again.
          location_stale_at = CASE WHEN ${newer} THEN NULL ELSE d.location_stale_at END`;
};
const MOVED_DRIVER_RETURNING = `(d.last_location)[0] AS lon, (d.last_location)[1] AS lat, d.last_location_at, d.last_track_ended_at`;

/**
 * The first statement of every GPS batch, prepared (parsing and planning it cost about a third of its database time),
 * one per way of naming the driver. It finds the driver (row not locked), stores the points, and returns the batch's
 * figures (columns `gps_*`) joined to his trips under way, read only when a point was new and his row counts active
 * trips: one row per trip, or one row without a trip. A driver without trips under way (most of a city's at any time)
 * has his row written here too (`gps_moved`), as `moveDriver` would: nothing comes between it and the COMMIT, so the
 * row lock that a capacity claim on him waits for is held no longer. The claim is checked again on the locked row: a
 * driver given a trip meanwhile is left to `moveDriver`, after his events and ETAs.
 */
const storePointsSql = (driverWhere: string) =>
  prepared(
    `WITH drv AS (
       SELECT d.id, d.organization_id, d.active_trips, d.last_location_at FROM driver d WHERE ${driverWhere}
     ), ins AS (
       INSERT INTO driver_location (organization_id, driver_id, client_point_id, location, recorded_at, accuracy_m, speed_mps, heading)
       SELECT drv.organization_id, drv.id, u.id, point(u.lon, u.lat), u.at, u.acc, u.spd, u.hdg
         FROM drv, unnest($2::text[], $3::float8[], $4::float8[], $5::timestamptz[], $6::float8[], $7::float8[], $8::float8[]) AS u(id, lon, lat, at, acc, spd, hdg)
       ON CONFLICT DO NOTHING
       RETURNING location, recorded_at
     ), latest AS (SELECT location, recorded_at FROM ins ORDER BY recorded_at DESC LIMIT 1),
     idle AS (
       UPDATE driver d SET ${moveDriverSet('l.recorded_at', 'l.location')}
         FROM drv LEFT JOIN latest l ON true
        WHERE d.id = drv.id AND drv.active_trips = 0 AND d.active_trips = 0
        RETURNING ${MOVED_DRIVER_RETURNING}
     ), batch AS (
       SELECT drv.id AS gps_driver_id, drv.organization_id AS gps_organization_id,
              (SELECT count(*) FROM ins)::int AS gps_accepted, drv.active_trips AS gps_active_trips,
              EXISTS (SELECT 1 FROM latest l WHERE drv.last_location_at IS NULL OR drv.last_location_at <= l.recorded_at) AS gps_moves,
              (SELECT (location)[0] FROM latest) AS gps_latest_lon, (SELECT (location)[1] FROM latest) AS gps_latest_lat,
              (SELECT recorded_at FROM latest) AS gps_latest_at,
              CASE WHEN drv.active_trips > 0 THEN (SELECT json_agg(json_build_array((location)[0], (location)[1], recorded_at)) FROM ins) END AS gps_points,
              EXISTS (SELECT 1 FROM idle) AS gps_moved, (SELECT lon FROM idle) AS gps_moved_lon, (SELECT lat FROM idle) AS gps_moved_lat,
              (SELECT last_location_at FROM idle) AS gps_moved_at, (SELECT last_track_ended_at FROM idle) AS gps_moved_track_ended_at,
              -- Asked for by a transaction of GPS points only: its commit does not wait for the WAL flush.
              CASE WHEN $9::boolean THEN set_config('synchronous_commit', 'off', true) END AS gps_async_commit
         FROM drv
     )
     SELECT batch.*, tr.*
       FROM batch
       LEFT JOIN LATERAL (${TRIP_SELECT}
                           WHERE t.driver_id = batch.gps_driver_id AND batch.gps_accepted > 0 AND batch.gps_active_trips > 0
                             AND t.status IN ('assigned', 'accepted', 'picked_up', 'in_transit')) tr ON true`,
  );
const STORE_POINTS_OF_DRIVER = storePointsSql('d.id = $1');
const STORE_POINTS_OF_USER = storePointsSql('d.user_id = $1');

/**
 * Stores the new points (idempotent on client_point_id) and reads, without locking his row, the driver's load, whether
 * the newest of them will move his position, and his trips under way; the points and trips are returned only when a
 * point was new and the driver has active trips. `asyncCommit`: the transaction commits without waiting for the WAL
 * flush (`synchronous_commit = off` for it alone). Null when there is no such driver (in the caller's tenant).
 */
export async function storePoints(tx: Tx, driver: DriverRef, c: PointColumns, asyncCommit: boolean): Promise<IngestRow | null> {
  const { rows } = await tx.query<Record<string, unknown>>('id' in driver ? STORE_POINTS_OF_DRIVER : STORE_POINTS_OF_USER, [
    'id' in driver ? driver.id : driver.userId,
    c.ids,
    c.lons,
    c.lats,
    c.at,
    c.acc,
    c.spd,
    c.hdg,
    asyncCommit,
  ]);
  const first = rows[0];
  if (!first) return null;
  const trips: TripRow[] = [];
  for (const row of rows) {
    if (row.id == null) continue;
    const t: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(row)) if (!k.startsWith('gps_')) t[k] = v;
    trips.push(t as TripRow);
  }
  return {
    driver_id: first.gps_driver_id as string,
    organization_id: first.gps_organization_id as string,
    accepted: first.gps_accepted as number,
    active_trips: first.gps_active_trips as number,
    moves: first.gps_moves as boolean,
    latest_lon: first.gps_latest_lon as number | null,
    latest_lat: first.gps_latest_lat as number | null,
    latest_at: first.gps_latest_at as Date | null,
    points: first.gps_points as [number, number, string][] | null,
    trips,
    moved: first.gps_moved
      ? {
          lon: first.gps_moved_lon as number | null,
          lat: first.gps_moved_lat as number | null,
          last_location_at: first.gps_moved_at as Date | null,
          last_track_ended_at: first.gps_moved_track_ended_at as Date | null,
        }
      : null,
  };
}

/** Prepared: the driver's row, written by every GPS batch of a driver with trips under way (the position moves only to a newer fix). */
const MOVE_DRIVER = prepared(
  `UPDATE driver d SET ${moveDriverSet('$2::timestamptz', 'point($3, $4)')}
    WHERE d.id = $1
    RETURNING ${MOVED_DRIVER_RETURNING}`,
);

/**
 * Records the driver's contact and moves his position to `latest` (the newest point just stored, or null) when it is
 * newer than the one he has, decided on his locked row. A GPS batch runs it last: the row lock it takes (which a
 * capacity claim on the same driver waits for) is then held only until the COMMIT. Returns the row as written: after
 * waiting for a trip's end that held it, its `last_track_ended_at` is that end's (an UPDATE acts on the newest version).
 */
export async function moveDriver(tx: Tx, driverId: string, latest: { lon: number; lat: number; at: Date } | null): Promise<MovedDriver> {
  const { rows } = await tx.query<MovedDriver>(MOVE_DRIVER, [driverId, latest?.at ?? null, latest?.lon ?? null, latest?.lat ?? null]);
  return rows[0]!;
}

/**
 * `moveDriver` as the transaction's last statement, with its COMMIT in the same exchange: the row lock is released by
 * the server right after the update. `late` (the batch's new points): behind the update and before the COMMIT, the
 * late-point merge, which runs only if the row as written notes a kept track ending at or after the oldest of them
 * (in a statement of its own, so it sees a trip end the update waited for).
 */
export async function moveDriverAndCommit(
  tx: Tx,
  v: { organizationId: string; driverId: string; latest: { lon: number; lat: number; at: Date } | null; late: PointColumns | null },
): Promise<MovedDriver> {
  const { latest, late } = v;
  const then = late
    ? [
        [
          MERGE_LATE_IF_NOTED,
          [...mergeParams(v.organizationId, v.driverId, late), new Date(Math.min(...late.at.map((at) => Date.parse(at))))],
        ] as const,
      ]
    : [];
  const { rows } = await tx.queryAndCommit<MovedDriver>(
    MOVE_DRIVER,
    [v.driverId, latest?.at ?? null, latest?.lon ?? null, latest?.lat ?? null],
    then,
  );
  return rows[0]!;
}

export interface MovedDriver {
  lon: number | null;
  lat: number | null;
  last_location_at: Date | null;
  /** The end of the newest kept trip track of the driver (null: none). */
  last_track_ended_at: Date | null;
}

export interface Crumb {
  lon: number;
  lat: number;
  recorded_at: Date;
  speed_mps: number | null;
}

/**
 * The bounds of a time window over driver_location, written so that the planner (or the executor, for a generic plan)
 * prunes the daily partitions outside it: an open end (an active trip) is now plus a day, so a device whose clock runs
 * more than a day ahead is not followed into the empty partitions created ahead.
 */
export const TIME_WINDOW_SQL = (since: string, until: string) =>
  `recorded_at >= ${since} AND recorded_at <= COALESCE(${until}::timestamptz, now() + interval '1 day')`;

/** The breadcrumb read: $1 driver, $2 since, $3 until (null: still going), $4 how many of the most recent. */
export const BREADCRUMB_SQL = `SELECT * FROM (SELECT (location)[0] AS lon, (location)[1] AS lat, recorded_at, speed_mps FROM driver_location
    WHERE driver_id = $1 AND ${TIME_WINDOW_SQL('$2', '$3')}
    ORDER BY recorded_at DESC LIMIT $4) x ORDER BY recorded_at`;

/** A driver's points recorded in [since, until] (until null: up to now), by device time, at most the `limit` most recent. */
export async function breadcrumb(tx: Tx, driverId: string, since: Date, until: Date | null, limit: number): Promise<Crumb[]> {
  const { rows } = await tx.query<Crumb>(BREADCRUMB_SQL, [driverId, since, until, limit]);
  return rows;
}

export type GeofenceRow = SnakeRow<Pick<typeof tripGeofence.$inferSelect, 'stop' | 'enteredAt' | 'distanceM'>>;

export async function geofenceEntries(tx: Tx, tripId: string): Promise<GeofenceRow[]> {
  const { rows } = await tx.query<GeofenceRow>(
    'SELECT stop, entered_at, distance_m FROM trip_geofence WHERE trip_id = $1 ORDER BY entered_at',
    [tripId],
  );
  return rows;
}

/** Records that the driver entered the geofence of a stop; false when the trip already has that entry. */
export async function insertGeofenceEntry(tx: Tx, v: Omit<typeof tripGeofence.$inferInsert, 'createdAt'>): Promise<boolean> {
  const entered = await tx.query(
    `INSERT INTO trip_geofence (organization_id, trip_id, stop, driver_id, distance_m, entered_at) VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT DO NOTHING RETURNING trip_id`,
    [v.organizationId, v.tripId, v.stop, v.driverId, v.distanceM, v.enteredAt],
  );
  return entered.rowCount > 0;
}

/**
 * One round of upkeep of the GPS history's daily partitions (db function `driver_location_maintain`): today's and the
 * next `aheadDays` exist, the days older than `retentionDays` are dropped. `today` (a UTC date) lets tests move the clock.
 */
export async function maintainLocationPartitions(
  tx: Tx,
  aheadDays: number,
  retentionDays: number,
  today: string | null = null,
): Promise<{ created: number; dropped: number }> {
  const { rows } = await tx.query<{ created: number; dropped: number }>(
    'SELECT created, dropped FROM driver_location_maintain($1, $2, COALESCE($3::date, (now() AT TIME ZONE $4)::date))',
    [aheadDays, retentionDays, today, 'UTC'],
  );
  return rows[0]!;
}

/** Points kept with one finished trip at most (the most recent when it has more): 20,000 is 27 hours at one point in 5 s. */
export const TRACK_MAX_POINTS = 20_000;

/**
 * Copies the driver's points of [since, until] into the trip's own track (trip_track), once per trip, so the route
 * outlives the GPS partitions; bounded by the trip's times, so only its days are read. Returns the points kept.
 * `driverRowHeld`: an earlier statement of the transaction took the driver's row (e.g. updated it).
 */
export async function keepTripTrack(
  tx: Tx,
  v: { organizationId: string; tripId: string; driverId: string; since: Date; until: Date },
  driverRowHeld = false,
): Promise<number> {
  // The driver's row first, in a statement of its own, as every GPS batch takes it before its late-point merge: a batch
  // being stored now either committed before this copy reads the history (and is in it) or runs its merge after this
  // trip's track is committed.
  if (!driverRowHeld) await tx.query('SELECT 1 FROM driver WHERE id = $1 FOR NO KEY UPDATE', [v.driverId]);
  // The driver's row notes the newest track's end: a GPS batch merges late points only when one of its points is not after it.
  const { rows } = await tx.query<{ n: number }>(
    `WITH noted AS (UPDATE driver SET last_track_ended_at = greatest(last_track_ended_at, $5) WHERE id = $3)
     INSERT INTO trip_track (organization_id, trip_id, driver_id, started_at, ended_at, lons, lats, recorded_at, speeds_mps)
     SELECT $1, $2, $3, $4, $5,
            COALESCE(array_agg(lon ORDER BY recorded_at), '{}'), COALESCE(array_agg(lat ORDER BY recorded_at), '{}'),
            COALESCE(array_agg(recorded_at ORDER BY recorded_at), '{}'), COALESCE(array_agg(speed_mps ORDER BY recorded_at), '{}')
       FROM (SELECT (location)[0] AS lon, (location)[1] AS lat, recorded_at, speed_mps FROM driver_location
              WHERE organization_id = $1 AND driver_id = $3 AND recorded_at >= $4 AND recorded_at <= $5
              ORDER BY recorded_at DESC LIMIT $6) p
     ON CONFLICT (organization_id, trip_id) DO NOTHING
     RETURNING cardinality(recorded_at) AS n`,
    [v.organizationId, v.tripId, v.driverId, v.since, v.until, TRACK_MAX_POINTS],
  );
  return rows[0]?.n ?? 0;
}

/**
 * Run by a GPS batch that stored a new point at or before the end of the driver's newest kept track; `noted`: only if
 * his row (as this transaction wrote it) notes such an end, compared with the batch's oldest point ($8).
 */
const mergeLateSql = (noted: boolean) =>
  `WITH b AS (
     SELECT DISTINCT ON (u.at) u.lon, u.lat, u.at, u.spd
       FROM unnest($3::float8[], $4::float8[], $5::timestamptz[], $6::float8[]) AS u(lon, lat, at, spd) ORDER BY u.at
   )
   UPDATE trip_track k
      SET (lons, lats, recorded_at, speeds_mps) = (
        SELECT array_agg(p.lon ORDER BY p.at), array_agg(p.lat ORDER BY p.at), array_agg(p.at ORDER BY p.at), array_agg(p.spd ORDER BY p.at)
          FROM (SELECT * FROM (
                  SELECT o.lon, o.lat, o.at, o.spd FROM unnest(k.lons, k.lats, k.recorded_at, k.speeds_mps) AS o(lon, lat, at, spd)
                  UNION ALL
                  SELECT b.lon, b.lat, b.at, b.spd FROM b
                   WHERE b.at >= k.started_at AND b.at <= k.ended_at AND NOT (b.at = ANY (k.recorded_at))
                ) a ORDER BY a.at DESC LIMIT $7) p)
    WHERE k.organization_id = $1 AND k.driver_id = $2
      AND k.ended_at >= (SELECT min(at) FROM b) AND k.started_at <= (SELECT max(at) FROM b)
      AND EXISTS (SELECT 1 FROM b WHERE b.at >= k.started_at AND b.at <= k.ended_at AND NOT (b.at = ANY (k.recorded_at)))${
        noted ? '\n      AND EXISTS (SELECT 1 FROM driver d WHERE d.id = $2 AND d.last_track_ended_at >= $8::timestamptz)' : ''
      }
   RETURNING k.trip_id`;
const MERGE_LATE = prepared(mergeLateSql(false));
const MERGE_LATE_IF_NOTED = prepared(mergeLateSql(true));
/** The merge's parameters $1–$7. */
const mergeParams = (organizationId: string, driverId: string, c: PointColumns) => [
  organizationId,
  driverId,
  c.lons,
  c.lats,
  c.at,
  c.spd,
  TRACK_MAX_POINTS,
];

/**
 * Points of a batch that fall in the window of one of the driver's ended trips (a driver offline during the trip,
 * syncing after its end) are merged into that trip's kept track in device time order. A point whose recorded_at the
 * track already has is not added again, so a resend changes nothing; points outside a window are not the trip's.
 * The most recent TRACK_MAX_POINTS stay. Returns the trips whose track grew.
 */
/** `commit`: the merge is the transaction's last statement and carries its COMMIT (`Tx.queryAndCommit`). */
export async function mergeLateIntoTracks(
  tx: Tx,
  organizationId: string,
  driverId: string,
  c: PointColumns,
  { commit = false }: { commit?: boolean } = {},
): Promise<string[]> {
  const params = mergeParams(organizationId, driverId, c);
  const { rows } = await (commit
    ? tx.queryAndCommit<{ trip_id: string }>(MERGE_LATE, params)
    : tx.query<{ trip_id: string }>(MERGE_LATE, params));
  return rows.map((r) => r.trip_id);
}

/** The page of a trip's kept track after `after` (null: from the start), or null when the trip has no kept track. */
export async function keptTrack(tx: Tx, tripId: string, after: Date | null, limit: number): Promise<Crumb[] | null> {
  const kept = await tx.query('SELECT 1 FROM trip_track WHERE trip_id = $1', [tripId]);
  if (kept.rowCount === 0) return null;
  const { rows } = await tx.query<Crumb>(
    `SELECT u.lon, u.lat, u.recorded_at, u.speed_mps
       FROM trip_track k, unnest(k.lons, k.lats, k.recorded_at, k.speeds_mps) AS u(lon, lat, recorded_at, speed_mps)
      WHERE k.trip_id = $1 AND ($2::timestamptz IS NULL OR u.recorded_at > $2)
      ORDER BY u.recorded_at LIMIT $3`,
    [tripId, after, limit],
  );
  return rows;
}

/** The route read from the GPS history: $1 driver, $2 since, $3 until (null: still going), $4 after (cursor), $5 limit. */
export const TRACK_SQL = `SELECT (location)[0] AS lon, (location)[1] AS lat, recorded_at, speed_mps FROM driver_location
    WHERE driver_id = $1 AND ${TIME_WINDOW_SQL('$2', '$3')} AND ($4::timestamptz IS NULL OR recorded_at > $4)
    ORDER BY recorded_at LIMIT $5`;

/** A driver's points of [since, until] after `after`, oldest first, at most `limit`. */
export async function historyTrack(
  tx: Tx,
  driverId: string,
  since: Date,
  until: Date | null,
  after: Date | null,
  limit: number,
): Promise<Crumb[]> {
  const { rows } = await tx.query<Crumb>(TRACK_SQL, [driverId, since, until, after, limit]);
  return rows;
}
