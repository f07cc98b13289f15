import type { Tx } from '../../../platform/db/index.js';
import type { SnakeRow } from '../../../platform/db/columns.js';
import type { deliveryExpressRequest } from '../tables.js';

export type ExpressRecord = typeof deliveryExpressRequest.$inferSelect;
/** An express request as EXPRESS_SELECT returns it: the table's columns, the points as numbers. */
export type ExpressRow = Omit<SnakeRow<ExpressRecord>, 'organization_id' | 'pickup_location' | 'dropoff_location'> & {
  pickup_lon: number | null;
  pickup_lat: number | null;
  dropoff_lon: number | null;
  dropoff_lat: number | null;
};

const EXPRESS_SELECT = `SELECT id, status, territory_id, merchant_id, branch_id, requested_by_user_id, customer_name, customer_phone, pickup_address, dropoff_address,
  (pickup_location)[0] AS pickup_lon, (pickup_location)[1] AS pickup_lat, (dropoff_location)[0] AS dropoff_lon, (dropoff_location)[1] AS dropoff_lat,
  package_description, declared_value, delivery_fee, source_channel, trip_id, deliver_after, deliver_before, pickup_after, pickup_before, units,
  weight_kg, volume_l, created_at, updated_at FROM delivery_express_request`;

export async function findExpress(tx: Tx, id: string): Promise<ExpressRow | null> {
  return (await tx.query<ExpressRow>(`${EXPRESS_SELECT} WHERE id = $1`, [id])).rows[0] ?? null;
}

export async function findExpressFacts(tx: Tx, id: string): Promise<Pick<ExpressRow, 'merchant_id' | 'status' | 'trip_id'> | null> {
  const { rows } = await tx.query<Pick<ExpressRow, 'merchant_id' | 'status' | 'trip_id'>>(
    'SELECT merchant_id, status, trip_id FROM delivery_express_request WHERE id = $1',
    [id],
  );
  return rows[0] ?? null;
}

export async function listExpress(
  tx: Tx,
  merchantId: string,
  q: { status?: ExpressRow['status']; after: string | null; limit: number },
): Promise<ExpressRow[]> {
  const { rows } = await tx.query<ExpressRow>(
    `${EXPRESS_SELECT} WHERE merchant_id = $1 AND ($2::text IS NULL OR status = $2) AND ($3::text IS NULL OR id < $3) ORDER BY id DESC LIMIT $4`,
    [merchantId, q.status ?? null, q.after, q.limit],
  );
  return rows;
}

export interface NewExpress {
  organizationId: string;
  id: string;
  territoryId: string | null;
  merchantId: string;
  branchId: string | null;
  requestedByUserId: string;
  customerName: string;
  customerPhone: string | null;
  pickupAddress: string;
  dropoffAddress: string;
  /** Native point literals `(lon,lat)`. */
  pickupPoint: string;
  dropoffPoint: string;
  packageDescription: string | null;
  declaredValue: string;
  deliveryFee: string;
  sourceChannel: ExpressRecord['sourceChannel'];
  /** The windows and load given to its trip. */
  deliverAfter: Date | null;
  deliverBefore: Date | null;
  pickupAfter: Date | null;
  pickupBefore: Date | null;
  units: number;
  weightKg: number | null;
  volumeL: number | null;
}

export async function insertExpress(tx: Tx, e: NewExpress): Promise<void> {
  await tx.query(
    `INSERT INTO delivery_express_request (organization_id, id, territory_id, merchant_id, branch_id, requested_by_user_id, customer_name, customer_phone,
                                           pickup_address, dropoff_address, pickup_location, dropoff_location, package_description, declared_value, delivery_fee, source_channel,
                                           deliver_after, deliver_before, pickup_after, pickup_before, units, weight_kg, volume_l)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11::point, $12::point, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23)`,
    [
      e.organizationId,
      e.id,
      e.territoryId,
      e.merchantId,
      e.branchId,
      e.requestedByUserId,
      e.customerName,
      e.customerPhone,
      e.pickupAddress,
      e.dropoffAddress,
      e.pickupPoint,
      e.dropoffPoint,
      e.packageDescription,
      e.declaredValue,
      e.deliveryFee,
      e.sourceChannel,
      e.deliverAfter,
      e.deliverBefore,
      e.pickupAfter,
      e.pickupBefore,
      e.units,
      e.weightKg,
      e.volumeL,
    ],
  );
}

/** Locks an express request for a change by its merchant. */
export async function lockExpress(tx: Tx, id: string): Promise<ExpressRow | null> {
  return (await tx.query<ExpressRow>(`${EXPRESS_SELECT} WHERE id = $1 FOR UPDATE`, [id])).rows[0] ?? null;
}

/** The recipient and dropoff of a request (null fields keep their value). */
export async function reviseExpress(
  tx: Tx,
  id: string,
  c: {
    customerName: string | null;
    customerPhone: string | null;
    dropoffAddress: string | null;
    dropoffPoint: string | null;
    packageDescription: string | null;
    declaredValue: string | null;
  },
): Promise<void> {
  await tx.query(
    `UPDATE delivery_express_request SET customer_name = COALESCE($2, customer_name), customer_phone = COALESCE($3, customer_phone),
            dropoff_address = COALESCE($4, dropoff_address), dropoff_location = COALESCE($5::point, dropoff_location),
            package_description = COALESCE($6, package_description), declared_value = COALESCE($7, declared_value), updated_at = now()
      WHERE id = $1`,
    [id, c.customerName, c.customerPhone, c.dropoffAddress, c.dropoffPoint, c.packageDescription, c.declaredValue],
  );
}

/** Moves an express request to `to` from one of `from`, recording its trip; null when it was in no such state. */
export async function moveExpress(
  tx: Tx,
  q: { organizationId: string; id: string; tripId: string; to: string; from: string[] },
): Promise<Pick<ExpressRow, 'id' | 'merchant_id' | 'territory_id'> | null> {
  const { rows } = await tx.query<Pick<ExpressRow, 'id' | 'merchant_id' | 'territory_id'>>(
    `UPDATE delivery_express_request SET status = $3, trip_id = COALESCE(trip_id, $2), updated_at = now()
      WHERE organization_id = $4 AND id = $1 AND status = ANY($5::text[]) RETURNING id, merchant_id, territory_id`,
    [q.id, q.tripId, q.to, q.organizationId, q.from],
  );
  return rows[0] ?? null;
}
