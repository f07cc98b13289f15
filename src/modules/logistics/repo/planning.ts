import type { Tx } from '../../../platform/db/index.js';
import { scopeSql, type TerritoryScope } from '../../../platform/scope.js';
import type { DriverRow } from './drivers.js';
import { driverScopeSql } from './drivers.js';
import type { TripRow } from './trips.js';

const TRIP_COLUMNS = `t.id, t.status, t.territory_id, t.updated_at, t.cash_to_collect,
  t.pickup_after, t.pickup_before, t.deliver_after, t.deliver_before, t.units, t.weight_kg, t.volume_l, t.service_min,
  (t.pickup_location)[0] AS pickup_lon, (t.pickup_location)[1] AS pickup_lat,
  (t.dropoff_location)[0] AS dropoff_lon, (t.dropoff_location)[1] AS dropoff_lat,
  COALESCE((SELECT array_agg(r.driver_id ORDER BY r.driver_id) FROM trip_rejection r
             WHERE r.organization_id = t.organization_id AND r.trip_id = t.id), '{}') AS rejected_driver_ids`;

const DRIVER_COLUMNS = `d.id, d.status, d.available, d.capacity, d.active_trips, d.cash_limit,
  d.vehicle_type, d.capacity_units, d.capacity_weight_kg, d.capacity_volume_l, d.speed_factor,
  (d.last_location)[0] AS lon, (d.last_location)[1] AS lat,
  COALESCE((SELECT array_agg(dt.territory_id ORDER BY dt.territory_id) FROM driver_territory dt
             WHERE dt.organization_id = d.organization_id AND dt.driver_id = d.id), '{}') AS territory_ids`;

/** What batch planning reads of a trip. */
export type PlanningTripRow = Pick<
  TripRow,
  | 'id'
  | 'status'
  | 'territory_id'
  | 'updated_at'
  | 'cash_to_collect'
  | 'pickup_lon'
  | 'pickup_lat'
  | 'dropoff_lon'
  | 'dropoff_lat'
  | 'pickup_after'
  | 'pickup_before'
  | 'deliver_after'
  | 'deliver_before'
  | 'units'
  | 'weight_kg'
  | 'volume_l'
  | 'service_min'
> & { rejected_driver_ids: string[] };
/** What batch planning reads of a driver. */
export type PlanningDriverRow = Pick<
  DriverRow,
  | 'id'
  | 'status'
  | 'available'
  | 'capacity'
  | 'active_trips'
  | 'territory_ids'
  | 'cash_limit'
  | 'vehicle_type'
  | 'capacity_units'
  | 'capacity_weight_kg'
  | 'capacity_volume_l'
  | 'speed_factor'
> & { lon: number | null; lat: number | null };

export interface PlanningTripQuery {
  scope: TerritoryScope;
  tripIds: string[] | null;
  territoryId: string | null;
  createdFrom: Date | null;
  createdTo: Date | null;
  limit: number;
}

/** By ids: those trips in any status; otherwise the pending trips of the territory and/or creation window; in scope, oldest first. */
export async function planningTrips(tx: Tx, q: PlanningTripQuery): Promise<PlanningTripRow[]> {
  const { rows } = await tx.query<PlanningTripRow>(
    `SELECT ${TRIP_COLUMNS} FROM trip t
      WHERE ${scopeSql('t.territory_id', 1)}
        AND ($2::text[] IS NOT NULL OR t.status = 'pending')
        AND ($2::text[] IS NULL OR t.id = ANY($2))
        AND ($3::text IS NULL OR t.territory_id = $3)
        AND ($4::timestamptz IS NULL OR t.created_at >= $4)
        AND ($5::timestamptz IS NULL OR t.created_at < $5)
      ORDER BY t.created_at, t.id
      LIMIT $6`,
    [q.scope, q.tripIds, q.territoryId, q.createdFrom, q.createdTo, q.limit],
  );
  return rows;
}

/** Approved, available drivers with a known position in scope, optionally only `driverIds`. */
export async function planningDrivers(
  tx: Tx,
  q: { scope: TerritoryScope; driverIds: string[] | null; limit: number },
): Promise<PlanningDriverRow[]> {
  const { rows } = await tx.query<PlanningDriverRow>(
    `SELECT ${DRIVER_COLUMNS} FROM driver d
      WHERE d.status = 'approved' AND d.available AND d.last_location IS NOT NULL AND ${driverScopeSql(1)}
        AND ($2::text[] IS NULL OR d.id = ANY($2))
      ORDER BY d.id
      LIMIT $3`,
    [q.scope, q.driverIds, q.limit],
  );
  return rows;
}

/** Locks the trips, then the drivers, each in id order (FOR NO KEY UPDATE), and returns their current state. */
export async function lockForPlanCommit(
  tx: Tx,
  tripIds: string[],
  driverIds: string[],
): Promise<{ trips: PlanningTripRow[]; drivers: PlanningDriverRow[] }> {
  const trips = await tx.query<PlanningTripRow>(
    `SELECT ${TRIP_COLUMNS} FROM trip t WHERE t.id = ANY($1) ORDER BY t.id FOR NO KEY UPDATE OF t`,
    [tripIds],
  );
  const drivers = await tx.query<PlanningDriverRow>(
    `SELECT ${DRIVER_COLUMNS} FROM driver d WHERE d.id = ANY($1) ORDER BY d.id FOR NO KEY UPDATE OF d`,
    [driverIds],
  );
  return { trips: trips.rows, drivers: drivers.rows };
}
