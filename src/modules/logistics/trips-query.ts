import type { Actor } from '../../platform/auth.js';
import type { Tx } from '../../platform/db/index.js';
import { haversineMeters, toGeoPoint } from '../../platform/geo.js';
import { pageRequest, toPage } from '../../platform/pagination.js';
import { formatMoney } from '../../platform/money.js';
import { DRIVER_SELECT, driverOut, EARNED_AT_SQL, EARNING_TRIP_SQL, lonLatOf, scopeOf, TRIP_SELECT, tripOut, type DriverRow, type TripRow, type TripStatus } from './model.js';
import { driverScopeSql } from './drivers.js';
import { getSettings } from './territories.js';

export interface TripListQuery {
  status?: TripStatus;
  driver_id?: string;
  territory_id?: string;
  merchant_id?: string;
  order_id?: string;
  from?: string;
  to?: string;
  limit?: number;
  cursor?: string;
}

/** Filters the trip list to what the actor may see (merchant owner, customer, driver, sub-admin territories). */
function viewerFilter(actor: Actor): { sql: string; param: unknown } {
  switch (actor.kind) {
    case 'subadmin':
      return { sql: 't.territory_id = ANY($P::text[])', param: scopeOf(actor) };
    case 'comercio':
      return { sql: 'm.owner_user_id = $P', param: actor.userId };
    case 'delivery':
      return { sql: 't.customer_user_id = $P', param: actor.userId };
    case 'repartidor':
      return { sql: 'd.user_id = $P', param: actor.userId };
    default:
      return { sql: '$P::text IS NULL', param: null };
  }
}

/** $1 status, $2 driver, $3 territory, $4 merchant, $5 order, $6 from, $7 to, $8 cursor id, $9 limit + 1, $10 viewer parameter. */
export const listTripsSql = (viewerSql: string) => `${TRIP_SELECT}
  WHERE ($1::text IS NULL OR t.status = $1) AND ($2::text IS NULL OR t.driver_id = $2) AND ($3::text IS NULL OR t.territory_id = $3)
    AND ($4::text IS NULL OR t.merchant_id = $4) AND ($5::text IS NULL OR t.order_id = $5)
    AND ($6::timestamptz IS NULL OR t.created_at >= $6) AND ($7::timestamptz IS NULL OR t.created_at < $7)
    AND ($8::text IS NULL OR t.id < $8) AND ${viewerSql}
  ORDER BY t.id DESC LIMIT $9`;

export async function listTrips(tx: Tx, actor: Actor, q: TripListQuery) {
  const page = pageRequest(q);
  const v = viewerFilter(actor);
  const { rows } = await tx.query<TripRow>(
    listTripsSql(v.sql.replace('$P', '$10')),
    [q.status ?? null, q.driver_id ?? null, q.territory_id ?? null, q.merchant_id ?? null, q.order_id ?? null, q.from ?? null, q.to ?? null, page.after, page.limit + 1, v.param],
  );
  return toPage(rows, page, (t) => tripOut(t, actor));
}

const BREADCRUMB_LIMIT = 1000;
const ACTIVE_TRIP = new Set<TripStatus>(['assigned', 'accepted', 'picked_up', 'in_transit']);

/**
 * Last position (live while the trip is active; after it ended, the last point recorded during it),
 * breadcrumb (the driver's points since acceptance until the trip ended, by device time, at most 1000
 * most recent) and an ETA to the next stop by straight-line distance and the configured average speed.
 */
