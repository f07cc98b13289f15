import { eq, sql } from 'drizzle-orm';
import { prepared, type Tx } from '../../../platform/db/index.js';
import { HAVERSINE_SQL, type LonLat } from '../../../platform/geo.js';
import { scopeSql, type TerritoryScope } from '../../../platform/scope.js';
import { driver } from '../tables.js';
import { selectList, type SnakeRow } from '../../../platform/db/columns.js';

/** Who decided and who locked stay out of the driver reads (audit rows keep them); the position travels as numbers. */
const DRIVER_OMIT = ['availabilityLockedByUserId', 'availabilityLockedAt', 'decidedByUserId', 'decidedAt', 'locationStaleAt'] as const;

/** On duty (approved, available or carrying trips) and the last fix older than the organization's location_stale_after_s (or none). */
export const LOCATION_STALE_SQL = (
  d: string,
) => `(${d}.status = 'approved' AND (${d}.available OR ${d}.active_trips > 0) AND (${d}.last_location_at IS NULL OR ${d}.last_location_at <
    now() - make_interval(secs => COALESCE((SELECT ls.location_stale_after_s FROM logistics_settings ls WHERE ls.organization_id = ${d}.organization_id), 300))))`;
const DRIVER_POINTS = { lastLocation: ['last_lon', 'last_lat'] } as const;
type DriverRecord = Omit<typeof driver.$inferSelect, (typeof DRIVER_OMIT)[number] | keyof typeof DRIVER_POINTS>;

/** A driver as the logistics reads return it: the columns of `driver` (derived from the table), his user's name and phone, his territories. */
export type DriverRow = SnakeRow<DriverRecord> &
  /** From identity's published `user_contact` view. */
  { display_name: string; phone: string | null } & {
  last_lon: number | null;
  last_lat: number | null;
  territory_ids: string[];
  location_stale: boolean;
};

export const DRIVER_SELECT = `
  SELECT ${selectList(driver, 'd', { omit: DRIVER_OMIT, points: DRIVER_POINTS })}, u.display_name, u.phone,
         COALESCE((SELECT array_agg(dt.territory_id ORDER BY dt.territory_id) FROM driver_territory dt
                    WHERE dt.organization_id = d.organization_id AND dt.driver_id = d.id), '{}') AS territory_ids,
         ${LOCATION_STALE_SQL('d')} AS location_stale
    FROM driver d JOIN user_contact u ON u.organization_id = d.organization_id AND u.id = d.user_id`;

/**
 * The territory scope of drivers, parameter `$n` (the scope or null): a driver is in a sub-administrator's scope when
 * he is linked to one of the territories (driver_territory), so the predicate is an EXISTS over the links rather
 * than `platform/scope`'s column test; an unscoped caller sees every driver, also those without links.
 */
export const driverScopeSql = (n: number) =>
  `($${n}::text[] IS NULL OR EXISTS (SELECT 1 FROM driver_territory s WHERE s.organization_id = d.organization_id AND s.driver_id = d.id AND s.territory_id = ANY($${n}::text[])))`;

const M_PER_DEG_LAT = 111_194.93; // 2πR / 360 with the mean Earth radius used by haversineMeters

/**
 * The bounding box (as a native `box` literal) of the circle of `radiusM` around `p`: indexable by the
 * GiST index on a point column (`point <@ box`); the exact haversine filter runs on what it returns.
 */
export function circleBox(p: LonLat, radiusM: number): string {
  const dLat = (radiusM / M_PER_DEG_LAT) * 1.001;
  const maxAbsLat = Math.min(90, Math.abs(p.lat) + dLat);
  const cos = Math.cos((maxAbsLat * Math.PI) / 180);
  const dLon = cos < 1e-9 ? 360 : (dLat / cos) * 1.001;
  const [lat0, lat1] = [Math.max(-90, p.lat - dLat), Math.min(90, p.lat + dLat)];
  // Crossing the antimeridian or reaching a pole: take every longitude (still exact after the haversine filter).
  const [lon0, lon1] = p.lon - dLon < -180 || p.lon + dLon > 180 ? [-180, 180] : [p.lon - dLon, p.lon + dLon];
  return `((${lon0},${lat0}),(${lon1},${lat1}))`;
}

