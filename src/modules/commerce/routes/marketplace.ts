import { actorOf } from '../../../platform/auth.js';
import { Api } from '../../../platform/context.js';
import { AppError } from '../../../platform/errors.js';
import { LonLat } from '../../../platform/geo.js';
import { pageRequest } from '../../../platform/pagination.js';
import { Id, PageQueryProps, Strict } from '../../../platform/schemas.js';
import { scopeOf } from '../../../platform/scope.js';
import { CommerceContext } from '../context.js';
import { MarketplaceOut } from '../schemas.js';
import { browseMarketplace } from '../service/marketplace.js';
import { Type } from '@sinclair/typebox';

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
      if ((q.lon === undefined) !== (q.lat === undefined))
        throw AppError.badRequest('lon and lat go together', [
          { field: q.lon === undefined ? 'lon' : 'lat', message: 'required with the other' },
        ]);
      const page = pageRequest(q);
      const at: LonLat | null = q.lon !== undefined && q.lat !== undefined ? { lon: q.lon, lat: q.lat } : null;
      const radius = q.radius_m ?? 5000;
      return browseMarketplace(ctx, actor, { territoryId: q.territory_id ?? null, at, radius, scope: scopeOf(actor) }, page);
    },
  );
}