export async function tracking(tx: Tx, t: TripRow) {
  const settings = await getSettings(tx, t.organization_id);
  const driver = t.driver_id ? (await tx.query<DriverRow>(`${DRIVER_SELECT} WHERE d.id = $1`, [t.driver_id])).rows[0] : null;
  const since = t.accepted_at ?? t.assigned_at;
  const until = t.completed_at ?? t.cancelled_at ?? t.failed_at;
  const crumbs =
    driver && since
      ? (
          await tx.query<{ lon: number; lat: number; recorded_at: Date; speed_mps: number | null }>(
            `SELECT * FROM (SELECT (location)[0] AS lon, (location)[1] AS lat, recorded_at, speed_mps FROM driver_location
                WHERE driver_id = $1 AND recorded_at >= $2 AND ($3::timestamptz IS NULL OR recorded_at <= $3)
                ORDER BY recorded_at DESC LIMIT ${BREADCRUMB_LIMIT}) x ORDER BY recorded_at`,
            [driver.id, since, until],
          )
        ).rows
      : [];
  const geofence = (
    await tx.query<{ stop: string; entered_at: Date; distance_m: number }>('SELECT stop, entered_at, distance_m FROM trip_geofence WHERE trip_id = $1 ORDER BY entered_at', [t.id])
  ).rows;
  // Live position only while the trip is active; once it ended, the last point recorded during the trip
  // (the delivered point), never where the driver went afterwards.
  const active = ACTIVE_TRIP.has(t.status);
  const lastCrumb = crumbs.length ? crumbs[crumbs.length - 1]! : null;
  const last = active ? (driver ? lonLatOf(driver.last_lon, driver.last_lat) : null) : lastCrumb ? { lon: Number(lastCrumb.lon), lat: Number(lastCrumb.lat) } : null;
  const lastAt = active ? (driver?.last_location_at ?? null) : (lastCrumb?.recorded_at ?? null);
  const nextStop = ['assigned', 'accepted'].includes(t.status) ? 'pickup' : ['picked_up', 'in_transit'].includes(t.status) ? 'dropoff' : null;
  const pickup = { lon: t.pickup_lon, lat: t.pickup_lat };
  const dropoff = { lon: t.dropoff_lon, lat: t.dropoff_lat };
  let remaining: number | null = null;
  if (nextStop && last) remaining = haversineMeters(last, nextStop === 'pickup' ? pickup : dropoff) + (nextStop === 'pickup' ? haversineMeters(pickup, dropoff) : 0);
  const speed = (settings.average_speed_kmh * 1000) / 3600;
  return {
    trip_id: t.id,
    status: t.status,
    driver_id: t.driver_id,
    last_location: toGeoPoint(last),
    last_location_at: lastAt,
    next_stop: nextStop as 'pickup' | 'dropoff' | null,
    distance_remaining_m: remaining === null ? null : Math.round(remaining),
    eta_seconds: remaining === null ? null : Math.round(remaining / speed),
    breadcrumb: crumbs.map((c) => ({ location: toGeoPoint({ lon: Number(c.lon), lat: Number(c.lat) })!, recorded_at: c.recorded_at, speed_mps: c.speed_mps })),
    geofence_entries: geofence.map((g) => ({ stop: g.stop, entered_at: g.entered_at, distance_m: Math.round(Number(g.distance_m)) })),
  };
}

const AT_RISK_SQL = `
  CASE
    WHEN t.status = 'pending' AND t.created_at < now() - make_interval(secs => $2) THEN 'unassigned_too_long'
    WHEN t.status = 'assigned' AND t.assigned_at < now() - make_interval(secs => $2) THEN 'not_accepted_in_time'
    WHEN t.status IN ('accepted', 'picked_up', 'in_transit') AND (d.last_seen_at IS NULL OR d.last_seen_at < now() - interval '5 minutes') THEN 'driver_silent'
  END`;

