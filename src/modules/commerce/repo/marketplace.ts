import type { Tx } from '../../../platform/db/index.js';
import { HAVERSINE_SQL, pointSql, type LonLat } from '../../../platform/geo.js';
import type { SnakeRow } from '../../../platform/db/columns.js';
import { scopeSql, type TerritoryScope } from '../../../platform/scope.js';
import type { catalogItem } from '../tables.js';
import { BRANCH_COLUMNS, type BranchRow } from './branches.js';

export interface MarketFilter {
  territoryId: string | null;
  /** Branches within `radius` metres of `at` (GiST box prefilter, then exact haversine). */
  at: LonLat | null;
  radius: number;
  scope: TerritoryScope;
}

/** The branch filter shared by the marketplace queries, with its parameters $1..$8. */
function branchFilter(f: MarketFilter) {
  const dLat = f.radius / 111_320;
  const dLon = f.at ? dLat / Math.max(Math.cos((f.at.lat * Math.PI) / 180), 0.01) : 0;
  const dist = f.at ? HAVERSINE_SQL('b.location', '$2::point') : 'NULL::float8';
  const where = `b.active AND ($1::text IS NULL OR b.territory_id = $1) AND ${scopeSql('b.territory_id', 8)}
    AND ($2::point IS NULL OR (b.location <@ box(point($3::float8, $4::float8), point($5::float8, $6::float8)) AND ${dist} <= $7))
    AND EXISTS (SELECT 1 FROM catalog_item c WHERE c.merchant_id = b.merchant_id AND c.available AND (c.branch_ids = '{}' OR b.id = ANY(c.branch_ids)))`;
  const at = f.at;
  const params = [
    f.territoryId,
    at ? pointSql(at) : null,
    at ? at.lon - dLon : 0,
    at ? at.lat - dLat : 0,
    at ? at.lon + dLon : 0,
    at ? at.lat + dLat : 0,
    f.radius,
    f.scope,
  ];
  return { where, dist, params };
}

/** Merchants with a matching active branch that offers an available item, by id descending (a page of merchants). */
export async function marketMerchantIds(tx: Tx, f: MarketFilter, page: { after: string | null; limit: number }): Promise<string[]> {
  const { where, params } = branchFilter(f);
  const { rows } = await tx.query<{ merchant_id: string }>(
    `SELECT DISTINCT b.merchant_id FROM merchant_branch b WHERE ${where} AND ($9::text IS NULL OR b.merchant_id < $9) ORDER BY b.merchant_id DESC LIMIT $10`,
    [...params, page.after, page.limit],
  );
  return rows.map((r) => r.merchant_id);
}

/** The matching branches of these merchants, nearest first. */
export async function marketBranches(
  tx: Tx,
  f: MarketFilter,
  merchantIds: string[],
): Promise<(BranchRow & { distance_m: number | null })[]> {
  const { where, dist, params } = branchFilter(f);
  const columns = BRANCH_COLUMNS.split(',')
    .map((c) =>
      c
        .trim()
        .replace(/^\(location\)/, '(b.location)')
        .replace(/^(\w+)$/, 'b.$1'),
    )
    .join(', ');
  const { rows } = await tx.query<BranchRow & { distance_m: number | null }>(
    `SELECT ${columns}, ${dist} AS distance_m FROM merchant_branch b WHERE ${where} AND b.merchant_id = ANY($9::text[]) ORDER BY distance_m NULLS LAST, b.id`,
    [...params, merchantIds],
  );
  return rows;
}

export type MarketItemRow = Pick<
  SnakeRow<typeof catalogItem.$inferSelect>,
  'id' | 'merchant_id' | 'name' | 'description' | 'price' | 'currency' | 'branch_ids' | 'image_object_id'
>;

/** The available items of these merchants, by name. */
export async function availableItems(tx: Tx, merchantIds: string[]): Promise<MarketItemRow[]> {
  const { rows } = await tx.query<MarketItemRow>(
    'SELECT id, merchant_id, name, description, price, currency, branch_ids, image_object_id FROM catalog_item WHERE merchant_id = ANY($1::text[]) AND available ORDER BY name, id',
    [merchantIds],
  );
  return rows;
}