/** $1 point, $2 bounding box, $3 available only, $4 sub-admin territories or null, $5 radius (m), $6 limit. */
export const NEARBY_SQL = `WITH c AS (
    SELECT d.id, ${HAVERSINE_SQL('d.last_location', '$1::point')} AS distance_m
      FROM driver d
     WHERE d.last_location <@ $2::box AND d.status = 'approved' AND ($3::boolean = false OR d.available) AND ${driverScopeSql(4)}
  ), n AS (SELECT id, distance_m FROM c WHERE distance_m <= $5 ORDER BY distance_m, id LIMIT $6)
  SELECT x.*, n.distance_m FROM n JOIN (${DRIVER_SELECT}) x ON x.id = n.id ORDER BY n.distance_m, n.id`;

/** Prepared: its generic plan keeps the GiST index on the box (the other conditions filter what it finds). */
export const NEARBY = prepared(NEARBY_SQL);

/** GET /drivers/nearby: approved drivers within `radiusM` of `point` (a point literal), nearest first. */
export async function nearbyDrivers(
  tx: Tx,
  q: { point: string; box: string; availableOnly: boolean; scope: TerritoryScope; radiusM: number; limit: number },
) {
  const { rows } = await tx.query<DriverRow & { distance_m: number }>(NEARBY, [
    q.point,
    q.box,
    q.availableOnly,
    q.scope,
    q.radiusM,
    q.limit,
  ]);
  return rows;
}

export async function findDriver(tx: Tx, id: string, scope: TerritoryScope = null): Promise<DriverRow | null> {
  const { rows } =
    scope === null
      ? await tx.query<DriverRow>(`${DRIVER_SELECT} WHERE d.id = $1`, [id])
      : await tx.query<DriverRow>(`${DRIVER_SELECT} WHERE d.id = $1 AND ${driverScopeSql(2)}`, [id, scope]);
  return rows[0] ?? null;
}

/** Prepared: every driver-app request reads it first (a GPS batch, a trip step). */
const DRIVER_OF_USER = prepared(`${DRIVER_SELECT} WHERE d.user_id = $1`);

export async function driverOfUser(tx: Tx, userId: string): Promise<DriverRow | null> {
  const { rows } = await tx.query<DriverRow>(DRIVER_OF_USER, [userId]);
  return rows[0] ?? null;
}

/** Inserts a driver profile; false when the user already has one. */
export async function insertDriver(
  tx: Tx,
  v: Pick<typeof driver.$inferInsert, 'organizationId' | 'id' | 'userId' | 'vehicleType' | 'capacity'>,
): Promise<boolean> {
  const inserted = await tx.query(
    `INSERT INTO driver (organization_id, id, user_id, vehicle_type, capacity) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (organization_id, user_id) DO NOTHING RETURNING id`,
    [v.organizationId, v.id, v.userId, v.vehicleType, v.capacity],
  );
  return inserted.rowCount > 0;
}

/** Links a driver to territories (existing links stay). */
export async function linkTerritories(tx: Tx, organizationId: string, driverId: string, territoryIds: string[]): Promise<void> {
  await tx.query(
    `INSERT INTO driver_territory (organization_id, driver_id, territory_id) SELECT $1, $2, unnest($3::text[]) ON CONFLICT DO NOTHING`,
    [organizationId, driverId, territoryIds],
  );
}

/** Replaces a driver's links within `scope` (null: all of them) by `territoryIds`; links outside the scope stay. */
export async function replaceTerritoryLinks(
  tx: Tx,
  organizationId: string,
  driverId: string,
  scope: TerritoryScope,
  territoryIds: string[],
): Promise<void> {
  await tx.query(
    `DELETE FROM driver_territory WHERE driver_id = $1 AND ${scopeSql('territory_id', 2)} AND NOT (territory_id = ANY($3::text[]))`,
    [driverId, scope, territoryIds],
  );
  await linkTerritories(tx, organizationId, driverId, territoryIds);
  await tx.query('UPDATE driver SET updated_at = now() WHERE id = $1', [driverId]);
}

