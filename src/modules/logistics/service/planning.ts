import type { Actor } from '../../../platform/auth.js';
import type { Tx } from '../../../platform/db/index.js';
import type { LonLat } from '../../../platform/geo.js';
import { scopeOf } from '../../../platform/scope.js';
import { vehicleOf } from './mappers.js';
import { type ApprovalStatus, type TripStatus } from '../schemas.js';
import * as repo from '../repo/planning.js';
import type { PlanningDriverRow, PlanningTripRow } from '../repo/planning.js';

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
  /** Cash on delivery: what the driver collects at the door ("0.00": no cash). */
  cash_to_collect: string;
  /** Hard windows at the pickup and the drop-off (deliver_before: the scheduled window's end, the promise), null when open. */
  pickup_after: Date | null;
  pickup_before: Date | null;
  deliver_after: Date | null;
  deliver_before: Date | null;
  /** The load, and the minutes at each of its stops (null: the dispatch settings'). */
  units: number;
  weight_kg: number | null;
  volume_l: number | null;
  service_min: number | null;
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
  /** His own cash limit (null: the organization's). */
  cash_limit: string | null;
  /** Cash on delivery: his cash in hand is at or over his cash limit, so no cash trip is planned for him (set by driversForPlanning; false elsewhere). */
  at_cash_limit: boolean;
  /** His vehicle's units, kilograms, litres and speed factor: his overrides, else his vehicle type's (`capacity`: concurrent trips). */
  vehicle_type: string;
  capacity_units: number;
  capacity_weight_kg: number;
  capacity_volume_l: number;
  speed_factor: number;
}

export interface PlanningTripFilter {
  /** Exactly these trips, whatever their status (the caller reports the non-pending ones). */
  tripIds?: string[];
  territoryId?: string;
  createdFrom?: Date;
  createdTo?: Date;
  limit: number;
}

const tripOf = (r: PlanningTripRow): PlanningTrip => ({
  id: r.id,
  status: r.status,
  territory_id: r.territory_id,
  pickup: { lon: Number(r.pickup_lon), lat: Number(r.pickup_lat) },
  dropoff: { lon: Number(r.dropoff_lon), lat: Number(r.dropoff_lat) },
  updated_at: r.updated_at,
  rejected_driver_ids: r.rejected_driver_ids,
  cash_to_collect: r.cash_to_collect,
  pickup_after: r.pickup_after,
  pickup_before: r.pickup_before,
  deliver_after: r.deliver_after,
  deliver_before: r.deliver_before,
  units: r.units,
  weight_kg: r.weight_kg,
  volume_l: r.volume_l,
  service_min: r.service_min,
});

const driverOf = (r: PlanningDriverRow): PlanningDriver => ({
  id: r.id,
  status: r.status,
  available: r.available,
  capacity: r.capacity,
  active_trips: r.active_trips,
  position: r.lon === null || r.lat === null ? null : { lon: Number(r.lon), lat: Number(r.lat) },
  territory_ids: r.territory_ids,
  cash_limit: r.cash_limit,
  at_cash_limit: false,
  vehicle_type: r.vehicle_type,
  ...vehicleOf(r),
});

/**
 * Trips for a batch plan, as the actor may see them (sub-administrators: trips of their territories
 * only). By ids: those trips in any status; otherwise the pending trips of the territory and/or
 * creation window, oldest first, at most `limit`.
 */
export async function tripsForPlanning(tx: Tx, actor: Actor, f: PlanningTripFilter): Promise<PlanningTrip[]> {
  const rows = await repo.planningTrips(tx, {
    scope: scopeOf(actor),
    tripIds: f.tripIds ?? null,
    territoryId: f.territoryId ?? null,
    createdFrom: f.createdFrom ?? null,
    createdTo: f.createdTo ?? null,
    limit: f.limit,
  });
  return rows.map(tripOf);
}

/**
 * Approved, available drivers with a known position, as the actor may see them (sub-administrators:
 * drivers linked to their territories, the rule of the driver lists), optionally only `driverIds`.
 */
export async function driversForPlanning(tx: Tx, actor: Actor, f: { driverIds?: string[]; limit: number }): Promise<PlanningDriver[]> {
  return (await repo.planningDrivers(tx, { scope: scopeOf(actor), driverIds: f.driverIds ?? null, limit: f.limit })).map(driverOf);
}

/**
 * Locks the trips, then the drivers (each in id order: the order manual assignment takes, trip then
 * driver, so a batch commit and a manual assignment cannot deadlock) and returns their current state.
 */
export async function lockForPlanCommit(
  tx: Tx,
  tripIds: string[],
  driverIds: string[],
): Promise<{ trips: PlanningTrip[]; drivers: PlanningDriver[] }> {
  const locked = await repo.lockForPlanCommit(tx, tripIds, driverIds);
  return { trips: locked.trips.map(tripOf), drivers: locked.drivers.map(driverOf) };
}
