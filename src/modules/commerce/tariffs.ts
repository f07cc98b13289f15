import { Type, type Static } from '@sinclair/typebox';
import { actorOf, type Actor } from '../../platform/auth.js';
import { recordAudit } from '../../platform/audit.js';
import type { Api } from '../../platform/context.js';
import type { CommerceContext } from './index.js';
import type { Tx } from '../../platform/db/index.js';
import { AppError } from '../../platform/errors.js';
import type { LonLat } from '../../platform/geo.js';
import { newId } from '../../platform/ids.js';
import { formatMoney, minMoney, money } from '../../platform/money.js';
import { pageRequest, toPage } from '../../platform/pagination.js';
import { Id, IdParams, Money, NonNegativeMoney, Page, PageQueryProps, Strict, Timestamp } from '../../platform/schemas.js';
import { lit, ServiceModeSchema, type ServiceMode } from './model.js';
import { deliveryFee, distanceKm } from './pricing.js';
import * as repo from './repo/tariffs.js';
import type { TariffRow } from './repo/tariffs.js';

const ShareType = lit(
  ['percent', 'fixed'] as const,
  "driver's share of the delivery fee: a percent of it, or a fixed amount (capped at the fee)",
);

export const TariffOut = Type.Object({
  id: Type.String(),
  territory_id: Type.String(),
  service_mode: ServiceModeSchema,
  base_fee: Money,
  per_km_fee: Money,
  minimum_fee: Money,
  driver_share_type: ShareType,
  driver_share_value: Money,
  active: Type.Boolean(),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export type { TariffRow };
/** A tariff row is its output (typed against TariffOut: a column missing from either fails to compile). */
export const tariffOut = (t: TariffRow): Static<typeof TariffOut> => t;

export interface DeliveryPrice {
  fee: string;
  driver_earning: string;
  distance_km: string;
  tariff_id: string | null;
}

/**
 * The delivery price of a trip from `from` to `to` in a territory: its active tariff for the service
 * mode; without one (or without a territory) the organization default of the logistics settings:
 * a flat `default_delivery_fee`, the driver getting `driver_flat_fee` (capped at the fee).
 */
export async function priceDelivery(
  ctx: CommerceContext,
  tx: Tx,
  organizationId: string,
  territoryId: string | null,
  mode: ServiceMode,
  from: LonLat,
  to: LonLat,
  /** The territory's active tariff when the caller already read it (null: it has none); undefined: looked up here. */
  known?: TariffRow | null,
): Promise<DeliveryPrice> {
  if (territoryId) {
    const tariff = known !== undefined ? known : await repo.activeTariff(tx, territoryId, mode);
    if (tariff) return { ...deliveryFee(tariff, from, to), tariff_id: tariff.id };
  }
  const s = await ctx.deps.logistics.settings(tx, organizationId);
  const fee = money(s.default_delivery_fee);
  return {
    fee: formatMoney(fee),
    driver_earning: formatMoney(minMoney(money(s.driver_flat_fee), fee)),
    distance_km: distanceKm(from, to),
    tariff_id: null,
  };
}

const Fields = {
  base_fee: NonNegativeMoney,
  per_km_fee: NonNegativeMoney,
  minimum_fee: Type.Optional(NonNegativeMoney),
  driver_share_type: Type.Optional(ShareType),
  driver_share_value: Type.String({
    pattern: NonNegativeMoney.pattern,
    description: 'an amount, or for `percent` (the default type) a percentage: more than 100 is 400 VALIDATION_FAILED',
  }),
  active: Type.Optional(Type.Boolean()),
};

function checkShare(type: string | undefined, value: string | undefined) {
  if (type === 'percent' && value !== undefined && money(value).gt(100)) {
    throw AppError.badRequest('A percent driver share must be at most 100', [
      { field: 'driver_share_value', message: 'must be <= 100 for percent' },
    ]);
  }
}

/** GET /admin/territory-tariffs. */
export function listTerritoryTariffs(
  ctx: CommerceContext,
  actor: Actor,
  q: { territory_id?: string; service_mode?: ServiceMode; limit?: number; cursor?: string },
) {
  const page = pageRequest(q);
  return ctx.db.withTenant(actor, async (tx) =>
    toPage(
      await repo.listTariffs(tx, null, {
        territoryId: q.territory_id,
        serviceMode: q.service_mode,
        after: page.after,
        limit: page.limit + 1,
      }),
      page,
      tariffOut,
    ),
  );
}

type TariffFields = Pick<TariffRow, 'base_fee' | 'per_km_fee' | 'driver_share_value'> &
  Partial<Pick<TariffRow, 'minimum_fee' | 'driver_share_type' | 'active'>>;

/** POST /admin/territory-tariffs: one per territory and mode; audited. */
export async function createTerritoryTariff(
  ctx: CommerceContext,
  actor: Actor,
  b: TariffFields & { territory_id: string; service_mode: ServiceMode },
) {
  checkShare(b.driver_share_type ?? 'percent', b.driver_share_value);
  return ctx.db.withTenant(actor, async (tx) => {
    if (!(await ctx.deps.logistics.getTerritory(tx, b.territory_id))) throw AppError.notFound('Territory');
    const row = await repo.insertTariff(tx, actor.organizationId, actor.userId, {
      id: newId(),
      territory_id: b.territory_id,
      service_mode: b.service_mode,
      base_fee: b.base_fee,
      per_km_fee: b.per_km_fee,
      minimum_fee: b.minimum_fee ?? '0',
      driver_share_type: b.driver_share_type ?? 'percent',
      driver_share_value: b.driver_share_value,
      active: b.active ?? true,
    });
    await recordAudit(tx, actor, {
      action: 'territory_tariff.created',
      entityType: 'territory_tariff',
      entityId: row.id,
      after: { ...row },
    });
    return tariffOut(row);
  });
}

/** PATCH /admin/territory-tariffs/:id: applies to prices computed afterwards; audited. */
export function updateTerritoryTariff(ctx: CommerceContext, actor: Actor, id: string, b: Partial<TariffFields>) {
  return ctx.db.withTenant(actor, async (tx) => {
    const before = await repo.findTariffForUpdate(tx, id);
    if (!before) throw AppError.notFound('Tariff');
    checkShare(b.driver_share_type ?? before.driver_share_type, b.driver_share_value ?? before.driver_share_value);
    const after = await repo.updateTariff(tx, before.id, b);
    await recordAudit(tx, actor, {
      action: 'territory_tariff.updated',
      entityType: 'territory_tariff',
      entityId: before.id,
      before: { ...before },
      after: { ...after },
    });
    return tariffOut(after);
  });
}

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
        body: Strict({ territory_id: Id, service_mode: ServiceModeSchema, ...Fields }),
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
