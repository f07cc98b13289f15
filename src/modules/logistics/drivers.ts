import type { Actor } from '../../platform/auth.js';
import { recordAudit } from '../../platform/audit.js';
import type { LogisticsContext } from './index.js';
import type { Tx } from '../../platform/db/index.js';
import { AppError } from '../../platform/errors.js';
import { HAVERSINE_SQL, pointSql, type LonLat } from '../../platform/geo.js';
import { newId } from '../../platform/ids.js';
import { pageRequest, toPage } from '../../platform/pagination.js';
import { assertTransition } from '../../platform/state-machine.js';
import { APPROVAL_ACTIONS, APPROVAL_TRANSITIONS, DRIVER_SELECT, driverOut, scopeOf, type ApprovalAction, type ApprovalStatus, type DriverRow } from './model.js';
import { assertTerritories } from './territories.js';

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

/** SQL condition: the driver is visible to the actor (sub-administrators: linked to one of their territories). */
export const driverScopeSql = (param: string) =>
  `(${param}::text[] IS NULL OR EXISTS (SELECT 1 FROM driver_territory s WHERE s.organization_id = d.organization_id AND s.driver_id = d.id AND s.territory_id = ANY(${param})))`;

/** $1 point, $2 bounding box, $3 available only, $4 sub-admin territories or null, $5 radius (m), $6 limit. */
export const NEARBY_SQL = `WITH c AS (
    SELECT d.id, ${HAVERSINE_SQL('d.last_location', '$1::point')} AS distance_m
      FROM driver d
     WHERE d.last_location <@ $2::box AND d.status = 'approved' AND ($3::boolean = false OR d.available) AND ${driverScopeSql('$4')}
  ), n AS (SELECT id, distance_m FROM c WHERE distance_m <= $5 ORDER BY distance_m, id LIMIT $6)
  SELECT x.*, n.distance_m FROM n JOIN (${DRIVER_SELECT}) x ON x.id = n.id ORDER BY n.distance_m, n.id`;

export interface NewDriver {
  user_id?: string;
  vehicle_type?: string;
  capacity?: number;
  territory_ids?: string[];
}

