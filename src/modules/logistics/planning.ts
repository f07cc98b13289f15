import type { Actor } from '../../platform/auth.js';
import type { Tx } from '../../platform/db/index.js';
import type { LonLat } from '../../platform/geo.js';
import { driverScopeSql } from './drivers.js';
import { scopeOf, type ApprovalStatus, type TripStatus } from './model.js';

/** What batch planning needs of a trip (read by the dispatch module through LogisticsApi). */
export interface PlanningTrip {
  id: string;
  status: TripStatus;
  territory_id: string | null;
  pickup: LonLat;
  dropoff: LonLat;
  /** Changes whenever the trip changes: the staleness marker of a plan. */
  updated_at: Date;
  /** Drivers who rejected this trip (never planned for it again). */
  rejected_driver_ids: string[];
}

/** What batch planning needs of a driver. */
export interface PlanningDriver {
  id: string;
  status: ApprovalStatus;
  available: boolean;
  capacity: number;
  active_trips: number;
  position: LonLat | null;
  territory_ids: string[];
}

export interface PlanningTripFilter {
  /** Exactly these trips, whatever their status (the caller reports the non-pending ones). */
  tripIds?: string[];
  territoryId?: string;
  createdFrom?: Date;
  createdTo?: Date;
  limit: number;
}

const TRIP_COLUMNS = `t.id, t.status, t.territory_id, t.updated_at,
  (t.pickup_location)[0] AS pickup_lon, (t.pickup_location)[1] AS pickup_lat,
  (t.dropoff_location)[0] AS dropoff_lon, (t.dropoff_location)[1] AS dropoff_lat,
  COALESCE((SELECT array_agg(r.driver_id ORDER BY r.driver_id) FROM trip_rejection r
             WHERE r.organization_id = t.organization_id AND r.trip_id = t.id), '{}') AS rejected_driver_ids`;

const DRIVER_COLUMNS = `d.id, d.status, d.available, d.capacity, d.active_trips,
  (d.last_location)[0] AS lon, (d.last_location)[1] AS lat,
  COALESCE((SELECT array_agg(dt.territory_id ORDER BY dt.territory_id) FROM driver_territory dt
             WHERE dt.organization_id = d.organization_id AND dt.driver_id = d.id), '{}') AS territory_ids`;

type TripSql = Omit<PlanningTrip, 'pickup' | 'dropoff'> & { pickup_lon: number; pickup_lat: number; dropoff_lon: number; dropoff_lat: number };
type DriverSql = Omit<PlanningDriver, 'position'> & { lon: number | null; lat: number | null };

const tripOf = (r: TripSql): PlanningTrip => ({
  id: r.id,
  status: r.status,
  territory_id: r.territory_id,
  pickup: { lon: Number(r.pickup_lon), lat: Number(r.pickup_lat) },
  dropoff: { lon: Number(r.dropoff_lon), lat: Number(r.dropoff_lat) },
  updated_at: r.updated_at,
  rejected_driver_ids: r.rejected_driver_ids,
});

const driverOf = (r: DriverSql): PlanningDriver => ({
  id: r.id,
  status: r.status,
  available: r.available,
  capacity: r.capacity,
  active_trips: r.active_trips,
  position: r.lon === null || r.lat === null ? null : { lon: Number(r.lon), lat: Number(r.lat) },
  territory_ids: r.territory_ids,
});

/**
 * Trips for a batch plan, as the actor may see them (sub-administrators: trips of their territories
 * only). By ids: those trips in any status; otherwise the pending trips of the territory and/or
 * creation window, oldest first, at most `limit`.
 */
export async function tripsForPlanning(tx: Tx, actor: Actor, f: PlanningTripFilter): Promise<PlanningTrip[]> {
  const { rows } = await tx.query<TripSql>(
    `SELECT ${TRIP_COLUMNS} FROM trip t
      WHERE ($1::text[] IS NULL OR t.territory_id = ANY($1))
        AND ($2::text[] IS NOT NULL OR t.status = 'pending')
        AND ($2::text[] IS NULL OR t.id = ANY($2))
        AND ($3::text IS NULL OR t.territory_id = $3)
        AND ($4::timestamptz IS NULL OR t.created_at >= $4)
        AND ($5::timestamptz IS NULL OR t.created_at < $5)
      ORDER BY t.created_at, t.id
      LIMIT $6`,
    [scopeOf(actor), f.tripIds ?? null, f.territoryId ?? null, f.createdFrom ?? null, f.createdTo ?? null, f.limit],
  );
  return rows.map(tripOf);
}

/**
 * Approved, available drivers with a known position, as the actor may see them (sub-administrators:
 * drivers linked to their territories, the rule of the driver lists), optionally only `driverIds`.
 */
export async function driversForPlanning(tx: Tx, actor: Actor, f: { driverIds?: string[]; limit: number }): Promise<PlanningDriver[]> {
  const { rows } = await tx.query<DriverSql>(
    `SELECT ${DRIVER_COLUMNS} FROM driver d
      WHERE d.status = 'approved' AND d.available AND d.last_location IS NOT NULL AND ${driverScopeSql('$1')}
        AND ($2::text[] IS NULL OR d.id = ANY($2))
      ORDER BY d.id
      LIMIT $3`,
    [scopeOf(actor), f.driverIds ?? null, f.limit],
  );
  return rows.map(driverOf);
}

/**
 * Locks the trips, then the drivers (each in id order: the order manual assignment takes, trip then
 * driver, so a batch commit and a manual assignment cannot deadlock) and returns their current state.
 */
export async function lockForPlanCommit(tx: Tx, tripIds: string[], driverIds: string[]): Promise<{ trips: PlanningTrip[]; drivers: PlanningDriver[] }> {
  const trips = await tx.query<TripSql>(`SELECT ${TRIP_COLUMNS} FROM trip t WHERE t.id = ANY($1) ORDER BY t.id FOR NO KEY UPDATE OF t`, [tripIds]);
  const drivers = await tx.query<DriverSql>(`SELECT ${DRIVER_COLUMNS} FROM driver d WHERE d.id = ANY($1) ORDER BY d.id FOR NO KEY UPDATE OF d`, [driverIds]);
  return { trips: trips.rows.map(tripOf), drivers: drivers.rows.map(driverOf) };
}