/** Dispatch board: unassigned trips (oldest first), at-risk trips with their reason, drivers with free capacity. */
export async function dispatchBoard(tx: Tx, actor: Actor) {
  const settings = await getSettings(tx, actor.organizationId);
  const scope = scopeOf(actor);
  const scopeSql = '($1::text[] IS NULL OR t.territory_id = ANY($1))';
  const unassigned = await tx.query<TripRow>(`${TRIP_SELECT} WHERE t.status = 'pending' AND ${scopeSql} ORDER BY t.id LIMIT 100`, [scope]);
  const atRisk = await tx.query<TripRow & { risk: string }>(
    `SELECT * FROM (SELECT x.*, ${AT_RISK_SQL.replace(/\bt\./g, 'x.')} AS risk FROM (${TRIP_SELECT} WHERE t.status IN ('pending', 'assigned', 'accepted', 'picked_up', 'in_transit') AND ${scopeSql}) x
        LEFT JOIN driver d ON d.organization_id = x.organization_id AND d.id = x.driver_id) y
      WHERE risk IS NOT NULL ORDER BY id LIMIT 100`,
    [scope, settings.acceptance_timeout_s],
  );
  const drivers = await tx.query<DriverRow>(
    `${DRIVER_SELECT} WHERE d.status = 'approved' AND d.available AND d.active_trips < d.capacity AND ${driverScopeSql('$1')} ORDER BY d.last_seen_at DESC NULLS LAST LIMIT 200`,
    [scope],
  );
  const counts = await tx.query<{ status: string; n: number }>(`SELECT t.status, count(*)::int AS n FROM trip t WHERE ${scopeSql} GROUP BY t.status`, [scope]);
  return {
    generated_at: new Date(),
    acceptance_timeout_s: settings.acceptance_timeout_s,
    counts: Object.fromEntries(counts.rows.map((r) => [r.status, r.n])),
    unassigned: unassigned.rows.map((t) => tripOut(t, actor)),
    at_risk: atRisk.rows.map((t) => ({ trip: tripOut(t, actor), risk: t.risk })),
    available_drivers: drivers.rows.map(driverOut),
  };
}

/** GeoJSON FeatureCollection: drivers' last positions (Point) and active trips (LineString pickup → dropoff). */
export async function liveMap(tx: Tx, actor: Actor) {
  const scope = scopeOf(actor);
  const drivers = await tx.query<DriverRow>(
    `${DRIVER_SELECT} WHERE d.status = 'approved' AND d.last_location IS NOT NULL AND ${driverScopeSql('$1')} ORDER BY d.id LIMIT 5000`,
    [scope],
  );
  const trips = await tx.query<TripRow>(
    `${TRIP_SELECT} WHERE t.status IN ('pending', 'assigned', 'accepted', 'picked_up', 'in_transit') AND ($1::text[] IS NULL OR t.territory_id = ANY($1)) ORDER BY t.id LIMIT 5000`,
    [scope],
  );
  return {
    type: 'FeatureCollection' as const,
    features: [
      ...drivers.rows.map((d) => ({
        type: 'Feature' as const,
        id: d.id,
        geometry: toGeoPoint(lonLatOf(d.last_lon, d.last_lat))! as Record<string, unknown>,
        properties: { kind: 'driver', driver_id: d.id, display_name: d.display_name, available: d.available, active_trips: d.active_trips, capacity: d.capacity, last_location_at: d.last_location_at?.toISOString() ?? null },
      })),
      ...trips.rows.map((t) => ({
        type: 'Feature' as const,
        id: t.id,
        geometry: { type: 'LineString', coordinates: [[t.pickup_lon, t.pickup_lat], [t.dropoff_lon, t.dropoff_lat]] } as Record<string, unknown>,
        properties: { kind: 'trip', trip_id: t.id, status: t.status, driver_id: t.driver_id, territory_id: t.territory_id, order_id: t.order_id },
      })),
    ],
  };
}

/** Per completed trip (and failed delivery, once closed or returned): the trip's driver_earning (the flat fee of the settings unless set at creation). */
export async function earnings(tx: Tx, driver: DriverRow, q: { from?: string; to?: string; limit?: number; cursor?: string }) {
  const page = pageRequest(q);
  const args = [driver.id, q.from ?? null, q.to ?? null];
  const where = `driver_id = $1 AND ${EARNING_TRIP_SQL} AND ($2::timestamptz IS NULL OR ${EARNED_AT_SQL} >= $2) AND ($3::timestamptz IS NULL OR ${EARNED_AT_SQL} < $3)`;
  const totals = (await tx.query<{ n: number; total: string; currency: string | null }>(`SELECT count(*)::int AS n, COALESCE(sum(driver_earning), 0) AS total, max(currency) AS currency FROM trip WHERE ${where}`, args)).rows[0];
  const { rows } = await tx.query<{ id: string; status: TripStatus; completed_at: Date; driver_earning: string; delivery_fee: string; order_id: string | null }>(
    `SELECT id, status, ${EARNED_AT_SQL} AS completed_at, driver_earning, delivery_fee, order_id FROM trip WHERE ${where} AND ($4::text IS NULL OR id < $4) ORDER BY id DESC LIMIT $5`,
    [...args, page.after, page.limit + 1],
  );
  const settings = await getSettings(tx, driver.organization_id);
  return {
    currency: totals.currency ?? settings.currency,
    completed_trips: totals.n,
    total_earnings: formatMoney(totals.total),
    ...toPage(rows, page, (r) => ({ trip_id: r.id, order_id: r.order_id, status: r.status, completed_at: r.completed_at, driver_earning: r.driver_earning, delivery_fee: r.delivery_fee })),
  };
}

