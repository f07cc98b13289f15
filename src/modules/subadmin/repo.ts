import type { Tx } from '../../platform/db/index.js';
import type { SnakeRow } from '../../platform/db/columns.js';
import { scopeSql, type TerritoryScope } from '../../platform/scope.js';
import type { Permissions } from './model.js';
import { selectList } from '../../platform/db/columns.js';
import { subadminProfile, zoneBanner } from './tables.js';

/** The subadmin module's SQL (first part: the scope chain, cache invalidation, dashboard figures, banner images). */

/** One link of a sub-administrator's chain of parents (derived from the profile table). */
export type ChainRow = Pick<SnakeRow<typeof subadminProfile.$inferSelect>, 'user_id' | 'active'> & {
  permissions: Partial<Permissions>;
  /** numeric as text */
  commission_min_percent: string | null;
  commission_max_percent: string | null;
  territory_ids: string[];
  depth: number;
};

/** The profile of a user and its parents, nearest first, at most `maxDepth` levels up, each with its territories. */
export async function profileChain(tx: Tx, organizationId: string, userId: string, maxDepth: number): Promise<ChainRow[]> {
  const { rows } = await tx.query<ChainRow>(
    `WITH RECURSIVE chain AS (
       SELECT user_id, parent_subadmin_user_id, active, permissions, commission_min_percent, commission_max_percent, 0 AS depth
         FROM subadmin_profile WHERE organization_id = $1 AND user_id = $2
       UNION ALL
       SELECT p.user_id, p.parent_subadmin_user_id, p.active, p.permissions, p.commission_min_percent, p.commission_max_percent, c.depth + 1
         FROM subadmin_profile p JOIN chain c ON p.organization_id = $1 AND p.user_id = c.parent_subadmin_user_id
        WHERE c.depth < ${Math.trunc(maxDepth)})
     SELECT c.user_id, c.active, c.permissions, c.commission_min_percent::text, c.commission_max_percent::text, c.depth,
            COALESCE((SELECT array_agg(ut.territory_id ORDER BY ut.territory_id) FROM user_territory ut
                       WHERE ut.organization_id = $1 AND ut.user_id = c.user_id), '{}') AS territory_ids
       FROM chain c ORDER BY c.depth`,
    [organizationId, userId],
  );
  return rows;
}

/** Tells every instance (at commit) that scopes changed. */
export async function notifyScopeChanged(tx: Tx, channel: string): Promise<void> {
  await tx.query(`SELECT pg_notify('${channel}', '')`);
}

/** Whether an active zone banner shows this storage object (read grant of banner images). */
export async function objectIsActiveBannerImage(tx: Tx, objectId: string): Promise<boolean> {
  const { rowCount } = await tx.query('SELECT 1 FROM zone_banner WHERE image_storage_object_id = $1 AND active', [objectId]);
  return rowCount > 0;
}

/** The organization of the current tenant transaction. */
export async function currentOrganization(tx: Tx): Promise<string> {
  return (await tx.query<{ org: string }>("SELECT current_setting('app.organization_id', true) AS org")).rows[0].org;
}

/** Zone banners live and in total within a territory scope, and active sub-administrators (under `parentUserId` if given). */
export async function subadminFigures(tx: Tx, scope: TerritoryScope, parentUserId: string | null): Promise<{ live: number; total: number; subusers: number }> {
  const { rows } = await tx.query<{ live: number; total: number }>(
    `SELECT count(*) FILTER (WHERE b.active AND b.valid_from <= now() AND (b.valid_until IS NULL OR b.valid_until > now()))::int AS live, count(*)::int AS total
       FROM zone_banner b
      WHERE $1::text[] IS NULL OR EXISTS (SELECT 1 FROM banner_territory s WHERE s.organization_id = b.organization_id AND s.banner_id = b.id AND ${scopeSql('s.territory_id', 1)})`,
    [scope],
  );
  const subusers = (await tx.query<{ n: number }>('SELECT count(*)::int AS n FROM subadmin_profile WHERE active AND ($1::text IS NULL OR parent_subadmin_user_id = $1)', [parentUserId])).rows[0].n;
  return { live: rows[0].live, total: rows[0].total, subusers };
}

