import { and, count, eq, ne } from 'drizzle-orm';
import { prepared, type Prepared, type Tx } from '../../../platform/db/index.js';
import { scopedSql, scopeSql, type TerritoryScope } from '../../../platform/scope.js';
import { trip, tripRejection } from '../tables.js';
import type { FailureReason, PinLock, PinStage, TripStatus } from '../schemas.js';
import { selectList, type SnakeRow } from '../../../platform/db/columns.js';

/** The points of a trip travel as numbers (x = lon, y = lat); the offline-sync marker stays out of the rows. */
const TRIP_POINTS = { pickupLocation: ['pickup_lon', 'pickup_lat'], dropoffLocation: ['dropoff_lon', 'dropoff_lat'] } as const;
type TripRecord = Omit<typeof trip.$inferSelect, keyof typeof TRIP_POINTS | 'changedXid'>;

/**
 * A trip as the logistics reads return it: every column of `trip` (derived from the table), its points as numbers,
 * and, joined, the user of the driver and the owner of the merchant (event audiences, PIN visibility) and the recipient's
 * phone and name (the live tracking link's for a recipient without an account, else the customer's account's).
 */
export type TripRow = SnakeRow<TripRecord> & {
  pickup_lon: number;
  pickup_lat: number;
  dropoff_lon: number;
  dropoff_lat: number;
  driver_user_id: string | null;
  merchant_user_id: string | null;
  /** The recipient's phone and name: his live tracking link's (no account) or his account's. */
  recipient_phone: string | null;
  recipient_name: string | null;
};

/**
 * The recipient's contact, read by scalar subqueries (index lookups for the rows returned only, after any LIMIT): as
 * joins they changed the plans of the lists (GET /trips ran a hash join and a sort instead of the backward key scan).
 */
const RECIPIENT_LINK =
  'FROM trip_recipient_link rl WHERE rl.organization_id = t.organization_id AND rl.trip_id = t.id AND rl.revoked_at IS NULL';
const CUSTOMER_USER = 'FROM user_contact cu WHERE cu.organization_id = t.organization_id AND cu.id = t.customer_user_id';

/** The trip read from `source` (the table, or a CTE named `t` returning its rows), its select list generated from the table. */
const tripSelectFrom = (source: string) => `
  SELECT ${selectList(trip, 't', { omit: ['changedXid'], points: TRIP_POINTS })},
         d.user_id AS driver_user_id, m.owner_user_id AS merchant_user_id,
         COALESCE((SELECT rl.recipient_phone ${RECIPIENT_LINK}), (SELECT cu.phone ${CUSTOMER_USER})) AS recipient_phone,
         COALESCE((SELECT rl.recipient_name ${RECIPIENT_LINK}), (SELECT cu.display_name ${CUSTOMER_USER})) AS recipient_name
    FROM ${source}
    LEFT JOIN driver d ON d.organization_id = t.organization_id AND d.id = t.driver_id
    LEFT JOIN merchant m ON m.organization_id = t.organization_id AND m.id = t.merchant_id`;

/** The one trip read (hot: GET /trips, trip by id). */
export const TRIP_SELECT = tripSelectFrom('trip t');

/**
 * Trips that earn their driver his driver_earning, and when: a completed delivery, and a failed one (the attempt was
 * driven) once it ended: closed (failed) or brought back to the merchant (returned).
 */
const EARNING_TRIP_SQL = `status IN ('completed', 'returned', 'failed')`;
const EARNED_AT_SQL = 'COALESCE(completed_at, returned_at, failed_at)';

const ACTIVE_SQL = `('pending', 'assigned', 'accepted', 'picked_up', 'in_transit')`;

export async function findTrip(tx: Tx, id: string, lock = false): Promise<TripRow | null> {
  // NO KEY UPDATE: serializes state changes of the trip without blocking foreign-key checks (geofence, proofs).
  const { rows } = await tx.query<TripRow>(`${TRIP_SELECT} WHERE t.id = $1${lock ? ' FOR NO KEY UPDATE OF t' : ''}`, [id]);
  return rows[0] ?? null;
}

