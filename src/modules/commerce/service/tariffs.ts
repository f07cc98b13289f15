import * as repo from '../repo/tariffs.js';
import { recordAudit } from '../../../platform/audit.js';
import { Actor } from '../../../platform/auth.js';
import { Tx } from '../../../platform/db/index.js';
import { AppError } from '../../../platform/errors.js';
import { LonLat } from '../../../platform/geo.js';
import { newId } from '../../../platform/ids.js';
import { formatMoney, minMoney, money } from '../../../platform/money.js';
import { pageRequest, toPage } from '../../../platform/pagination.js';
import { CommerceContext } from '../context.js';
import { TariffRow } from '../repo/tariffs.js';
import { ServiceMode, TariffOut } from '../schemas.js';
import { deliveryFee, distanceKm } from './pricing.js';
import { Static } from '@sinclair/typebox';

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