export function createDriverService(ctx: LogisticsContext) {
  async function load(tx: Tx, id: string): Promise<DriverRow | null> {
    const { rows } = await tx.query<DriverRow>(`${DRIVER_SELECT} WHERE d.id = $1`, [id]);
    return rows[0] ?? null;
  }

  /** A driver the actor may see (sub-administrators: only in their territories); anything else is 404. */
  async function getScoped(tx: Tx, actor: Actor, id: string): Promise<DriverRow> {
    const { rows } = await tx.query<DriverRow>(`${DRIVER_SELECT} WHERE d.id = $1 AND ${driverScopeSql('$2')}`, [id, scopeOf(actor)]);
    if (!rows[0]) throw AppError.notFound('Driver');
    return rows[0];
  }

  async function driverOfUser(tx: Tx, userId: string): Promise<DriverRow | null> {
    const { rows } = await tx.query<DriverRow>(`${DRIVER_SELECT} WHERE d.user_id = $1`, [userId]);
    return rows[0] ?? null;
  }

  /** The driver profile of the calling `repartidor`; 404 DRIVER_PROFILE_NOT_FOUND when there is none. */
  async function self(tx: Tx, actor: Actor): Promise<DriverRow> {
    const d = await driverOfUser(tx, actor.userId);
    if (!d) throw new AppError(404, 'DRIVER_PROFILE_NOT_FOUND', 'You have no driver profile');
    return d;
  }

  async function create(tx: Tx, actor: Actor, input: NewDriver): Promise<DriverRow> {
    const selfService = actor.kind === 'repartidor';
    const userId = selfService ? actor.userId : input.user_id;
    if (!userId) throw AppError.badRequest('user_id is required', [{ field: 'user_id', message: 'required' }]);
    if (selfService && input.user_id && input.user_id !== actor.userId) throw AppError.forbidden('A driver may only register himself');
    if (!(await ctx.deps.identity.userExists(tx, userId, 'repartidor'))) {
      throw AppError.unprocessable('user_id must be a user with the repartidor role', 'USER_NOT_DRIVER', [{ field: 'user_id', message: 'not a repartidor user' }]);
    }
    const territoryIds = [...new Set(input.territory_ids ?? [])];
    if (actor.kind === 'subadmin' && territoryIds.length === 0) {
      throw AppError.unprocessable('A sub-administrator must place the driver in one of his territories', 'TERRITORY_REQUIRED', [{ field: 'territory_ids', message: 'required' }]);
    }
    await assertTerritories(tx, actor, territoryIds);
    const id = newId();
    const inserted = await tx.query(
      `INSERT INTO driver (organization_id, id, user_id, vehicle_type, capacity) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (organization_id, user_id) DO NOTHING RETURNING id`,
      [actor.organizationId, id, userId, input.vehicle_type ?? 'motorcycle', input.capacity ?? 1],
    );
    if (inserted.rowCount === 0) throw AppError.conflict('This user already has a driver profile', 'DRIVER_EXISTS');
    if (territoryIds.length) {
      await tx.query(
        `INSERT INTO driver_territory (organization_id, driver_id, territory_id) SELECT $1, $2, unnest($3::text[]) ON CONFLICT DO NOTHING`,
        [actor.organizationId, id, territoryIds],
      );
    }
    const row = (await load(tx, id))!;
    await recordAudit(tx, actor, { action: 'driver.created', entityType: 'driver', entityId: id, after: driverOut(row) });
    return row;
  }

  async function list(tx: Tx, actor: Actor, q: { status?: ApprovalStatus; available?: boolean; territory_id?: string; limit?: number; cursor?: string }) {
    const page = pageRequest(q);
    const { rows } = await tx.query<DriverRow>(
      `${DRIVER_SELECT}
        WHERE ($1::text IS NULL OR d.status = $1) AND ($2::boolean IS NULL OR d.available = $2)
          AND ($3::text IS NULL OR EXISTS (SELECT 1 FROM driver_territory x WHERE x.organization_id = d.organization_id AND x.driver_id = d.id AND x.territory_id = $3))
          AND ${driverScopeSql('$4')} AND ($5::text IS NULL OR d.id < $5)
        ORDER BY d.id DESC LIMIT $6`,
      [q.status ?? null, q.available ?? null, q.territory_id ?? null, scopeOf(actor), page.after, page.limit + 1],
    );
    return toPage(rows, page, driverOut);
  }

  /**
   * approve / reject / suspend / reactivate along APPROVAL_TRANSITIONS, from the state the action names
   * (409 INVALID_TRANSITION otherwise); a driver that is not approved afterwards is made unavailable.
   */
  async function decide(tx: Tx, actor: Actor, id: string, action: ApprovalAction, reason?: string): Promise<DriverRow> {
    const before = await getScoped(tx, actor, id);
    const { rows } = await tx.query<{ status: ApprovalStatus }>('SELECT status FROM driver WHERE id = $1 FOR UPDATE', [id]);
    const { from, to } = APPROVAL_ACTIONS[action];
    if (rows[0].status !== from) throw AppError.invalidTransition('Driver', rows[0].status, to);
    assertTransition('Driver', APPROVAL_TRANSITIONS, rows[0].status, to);
    await tx.query(
      `UPDATE driver SET status = $2, status_reason = $3, available = CASE WHEN $2 = 'approved' THEN available ELSE false END,
              decided_by_user_id = $4, decided_at = now(), updated_at = now() WHERE id = $1`,
      [id, to, reason ?? null, actor.userId],
    );
    const after = (await load(tx, id))!;
    await recordAudit(tx, actor, { action: `driver.${to}`, entityType: 'driver', entityId: id, before: driverOut(before), after: driverOut(after) });
    return after;
  }

  /**
   * Only approved drivers may become available (422 DRIVER_NOT_APPROVED); while staff hold the
   * availability lock the driver himself cannot go available (403 AVAILABILITY_LOCKED).
   */
  async function setAvailability(tx: Tx, actor: Actor, driver: DriverRow, available: boolean): Promise<DriverRow> {
    const { rows } = await tx.query<{ availability_locked: boolean }>('SELECT availability_locked FROM driver WHERE id = $1 FOR NO KEY UPDATE', [driver.id]);
    if (available && rows[0]?.availability_locked) {
      throw AppError.forbidden('The administration has locked this driver\'s availability', 'AVAILABILITY_LOCKED');
    }
    // A deactivated user's driver profile stays unavailable (staff cannot put him back on the road either).
    const { rowCount } = await tx.query(
      `UPDATE driver d SET available = $2, last_seen_at = now(), updated_at = now()
        WHERE d.id = $1 AND ($2 = false OR (d.status = 'approved'
          AND EXISTS (SELECT 1 FROM users u WHERE u.organization_id = d.organization_id AND u.id = d.user_id AND u.active)))`,
      [driver.id, available],
    );
    if (rowCount === 0) throw AppError.unprocessable('Only an approved driver of an active user can be available', 'DRIVER_NOT_APPROVED');
    const after = (await load(tx, driver.id))!;
    if (actor.kind !== 'repartidor') {
      await recordAudit(tx, actor, { action: 'driver.availability', entityType: 'driver', entityId: driver.id, before: { available: driver.available }, after: { available } });
    }
    return after;
  }

  /** Staff: lock (the driver goes unavailable and cannot undo it) or unlock a driver's availability; audited. */
  async function setAvailabilityLock(tx: Tx, actor: Actor, driver: DriverRow, locked: boolean, reason?: string): Promise<DriverRow> {
    await tx.query(
      `UPDATE driver SET availability_locked = $2, availability_lock_reason = CASE WHEN $2 THEN $3 ELSE NULL END,
              availability_locked_by_user_id = CASE WHEN $2 THEN $4 ELSE NULL END, availability_locked_at = CASE WHEN $2 THEN now() ELSE NULL END,
              available = CASE WHEN $2 THEN false ELSE available END, updated_at = now()
        WHERE id = $1`,
      [driver.id, locked, reason ?? null, actor.userId],
    );
    const after = (await load(tx, driver.id))!;
    await recordAudit(tx, actor, {
      action: locked ? 'driver.availability_locked' : 'driver.availability_unlocked',
      entityType: 'driver',
      entityId: driver.id,
      before: { available: driver.available, availability_locked: driver.availability_locked, availability_lock_reason: driver.availability_lock_reason },
      after: { available: after.available, availability_locked: after.availability_locked, availability_lock_reason: after.availability_lock_reason },
    });
    return after;
  }

  /**
   * Staff edit capacity, vehicle and territories of any driver (also self-registered ones). territory_ids
   * replaces the driver's links; a sub-administrator replaces only the links inside his territories
   * (links elsewhere stay) and must leave the driver in at least one of them. Audited.
   */
  async function update(tx: Tx, actor: Actor, id: string, input: { capacity?: number; vehicle_type?: string; territory_ids?: string[] }): Promise<DriverRow> {
    const before = await getScoped(tx, actor, id);
    await tx.query('SELECT 1 FROM driver WHERE id = $1 FOR NO KEY UPDATE', [id]);
    if (input.capacity !== undefined || input.vehicle_type !== undefined) {
      await tx.query('UPDATE driver SET capacity = COALESCE($2, capacity), vehicle_type = COALESCE($3, vehicle_type), updated_at = now() WHERE id = $1', [
        id,
        input.capacity ?? null,
        input.vehicle_type ?? null,
      ]);
    }
    if (input.territory_ids !== undefined) {
      const territoryIds = [...new Set(input.territory_ids)];
      const scope = scopeOf(actor);
      if (scope && territoryIds.length === 0) {
        throw AppError.unprocessable('A sub-administrator must leave the driver in one of his territories', 'TERRITORY_REQUIRED', [{ field: 'territory_ids', message: 'required' }]);
      }
      await assertTerritories(tx, actor, territoryIds);
      await tx.query('DELETE FROM driver_territory WHERE driver_id = $1 AND ($2::text[] IS NULL OR territory_id = ANY($2)) AND NOT (territory_id = ANY($3::text[]))', [id, scope, territoryIds]);
      await tx.query(
        `INSERT INTO driver_territory (organization_id, driver_id, territory_id) SELECT $1, $2, unnest($3::text[]) ON CONFLICT DO NOTHING`,
        [actor.organizationId, id, territoryIds],
      );
      await tx.query('UPDATE driver SET updated_at = now() WHERE id = $1', [id]);
    }
    const after = (await load(tx, id))!;
    await recordAudit(tx, actor, { action: 'driver.updated', entityType: 'driver', entityId: id, before: driverOut(before), after: driverOut(after) });
    return after;
  }

  /**
   * Approved drivers within `radius_m` of a point, nearest first: the circle's bounding box on the GiST
   * index of driver.last_location, then the exact haversine distance to filter and rank.
   */
  async function nearby(tx: Tx, actor: Actor, q: { lon: number; lat: number; radius_m: number; limit: number; available_only: boolean }) {
    const p = { lon: q.lon, lat: q.lat };
    const { rows } = await tx.query<DriverRow & { distance_m: number }>(
      NEARBY_SQL,
      [pointSql(p), circleBox(p, q.radius_m), q.available_only, scopeOf(actor), q.radius_m, q.limit],
    );
    return rows.map((r) => ({ ...driverOut(r), distance_m: Math.round(Number(r.distance_m) * 10) / 10 }));
  }

  return { load, getScoped, driverOfUser, self, create, list, decide, setAvailability, setAvailabilityLock, update, nearby };
}

export type DriverService = ReturnType<typeof createDriverService>;