/** Trips by id (any status, in id order). */
export async function tripsByIds(tx: Tx, ids: string[]): Promise<TripRow[]> {
  if (ids.length === 0) return [];
  const { rows } = await tx.query<TripRow>(`${TRIP_SELECT} WHERE t.id = ANY($1::text[]) ORDER BY t.id`, [ids]);
  return rows;
}

/** A driver's trips still `assigned` or `accepted`, locked in id order. */
export async function lockOpenTripsOfDriver(tx: Tx, driverId: string): Promise<TripRow[]> {
  const { rows } = await tx.query<TripRow>(
    `${TRIP_SELECT} WHERE t.driver_id = $1 AND t.status IN ('assigned', 'accepted') ORDER BY t.id FOR NO KEY UPDATE OF t`,
    [driverId],
  );
  return rows;
}

/** A driver's trips under way (assigned to in_transit). */
export async function activeTripsOfDriver(tx: Tx, driverId: string): Promise<TripRow[]> {
  const { rows } = await tx.query<TripRow>(
    `${TRIP_SELECT} WHERE t.driver_id = $1 AND t.status IN ('assigned', 'accepted', 'picked_up', 'in_transit')`,
    [driverId],
  );
  return rows;
}

/** Whether a trip that is not cancelled links to the order / express request. */
export async function liveTripExists(tx: Tx, column: 'order_id' | 'express_request_id', id: string): Promise<boolean> {
  const linked = column === 'order_id' ? trip.orderId : trip.expressRequestId;
  const found = await tx.orm
    .select({ id: trip.id })
    .from(trip)
    .where(and(eq(linked, id), ne(trip.status, 'cancelled')))
    .limit(1);
  return found.length > 0;
}

export type NewTripRow = Pick<
  typeof trip.$inferInsert,
  | 'organizationId'
  | 'id'
  | 'serviceMode'
  | 'sourceChannel'
  | 'territoryId'
  | 'merchantId'
  | 'customerUserId'
  | 'orderId'
  | 'expressRequestId'
  | 'pickupAddress'
  | 'dropoffAddress'
  | 'notes'
  | 'deliveryFee'
  | 'driverEarning'
  | 'cashToCollect'
  | 'currency'
  | 'pickupPin'
  | 'deliveryPin'
  | 'createdByUserId'
  | 'promisedAt'
  | 'deliverAfter'
  | 'deliverBefore'
  | 'pickupAfter'
  | 'pickupBefore'
  | 'units'
  | 'weightKg'
  | 'volumeL'
  | 'serviceMin'
> & { pickup: string; dropoff: string };

/** Inserts a trip; `pickup` / `dropoff` are native point literals (`pointSql`). */
export async function insertTrip(tx: Tx, v: NewTripRow): Promise<void> {
  await tx.query(
    `INSERT INTO trip (organization_id, id, service_mode, source_channel, territory_id, merchant_id, customer_user_id, order_id, express_request_id,
                       pickup_location, pickup_address, dropoff_location, dropoff_address, notes, delivery_fee, driver_earning, currency,
                       pickup_pin, delivery_pin, created_by_user_id, promised_at, deliver_after, deliver_before, cash_to_collect,
                       pickup_after, pickup_before, units, weight_kg, volume_l, service_min)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::point, $11, $12::point, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24,
             $25, $26, $27, $28, $29, $30)`,
    [
      v.organizationId,
      v.id,
      v.serviceMode,
      v.sourceChannel,
      v.territoryId,
      v.merchantId,
      v.customerUserId,
      v.orderId,
      v.expressRequestId,
      v.pickup,
      v.pickupAddress,
      v.dropoff,
      v.dropoffAddress,
      v.notes,
      v.deliveryFee,
      v.driverEarning,
      v.currency,
      v.pickupPin,
      v.deliveryPin,
      v.createdByUserId,
      v.promisedAt ?? null,
      v.deliverAfter ?? null,
      v.deliverBefore ?? null,
      v.cashToCollect ?? '0',
      v.pickupAfter ?? null,
      v.pickupBefore ?? null,
      v.units ?? 1,
      v.weightKg ?? null,
      v.volumeL ?? null,
      v.serviceMin ?? null,
    ],
  );
}

