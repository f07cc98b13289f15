import type { Static } from '@sinclair/typebox';
import type { Actor } from '../../../platform/auth.js';
import { recordAudit } from '../../../platform/audit.js';
import type { Tx } from '../../../platform/db/index.js';
import { AppError } from '../../../platform/errors.js';
import { newId } from '../../../platform/ids.js';
import { pageRequest, toPage } from '../../../platform/pagination.js';
import { scopeOf } from '../../../platform/scope.js';
import { assertObjectLink } from '../../storage/index.js';
import type { SubadminContext } from '../context.js';
import * as repo from '../repo.js';
import type { BannerRow } from '../repo.js';
import type { BannerOut, BannerState, NewBanner } from '../schemas.js';

/** "live" = active and now within [valid_from, valid_until); "scheduled" = active, not started; "expired"; "inactive". */
export function bannerState(b: Pick<BannerRow, 'active' | 'valid_from' | 'valid_until'>, now = new Date()): BannerState {
  if (!b.active) return 'inactive';
  if (b.valid_until && b.valid_until <= now) return 'expired';
  if (b.valid_from > now) return 'scheduled';
  return 'live';
}

/** A banner as a viewer sees it: sub-administrators see only the territories of theirs it is linked to. */
export function bannerOut(b: BannerRow, scope: string[] | null): Static<typeof BannerOut> {
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
    return db.withTenant(actor, async (tx) => {
      const scope = scopeOf(actor);
      const territoryIds = [...new Set(input.territory_ids)];
      const bad: string[] = [];
      for (const id of territoryIds) if (!(await ctx.deps.logistics.getTerritory(tx, id)) || (scope && !scope.includes(id))) bad.push(id);
      if (bad.length)
        throw AppError.unprocessable(
          'Unknown territory',
          'TERRITORY_NOT_FOUND',
          bad.map((id) => ({ field: 'territory_ids', message: `unknown territory ${id}` })),
        );
      const validFrom = input.valid_from ? new Date(input.valid_from) : new Date();
      const validUntil = input.valid_until ? new Date(input.valid_until) : null;
      if (validUntil && validUntil <= validFrom)
        throw AppError.unprocessable('valid_until must be after valid_from', 'INVALID_VALIDITY', [
          { field: 'valid_until', message: 'must be after valid_from' },
        ]);
      if (input.image_storage_object_id) await assertObjectLink(ctx, tx, actor, input.image_storage_object_id, ['coupon_asset', 'other']);
      const id = newId();
      await repo.insertBanner(tx, actor.organizationId, {
        id,
        title: input.title,
        body: input.body ?? null,
        image_storage_object_id: input.image_storage_object_id ?? null,
        link_url: input.link_url ?? null,
        valid_from: validFrom,
        valid_until: validUntil,
        active: input.active ?? true,
        created_by_user_id: actor.userId,
        territory_ids: territoryIds,
      });
      const row = (await repo.findBanner(tx, id))!;
      await recordAudit(tx, actor, { action: 'banner.created', entityType: 'zone_banner', entityId: id, after: bannerOut(row, null) });
      return bannerOut(row, scope);
    });
  }

  /** Banners linked to at least one of the viewer's territories (administrators: all), newest first. */
  async function list(actor: Actor, q: { territory_id?: string; state?: BannerState; limit?: number; cursor?: string }) {
    const page = pageRequest(q);
    const scope = scopeOf(actor);
    return db.withTenant(actor, async (tx) => {
      const rows = await repo.listBanners(tx, scope, {
        territoryId: q.territory_id,
        state: q.state,
        after: page.after,
        limit: page.limit + 1,
      });
      return toPage(rows, page, (b) => bannerOut(b, scope));
    });
  }

  /** For the customer marketplace: live banners linked to any of the territories, newest first (in the caller's transaction). */
  async function activeBannersFor(tx: Tx, territoryIds: string[]): Promise<BannerRow[]> {
    if (territoryIds.length === 0) return [];
    return repo.liveBanners(tx, territoryIds);
  }

  return { create, list, activeBannersFor };
}

export type BannerService = ReturnType<typeof createBannerService>;
