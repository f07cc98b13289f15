import * as repo from '../repo/marketplace.js';
import { Actor } from '../../../platform/auth.js';

import { encodeCursor } from '../../../platform/pagination.js';
import { CommerceContext } from '../context.js';
import { MarketFilter } from '../repo/marketplace.js';
import { MarketplaceOut } from '../schemas.js';
import { branchOut } from './branches.js';
import { Static } from '@sinclair/typebox';

/** GET /customer/marketplace: a page of approved merchants with their matching branches and available items, and the zone banners. */
export function browseMarketplace(
  ctx: CommerceContext,
  actor: Actor,
  f: MarketFilter,
  page: { after: string | null; limit: number },
): Promise<Static<typeof MarketplaceOut>> {
  return ctx.db.withTenant(actor, async (tx) => {
    const ids = await repo.marketMerchantIds(tx, f, { after: page.after, limit: page.limit + 1 });
    const more = ids.length > page.limit;
    const merchantIds = ids.slice(0, page.limit);
    // One transaction is one connection: look the merchants up one after the other.
    const merchants = [];
    for (const id of merchantIds) {
      const m = await ctx.deps.logistics.getMerchant(tx, id);
      if (m?.status === 'approved') merchants.push(m);
    }
    const approved = merchants.map((m) => m.id);
    const branches = await repo.marketBranches(tx, f, approved);
    const items = await repo.availableItems(tx, approved);
    const data = merchants.map((m) => {
      const own = branches.filter((b) => b.merchant_id === m.id);
      const branchIds = new Set(own.map((b) => b.id));
      return {
        id: m.id,
        name: m.name,
        phone: m.phone,
        territory_id: m.territory_id,
        branches: own.map(({ distance_m, ...b }) => ({
          ...branchOut(b),
          distance_m: distance_m === null ? null : Math.round(Number(distance_m)),
        })),
        items: items
          .filter((i) => i.merchant_id === m.id && (i.branch_ids.length === 0 || i.branch_ids.some((id) => branchIds.has(id))))
          .map(({ merchant_id: _m, ...i }) => i),
      };
    });
    const territoryIds = [...new Set(branches.map((b) => b.territory_id).filter((t): t is string => !!t))];
    const banners = await ctx.deps.banners.activeBanners(tx, actor, {
      territoryIds: f.territoryId ? [f.territoryId] : territoryIds,
      location: f.at,
    });
    return { data, next_cursor: more ? encodeCursor(merchantIds[merchantIds.length - 1]) : null, banners };
  });
}