export interface DriverListFilter {
  status: string | null;
  available: boolean | null;
  territoryId: string | null;
  scope: TerritoryScope;
  after: string | null;
  limit: number;
}

export async function listDrivers(tx: Tx, f: DriverListFilter): Promise<DriverRow[]> {
  const { rows } = await tx.query<DriverRow>(
    `${DRIVER_SELECT}
      WHERE ($1::text IS NULL OR d.status = $1) AND ($2::boolean IS NULL OR d.available = $2)
        AND ($3::text IS NULL OR EXISTS (SELECT 1 FROM driver_territory x WHERE x.organization_id = d.organization_id AND x.driver_id = d.id AND x.territory_id = $3))
        AND ${driverScopeSql(4)} AND ($5::text IS NULL OR d.id < $5)
      ORDER BY d.id DESC LIMIT $6`,
    [f.status, f.available, f.territoryId, f.scope, f.after, f.limit],
  );
  return rows;
}

/** Approved, available drivers with free capacity in scope, most recently seen first (dispatch board). */
export async function driversWithCapacity(tx: Tx, scope: TerritoryScope, limit = 200): Promise<DriverRow[]> {
  const { rows } = await tx.query<DriverRow>(
    `${DRIVER_SELECT} WHERE d.status = 'approved' AND d.available AND d.active_trips < d.capacity AND ${driverScopeSql(1)} ORDER BY d.last_seen_at DESC NULLS LAST LIMIT $2`,
    [scope, limit],
  );
  return rows;
}

/** Approved drivers with a position in scope (live map). */
export async function positionedDrivers(tx: Tx, scope: TerritoryScope, limit = 5000): Promise<DriverRow[]> {
  const { rows } = await tx.query<DriverRow>(
    `${DRIVER_SELECT} WHERE d.status = 'approved' AND d.last_location IS NOT NULL AND ${driverScopeSql(1)} ORDER BY d.id LIMIT $2`,
    [scope, limit],
  );
  return rows;
}

/** The driver's row locked FOR UPDATE: his current approval status. */
export async function lockDriverStatus(tx: Tx, id: string): Promise<DriverRow['status']> {
  const { rows } = await tx.query<Pick<DriverRow, 'status'>>('SELECT status FROM driver WHERE id = $1 FOR UPDATE', [id]);
  return rows[0]!.status;
}

/** Writes an approval decision; a driver not approved afterwards goes unavailable. */
export async function setDriverStatus(tx: Tx, id: string, to: DriverRow['status'], reason: string | null, byUserId: string): Promise<void> {
  await tx.query(
    `UPDATE driver SET status = $2, status_reason = $3, available = CASE WHEN $2 = 'approved' THEN available ELSE false END,
            decided_by_user_id = $4, decided_at = now(), updated_at = now() WHERE id = $1`,
    [id, to, reason, byUserId],
  );
}

/** Locks the driver's row (NO KEY UPDATE); returns whether staff hold his availability lock (null: no such driver). */
export async function lockDriver(tx: Tx, id: string): Promise<{ availability_locked: boolean } | null> {
  const { rows } = await tx.query<{ availability_locked: boolean }>(
    'SELECT availability_locked FROM driver WHERE id = $1 FOR NO KEY UPDATE',
    [id],
  );
  return rows[0] ?? null;
}

/**
 * Sets availability (and last contact). Going available needs an approved driver of an active user (a deactivated
 * user's profile stays unavailable); false when refused.
 */
export async function setAvailable(tx: Tx, id: string, available: boolean): Promise<boolean> {
  const { rowCount } = await tx.query(
    `UPDATE driver d SET available = $2, last_seen_at = now(), updated_at = now()
      WHERE d.id = $1 AND ($2 = false OR (d.status = 'approved'
        AND EXISTS (SELECT 1 FROM user_contact u WHERE u.organization_id = d.organization_id AND u.id = d.user_id AND u.active)))`,
    [id, available],
  );
  return rowCount > 0;
}

