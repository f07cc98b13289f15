import { Type } from '@sinclair/typebox';
import { actorOf, type Actor } from '../../platform/auth.js';
import type { Api } from '../../platform/context.js';
import type { CommerceContext } from './index.js';
import type { Tx } from '../../platform/db/index.js';
import { AppError } from '../../platform/errors.js';
import { HAVERSINE_SQL, pointSql, type LonLat } from '../../platform/geo.js';
import { encodeCursor, pageRequest } from '../../platform/pagination.js';
import { Id, Money, Nullable, PageQueryProps, Strict } from '../../platform/schemas.js';
import { BRANCH_SELECT, BranchOut, branchOut, type BranchRow } from './branches.js';
import { inTx } from './model.js';

export interface MarketplaceBanner {
  id: string;
  title: string;
  image_object_id: string | null;
  target_url: string | null;
  territory_ids: string[];
}

/** Plugged in by the module that owns zone banners (sub-administration); the marketplace lists what it returns. */
export interface MarketplaceBannerProvider {
  activeBanners(tx: Tx, actor: Actor, where: { territoryIds: string[]; location: LonLat | null }): Promise<MarketplaceBanner[]>;
}


const BannerOut = Type.Object({
  id: Type.String(),
  title: Type.String(),
  image_object_id: Nullable(Type.String()),
  target_url: Nullable(Type.String()),
  territory_ids: Type.Array(Type.String()),
});

const MarketItem = Type.Object({
  id: Type.String(),
  name: Type.String(),
  description: Nullable(Type.String()),
  price: Money,
  currency: Type.String(),
  branch_ids: Type.Array(Type.String()),
  image_object_id: Nullable(Type.String()),
});

export const MarketMerchant = Type.Object({
  id: Type.String(),
  name: Type.String(),
  phone: Nullable(Type.String()),
  territory_id: Nullable(Type.String()),
  branches: Type.Array(Type.Object({ ...BranchOut.properties, distance_m: Nullable(Type.Number()) })),
  items: Type.Array(MarketItem),
});

const MarketplaceOut = Type.Object({ data: Type.Array(MarketMerchant), next_cursor: Nullable(Type.String()), banners: Type.Array(BannerOut) });

