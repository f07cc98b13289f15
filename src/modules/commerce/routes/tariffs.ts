import { actorOf } from '../../../platform/auth.js';
import { Api } from '../../../platform/context.js';
import { Id, IdParams, NonNegativeMoney, Page, PageQueryProps, Strict } from '../../../platform/schemas.js';
import { CommerceContext } from '../context.js';
import { ServiceModeSchema, ShareType, TariffOut, TariffFieldProps } from '../schemas.js';
import { createTerritoryTariff, listTerritoryTariffs, updateTerritoryTariff } from '../service/tariffs.js';
import { Type } from '@sinclair/typebox';

export function tariffRoutes(app: Api, ctx: CommerceContext) {
  const adminOnly = { auth: { roles: ['administrator' as const] } };

  app.get(
    '/admin/territory-tariffs',
    {
      config: adminOnly,
      schema: {
        operationId: 'listTerritoryTariffs',
        tags: ['tariffs'],
        summary: 'Territory tariffs (one per territory and service mode)',
        querystring: Strict({ ...PageQueryProps, territory_id: Type.Optional(Id), service_mode: Type.Optional(ServiceModeSchema) }),
        response: { 200: Page(TariffOut) },
      },
    },
    async (req) => {
      return listTerritoryTariffs(ctx, actorOf(req), req.query);
    },
  );

  app.post(
    '/admin/territory-tariffs',
    {
      config: adminOnly,
      schema: {
        operationId: 'createTerritoryTariff',
        tags: ['tariffs'],
        summary: 'Create the tariff of a territory for a service mode (marketplace or delivery_express); audited',
        description:
          'Delivery fee = base_fee + per_km_fee × great-circle km (pickup → dropoff), at least minimum_fee, rounded half-up to cents. ' +
          'driver_share_type percent (value 0..100, default) or fixed; the driver earning never exceeds the fee. One tariff per territory and ' +
          'mode (409 DUPLICATE); 404 for an unknown territory. Without a tariff the organization default (logistics settings default_delivery_fee, driver_flat_fee) applies.',
        body: Strict({ territory_id: Id, service_mode: ServiceModeSchema, ...TariffFieldProps }),
        response: { 201: TariffOut },
      },
    },
    async (req, reply) => {
      return reply.code(201).send(await createTerritoryTariff(ctx, actorOf(req), req.body));
    },
  );

  app.patch(
    '/admin/territory-tariffs/:id',
    {
      config: adminOnly,
      schema: {
        operationId: 'updateTerritoryTariff',
        tags: ['tariffs'],
        summary: 'Change a tariff (fees, driver share, active); applies to prices computed afterwards; audited',
        params: IdParams,
        body: Strict(
          {
            base_fee: Type.Optional(NonNegativeMoney),
            per_km_fee: Type.Optional(NonNegativeMoney),
            minimum_fee: Type.Optional(NonNegativeMoney),
            driver_share_type: Type.Optional(ShareType),
            driver_share_value: Type.Optional(NonNegativeMoney),
            active: Type.Optional(Type.Boolean()),
          },
          { minProperties: 1 },
        ),
        response: { 200: TariffOut },
      },
    },
    async (req) => {
      return updateTerritoryTariff(ctx, actorOf(req), req.params.id, req.body);
    },
  );
}
