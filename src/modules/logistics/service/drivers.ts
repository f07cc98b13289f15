import type { Actor } from '../../../platform/auth.js';
import { recordAudit } from '../../../platform/audit.js';
import type { LogisticsContext } from '../context.js';
import type { Tx } from '../../../platform/db/index.js';
import { AppError } from '../../../platform/errors.js';
import { pointSql } from '../../../platform/geo.js';
import { newId } from '../../../platform/ids.js';
import { pageRequest, toPage } from '../../../platform/pagination.js';
import { assertTransition } from '../../../platform/state-machine.js';
import { APPROVAL_ACTIONS, APPROVAL_TRANSITIONS, type ApprovalAction } from './transitions.js';
import { driverOut } from './mappers.js';
import { scopeOf } from '../../../platform/scope.js';
import { type ApprovalStatus, LOAD_LIMITS } from '../schemas.js';
import { type DriverRow } from '../repo/drivers.js';
import * as repo from '../repo/drivers.js';
import { assertTerritories } from './territories.js';

export { circleBox, driverScopeSql, NEARBY_SQL } from '../repo/drivers.js';

export interface NewDriver {
  user_id?: string;
  vehicle_type?: string;
  capacity?: number;
  territory_ids?: string[];
  capacity_units?: number | null;
  capacity_weight_kg?: number | null;
  capacity_volume_l?: number | null;
  speed_factor?: number | null;
}

type VehicleOverrides = Pick<NewDriver, 'capacity_units' | 'capacity_weight_kg' | 'capacity_volume_l' | 'speed_factor'>;

/** Overrides within LOAD_LIMITS (else 422 CAPACITY_INVALID with the field); null clears one. */
export function validateVehicleOverrides(o: VehicleOverrides): VehicleOverrides {
  const check = (field: keyof VehicleOverrides, min: number, max: number) => {
    const v = o[field];
    if (v === undefined || v === null) return;
    if (!Number.isFinite(v) || v <= min || v > max)
      throw AppError.unprocessable(`${field} is out of range`, 'CAPACITY_INVALID', [{ field, message: `must be > ${min} and <= ${max}` }]);
  };
  const u = o.capacity_units;
  if (u !== undefined && u !== null && (!Number.isInteger(u) || u < 1 || u > LOAD_LIMITS.units))
    throw AppError.unprocessable('capacity_units is out of range', 'CAPACITY_INVALID', [
      { field: 'capacity_units', message: `must be an integer from 1 to ${LOAD_LIMITS.units}` },
    ]);
  check('capacity_weight_kg', 0, LOAD_LIMITS.weight_kg);
  check('capacity_volume_l', 0, LOAD_LIMITS.volume_l);
  const [lo, hi] = LOAD_LIMITS.speed_factor;
  const f = o.speed_factor;
  if (f !== undefined && f !== null && (!Number.isFinite(f) || f < lo || f > hi))
    throw AppError.unprocessable('speed_factor is out of range', 'CAPACITY_INVALID', [
      { field: 'speed_factor', message: `must be between ${lo} and ${hi}` },
    ]);
  const out: VehicleOverrides = {};
  if (o.capacity_units !== undefined) out.capacity_units = o.capacity_units;
  if (o.capacity_weight_kg !== undefined) out.capacity_weight_kg = o.capacity_weight_kg;
  if (o.capacity_volume_l !== undefined) out.capacity_volume_l = o.capacity_volume_l;
  if (o.speed_factor !== undefined) out.speed_factor = o.speed_factor;
  return out;
}