export function marketplaceRoutes(app: Api, ctx: CommerceContext) {
  app.get(
    '/customer/marketplace',
    {
      config: { auth: { roles: ['delivery', 'administrator', 'dispatch', 'subadmin'] } },
      schema: {
        operationId: 'getMarketplace',
        tags: ['customer'],
        summary: 'Approved merchants with active branches and available items, with the active zone banners',
        description:
          'Filters: lon + lat (both) with radius_m (default 5000, max 50000) keep branches within that great-circle distance, nearest first; territory_id keeps ' +
          'branches of that territory. A merchant appears with its matching active branches and its available items offered at one of them. Paged by merchant ' +
          '(a page may hold fewer merchants than `limit` when some are not approved). `banners` comes from the zone banner provider (empty until one is installed).',
        querystring: Strict({
          ...PageQueryProps,
          lon: Type.Optional(Type.Number({ minimum: -180, maximum: 180 })),
          lat: Type.Optional(Type.Number({ minimum: -90, maximum: 90 })),
          radius_m: Type.Optional(Type.Integer({ minimum: 1, maximum: 50_000, default: 5000 })),
          territory_id: Type.Optional(Id),
        }),
        response: { 200: MarketplaceOut },
      },
    },
    async (req) => {
      const actor = actorOf(req);
      const q = req.query;
      if ((q.lon === undefined) !== (q.lat === undefined)) throw AppError.badRequest('lon and lat go together', [{ field: q.lon === undefined ? 'lon' : 'lat', message: 'required with the other' }]);
      const page = pageRequest(q);
      const at: LonLat | null = q.lon !== undefined && q.lat !== undefined ? { lon: q.lon, lat: q.lat } : null;
      const radius = q.radius_m ?? 5000;
      const scope = actor.kind === 'subadmin' ? (actor.subadmin?.territoryIds ?? []) : null;
      return inTx(ctx, actor, async (tx) => {
        // Branch filter shared by both queries: active, territory, and (GiST box prefilter, then exact haversine) the radius.
        const dLat = radius / 111_320;
        const dLon = at ? dLat / Math.max(Math.cos((at.lat * Math.PI) / 180), 0.01) : 0;
        const dist = at ? HAVERSINE_SQL('b.location', '$2::point') : 'NULL::float8';
        // Sub-administrators: only branches of their territories.
        const where = `b.active AND ($1::text IS NULL OR b.territory_id = $1) AND ($8::text[] IS NULL OR b.territory_id = ANY($8::text[]))
          AND ($2::point IS NULL OR (b.location <@ box(point($3::float8, $4::float8), point($5::float8, $6::float8)) AND ${dist} <= $7))
          AND EXISTS (SELECT 1 FROM catalog_item c WHERE c.merchant_id = b.merchant_id AND c.available AND (c.branch_ids = '{}' OR b.id = ANY(c.branch_ids)))`;
        const params = [q.territory_id ?? null, at ? pointSql(at) : null, at ? at.lon - dLon : 0, at ? at.lat - dLat : 0, at ? at.lon + dLon : 0, at ? at.lat + dLat : 0, radius];
        const { rows: ids } = await tx.query<{ merchant_id: string }>(
          `SELECT DISTINCT b.merchant_id FROM merchant_branch b WHERE ${where} AND ($9::text IS NULL OR b.merchant_id < $9) ORDER BY b.merchant_id DESC LIMIT $10`,
          [...params, scope, page.after, page.limit + 1],
        );
        const more = ids.length > page.limit;
        const merchantIds = ids.slice(0, page.limit).map((r) => r.merchant_id);
        // One transaction is one connection: look the merchants up one after the other.
        const merchants = [];
        for (const id of merchantIds) {
          const m = await ctx.deps.logistics.getMerchant(tx, id);
          if (m?.status === 'approved') merchants.push(m);
        }
        const approved = merchants.map((m) => m.id);
        const { rows: branches } = await tx.query<BranchRow & { distance_m: number | null }>(
          `${BRANCH_SELECT.replace(' FROM merchant_branch b', `, ${dist} AS distance_m FROM merchant_branch b`)} WHERE ${where} AND b.merchant_id = ANY($9::text[]) ORDER BY distance_m NULLS LAST, b.id`,
          [...params, scope, approved],
        );
        const { rows: items } = await tx.query<{ id: string; merchant_id: string; name: string; description: string | null; price: string; currency: string; branch_ids: string[]; image_object_id: string | null }>(
          'SELECT id, merchant_id, name, description, price, currency, branch_ids, image_object_id FROM catalog_item WHERE merchant_id = ANY($1::text[]) AND available ORDER BY name, id',
          [approved],
        );
        const data = merchants.map((m) => {
          const own = branches.filter((b) => b.merchant_id === m.id);
          const branchIds = new Set(own.map((b) => b.id));
          return {
            id: m.id,
            name: m.name,
            phone: m.phone,
            territory_id: m.territory_id,
            branches: own.map(({ distance_m, ...b }) => ({ ...branchOut(b), distance_m: distance_m === null ? null : Math.round(Number(distance_m)) })),
            items: items
              .filter((i) => i.merchant_id === m.id && (i.branch_ids.length === 0 || i.branch_ids.some((id) => branchIds.has(id))))
              .map(({ merchant_id: _m, ...i }) => i),
          };
        });
        const territoryIds = [...new Set(branches.map((b) => b.territory_id).filter((t): t is string => !!t))];
        const banners = await ctx.deps.banners.activeBanners(tx, actor, { territoryIds: q.territory_id ? [q.territory_id] : territoryIds, location: at });
        return { data, next_cursor: more ? encodeCursor(merchantIds[merchantIds.length - 1]) : null, banners };
      });
    },
  );
}
