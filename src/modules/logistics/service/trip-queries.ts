import type { Actor } from '../../../platform/auth.js';
import type { Tx } from '../../../platform/db/index.js';
import { haversineMeters, toGeoPoint } from '../../../platform/geo.js';
import { pageRequest, toPage } from '../../../platform/pagination.js';
import { formatMoney } from '../../../platform/money.js';
import { driverOut, lonLatOf, tripOut } from './mappers.js';
import { scopeOf } from '../../../platform/scope.js';
import { TERMINAL_STATUSES } from './transitions.js';
import { type DriverRow, driversWithCapacity, findDriver, positionedDrivers } from '../repo/drivers.js';
import type { TripRow, TripViewer } from '../repo/trips.js';
import { type StopKind, type TripStatus } from '../schemas.js';
import { breadcrumb, geofenceEntries, historyTrack, keptTrack } from '../repo/locations.js';
import { averageSpeedKmh, type LogisticsSettings } from '../repo/settings.js';
import * as trips from '../repo/trips.js';

export { listTripsStatement, tripReportRows, tripStatusCounts, type Period, type TripReportRow } from '../repo/trips.js';
export { driverUserIdsOfTerritory } from '../repo/drivers.js';

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

/** Whose trips the actor may list: merchant owner, customer, driver, staff (sub-admins: their territories). */
function viewerOf(actor: Actor): TripViewer {
  switch (actor.kind) {
    case 'comercio':
      return { merchantOwner: actor.userId };
    case 'delivery':
      return { customer: actor.userId };
    case 'repartidor':
      return { driverUser: actor.userId };
    default:
      return { scope: scopeOf(actor) };
  }
}