/** Makes a driver unavailable (no contact recorded): his user was deactivated. */
export async function setUnavailable(tx: Tx, id: string): Promise<void> {
  await tx.orm
    .update(driver)
    .set({ available: false, updatedAt: sql`now()` })
    .where(eq(driver.id, id));
}

/** Locks (the driver goes unavailable) or unlocks a driver's availability. */
export async function setAvailabilityLock(tx: Tx, id: string, locked: boolean, reason: string | null, byUserId: string): Promise<void> {
  await tx.query(
    `UPDATE driver SET availability_locked = $2, availability_lock_reason = CASE WHEN $2 THEN $3 ELSE NULL END,
            availability_locked_by_user_id = CASE WHEN $2 THEN $4 ELSE NULL END, availability_locked_at = CASE WHEN $2 THEN now() ELSE NULL END,
            available = CASE WHEN $2 THEN false ELSE available END, updated_at = now()
      WHERE id = $1`,
    [id, locked, reason, byUserId],
  );
}

/** The driver's own cash limit (null: the organization's). */
export async function setDriverCashLimit(tx: Tx, id: string, cashLimit: string | null): Promise<void> {
  await tx.query('UPDATE driver SET cash_limit = $2, updated_at = now() WHERE id = $1', [id, cashLimit]);
}

/** New capacity and/or vehicle (null keeps). */
export async function updateDriverProfile(tx: Tx, id: string, capacity: number | null, vehicleType: string | null): Promise<void> {
  await tx.query(
    'UPDATE driver SET capacity = COALESCE($2, capacity), vehicle_type = COALESCE($3, vehicle_type), updated_at = now() WHERE id = $1',
    [id, capacity, vehicleType],
  );
}

/** The vehicle overrides given (undefined keeps; null: back to the vehicle type's default). */
export async function setVehicleOverrides(
  tx: Tx,
  id: string,
  o: {
    capacity_units?: number | null;
    capacity_weight_kg?: number | null;
    capacity_volume_l?: number | null;
    speed_factor?: number | null;
  },
): Promise<void> {
  await tx.query(
    `UPDATE driver SET capacity_weight_kg = CASE WHEN $2 THEN $3::float8 ELSE capacity_weight_kg END,
                       capacity_volume_l = CASE WHEN $4 THEN $5::float8 ELSE capacity_volume_l END,
                       speed_factor = CASE WHEN $6 THEN $7::float8 ELSE speed_factor END,
                       capacity_units = CASE WHEN $8 THEN $9::int ELSE capacity_units END, updated_at = now()
     WHERE id = $1`,
    [
      id,
      o.capacity_weight_kg !== undefined,
      o.capacity_weight_kg ?? null,
      o.capacity_volume_l !== undefined,
      o.capacity_volume_l ?? null,
      o.speed_factor !== undefined,
      o.speed_factor ?? null,
      o.capacity_units !== undefined,
      o.capacity_units ?? null,
    ],
  );
}

/**
 * Takes one unit of the driver's capacity in one conditional UPDATE (approved, available, below
 * capacity): concurrent assignments can never push a driver past his capacity.
 */
export async function claimCapacity(tx: Tx, driverId: string): Promise<boolean> {
  const { rowCount } = await tx.query(
    `UPDATE driver SET active_trips = active_trips + 1, updated_at = now()
      WHERE id = $1 AND status = 'approved' AND available AND active_trips < capacity`,
    [driverId],
  );
  return rowCount > 0;
}

/**
 * Locks the driver's row unless another transaction holds it (an assignment, a delivery, a GPS batch committing):
 * false when it was held (SKIP LOCKED).
 */
export async function lockDriverIfFree(tx: Tx, driverId: string): Promise<boolean> {
  const { rowCount } = await tx.query('SELECT id FROM driver WHERE id = $1 FOR NO KEY UPDATE SKIP LOCKED', [driverId]);
  return rowCount > 0;
}

/** Gives back one unit of the driver's capacity. */
export async function releaseCapacity(tx: Tx, driverId: string): Promise<void> {
  await tx.query('UPDATE driver SET active_trips = greatest(active_trips - 1, 0), updated_at = now() WHERE id = $1', [driverId]);
}

