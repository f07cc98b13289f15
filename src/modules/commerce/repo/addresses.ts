import type { Tx } from '../../../platform/db/index.js';
import type { SnakeRow } from '../../../platform/db/columns.js';
import type { customerAddress } from '../tables.js';

/** An address as ADDRESS_COLUMNS returns it: the table's columns, the point as two numbers. */
export type AddressRow = Omit<SnakeRow<typeof customerAddress.$inferSelect>, 'organization_id' | 'location' | 'changed_xid'> & {
  lon: number;
  lat: number;
};

export const ADDRESS_COLUMNS = 'id, user_id, label, address, (location)[0] AS lon, (location)[1] AS lat, notes, created_at';
const ADDRESS_SELECT = `SELECT ${ADDRESS_COLUMNS} FROM customer_address`;

/** An address of this customer, or null (another customer's address is as missing as an unknown one). */
export async function findCustomerAddress(tx: Tx, userId: string, id: string): Promise<AddressRow | null> {
  return (await tx.query<AddressRow>(`${ADDRESS_SELECT} WHERE id = $1 AND user_id = $2`, [id, userId])).rows[0] ?? null;
}

export async function listCustomerAddresses(tx: Tx, userId: string, q: { after: string | null; limit: number }): Promise<AddressRow[]> {
  const { rows } = await tx.query<AddressRow>(
    `${ADDRESS_SELECT} WHERE user_id = $1 AND ($2::text IS NULL OR id < $2) ORDER BY id DESC LIMIT $3`,
    [userId, q.after, q.limit],
  );
  return rows;
}

export async function insertAddress(
  tx: Tx,
  a: { organizationId: string; id: string; userId: string; label: string | null; address: string; point: string; notes: string | null },
): Promise<void> {
  await tx.query(
    'INSERT INTO customer_address (organization_id, id, user_id, label, address, location, notes) VALUES ($1, $2, $3, $4, $5, $6::point, $7)',
    [a.organizationId, a.id, a.userId, a.label, a.address, a.point, a.notes],
  );
}

/** Offline sync: the customer's addresses changed in a pull window (`clause` from the sync registry, parameters from $2). */
export async function syncAddresses(
  tx: Tx,
  userId: string,
  clause: { where: string; orderLimit: string; params: unknown[] },
): Promise<(AddressRow & { sync_xid: string })[]> {
  const { rows } = await tx.query<AddressRow & { sync_xid: string }>(
    `SELECT a.changed_xid::text AS sync_xid, id, user_id, label, address, (location)[0] AS lon, (location)[1] AS lat, notes, created_at FROM customer_address a
      WHERE user_id = $1 AND ${clause.where} ${clause.orderLimit}`,
    [userId, ...clause.params],
  );
  return rows;
}