/** Staff changed the promise (and window); the delay marker starts over. */
export async function setPromise(
  tx: Tx,
  id: string,
  p: { promisedAt: Date; deliverAfter: Date | null; deliverBefore: Date | null },
): Promise<void> {
  await tx.query(
    'UPDATE trip SET promised_at = $2, deliver_after = $3, deliver_before = $4, delayed_at = NULL, updated_at = now() WHERE id = $1',
    [id, p.promisedAt, p.deliverAfter, p.deliverBefore],
  );
}

/** A trip's pickup window, load and service time (all given: the caller merges what stays). */
export async function setWindowsLoad(
  tx: Tx,
  id: string,
  w: {
    pickupAfter: Date | null;
    pickupBefore: Date | null;
    units: number;
    weightKg: number | null;
    volumeL: number | null;
    serviceMin: number | null;
  },
): Promise<void> {
  await tx.query(
    `UPDATE trip SET pickup_after = $2, pickup_before = $3, units = $4, weight_kg = $5, volume_l = $6, service_min = $7, updated_at = now()
      WHERE id = $1`,
    [id, w.pickupAfter, w.pickupBefore, w.units, w.weightKg, w.volumeL, w.serviceMin],
  );
}

/** Columns stamped when a trip enters a state. */
const STAGE_COLUMN: Partial<Record<TripStatus, keyof TripRow>> = {
  assigned: 'assigned_at',
  accepted: 'accepted_at',
  picked_up: 'picked_up_at',
  in_transit: 'in_transit_at',
  completed: 'completed_at',
  cancelled: 'cancelled_at',
  returned: 'returned_at',
};

/** What a status change writes besides the status, the reason and the stage stamp. */
export type TripStatusEffect =
  | { assign: { driverId: string; planId: string | null; stopOrder: number | null; dropoffOrder: number | null } }
  | { unassign: true }
  | { failure: { reason: FailureReason; note: string | null } }
  /** Delivery of a trip with cash to collect: what the driver collected, and why it differs (a discrepancy) when it does. */
  | { cash: { collected: string; discrepancyReason: string | null } };

/** Writes a status change (the caller checked the transition on the locked row); returns the trip as `findTrip` reads it then. */
export async function updateTripStatus(
  tx: Tx,
  id: string,
  to: TripStatus,
  reason: string | null,
  effect?: TripStatusEffect,
): Promise<TripRow> {
  const stamp = STAGE_COLUMN[to] ? `, ${STAGE_COLUMN[to]} = now()` : '';
  let sets = '';
  let params: unknown[] = [];
  if (effect && 'assign' in effect) {
    sets = ', driver_id = $4, accepted_at = NULL, plan_id = $5, stop_order = $6, dropoff_order = $7';
    params = [effect.assign.driverId, effect.assign.planId, effect.assign.stopOrder, effect.assign.dropoffOrder];
  } else if (effect && 'unassign' in effect) {
    sets = ', driver_id = NULL, assigned_at = NULL, accepted_at = NULL, plan_id = NULL, stop_order = NULL, dropoff_order = NULL';
  } else if (effect && 'failure' in effect) {
    sets = ', failed_at = now(), failure_reason = $4, failure_note = $5';
    params = [effect.failure.reason, effect.failure.note];
  } else if (effect && 'cash' in effect) {
    sets = ', cash_collected = $4, cash_discrepancy_reason = $5';
    params = [effect.cash.collected, effect.cash.discrepancyReason];
  }
  const { rows } = await tx.query<TripRow>(
    `WITH t AS (
       UPDATE trip SET status = $2, status_reason = COALESCE($3, status_reason), updated_at = now()${stamp}${sets} WHERE id = $1 RETURNING *)
     ${tripSelectFrom('t')}`,
    [id, to, reason, ...params],
  );
  return rows[0]!;
}

