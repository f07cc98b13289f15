import type { Tx } from '../../platform/db/index.js';
import type { SnakeRow } from '../../platform/db/columns.js';
import { scopeSql, type TerritoryScope } from '../../platform/scope.js';
import type { BannerState, Permissions } from './schemas.js';
import type { subadminProfile, zoneBanner } from './tables.js';

/** The sub-administration data layer: every statement of the module (profiles, territories, banners, counts). */

// ---------------------------------------------------------------- profiles

/** A profile with its user's email and phone and its own (not effective) territories. */
export type ProfileRow = Omit<
  SnakeRow<typeof subadminProfile.$inferSelect>,
  'permissions' | 'commission_min_percent' | 'commission_max_percent'
> & {
  permissions: Partial<Permissions>;
  commission_min_percent: string | null;
  commission_max_percent: string | null;
  email: string | null;
  phone: string | null;
  territory_ids: string[];
};

const PROFILE_SELECT = `
  SELECT p.organization_id, p.user_id, p.display_name, p.active, p.permissions, p.parent_subadmin_user_id, p.created_by_user_id,
         p.commission_min_percent, p.commission_max_percent, p.created_at, p.updated_at, u.email, u.phone,
         COALESCE((SELECT array_agg(ut.territory_id ORDER BY ut.territory_id) FROM user_territory ut
                    WHERE ut.organization_id = p.organization_id AND ut.user_id = p.user_id), '{}') AS territory_ids
    FROM subadmin_profile p JOIN user_contact u ON u.organization_id = p.organization_id AND u.id = p.user_id`;

export async function findProfile(tx: Tx, userId: string): Promise<ProfileRow | null> {
  return (await tx.query<ProfileRow>(`${PROFILE_SELECT} WHERE p.user_id = $1`, [userId])).rows[0] ?? null;
}

export async function lockProfile(tx: Tx, userId: string): Promise<void> {
  await tx.query('SELECT 1 FROM subadmin_profile WHERE user_id = $1 FOR UPDATE', [userId]);
}

export interface ProfileWrite {
  displayName: string;
  active: boolean;
  permissions: Permissions;
  parentId: string | null;
  min: string | null;
  max: string | null;
}

export async function insertProfile(
  tx: Tx,
  organizationId: string,
  userId: string,
  createdByUserId: string,
  p: ProfileWrite,
): Promise<void> {
  await tx.query(
    `INSERT INTO subadmin_profile (organization_id, user_id, display_name, active, permissions, parent_subadmin_user_id, created_by_user_id,
                                   commission_min_percent, commission_max_percent)
     VALUES ($1, $2, $3, $4, $5::jsonb, $6, $7, $8::numeric, $9::numeric)`,
    [organizationId, userId, p.displayName, p.active, JSON.stringify(p.permissions), p.parentId, createdByUserId, p.min, p.max],
  );
}

export async function updateProfile(tx: Tx, userId: string, p: ProfileWrite): Promise<void> {
  await tx.query(
    `UPDATE subadmin_profile SET display_name = $2, active = $3, permissions = $4::jsonb, parent_subadmin_user_id = $5,
            commission_min_percent = $6::numeric, commission_max_percent = $7::numeric, updated_at = now() WHERE user_id = $1`,
    [userId, p.displayName, p.active, JSON.stringify(p.permissions), p.parentId, p.min, p.max],
  );
}

/** The user's territories become exactly `ids`. */
export async function setUserTerritories(tx: Tx, organizationId: string, userId: string, ids: string[], byUserId: string): Promise<void> {
  await tx.query('DELETE FROM user_territory WHERE user_id = $1 AND NOT (territory_id = ANY($2::text[]))', [userId, ids]);
  await tx.query(
    `INSERT INTO user_territory (organization_id, user_id, territory_id, created_by_user_id) SELECT $1, $2, unnest($3::text[]), $4 ON CONFLICT DO NOTHING`,
    [organizationId, userId, ids, byUserId],
  );
}

/** Is `userId` below `ancestorId` in the parent chain? */
export async function isDescendant(tx: Tx, userId: string, ancestorId: string): Promise<boolean> {
  const { rows } = await tx.query(
    `WITH RECURSIVE up AS (
       SELECT user_id, parent_subadmin_user_id, 0 AS depth FROM subadmin_profile WHERE user_id = $1
       UNION ALL
       SELECT p.user_id, p.parent_subadmin_user_id, up.depth + 1 FROM subadmin_profile p JOIN up ON p.user_id = up.parent_subadmin_user_id WHERE up.depth < 32)
     SELECT 1 FROM up WHERE depth > 0 AND user_id = $2 LIMIT 1`,
    [userId, ancestorId],
  );
  return rows.length > 0;
}