export function createDriverService(ctx: LogisticsContext) {
  const load = (tx: Tx, id: string): Promise<DriverRow | null> => repo.findDriver(tx, id);

  /** A driver the actor may see (sub-administrators: only in their territories); anything else is 404. */
  async function getScoped(tx: Tx, actor: Actor, id: string): Promise<DriverRow> {
    const d = await repo.findDriver(tx, id, scopeOf(actor));
    if (!d) throw AppError.notFound('Driver');
    return d;
  }

  const driverOfUser = (tx: Tx, userId: string): Promise<DriverRow | null> => repo.driverOfUser(tx, userId);

  /** The driver profile of the calling `repartidor`; 404 DRIVER_PROFILE_NOT_FOUND when there is none. */
  async function self(tx: Tx, actor: Actor): Promise<DriverRow> {
    const d = await driverOfUser(tx, actor.userId);
    if (!d) throw noDriverProfile();
    return d;
  }

  async function create(tx: Tx, actor: Actor, input: NewDriver): Promise<DriverRow> {
    const selfService = actor.kind === 'repartidor';
    const userId = selfService ? actor.userId : input.user_id;
    if (!userId) throw AppError.badRequest('user_id is required', [{ field: 'user_id', message: 'required' }]);
    if (selfService && input.user_id && input.user_id !== actor.userId) throw AppError.forbidden('A driver may only register himself');
    if (!(await ctx.deps.identity.userExists(tx, userId, 'repartidor'))) {
      throw AppError.unprocessable('user_id must be a user with the repartidor role', 'USER_NOT_DRIVER', [
        { field: 'user_id', message: 'not a repartidor user' },
      ]);
    }
    const territoryIds = [...new Set(input.territory_ids ?? [])];
    if (actor.kind === 'subadmin' && territoryIds.length === 0) {
      throw AppError.unprocessable('A sub-administrator must place the driver in one of his territories', 'TERRITORY_REQUIRED', [
        { field: 'territory_ids', message: 'required' },
      ]);
    }
    await assertTerritories(tx, actor, territoryIds);
    const overrides = validateVehicleOverrides(input);
    const id = newId();
    const inserted = await repo.insertDriver(tx, {
      organizationId: actor.organizationId,
      id,
      userId,
      vehicleType: input.vehicle_type ?? 'motorcycle',
      capacity: input.capacity ?? 1,
    });
    if (!inserted) throw AppError.conflict('This user already has a driver profile', 'DRIVER_EXISTS');
    if (Object.keys(overrides).length) await repo.setVehicleOverrides(tx, id, overrides);
    if (territoryIds.length) await repo.linkTerritories(tx, actor.organizationId, id, territoryIds);
    const row = (await load(tx, id))!;
    await recordAudit(tx, actor, { action: 'driver.created', entityType: 'driver', entityId: id, after: driverOut(row) });
    return row;
  }

  async function list(
    tx: Tx,
    actor: Actor,
    q: { status?: ApprovalStatus; available?: boolean; territory_id?: string; limit?: number; cursor?: string },
  ) {
    const page = pageRequest(q);
    const rows = await repo.listDrivers(tx, {
      status: q.status ?? null,
      available: q.available ?? null,
      territoryId: q.territory_id ?? null,
      scope: scopeOf(actor),
      after: page.after,
      limit: page.limit + 1,
    });
    return toPage(rows, page, driverOut);
  }

  /**
   * approve / reject / suspend / reactivate along APPROVAL_TRANSITIONS, from the state the action names
   * (409 INVALID_TRANSITION otherwise); a driver that is not approved afterwards is made unavailable.
   */
  async function decide(tx: Tx, actor: Actor, id: string, action: ApprovalAction, reason?: string): Promise<DriverRow> {
    const before = await getScoped(tx, actor, id);
    const status = await repo.lockDriverStatus(tx, id);
    const { from, to } = APPROVAL_ACTIONS[action];
    if (status !== from) throw AppError.invalidTransition('Driver', status, to);
    assertTransition('Driver', APPROVAL_TRANSITIONS, status, to);
    await repo.setDriverStatus(tx, id, to, reason ?? null, actor.userId);
    const after = (await load(tx, id))!;
    await recordAudit(tx, actor, {
      action: `driver.${to}`,
      entityType: 'driver',
      entityId: id,
      before: driverOut(before),
      after: driverOut(after),
    });
    return after;
  }

  /**
   * Only approved drivers may become available (422 DRIVER_NOT_APPROVED); while staff hold the
   * availability lock the driver himself cannot go available (403 AVAILABILITY_LOCKED).
   */
  async function setAvailability(tx: Tx, actor: Actor, driver: DriverRow, available: boolean): Promise<DriverRow> {
    const locked = await repo.lockDriver(tx, driver.id);
    if (available && locked?.availability_locked) {
      throw AppError.forbidden("The administration has locked this driver's availability", 'AVAILABILITY_LOCKED');
    }
    // A deactivated user's driver profile stays unavailable (staff cannot put him back on the road either).
    if (!(await repo.setAvailable(tx, driver.id, available)))
      throw AppError.unprocessable('Only an approved driver of an active user can be available', 'DRIVER_NOT_APPROVED');
    const after = (await load(tx, driver.id))!;
    if (actor.kind !== 'repartidor') {
      await recordAudit(tx, actor, {
        action: 'driver.availability',
        entityType: 'driver',
        entityId: driver.id,
        before: { available: driver.available },
        after: { available },
      });
    }
    return after;
  }

  /** Staff: lock (the driver goes unavailable and cannot undo it) or unlock a driver's availability; audited. */
  async function setAvailabilityLock(tx: Tx, actor: Actor, driver: DriverRow, locked: boolean, reason?: string): Promise<DriverRow> {
    await repo.setAvailabilityLock(tx, driver.id, locked, reason ?? null, actor.userId);
    const after = (await load(tx, driver.id))!;
    await recordAudit(tx, actor, {
      action: locked ? 'driver.availability_locked' : 'driver.availability_unlocked',
      entityType: 'driver',
      entityId: driver.id,
      before: {
        available: driver.available,
        availability_locked: driver.availability_locked,
        availability_lock_reason: driver.availability_lock_reason,
      },
      after: {
        available: after.available,
        availability_locked: after.availability_locked,
        availability_lock_reason: after.availability_lock_reason,
      },
    });
    return after;
  }

  /**
   * Staff edit capacity, vehicle and territories of any driver (also self-registered ones). territory_ids
   * replaces the driver's links; a sub-administrator replaces only the links inside his territories
   * (links elsewhere stay) and must leave the driver in at least one of them. Audited.
   */
  async function update(
    tx: Tx,
    actor: Actor,
    id: string,
    input: { capacity?: number; vehicle_type?: string; territory_ids?: string[]; cash_limit?: string | null } & VehicleOverrides,
  ): Promise<DriverRow> {
    const before = await getScoped(tx, actor, id);
    const overrides = validateVehicleOverrides(input);
    await repo.lockDriver(tx, id);
    if (Object.keys(overrides).length) await repo.setVehicleOverrides(tx, id, overrides);
    if (input.capacity !== undefined || input.vehicle_type !== undefined)
      await repo.updateDriverProfile(tx, id, input.capacity ?? null, input.vehicle_type ?? null);
    if (input.cash_limit !== undefined) await repo.setDriverCashLimit(tx, id, input.cash_limit);
    if (input.territory_ids !== undefined) {
      const territoryIds = [...new Set(input.territory_ids)];
      const scope = scopeOf(actor);
      if (scope && territoryIds.length === 0) {
        throw AppError.unprocessable('A sub-administrator must leave the driver in one of his territories', 'TERRITORY_REQUIRED', [
          { field: 'territory_ids', message: 'required' },
        ]);
      }
      await assertTerritories(tx, actor, territoryIds);
      await repo.replaceTerritoryLinks(tx, actor.organizationId, id, scope, territoryIds);
    }
    const after = (await load(tx, id))!;
    await recordAudit(tx, actor, {
      action: 'driver.updated',
      entityType: 'driver',
      entityId: id,
      before: driverOut(before),
      after: driverOut(after),
    });
    return after;
  }

  /**
   * Approved drivers within `radius_m` of a point, nearest first: the circle's bounding box on the GiST
   * index of driver.last_location, then the exact haversine distance to filter and rank.
   */
  async function nearby(tx: Tx, actor: Actor, q: { lon: number; lat: number; radius_m: number; limit: number; available_only: boolean }) {
    const p = { lon: q.lon, lat: q.lat };
    const rows = await repo.nearbyDrivers(tx, {
      point: pointSql(p),
      box: repo.circleBox(p, q.radius_m),
      availableOnly: q.available_only,
      scope: scopeOf(actor),
      radiusM: q.radius_m,
      limit: q.limit,
    });
    return rows.map((r) => ({ ...driverOut(r), distance_m: Math.round(Number(r.distance_m) * 10) / 10 }));
  }

  return { load, getScoped, driverOfUser, self, create, list, decide, setAvailability, setAvailabilityLock, update, nearby };
}

export type DriverService = ReturnType<typeof createDriverService>;

/** The caller, a `repartidor`, has no driver profile (in his organization). */
export const noDriverProfile = () => new AppError(404, 'DRIVER_PROFILE_NOT_FOUND', 'You have no driver profile');