/** Clears the wrong-PIN counter of the pickup, the delivery or both. */
export async function resetPinAttempts(tx: Tx, id: string, which: PinLock): Promise<void> {
  const sets = {
    pickup: 'pickup_pin_attempts = 0',
    delivery: 'delivery_pin_attempts = 0',
    both: 'pickup_pin_attempts = 0, delivery_pin_attempts = 0',
  }[which];
  await tx.query(`UPDATE trip SET ${sets}, updated_at = now() WHERE id = $1`, [id]);
}

/** Counts a wrong PIN; returns the attempts so far. */
export async function countWrongPin(tx: Tx, id: string, stage: PinStage): Promise<number> {
  const column = stage === 'pickup' ? 'pickup_pin_attempts' : 'delivery_pin_attempts';
  const { rows } = await tx.query<{ n: number }>(
    `UPDATE trip SET ${column} = ${column} + 1, updated_at = now() WHERE id = $1 RETURNING ${column} AS n`,
    [id],
  );
  return rows[0]!.n;
}

/** New pickup / dropoff (point literals or null to keep), addresses (null to keep) and the territory. */
export async function updateTripCoordinates(
  tx: Tx,
  id: string,
  c: {
    pickup: string | null;
    pickupAddress: string | null;
    dropoff: string | null;
    dropoffAddress: string | null;
    territoryId: string | null;
  },
): Promise<void> {
  await tx.query(
    `UPDATE trip SET pickup_location = COALESCE($2::point, pickup_location), pickup_address = COALESCE($3, pickup_address),
            dropoff_location = COALESCE($4::point, dropoff_location), dropoff_address = COALESCE($5, dropoff_address),
            territory_id = $6, updated_at = now() WHERE id = $1`,
    [id, c.pickup, c.pickupAddress, c.dropoff, c.dropoffAddress, c.territoryId],
  );
}

/** Whose trips a list shows: a territory scope (staff), a merchant owner's, a customer's or a driver's user's. */
export type TripViewer = { scope: TerritoryScope } | { merchantOwner: string } | { customer: string } | { driverUser: string };

export interface TripListFilter {
  status: TripStatus | null;
  driverId: string | null;
  territoryId: string | null;
  merchantId: string | null;
  orderId: string | null;
  from: string | null;
  to: string | null;
  after: string | null;
  limit: number;
}

/**
 * GET /trips: the statement of a trip list with only the filters given (no `($n IS NULL OR ...)`), newest first: each shape is
 * one prepared statement whose generic plan walks the (organization_id, id) key backwards, or the index of the
 * filter; bench/logistics.ts checks the plans as generic plans.
 */
export function listTripsStatement(f: TripListFilter, viewer: TripViewer): { statement: Prepared; params: unknown[] } {
  const params: unknown[] = [];
  const where: string[] = [];
  const add = (value: unknown, condition: (n: number) => string) => {
    params.push(value);
    where.push(condition(params.length));
  };
  if (f.status !== null) add(f.status, (n) => `t.status = $${n}`);
  if (f.driverId !== null) add(f.driverId, (n) => `t.driver_id = $${n}`);
  if (f.territoryId !== null) add(f.territoryId, (n) => `t.territory_id = $${n}`);
  if (f.merchantId !== null) add(f.merchantId, (n) => `t.merchant_id = $${n}`);
  if (f.orderId !== null) add(f.orderId, (n) => `t.order_id = $${n}`);
  if (f.from !== null) add(f.from, (n) => `t.created_at >= $${n}::timestamptz`);
  if (f.to !== null) add(f.to, (n) => `t.created_at < $${n}::timestamptz`);
  if (f.after !== null) add(f.after, (n) => `t.id < $${n}`);
  if ('merchantOwner' in viewer) add(viewer.merchantOwner, (n) => `m.owner_user_id = $${n}`);
  else if ('customer' in viewer) add(viewer.customer, (n) => `t.customer_user_id = $${n}`);
  else if ('driverUser' in viewer) add(viewer.driverUser, (n) => `d.user_id = $${n}`);
  else if (viewer.scope !== null) add(viewer.scope, (n) => scopedSql('t.territory_id', n));
  params.push(f.limit);
  return {
    statement: prepared(`${TRIP_SELECT}\n  WHERE ${where.join(' AND ') || 'true'}\n  ORDER BY t.id DESC LIMIT $${params.length}`, {
      generic: true,
    }),
    params,
  };
}