/** Users of the drivers linked to a territory (driver_territory), e.g. to notify a zone. */
export async function driverUserIdsOfTerritory(tx: Tx, territoryId: string): Promise<string[]> {
  const { rows } = await tx.query<{ user_id: string }>(
    `SELECT d.user_id FROM driver d JOIN driver_territory dt ON dt.organization_id = d.organization_id AND dt.driver_id = d.id WHERE dt.territory_id = $1`,
    [territoryId],
  );
  return rows.map((r) => r.user_id);
}

export type CandidateRow = DriverRow & {
  distance_m: number;
  rejected_trip: boolean;
  territory_match: boolean;
  unrestricted: boolean;
  eligible: boolean;
};

/**
 * Assignment candidates of a trip: approved drivers in scope with a position within `radiusM` of the pickup, ranked
 * eligible first, then territory match, then distance and load (`leastLoaded`: load first).
 *
 * `eligibleOnly` (automatic assignment) filters on the driver's own row first (available, below capacity, not the
 * current driver), so when most drivers of a city are busy the rejection and territory subqueries run only for the
 * few free ones; the driver's full read (DRIVER_SELECT: his user, territories, staleness) is joined for the `limit`
 * rows returned only. The rejection and territory lookups are uncorrelated `IN` subqueries, which PostgreSQL reads once
 * into a hash (a hashed SubPlan) instead of probing an index for each driver: when most of a city's drivers are free,
 * a search ranks a thousand of them. `r` is MATERIALIZED so that each is computed once a driver.
 */
export async function candidateDrivers(
  tx: Tx,
  q: {
    pickup: string;
    box: string;
    radiusM: number;
    tripId: string;
    territoryId: string | null;
    scope: TerritoryScope;
    currentDriverId: string | null;
    eligibleOnly: boolean;
    limit: number;
    leastLoaded: boolean;
  },
): Promise<CandidateRow[]> {
  const rank = (t: string) =>
    `${t}eligible DESC, ${t}territory_match DESC, ${q.leastLoaded ? `${t}active_trips, ${t}distance_m` : `${t}distance_m, ${t}active_trips`}, ${t}id`;
  const free = 'd.available AND d.active_trips < d.capacity AND d.id IS DISTINCT FROM $7';
  const eligibleSql = `(free AND NOT rejected_trip AND ($5::text IS NULL OR unrestricted OR territory_match))`;
  const { rows } = await tx.query<CandidateRow>(
    `WITH c AS (
       SELECT d.id, d.organization_id, d.active_trips, ${free} AS free, ${HAVERSINE_SQL('d.last_location', '$1::point')} AS distance_m
         FROM driver d
        WHERE d.last_location <@ $2::box AND d.status = 'approved' AND ${driverScopeSql(6)}${q.eligibleOnly ? ` AND ${free}` : ''}
     ), r AS MATERIALIZED (
       SELECT c.*,
              (c.organization_id, c.id) IN (SELECT rj.organization_id, rj.driver_id FROM trip_rejection rj WHERE rj.trip_id = $4) AS rejected_trip,
              (c.organization_id, c.id) IN (SELECT l.organization_id, l.driver_id FROM driver_territory l WHERE l.territory_id = $5) AS territory_match,
              (c.organization_id, c.id) NOT IN (SELECT l.organization_id, l.driver_id FROM driver_territory l) AS unrestricted
         FROM c WHERE c.distance_m <= $3
     ), e AS (
       SELECT r.*, ${eligibleSql} AS eligible FROM r
     ), top AS (
       SELECT * FROM e WHERE ${q.eligibleOnly ? 'eligible' : 'true'}
        ORDER BY ${rank('')}
        LIMIT $8
     )
     SELECT x.*, top.distance_m, top.rejected_trip, top.territory_match, top.unrestricted, top.eligible
       FROM top JOIN (${DRIVER_SELECT}) x ON x.id = top.id
      ORDER BY ${rank('top.')}`,
    [q.pickup, q.box, q.radiusM, q.tripId, q.territoryId, q.scope, q.currentDriverId, q.limit],
  );
  return rows;
}