export interface Period {
  from?: string | null;
  to?: string | null;
}

/** Trips per status in the territories (null = the organization), created in [from, to). */
export async function tripStatusCounts(tx: Tx, territoryIds: string[] | null, period: Period = {}): Promise<Record<string, number>> {
  const { rows } = await tx.query<{ status: string; n: number }>(
    `SELECT status, count(*)::int AS n FROM trip
      WHERE ($1::text[] IS NULL OR territory_id = ANY($1)) AND ($2::timestamptz IS NULL OR created_at >= $2) AND ($3::timestamptz IS NULL OR created_at < $3)
      GROUP BY status`,
    [territoryIds, period.from ?? null, period.to ?? null],
  );
  return Object.fromEntries(rows.map((r) => [r.status, r.n]));
}

export interface TripReportRow {
  id: string;
  created_at: Date;
  completed_at: Date | null;
  cancelled_at: Date | null;
  status: TripStatus;
  service_mode: string;
  territory_id: string | null;
  territory_name: string | null;
  merchant_id: string | null;
  merchant_name: string | null;
  driver_id: string | null;
  driver_name: string | null;
  order_id: string | null;
  pickup_address: string;
  dropoff_address: string;
  delivery_fee: string;
  driver_earning: string;
  currency: string;
}

/** One row per trip in the territories (null = the organization) created in [from, to), oldest first (report exports). */
export async function tripReportRows(tx: Tx, territoryIds: string[] | null, period: Period = {}, limit = 100_000): Promise<TripReportRow[]> {
  const { rows } = await tx.query<TripReportRow>(
    `SELECT t.id, t.created_at, t.completed_at, t.cancelled_at, t.status, t.service_mode, t.territory_id, tr.name AS territory_name,
            t.merchant_id, m.name AS merchant_name, t.driver_id, u.display_name AS driver_name, t.order_id, t.pickup_address, t.dropoff_address,
            t.delivery_fee, t.driver_earning, t.currency
       FROM trip t
       LEFT JOIN territory tr ON tr.organization_id = t.organization_id AND tr.id = t.territory_id
       LEFT JOIN merchant m ON m.organization_id = t.organization_id AND m.id = t.merchant_id
       LEFT JOIN driver d ON d.organization_id = t.organization_id AND d.id = t.driver_id
       LEFT JOIN users u ON u.organization_id = d.organization_id AND u.id = d.user_id
      WHERE ($1::text[] IS NULL OR t.territory_id = ANY($1)) AND ($2::timestamptz IS NULL OR t.created_at >= $2) AND ($3::timestamptz IS NULL OR t.created_at < $3)
      ORDER BY t.created_at, t.id LIMIT $4`,
    [territoryIds, period.from ?? null, period.to ?? null, limit],
  );
  return rows;
}

/** Users of the drivers linked to a territory (driver_territory), e.g. to notify a zone. */
export async function driverUserIdsOfTerritory(tx: Tx, territoryId: string): Promise<string[]> {
  const { rows } = await tx.query<{ user_id: string }>(
    `SELECT d.user_id FROM driver d JOIN driver_territory dt ON dt.organization_id = d.organization_id AND dt.driver_id = d.id WHERE dt.territory_id = $1`,
    [territoryId],
  );
  return rows.map((r) => r.user_id);
}