export async function listTrips(tx: Tx, actor: Actor, q: TripListQuery) {
  const page = pageRequest(q);
  const rows = await trips.listTripRows(
    tx,
    {
      status: q.status ?? null,
      driverId: q.driver_id ?? null,
      territoryId: q.territory_id ?? null,
      merchantId: q.merchant_id ?? null,
      orderId: q.order_id ?? null,
      from: q.from ?? null,
      to: q.to ?? null,
      after: page.after,
      limit: page.limit + 1,
    },
    viewerOf(actor),
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
  const speedKmh = await averageSpeedKmh(tx, t.organization_id);
  const driver: DriverRow | null = t.driver_id ? await findDriver(tx, t.driver_id) : null;
  const since = t.accepted_at ?? t.assigned_at;
  const until = t.completed_at ?? t.cancelled_at ?? t.failed_at;
  const crumbs = driver && since ? await breadcrumb(tx, driver.id, since, until, BREADCRUMB_LIMIT) : [];
  const geofence = await geofenceEntries(tx, t.id);
  // Live position only while the trip is active; once it ended, the last point recorded during the trip
  // (the delivered point), never where the driver went afterwards.
  const active = ACTIVE_TRIP.has(t.status);
  const lastCrumb = crumbs.length ? crumbs[crumbs.length - 1]! : null;
  const last = active
    ? driver
      ? lonLatOf(driver.last_lon, driver.last_lat)
      : null
    : lastCrumb
      ? { lon: Number(lastCrumb.lon), lat: Number(lastCrumb.lat) }
      : null;
  const lastAt = active ? (driver?.last_location_at ?? null) : (lastCrumb?.recorded_at ?? null);
  const nextStop = ['assigned', 'accepted'].includes(t.status)
    ? 'pickup'
    : ['picked_up', 'in_transit'].includes(t.status)
      ? 'dropoff'
      : null;
  const pickup = { lon: t.pickup_lon, lat: t.pickup_lat };
  const dropoff = { lon: t.dropoff_lon, lat: t.dropoff_lat };
  let remaining: number | null = null;
  if (nextStop && last)
    remaining =
      haversineMeters(last, nextStop === 'pickup' ? pickup : dropoff) + (nextStop === 'pickup' ? haversineMeters(pickup, dropoff) : 0);
  const speed = (speedKmh * 1000) / 3600;
  return {
    trip_id: t.id,
    status: t.status,
    driver_id: t.driver_id,
    last_location: toGeoPoint(last),
    last_location_at: lastAt,
    next_stop: nextStop as StopKind | null,
    distance_remaining_m: remaining === null ? null : Math.round(remaining),
    eta_seconds: remaining === null ? null : Math.round(remaining / speed),
    breadcrumb: crumbs.map((c) => ({
      location: toGeoPoint({ lon: Number(c.lon), lat: Number(c.lat) })!,
      recorded_at: c.recorded_at,
      speed_mps: c.speed_mps,
    })),
    geofence_entries: geofence.map((g) => ({ stop: g.stop, entered_at: g.entered_at, distance_m: Math.round(Number(g.distance_m)) })),
  };
}

export const TRACK_PAGE_DEFAULT = 1000;
export const TRACK_PAGE_MAX = 5000;

/**
 * A trip's route, oldest point first, a page at a time (`after`: the `next_after` of the previous page). Once the
 * trip ended, from its kept track (trip_track); while it is active (or for a trip that ended without one), from the
 * GPS history bounded by the trip's times, so only the partitions of its days are read.
 */
export async function track(tx: Tx, t: TripRow, q: { after?: string; limit?: number }) {
  const limit = Math.min(q.limit ?? TRACK_PAGE_DEFAULT, TRACK_PAGE_MAX);
  const after = q.after ? new Date(q.after) : null;
  const since = t.accepted_at ?? t.assigned_at;
  const until = !TERMINAL_STATUSES.includes(t.status)
    ? null
    : (t.completed_at ?? t.returned_at ?? t.failed_at ?? t.cancelled_at ?? t.updated_at);
  const kept = until ? await keptTrack(tx, t.id, after, limit + 1) : null;
  const rows = kept ?? (t.driver_id && since ? await historyTrack(tx, t.driver_id, since, until, after, limit + 1) : []);
  const page = rows.slice(0, limit);
  return {
    trip_id: t.id,
    status: t.status,
    source: kept ? ('kept' as const) : ('history' as const),
    points: page.map((c) => ({ lon: Number(c.lon), lat: Number(c.lat), recorded_at: new Date(c.recorded_at), speed_mps: c.speed_mps })),
    next_after: rows.length > limit ? new Date(page[page.length - 1]!.recorded_at) : null,
  };
}

/** Dispatch board: unassigned trips (oldest first), at-risk trips with their reason, drivers with free capacity. */
export async function dispatchBoard(tx: Tx, actor: Actor, settings: Pick<LogisticsSettings, 'acceptance_timeout_s'>) {
  const scope = scopeOf(actor);
  const unassigned = await trips.pendingTrips(tx, scope);
  const atRisk = await trips.atRiskTrips(tx, scope, settings.acceptance_timeout_s);
  const drivers = await driversWithCapacity(tx, scope);
  const counts = await trips.tripStatusCounts(tx, scope);
  return {
    generated_at: new Date(),
    acceptance_timeout_s: settings.acceptance_timeout_s,
    counts,
    unassigned: unassigned.map((t) => tripOut(t, actor)),
    at_risk: atRisk.map((t) => ({ trip: tripOut(t, actor), risk: t.risk })),
    available_drivers: drivers.map(driverOut),
  };
}

/** GeoJSON FeatureCollection: drivers' last positions (Point) and active trips (LineString pickup → dropoff). */
export async function liveMap(tx: Tx, actor: Actor) {
  const scope = scopeOf(actor);
  const drivers = await positionedDrivers(tx, scope);
  const active = await trips.activeTripsInScope(tx, scope);
  return {
    type: 'FeatureCollection' as const,
    features: [
      ...drivers.map((d) => ({
        type: 'Feature' as const,
        id: d.id,
        geometry: toGeoPoint(lonLatOf(d.last_lon, d.last_lat))! as Record<string, unknown>,
        properties: {
          kind: 'driver',
          driver_id: d.id,
          display_name: d.display_name,
          available: d.available,
          active_trips: d.active_trips,
          capacity: d.capacity,
          last_location_at: d.last_location_at?.toISOString() ?? null,
        },
      })),
      ...active.map((t: TripRow) => ({
        type: 'Feature' as const,
        id: t.id,
        geometry: {
          type: 'LineString',
          coordinates: [
            [t.pickup_lon, t.pickup_lat],
            [t.dropoff_lon, t.dropoff_lat],
          ],
        } as Record<string, unknown>,
        properties: {
          kind: 'trip',
          trip_id: t.id,
          status: t.status,
          driver_id: t.driver_id,
          territory_id: t.territory_id,
          order_id: t.order_id,
        },
      })),
    ],
  };
}

/** Per completed trip (and failed delivery, once closed or returned): the trip's driver_earning (the flat fee of the settings unless set at creation). */
export async function earnings(
  tx: Tx,
  driver: DriverRow,
  settings: Pick<LogisticsSettings, 'currency'>,
  q: { from?: string; to?: string; limit?: number; cursor?: string },
) {
  const page = pageRequest(q);
  const { totals, rows } = await trips.driverEarnings(tx, driver.id, {
    from: q.from ?? null,
    to: q.to ?? null,
    after: page.after,
    limit: page.limit + 1,
  });
  return {
    currency: totals.currency ?? settings.currency,
    completed_trips: totals.n,
    total_earnings: formatMoney(totals.total),
    ...toPage(rows, page, (r) => ({
      trip_id: r.id,
      order_id: r.order_id,
      status: r.status,
      completed_at: r.completed_at,
      driver_earning: r.driver_earning,
      delivery_fee: r.delivery_fee,
    })),
  };
}