/** GET /trips: newest first, `limit` rows after the cursor id (the statement above). */
export async function listTripRows(tx: Tx, f: TripListFilter, viewer: TripViewer): Promise<TripRow[]> {
  const { statement, params } = listTripsStatement(f, viewer);
  const { rows } = await tx.query<TripRow>(statement, params);
  return rows;
}

/** The offline-sync pull of a driver's trips: `select` is TRIP_SELECT wrapped by the sync window, `where`/`orderLimit` its clause from $2. */
export async function driverTripsInWindow(
  tx: Tx,
  wrap: (select: string) => string,
  driverUserId: string,
  c: { where: string; orderLimit: string; params: unknown[] },
) {
  const { rows } = await tx.query<TripRow & { sync_xid: string }>(
    `${wrap(TRIP_SELECT)} WHERE d.user_id = $1 AND ${c.where} ${c.orderLimit}`,
    [driverUserId, ...c.params],
  );
  return rows;
}

/** Dispatch board: pending trips in scope, oldest first. */
export async function pendingTrips(tx: Tx, scope: TerritoryScope, limit = 100): Promise<TripRow[]> {
  const { rows } = await tx.query<TripRow>(
    `${TRIP_SELECT} WHERE t.status = 'pending' AND ${scopeSql('t.territory_id', 1)} ORDER BY t.id LIMIT $2`,
    [scope, limit],
  );
  return rows;
}

export type AtRisk = 'unassigned_too_long' | 'not_accepted_in_time' | 'driver_silent';

/** Dispatch board: active trips in scope at risk (unassigned or unaccepted longer than the timeout, driver silent 5 minutes). */
export async function atRiskTrips(tx: Tx, scope: TerritoryScope, timeoutS: number, limit = 100): Promise<(TripRow & { risk: AtRisk })[]> {
  const { rows } = await tx.query<TripRow & { risk: AtRisk }>(
    `SELECT * FROM (SELECT x.*,
        CASE
          WHEN x.status = 'pending' AND x.created_at < now() - make_interval(secs => $2) THEN 'unassigned_too_long'
          WHEN x.status = 'assigned' AND x.assigned_at < now() - make_interval(secs => $2) THEN 'not_accepted_in_time'
          WHEN x.status IN ('accepted', 'picked_up', 'in_transit') AND (d.last_seen_at IS NULL OR d.last_seen_at < now() - interval '5 minutes') THEN 'driver_silent'
        END AS risk
        FROM (${TRIP_SELECT} WHERE t.status IN ${ACTIVE_SQL} AND ${scopeSql('t.territory_id', 1)}) x
        LEFT JOIN driver d ON d.organization_id = x.organization_id AND d.id = x.driver_id) y
      WHERE risk IS NOT NULL ORDER BY id LIMIT $3`,
    [scope, timeoutS, limit],
  );
  return rows;
}