/** Profiles (below `below` at any depth when given), newest user first. */
export async function listProfiles(
  tx: Tx,
  q: { below: string | null; active?: boolean; territoryId?: string; parentId?: string; after: string | null; limit: number },
): Promise<(ProfileRow & { id: string })[]> {
  const { rows } = await tx.query<ProfileRow & { id: string }>(
    `WITH RECURSIVE down AS (
       SELECT user_id, 0 AS depth FROM subadmin_profile WHERE $1::text IS NOT NULL AND parent_subadmin_user_id = $1
       UNION ALL
       SELECT p.user_id, down.depth + 1 FROM subadmin_profile p JOIN down ON p.parent_subadmin_user_id = down.user_id WHERE down.depth < 32)
     SELECT x.*, x.user_id AS id FROM (${PROFILE_SELECT}) x
      WHERE ($1::text IS NULL OR x.user_id IN (SELECT user_id FROM down))
        AND ($2::boolean IS NULL OR x.active = $2) AND ($3::text IS NULL OR $3 = ANY(x.territory_ids))
        AND ($4::text IS NULL OR x.parent_subadmin_user_id = $4) AND ($5::text IS NULL OR x.user_id < $5)
      ORDER BY x.user_id DESC LIMIT $6`,
    [q.below, q.active ?? null, q.territoryId ?? null, q.parentId ?? null, q.after, q.limit],
  );
  return rows;
}

/** Active sub-administrators (active users) holding the territory themselves (their chain narrows it further). */
export async function activeHoldersOfTerritory(tx: Tx, territoryId: string): Promise<string[]> {
  const { rows } = await tx.query<{ user_id: string }>(
    `SELECT ut.user_id FROM user_territory ut JOIN subadmin_profile p ON p.organization_id = ut.organization_id AND p.user_id = ut.user_id
      JOIN user_contact u ON u.organization_id = ut.organization_id AND u.id = ut.user_id
      WHERE ut.territory_id = $1 AND p.active AND u.active`,
    [territoryId],
  );
  return rows.map((r) => r.user_id);
}

/** One link of a sub-administrator's parent chain (depth 0 = himself), with his own territories. */
export interface ChainRow {
  user_id: string;
  active: boolean;
  permissions: Partial<Permissions>;
  commission_min_percent: string | null;
  commission_max_percent: string | null;
  territory_ids: string[];
  depth: number;
}

/** The user's profile and its ancestors, nearest first (at most `maxDepth` levels up). */
export async function parentChain(tx: Tx, organizationId: string, userId: string, maxDepth: number): Promise<ChainRow[]> {
  const { rows } = await tx.query<ChainRow>(
    `WITH RECURSIVE chain AS (
       SELECT user_id, parent_subadmin_user_id, active, permissions, commission_min_percent, commission_max_percent, 0 AS depth
         FROM subadmin_profile WHERE organization_id = $1 AND user_id = $2
       UNION ALL
       SELECT p.user_id, p.parent_subadmin_user_id, p.active, p.permissions, p.commission_min_percent, p.commission_max_percent, c.depth + 1
         FROM subadmin_profile p JOIN chain c ON p.organization_id = $1 AND p.user_id = c.parent_subadmin_user_id
        WHERE c.depth < $3)
     SELECT c.user_id, c.active, c.permissions, c.commission_min_percent::text, c.commission_max_percent::text, c.depth,
            COALESCE((SELECT array_agg(ut.territory_id ORDER BY ut.territory_id) FROM user_territory ut
                       WHERE ut.organization_id = $1 AND ut.user_id = c.user_id), '{}') AS territory_ids
       FROM chain c ORDER BY c.depth`,
    [organizationId, userId, maxDepth],
  );
  return rows;
}

/** Tells every instance (at commit) that sub-administration scopes changed. */
export async function notifyScopeChanged(tx: Tx, channel: string): Promise<void> {
  await tx.query('SELECT pg_notify($1, $2)', [channel, '']);
}

/** Active sub-administrators directly under `parentId` (null: all). */
export async function countActiveProfiles(tx: Tx, parentId: string | null): Promise<number> {
  const { rows } = await tx.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM subadmin_profile WHERE active AND ($1::text IS NULL OR parent_subadmin_user_id = $1)',
    [parentId],
  );
  return rows[0].n;
}

/** The organization of the current tenant transaction. */
export async function currentOrganization(tx: Tx): Promise<string> {
  return (await tx.query<{ org: string }>("SELECT current_setting('app.organization_id', true) AS org")).rows[0].org;
}

// ---------------------------------------------------------------- zone banners