// ---------------------------------------------------------------- zone banners

/** A zone banner (derived from the table) with its territories. */
export type BannerRow = Omit<SnakeRow<typeof zoneBanner.$inferSelect>, 'organization_id'> & { territory_ids: string[] };

const BANNER_SELECT = `
  SELECT ${selectList(zoneBanner, 'b', { omit: ['organizationId'] })},
         COALESCE((SELECT array_agg(bt.territory_id ORDER BY bt.territory_id) FROM banner_territory bt
                    WHERE bt.organization_id = b.organization_id AND bt.banner_id = b.id), '{}') AS territory_ids
    FROM zone_banner b`;

export type NewBannerRow = Omit<BannerRow, 'territory_ids' | 'created_at' | 'updated_at'>;

/** Inserts a banner linked to its territories and reads it back. */
export async function insertBanner(tx: Tx, organizationId: string, b: NewBannerRow, territoryIds: string[]): Promise<BannerRow> {
  await tx.query(
    `INSERT INTO zone_banner (organization_id, id, title, body, image_storage_object_id, link_url, valid_from, valid_until, active, created_by_user_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
    [organizationId, b.id, b.title, b.body, b.image_storage_object_id, b.link_url, b.valid_from, b.valid_until, b.active, b.created_by_user_id],
  );
  await tx.query('INSERT INTO banner_territory (organization_id, banner_id, territory_id) SELECT $1, $2, unnest($3::text[])', [organizationId, b.id, territoryIds]);
  return (await tx.query<BannerRow>(`${BANNER_SELECT} WHERE b.id = $1`, [b.id])).rows[0];
}

/** Banners linked to at least one territory of the scope, optionally to one territory and in one state, newest first. */
export async function listBanners(
  tx: Tx,
  scope: TerritoryScope,
  f: { territoryId: string | null; state: string | null; after: string | null; limit: number },
): Promise<BannerRow[]> {
  const { rows } = await tx.query<BannerRow>(
    `${BANNER_SELECT}
      WHERE ($1::text[] IS NULL OR EXISTS (SELECT 1 FROM banner_territory s WHERE s.organization_id = b.organization_id AND s.banner_id = b.id AND ${scopeSql('s.territory_id', 1)}))
        AND ($2::text IS NULL OR EXISTS (SELECT 1 FROM banner_territory s WHERE s.organization_id = b.organization_id AND s.banner_id = b.id AND s.territory_id = $2))
        AND ($3::text IS NULL OR $3 = CASE WHEN NOT b.active THEN 'inactive' WHEN b.valid_until <= now() THEN 'expired' WHEN b.valid_from > now() THEN 'scheduled' ELSE 'live' END)
        AND ($4::text IS NULL OR b.id < $4)
      ORDER BY b.id DESC LIMIT $5`,
    [scope, f.territoryId, f.state, f.after, f.limit],
  );
  return rows;
}

/** Live banners linked to any of the territories, newest first, at most 20. */
export async function liveBannersOf(tx: Tx, territoryIds: string[]): Promise<BannerRow[]> {
  const { rows } = await tx.query<BannerRow>(
    `${BANNER_SELECT}
      WHERE b.active AND b.valid_from <= now() AND (b.valid_until IS NULL OR b.valid_until > now())
        AND EXISTS (SELECT 1 FROM banner_territory s WHERE s.organization_id = b.organization_id AND s.banner_id = b.id AND s.territory_id = ANY($1))
      ORDER BY b.id DESC LIMIT 20`,
    [territoryIds],
  );
  return rows;
}

// ---------------------------------------------------------------- profiles

/** A profile (derived from the table) with the user's email and phone and the territories. */
export type ProfileRow = Omit<SnakeRow<typeof subadminProfile.$inferSelect>, 'permissions'> & {
  permissions: Partial<Permissions>;
  email: string | null;
  phone: string | null;
  territory_ids: string[];
};

const PROFILE_SELECT = `
  SELECT ${selectList(subadminProfile, 'p')}, u.email, u.phone,
         COALESCE((SELECT array_agg(ut.territory_id ORDER BY ut.territory_id) FROM user_territory ut
                    WHERE ut.organization_id = p.organization_id AND ut.user_id = p.user_id), '{}') AS territory_ids
    FROM subadmin_profile p JOIN users u ON u.organization_id = p.organization_id AND u.id = p.user_id`;

// ---------------------------------------------------------------- profiles

export async function findProfile(tx: Tx, userId: string): Promise<ProfileRow | null> {
  const { rows } = await tx.query<ProfileRow>(`${PROFILE_SELECT} WHERE p.user_id = $1`, [userId]);
  return rows[0] ?? null;
}

/** Replaces the user's territory links by `ids`. */
export async function replaceTerritories(tx: Tx, organizationId: string, userId: string, ids: string[], byUserId: string): Promise<void> {
  await tx.query('DELETE FROM user_territory WHERE user_id = $1 AND NOT (territory_id = ANY($2::text[]))', [userId, ids]);
  await tx.query(
    `INSERT INTO user_territory (organization_id, user_id, territory_id, created_by_user_id) SELECT $1, $2, unnest($3::text[]), $4 ON CONFLICT DO NOTHING`,
    [organizationId, userId, ids, byUserId],
  );
}

export interface ProfileValues {
  display_name: string;
  active: boolean;
  permissions: Permissions;
  parent_subadmin_user_id: string | null;
  commission_min_percent: string | null;
  commission_max_percent: string | null;
}

export async function insertProfile(tx: Tx, organizationId: string, userId: string, v: ProfileValues, byUserId: string): Promise<void> {
  await tx.query(
    `INSERT INTO subadmin_profile (organization_id, user_id, display_name, active, permissions, parent_subadmin_user_id, created_by_user_id,
                                   commission_min_percent, commission_max_percent)
     VALUES ($1, $2, $3, $4, $5::jsonb, $6, $7, $8::numeric, $9::numeric)`,
    [organizationId, userId, v.display_name, v.active, JSON.stringify(v.permissions), v.parent_subadmin_user_id, byUserId, v.commission_min_percent, v.commission_max_percent],
  );
}

export async function updateProfile(tx: Tx, userId: string, v: ProfileValues): Promise<void> {
  await tx.query(
    `UPDATE subadmin_profile SET display_name = $2, active = $3, permissions = $4::jsonb, parent_subadmin_user_id = $5,
            commission_min_percent = $6::numeric, commission_max_percent = $7::numeric, updated_at = now() WHERE user_id = $1`,
    [userId, v.display_name, v.active, JSON.stringify(v.permissions), v.parent_subadmin_user_id, v.commission_min_percent, v.commission_max_percent],
  );
}

export async function lockProfile(tx: Tx, userId: string): Promise<void> {
  await tx.query('SELECT 1 FROM subadmin_profile WHERE user_id = $1 FOR UPDATE', [userId]);
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

/** Profiles (below `below` at any depth when given), filtered, newest user id first. */
export async function listProfiles(
  tx: Tx,
  below: string | null,
  f: { active: boolean | null; territoryId: string | null; parentUserId: string | null; after: string | null; limit: number },
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
    [below, f.active, f.territoryId, f.parentUserId, f.after, f.limit],
  );
  return rows;
}

/** Active sub-administrators (active users) linked to the territory. */
export async function activeSubadminsLinkedTo(tx: Tx, territoryId: string): Promise<string[]> {
  const { rows } = await tx.query<{ user_id: string }>(
    `SELECT ut.user_id FROM user_territory ut JOIN subadmin_profile p ON p.organization_id = ut.organization_id AND p.user_id = ut.user_id
      JOIN users u ON u.organization_id = ut.organization_id AND u.id = ut.user_id
      WHERE ut.territory_id = $1 AND p.active AND u.active`,
    [territoryId],
  );
  return rows.map((r) => r.user_id);
}