/** Live map: active trips in scope. */
export async function activeTripsInScope(tx: Tx, scope: TerritoryScope, limit = 5000): Promise<TripRow[]> {
  const { rows } = await tx.query<TripRow>(
    `${TRIP_SELECT} WHERE t.status IN ${ACTIVE_SQL} AND ${scopeSql('t.territory_id', 1)} ORDER BY t.id LIMIT $2`,
    [scope, limit],
  );
  return rows;
}

export interface Period {
  from?: string | null;
  to?: string | null;
}

/** Trips per status in the scope (null = the organization), created in [from, to). */
export async function tripStatusCounts(tx: Tx, scope: TerritoryScope, period: Period = {}): Promise<Record<string, number>> {
  const { rows } = await tx.query<{ status: string; n: number }>(
    `SELECT status, count(*)::int AS n FROM trip
      WHERE ${scopeSql('territory_id', 1)} AND ($2::timestamptz IS NULL OR created_at >= $2) AND ($3::timestamptz IS NULL OR created_at < $3)
      GROUP BY status`,
    [scope, period.from ?? null, period.to ?? null],
  );
  return Object.fromEntries(rows.map((r) => [r.status, r.n]));
}

export type TripReportRow = Pick<
  TripRow,
  | 'id'
  | 'created_at'
  | 'completed_at'
  | 'cancelled_at'
  | 'status'
  | 'service_mode'
  | 'territory_id'
  | 'merchant_id'
  | 'driver_id'
  | 'order_id'
  | 'pickup_address'
  | 'dropoff_address'
  | 'delivery_fee'
  | 'driver_earning'
  | 'currency'
> & { territory_name: string | null; merchant_name: string | null; driver_name: string | null };

/** One row per trip in the scope (null = the organization) created in [from, to), oldest first (report exports). */
export async function tripReportRows(tx: Tx, scope: TerritoryScope, period: Period = {}, limit = 100_000): Promise<TripReportRow[]> {
  const { rows } = await tx.query<TripReportRow>(
    `SELECT t.id, t.created_at, t.completed_at, t.cancelled_at, t.status, t.service_mode, t.territory_id, tr.name AS territory_name,
            t.merchant_id, m.name AS merchant_name, t.driver_id, u.display_name AS driver_name, t.order_id, t.pickup_address, t.dropoff_address,
            t.delivery_fee, t.driver_earning, t.currency
       FROM trip t
       LEFT JOIN territory tr ON tr.organization_id = t.organization_id AND tr.id = t.territory_id
       LEFT JOIN merchant m ON m.organization_id = t.organization_id AND m.id = t.merchant_id
       LEFT JOIN driver d ON d.organization_id = t.organization_id AND d.id = t.driver_id
       LEFT JOIN user_contact u ON u.organization_id = d.organization_id AND u.id = d.user_id
      WHERE ${scopeSql('t.territory_id', 1)} AND ($2::timestamptz IS NULL OR t.created_at >= $2) AND ($3::timestamptz IS NULL OR t.created_at < $3)
      ORDER BY t.created_at, t.id LIMIT $4`,
    [scope, period.from ?? null, period.to ?? null, limit],
  );
  return rows;
}

export interface TripEarning {
  trip_id: string;
  amount: string;
  currency: string;
  completed_at: Date;
}

/** The earnings of a driver's earning trips that ended at or before `upTo`, oldest first. */
export async function completedTripEarnings(tx: Tx, driverId: string, upTo: Date): Promise<TripEarning[]> {
  const { rows } = await tx.query<TripEarning>(
    `SELECT id AS trip_id, driver_earning::text AS amount, currency, ${EARNED_AT_SQL} AS completed_at FROM trip
      WHERE driver_id = $1 AND ${EARNING_TRIP_SQL} AND ${EARNED_AT_SQL} <= $2 ORDER BY 4, id`,
    [driverId, upTo],
  );
  return rows;
}

export type EarningRow = Pick<TripRow, 'id' | 'status' | 'driver_earning' | 'delivery_fee' | 'order_id'> & { completed_at: Date };