export type BannerRow = Omit<SnakeRow<typeof zoneBanner.$inferSelect>, 'organization_id'> & { territory_ids: string[] };

const BANNER_SELECT = `
  SELECT b.id, b.title, b.body, b.image_storage_object_id, b.link_url, b.valid_from, b.valid_until, b.active, b.created_by_user_id,
         b.created_at, b.updated_at,
         COALESCE((SELECT array_agg(bt.territory_id ORDER BY bt.territory_id) FROM banner_territory bt
                    WHERE bt.organization_id = b.organization_id AND bt.banner_id = b.id), '{}') AS territory_ids
    FROM zone_banner b`;

/** The banner is linked to a territory of the scope (given as parameter `$n`; null = every banner). */
const bannerInScope = (n: number) =>
  `($${n}::text[] IS NULL OR EXISTS (SELECT 1 FROM banner_territory s WHERE s.organization_id = b.organization_id AND s.banner_id = b.id AND ${scopeSql('s.territory_id', n)}))`;

export async function findBanner(tx: Tx, id: string): Promise<BannerRow | null> {
  return (await tx.query<BannerRow>(`${BANNER_SELECT} WHERE b.id = $1`, [id])).rows[0] ?? null;
}

export type NewBannerRow = Omit<BannerRow, 'created_at' | 'updated_at'>;

/** A banner and its territory links. */
export async function insertBanner(tx: Tx, organizationId: string, b: NewBannerRow): Promise<void> {
  await tx.query(
    `INSERT INTO zone_banner (organization_id, id, title, body, image_storage_object_id, link_url, valid_from, valid_until, active, created_by_user_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
    [
      organizationId,
      b.id,
      b.title,
      b.body,
      b.image_storage_object_id,
      b.link_url,
      b.valid_from,
      b.valid_until,
      b.active,
      b.created_by_user_id,
    ],
  );
  await tx.query('INSERT INTO banner_territory (organization_id, banner_id, territory_id) SELECT $1, $2, unnest($3::text[])', [
    organizationId,
    b.id,
    b.territory_ids,
  ]);
}

/** Banners linked to the scope, optionally to one territory and in one state, newest first. */
export async function listBanners(
  tx: Tx,
  scope: TerritoryScope,
  q: { territoryId?: string; state?: BannerState; after: string | null; limit: number },
): Promise<BannerRow[]> {
  const { rows } = await tx.query<BannerRow>(
    `${BANNER_SELECT}
      WHERE ${bannerInScope(1)}
        AND ($2::text IS NULL OR EXISTS (SELECT 1 FROM banner_territory s WHERE s.organization_id = b.organization_id AND s.banner_id = b.id AND s.territory_id = $2))
        AND ($3::text IS NULL OR $3 = CASE WHEN NOT b.active THEN 'inactive' WHEN b.valid_until <= now() THEN 'expired' WHEN b.valid_from > now() THEN 'scheduled' ELSE 'live' END)
        AND ($4::text IS NULL OR b.id < $4)
      ORDER BY b.id DESC LIMIT $5`,
    [scope, q.territoryId ?? null, q.state ?? null, q.after, q.limit],
  );
  return rows;
}

/** Live banners linked to any of the territories, newest first (at most 20). */
export async function liveBanners(tx: Tx, territoryIds: string[]): Promise<BannerRow[]> {
  const { rows } = await tx.query<BannerRow>(
    `${BANNER_SELECT}
      WHERE b.active AND b.valid_from <= now() AND (b.valid_until IS NULL OR b.valid_until > now())
        AND EXISTS (SELECT 1 FROM banner_territory s WHERE s.organization_id = b.organization_id AND s.banner_id = b.id AND s.territory_id = ANY($1))
      ORDER BY b.id DESC LIMIT 20`,
    [territoryIds],
  );
  return rows;
}

/** Live and total banners linked to the scope (the dashboard). */
export async function bannerCounts(tx: Tx, scope: TerritoryScope): Promise<{ live: number; total: number }> {
  const { rows } = await tx.query<{ live: number; total: number }>(
    `SELECT count(*) FILTER (WHERE b.active AND b.valid_from <= now() AND (b.valid_until IS NULL OR b.valid_until > now()))::int AS live, count(*)::int AS total
       FROM zone_banner b WHERE ${bannerInScope(1)}`,
    [scope],
  );
  return rows[0];
}

/** Does an active banner show this stored image? */
export async function activeBannerShowsImage(tx: Tx, objectId: string): Promise<boolean> {
  const { rowCount } = await tx.query('SELECT 1 FROM zone_banner WHERE image_storage_object_id = $1 AND active', [objectId]);
  return rowCount > 0;
}
