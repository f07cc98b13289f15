import { tenantOf, type Actor } from '../../platform/auth.js';
import { recordAudit } from '../../platform/audit.js';
import type { SubadminContext } from './index.js';
import type { Tx } from '../../platform/db/index.js';
import { AppError } from '../../platform/errors.js';
import { newId } from '../../platform/ids.js';
import { pageRequest, toPage } from '../../platform/pagination.js';
import { assertObjectLink } from '../../platform/storage-links.js';
import { scopeOf } from './model.js';

export interface BannerRow {
  id: string;
  title: string;
  body: string | null;
  image_storage_object_id: string | null;
  link_url: string | null;
  valid_from: Date;
  valid_until: Date | null;
  active: boolean;
  created_by_user_id: string;
  created_at: Date;
  updated_at: Date;
  territory_ids: string[];
}

export interface NewBanner {
  title: string;
  body?: string;
  image_storage_object_id?: string;
  link_url?: string;
  valid_from?: string;
  valid_until?: string;
  active?: boolean;
  territory_ids: string[];
}

const BANNER_SELECT = `
  SELECT b.id, b.title, b.body, b.image_storage_object_id, b.link_url, b.valid_from, b.valid_until, b.active, b.created_by_user_id,
         b.created_at, b.updated_at,
         COALESCE((SELECT array_agg(bt.territory_id ORDER BY bt.territory_id) FROM banner_territory bt
                    WHERE bt.organization_id = b.organization_id AND bt.banner_id = b.id), '{}') AS territory_ids
    FROM zone_banner b`;

/** "live" = active and now within [valid_from, valid_until); "scheduled" = active, not started; "expired"; "inactive". */
export function bannerState(b: Pick<BannerRow, 'active' | 'valid_from' | 'valid_until'>, now = new Date()): 'live' | 'scheduled' | 'expired' | 'inactive' {
  if (!b.active) return 'inactive';
  if (b.valid_until && b.valid_until <= now) return 'expired';
  if (b.valid_from > now) return 'scheduled';
  return 'live';
}

/** A banner as a viewer sees it: sub-administrators see only the territories of theirs it is linked to. */
export function bannerOut(b: BannerRow, scope: string[] | null) {
  return {
    id: b.id,
    title: b.title,
    body: b.body,
    image_storage_object_id: b.image_storage_object_id,
    link_url: b.link_url,
    valid_from: b.valid_from,
    valid_until: b.valid_until,
    active: b.active,
    state: bannerState(b),
    territory_ids: scope ? b.territory_ids.filter((t) => scope.includes(t)) : b.territory_ids,
    created_by_user_id: b.created_by_user_id,
    created_at: b.created_at,
    updated_at: b.updated_at,
  };
}

export function createBannerService(ctx: SubadminContext) {
  const { db } = ctx;

  async function create(actor: Actor, input: NewBanner) {
    return db.withTenant(tenantOf(actor), async (tx) => {
      const scope = scopeOf(actor);
      const territoryIds = [...new Set(input.territory_ids)];
      const bad: string[] = [];
      for (const id of territoryIds) if (!(await ctx.deps.logistics.getTerritory(tx, id)) || (scope && !scope.includes(id))) bad.push(id);
      if (bad.length) throw AppError.unprocessable('Unknown territory', 'TERRITORY_NOT_FOUND', bad.map((id) => ({ field: 'territory_ids', message: `unknown territory ${id}` })));
      const validFrom = input.valid_from ? new Date(input.valid_from) : new Date();
      const validUntil = input.valid_until ? new Date(input.valid_until) : null;
      if (validUntil && validUntil <= validFrom) throw AppError.unprocessable('valid_until must be after valid_from', 'INVALID_VALIDITY', [{ field: 'valid_until', message: 'must be after valid_from' }]);
      if (input.image_storage_object_id) await assertObjectLink(ctx, tx, actor, input.image_storage_object_id, ['coupon_asset', 'other']);
      const id = newId();
      await tx.query(
        `INSERT INTO zone_banner (organization_id, id, title, body, image_storage_object_id, link_url, valid_from, valid_until, active, created_by_user_id)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
        [actor.organizationId, id, input.title, input.body ?? null, input.image_storage_object_id ?? null, input.link_url ?? null, validFrom, validUntil, input.active ?? true, actor.userId],
      );
      await tx.query('INSERT INTO banner_territory (organization_id, banner_id, territory_id) SELECT $1, $2, unnest($3::text[])', [actor.organizationId, id, territoryIds]);
      const row = (await tx.query<BannerRow>(`${BANNER_SELECT} WHERE b.id = $1`, [id])).rows[0];
      await recordAudit(tx, actor, { action: 'banner.created', entityType: 'zone_banner', entityId: id, after: bannerOut(row, null) });
      return bannerOut(row, scope);
    });
  }

  /** Banners linked to at least one of the viewer's territories (administrators: all), newest first. */
  async function list(actor: Actor, q: { territory_id?: string; state?: 'live' | 'scheduled' | 'expired' | 'inactive'; limit?: number; cursor?: string }) {
    const page = pageRequest(q);
    const scope = scopeOf(actor);
    return db.withTenant(tenantOf(actor), async (tx) => {
      const { rows } = await tx.query<BannerRow>(
        `${BANNER_SELECT}
          WHERE ($1::text[] IS NULL OR EXISTS (SELECT 1 FROM banner_territory s WHERE s.organization_id = b.organization_id AND s.banner_id = b.id AND s.territory_id = ANY($1)))
            AND ($2::text IS NULL OR EXISTS (SELECT 1 FROM banner_territory s WHERE s.organization_id = b.organization_id AND s.banner_id = b.id AND s.territory_id = $2))
            AND ($3::text IS NULL OR $3 = CASE WHEN NOT b.active THEN 'inactive' WHEN b.valid_until <= now() THEN 'expired' WHEN b.valid_from > now() THEN 'scheduled' ELSE 'live' END)
            AND ($4::text IS NULL OR b.id < $4)
          ORDER BY b.id DESC LIMIT $5`,
        [scope, q.territory_id ?? null, q.state ?? null, page.after, page.limit + 1],
      );
      return toPage(rows, page, (b) => bannerOut(b, scope));
    });
  }

  /** For the customer marketplace: live banners linked to any of the territories, newest first (in the caller's transaction). */
  async function activeBannersFor(tx: Tx, territoryIds: string[]): Promise<BannerRow[]> {
    if (territoryIds.length === 0) return [];
    const { rows } = await tx.query<BannerRow>(
      `${BANNER_SELECT}
        WHERE b.active AND b.valid_from <= now() AND (b.valid_until IS NULL OR b.valid_until > now())
          AND EXISTS (SELECT 1 FROM banner_territory s WHERE s.organization_id = b.organization_id AND s.banner_id = b.id AND s.territory_id = ANY($1))
        ORDER BY b.id DESC LIMIT 20`,
      [territoryIds],
    );
    return rows;
  }

  return { create, list, activeBannersFor };
}

export type BannerService = ReturnType<typeof createBannerService>;