/** A driver's earning trips that ended in [from, to): totals, and one page (newest first, `limit` rows after the cursor id). */
export async function driverEarnings(
  tx: Tx,
  driverId: string,
  q: { from: string | null; to: string | null; after: string | null; limit: number },
) {
  const args = [driverId, q.from, q.to];
  const where = `driver_id = $1 AND ${EARNING_TRIP_SQL} AND ($2::timestamptz IS NULL OR ${EARNED_AT_SQL} >= $2) AND ($3::timestamptz IS NULL OR ${EARNED_AT_SQL} < $3)`;
  const totals = (
    await tx.query<{ n: number; total: string; currency: string | null }>(
      `SELECT count(*)::int AS n, COALESCE(sum(driver_earning), 0) AS total, max(currency) AS currency FROM trip WHERE ${where}`,
      args,
    )
  ).rows[0]!;
  const { rows } = await tx.query<EarningRow>(
    `SELECT id, status, ${EARNED_AT_SQL} AS completed_at, driver_earning, delivery_fee, order_id FROM trip WHERE ${where} AND ($4::text IS NULL OR id < $4) ORDER BY id DESC LIMIT $5`,
    [...args, q.after, q.limit],
  );
  return { totals, rows };
}

/** The assigned trips whose offer expired (where the acceptance timeout is on), across organizations (system transaction). */
export async function dueOffers(tx: Tx, now: Date, batch: number) {
  const { rows } = await tx.query<{ organization_id: string; id: string; assigned_at: string }>(
    `SELECT t.organization_id, t.id, t.assigned_at::text AS assigned_at FROM trip t JOIN logistics_settings s ON s.organization_id = t.organization_id
      WHERE t.status = 'assigned' AND s.acceptance_timeout_enabled AND t.assigned_at <= $1::timestamptz - make_interval(secs => s.acceptance_timeout_s)
      ORDER BY t.assigned_at LIMIT $2`,
    [now, batch],
  );
  return rows;
}

/**
 * Locks the trip of an expired offer (SKIP LOCKED) if it is still that offer: assigned at `assignedAt` (full
 * precision, as text; one already expired and re-offered is not this one) and past the timeout by `now`.
 */
export async function lockExpiredOffer(tx: Tx, tripId: string, assignedAt: string, now: Date): Promise<boolean> {
  const { rows } = await tx.query<{ id: string }>(
    `SELECT t.id FROM trip t JOIN logistics_settings s ON s.organization_id = t.organization_id
      WHERE t.id = $1 AND t.status = 'assigned' AND t.assigned_at = $3::timestamptz AND s.acceptance_timeout_enabled
        AND t.assigned_at <= $2::timestamptz - make_interval(secs => s.acceptance_timeout_s)
      FOR NO KEY UPDATE OF t SKIP LOCKED`,
    [tripId, now, assignedAt],
  );
  return rows.length > 0;
}

/** Records a driver's rejection of a trip (`timed_out`: an automatic offer he let expire); a repeat changes nothing. */
export async function insertRejection(tx: Tx, r: Omit<typeof tripRejection.$inferInsert, 'createdAt'>): Promise<void> {
  await tx.orm.insert(tripRejection).values(r).onConflictDoNothing();
}

export async function hasRejected(tx: Tx, tripId: string, driverId: string): Promise<boolean> {
  const found = await tx.orm
    .select({ tripId: tripRejection.tripId })
    .from(tripRejection)
    .where(and(eq(tripRejection.tripId, tripId), eq(tripRejection.driverId, driverId)))
    .limit(1);
  return found.length > 0;
}

/** Automatic offers of the trip that expired. */
export async function timedOutOffers(tx: Tx, tripId: string): Promise<number> {
  const [r] = await tx.orm
    .select({ n: count() })
    .from(tripRejection)
    .where(and(eq(tripRejection.tripId, tripId), eq(tripRejection.kind, 'timed_out')));
  return r!.n;
}
