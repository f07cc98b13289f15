import type { Tx } from '../../../platform/db/index.js';
import type { SnakeRow } from '../../../platform/db/columns.js';
import type { catalogItem } from '../tables.js';

export type CatalogItemRow = Omit<SnakeRow<typeof catalogItem.$inferSelect>, 'organization_id' | 'changed_xid'>;

const CATALOG_COLUMNS =
  'id, merchant_id, name, description, price, currency, available, branch_ids, image_object_id, created_at, updated_at';
const CATALOG_SELECT = `SELECT ${CATALOG_COLUMNS} FROM catalog_item`;

/** A sync window's SQL (from the mobile sync registry): its condition, order and limit, and parameters from $2. */
export interface SyncClause {
  where: string;
  orderLimit: string;
  params: unknown[];
}

export async function listCatalog(
  tx: Tx,
  merchantId: string,
  q: { available?: boolean; branchId?: string; after: string | null; limit: number },
): Promise<CatalogItemRow[]> {
  const { rows } = await tx.query<CatalogItemRow>(
    `${CATALOG_SELECT} WHERE merchant_id = $1 AND ($2::boolean IS NULL OR available = $2)
        AND ($3::text IS NULL OR branch_ids = '{}' OR $3 = ANY(branch_ids)) AND ($4::text IS NULL OR id < $4)
      ORDER BY id DESC LIMIT $5`,
    [merchantId, q.available ?? null, q.branchId ?? null, q.after, q.limit],
  );
  return rows;
}

export async function findMerchantItem(tx: Tx, merchantId: string, id: string): Promise<CatalogItemRow | null> {
  return (await tx.query<CatalogItemRow>(`${CATALOG_SELECT} WHERE id = $1 AND merchant_id = $2`, [id, merchantId])).rows[0] ?? null;
}

export type NewCatalogItem = Omit<CatalogItemRow, 'created_at' | 'updated_at'>;

export async function insertCatalogItem(tx: Tx, organizationId: string, i: NewCatalogItem): Promise<CatalogItemRow> {
  const { rows } = await tx.query<CatalogItemRow>(
    `INSERT INTO catalog_item (organization_id, id, merchant_id, name, description, price, currency, available, branch_ids, image_object_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::text[], $10)
     RETURNING ${CATALOG_COLUMNS}`,
    [organizationId, i.id, i.merchant_id, i.name, i.description, i.price, i.currency, i.available, i.branch_ids, i.image_object_id],
  );
  return rows[0];
}

/** Changes the given fields (undefined = unchanged; null clears description / image_object_id). */
export async function updateCatalogItem(
  tx: Tx,
  id: string,
  p: Partial<Pick<CatalogItemRow, 'name' | 'description' | 'price' | 'currency' | 'available' | 'branch_ids' | 'image_object_id'>>,
): Promise<CatalogItemRow> {
  const { rows } = await tx.query<CatalogItemRow>(
    `UPDATE catalog_item SET name = COALESCE($2, name), description = CASE WHEN $3 THEN $4 ELSE description END, price = COALESCE($5::numeric, price),
            currency = COALESCE($6, currency), available = COALESCE($7, available), branch_ids = COALESCE($8::text[], branch_ids),
            image_object_id = CASE WHEN $9 THEN $10 ELSE image_object_id END, updated_at = now()
      WHERE id = $1
      RETURNING ${CATALOG_COLUMNS}`,
    [
      id,
      p.name ?? null,
      p.description !== undefined,
      p.description ?? null,
      p.price ?? null,
      p.currency ?? null,
      p.available ?? null,
      p.branch_ids ?? null,
      p.image_object_id !== undefined,
      p.image_object_id ?? null,
    ],
  );
  return rows[0];
}

/** The merchants whose items show this stored image. */
export async function merchantsShowingImage(tx: Tx, objectId: string): Promise<string[]> {
  const { rows } = await tx.query<{ merchant_id: string }>('SELECT merchant_id FROM catalog_item WHERE image_object_id = $1', [objectId]);
  return rows.map((r) => r.merchant_id);
}

/** Of `ids`, those that are the merchant's branches (or catalog items). */
export async function ownedIds(tx: Tx, table: 'merchant_branch' | 'catalog_item', merchantId: string, ids: string[]): Promise<Set<string>> {
  const { rows } = await tx.query<{ id: string }>(
    `SELECT id FROM ${table === 'merchant_branch' ? 'merchant_branch' : 'catalog_item'} WHERE merchant_id = $1 AND id = ANY($2::text[])`,
    [merchantId, ids],
  );
  return new Set(rows.map((r) => r.id));
}

/** Offline sync: the merchant's items changed in a pull window. */
export async function syncCatalog(tx: Tx, merchantId: string, c: SyncClause): Promise<(CatalogItemRow & { sync_xid: string })[]> {
  const { rows } = await tx.query<CatalogItemRow & { sync_xid: string }>(
    `SELECT c.changed_xid::text AS sync_xid, ${CATALOG_COLUMNS} FROM catalog_item c WHERE merchant_id = $1 AND ${c.where} ${c.orderLimit}`,
    [merchantId, ...c.params],
  );
  return rows;
}

/** Whether the organization's catalog has any item (its prices are in the organization currency). */
export async function catalogItemsExist(tx: Tx): Promise<boolean> {
  const { rows } = await tx.query<{ used: boolean }>('SELECT EXISTS (SELECT 1 FROM catalog_item) AS used');
  return rows[0].used;
}
