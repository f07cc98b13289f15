import { Type } from '@sinclair/typebox';
import { actorOf } from '../../platform/auth.js';
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
import { inTx, lit, ServiceModeSchema, type ServiceMode } from './model.js';
import { deliveryFee, distanceKm, type TariffRule } from './pricing.js';

const ShareType = lit(['percent', 'fixed'] as const, "driver's share of the delivery fee: a percent of it, or a fixed amount (capped at the fee)");

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

export interface TariffRow extends TariffRule {
  id: string;
  territory_id: string;
  service_mode: ServiceMode;
  active: boolean;
  created_at: Date;
  updated_at: Date;
}

const TARIFF_COLUMNS = 'id, territory_id, service_mode, base_fee, per_km_fee, minimum_fee, driver_share_type, driver_share_value, active, created_at, updated_at';

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
export async function priceDelivery(ctx: CommerceContext, tx: Tx, organizationId: string, territoryId: string | null, mode: ServiceMode, from: LonLat, to: LonLat): Promise<DeliveryPrice> {
  if (territoryId) {
    const { rows } = await tx.query<TariffRow>(`SELECT ${TARIFF_COLUMNS} FROM territory_tariff WHERE territory_id = $1 AND service_mode = $2 AND active`, [territoryId, mode]);
    if (rows[0]) return { ...deliveryFee(rows[0], from, to), tariff_id: rows[0].id };
  }
  const s = await ctx.deps.logistics.settings(tx, organizationId);
  const fee = money(s.default_delivery_fee);
  return { fee: formatMoney(fee), driver_earning: formatMoney(minMoney(money(s.driver_flat_fee), fee)), distance_km: distanceKm(from, to), tariff_id: null };
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
    throw AppError.badRequest('A percent driver share must be at most 100', [{ field: 'driver_share_value', message: 'must be <= 100 for percent' }]);
  }
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
      const actor = actorOf(req);
      const page = pageRequest(req.query);
      return inTx(ctx, actor, async (tx) => {
        const { rows } = await tx.query<TariffRow>(
          `SELECT ${TARIFF_COLUMNS} FROM territory_tariff WHERE ($1::text IS NULL OR territory_id = $1) AND ($2::text IS NULL OR service_mode = $2)
              AND ($3::text IS NULL OR id < $3) ORDER BY id DESC LIMIT $4`,
          [req.query.territory_id ?? null, req.query.service_mode ?? null, page.after, page.limit + 1],
        );
        return toPage(rows, page);
      });
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
      const actor = actorOf(req);
      const b = req.body;
      checkShare(b.driver_share_type ?? 'percent', b.driver_share_value);
      const row = await inTx(ctx, actor, async (tx) => {
        if (!(await ctx.deps.logistics.getTerritory(tx, b.territory_id))) throw AppError.notFound('Territory');
        const { rows } = await tx.query<TariffRow>(
          `INSERT INTO territory_tariff (organization_id, id, territory_id, service_mode, base_fee, per_km_fee, minimum_fee, driver_share_type, driver_share_value, active, created_by_user_id)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING ${TARIFF_COLUMNS}`,
          [actor.organizationId, newId(), b.territory_id, b.service_mode, b.base_fee, b.per_km_fee, b.minimum_fee ?? '0', b.driver_share_type ?? 'percent', b.driver_share_value, b.active ?? true, actor.userId],
        );
        await recordAudit(tx, actor, { action: 'territory_tariff.created', entityType: 'territory_tariff', entityId: rows[0].id, after: { ...rows[0] } });
        return rows[0];
      });
      return reply.code(201).send(row);
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
      const actor = actorOf(req);
      const b = req.body;
      return inTx(ctx, actor, async (tx) => {
        const before = (await tx.query<TariffRow>(`SELECT ${TARIFF_COLUMNS} FROM territory_tariff WHERE id = $1 FOR UPDATE`, [req.params.id])).rows[0];
        if (!before) throw AppError.notFound('Tariff');
        checkShare(b.driver_share_type ?? before.driver_share_type, b.driver_share_value ?? before.driver_share_value);
        const { rows } = await tx.query<TariffRow>(
          `UPDATE territory_tariff SET base_fee = COALESCE($2::numeric, base_fee), per_km_fee = COALESCE($3::numeric, per_km_fee), minimum_fee = COALESCE($4::numeric, minimum_fee),
                  driver_share_type = COALESCE($5, driver_share_type), driver_share_value = COALESCE($6::numeric, driver_share_value), active = COALESCE($7, active), updated_at = now()
            WHERE id = $1 RETURNING ${TARIFF_COLUMNS}`,
          [before.id, b.base_fee ?? null, b.per_km_fee ?? null, b.minimum_fee ?? null, b.driver_share_type ?? null, b.driver_share_value ?? null, b.active ?? null],
        );
        await recordAudit(tx, actor, { action: 'territory_tariff.updated', entityType: 'territory_tariff', entityId: before.id, before: { ...before }, after: { ...rows[0] } });
        return rows[0];
      });
    },
  );
}
