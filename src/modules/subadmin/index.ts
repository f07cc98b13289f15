import { withDeps, type Api, type AppContext } from '../../platform/context.js';
import type { Tx } from '../../platform/db/index.js';
import { AppError } from '../../platform/errors.js';
import { scopeOf } from '../../platform/scope.js';
import type { ObjectReadGrant } from '../storage/index.js';
import type { MarketplaceBannerProvider } from '../commerce/index.js';
import type { SubadminContext } from './context.js';
import * as repo from './repo.js';
import type { BannerRow } from './repo.js';
import { bannerRoutes } from './routes/banners.js';
import { consoleRoutes } from './routes/console.js';
import { profileRoutes } from './routes/profiles.js';
import { reportRoutes } from './routes/reports.js';
import { bannerOut, createBannerService } from './service/banners.js';
import { createProfileService } from './service/profiles.js';

export type { SubadminContext } from './context.js';
export { BannerOut } from './schemas.js';
export { createScopeLoader, effectiveScope, type ScopeLoader } from './service/scope.js';

/** What other modules may call (each in the caller's transaction). */
export interface SubadminApi {
  /** Live zone banners (active, within their validity) linked to any of the territories, newest first. */
  activeBannersFor(tx: Tx, territoryIds: string[]): Promise<BannerRow[]>;
  /** Active sub-administrators whose effective territories include the territory. */
  subadminUserIdsOfTerritory(tx: Tx, organizationId: string, territoryId: string): Promise<string[]>;
}

/**
 * Sub-administration: profiles, the scope loader the auth hook calls for every sub-administrator
 * request, zone banners, the console reads and reports. Built after the modules it reads from.
 */
export function createSubadminModule(base: AppContext, deps: SubadminContext['deps']) {
  const ctx: SubadminContext = withDeps(base, deps);
  // A banner image is public within the organization while an active banner shows it (customers see banners).
  const bannerReadGrant: ObjectReadGrant = async (tx, _actor, o) => {
    if (o.purpose !== 'coupon_asset' && o.purpose !== 'other') return false;
    return repo.activeBannerShowsImage(tx, o.id);
  };
  const loader = deps.scope;
  const profiles = createProfileService(ctx, loader);
  const banners = createBannerService(ctx);
  const api: SubadminApi = {
    activeBannersFor: banners.activeBannersFor,
    subadminUserIdsOfTerritory: profiles.userIdsOfTerritory,
  };

  // Zone banners in the customer marketplace (sub-administrators previewing it see only their territories' banners).
  const marketplaceBanners: MarketplaceBannerProvider = {
    async activeBanners(tx, actor, where) {
      const scope = scopeOf(actor);
      const territoryIds = scope ? where.territoryIds.filter((t) => scope.includes(t)) : where.territoryIds;
      return (await banners.activeBannersFor(tx, territoryIds)).map((b) => {
        const out = bannerOut(b, scope);
        return {
          id: out.id,
          title: out.title,
          image_object_id: out.image_storage_object_id,
          target_url: out.link_url,
          territory_ids: out.territory_ids,
        };
      });
    },
  };

  // POST /admin/notifications to a territory: its sub-administrators and the drivers linked to it.
  const territoryAudience = async (tx: Tx, territoryId: string): Promise<string[]> => {
    if (!(await ctx.deps.logistics.getTerritory(tx, territoryId))) {
      throw AppError.unprocessable('Unknown territory', 'TERRITORY_NOT_FOUND', [
        { field: 'territory_id', message: `unknown territory ${territoryId}` },
      ]);
    }
    const org = await repo.currentOrganization(tx);
    const users = [
      ...(await profiles.userIdsOfTerritory(tx, org, territoryId)),
      ...(await ctx.deps.logistics.driverUserIdsOfTerritory(tx, territoryId)),
    ];
    return [...new Set(users)];
  };

  // GET /dashboard for a sub-administrator: organization-wide figures that carry no territory are withheld.
  const operator = ctx.dashboard.get('operator');
  if (operator) {
    ctx.dashboard.set('operator', async (tx, actor) => {
      const section = await operator(tx, actor);
      return actor.kind === 'subadmin' ? { operator_status: section.operator_status ?? null } : section;
    });
  }
  ctx.dashboard.set('subadmin', async (tx, actor) => {
    const scope = scopeOf(actor);
    const banners = await repo.bannerCounts(tx, scope);
    const subusers = await repo.countActiveProfiles(tx, actor.kind === 'subadmin' ? actor.userId : null);
    return { territory_ids: scope, zone_banners_live: banners.live, zone_banners: banners.total, active_subadmins: subusers };
  });
  return {
    name: 'subadmin',
    api,
    marketplaceBanners,
    territoryAudience,
    bannerReadGrant,
    routes(app: Api) {
      profileRoutes(app, profiles);
      consoleRoutes(app, ctx);
      bannerRoutes(app, banners);
      reportRoutes(app, ctx);
    },
  };
}
