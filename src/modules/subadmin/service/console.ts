import type { Actor } from '../../../platform/auth.js';
import type { Tx } from '../../../platform/db/index.js';
import { AppError } from '../../../platform/errors.js';
import { scopeOf } from '../../../platform/scope.js';
import { REPORT_MAX_ROWS, reportFileName } from '../../../platform/workbook.js';
import { merchantOut, type MerchantRow, type Period } from '../../logistics/index.js';
import type { SubadminContext } from '../context.js';
import { cents } from './permissions.js';
import { deliveriesWorkbook, salesWorkbook, scopeLabel } from './reports.js';

/**
 * The console reads and writes of sub-administration (and administrators), each in its own tenant transaction:
 * the routes only parse, authorize and call these.
 */

/** A merchant of the caller's territories (404 for one outside them, or unknown). */
async function scopedMerchant(ctx: SubadminContext, tx: Tx, actor: Actor, id: string): Promise<MerchantRow> {
  const m = await ctx.deps.logistics.getMerchant(tx, id);
  const scope = scopeOf(actor);
  if (!m || (scope && (!m.territory_id || !scope.includes(m.territory_id)))) throw AppError.notFound('Merchant');
  return m;
}

const withTotal = (counts: Record<string, number>) => ({ counts, total: Object.values(counts).reduce((a, b) => a + b, 0) });

export function liveMap(ctx: SubadminContext, actor: Actor) {
  return ctx.db.withTenant(actor, (tx) => ctx.deps.logistics.liveMap(tx, actor));
}

export function deliveriesStatus(
  ctx: SubadminContext,
  actor: Actor,
  period: Period,
  q: Parameters<SubadminContext['deps']['logistics']['listTrips']>[2],
) {
  return ctx.db.withTenant(actor, async (tx) => {
    const counts = await ctx.deps.logistics.tripStatusCounts(tx, scopeOf(actor), period);
    const page = await ctx.deps.logistics.listTrips(tx, actor, { ...q, from: period.from ?? undefined, to: period.to ?? undefined });
    return { ...withTotal(counts), ...page };
  });
}

export function paymentReviewCounts(ctx: SubadminContext, actor: Actor) {
  return ctx.db.withTenant(actor, (tx) => ctx.deps.money.paymentReviewCounts(tx, scopeOf(actor)));
}

/** A merchant's commission: administrators any value in 0..100, sub-administrators within their bounds. */
export function setMerchantCommission(ctx: SubadminContext, actor: Actor, merchantId: string, percent: string) {
  return ctx.db.withTenant(actor, async (tx) => {
    const m = await scopedMerchant(ctx, tx, actor, merchantId);
    if (cents(percent) > 10_000)
      throw AppError.badRequest('commission_percent must be between 0 and 100', [{ field: 'commission_percent', message: 'out of range' }]);
    if (actor.kind === 'subadmin') {
      const { commissionMinPercent: min, commissionMaxPercent: max } = actor.subadmin!;
      if (min === null || max === null || cents(percent) < cents(min) || cents(percent) > cents(max)) {
        throw AppError.unprocessable(
          min === null || max === null ? 'No commission bounds are configured for you' : `The commission must be within ${min}..${max}`,
          'COMMISSION_OUT_OF_BOUNDS',
          [
            {
              field: 'commission_percent',
              message: min === null || max === null ? 'no bounds configured' : `must be within ${min}..${max}`,
            },
          ],
        );
      }
    }
    return merchantOut(await ctx.deps.logistics.setMerchantCommission(tx, actor, m.id, percent));
  });
}

export function ordersStatus(
  ctx: SubadminContext,
  actor: Actor,
  period: Period,
  q: Parameters<SubadminContext['deps']['commerceViews']['listOrders']>[2],
) {
  const views = ctx.deps.commerceViews;
  return ctx.db.withTenant(actor, async (tx) => {
    const counts = await views.orderStatusCounts(tx, scopeOf(actor), period);
    const page = await views.listOrders(tx, scopeOf(actor), { ...q, ...period });
    return { ...withTotal(counts), ...page };
  });
}

export function listCoupons(ctx: SubadminContext, actor: Actor, q: Parameters<SubadminContext['deps']['commerceViews']['listCoupons']>[2]) {
  return ctx.db.withTenant(actor, (tx) => ctx.deps.commerceViews.listCoupons(tx, scopeOf(actor), q));
}

export function createMerchantCoupon(ctx: SubadminContext, actor: Actor, merchantId: string, body: Record<string, unknown>) {
  return ctx.db.withTenant(actor, async (tx) =>
    ctx.deps.commerceViews.createCouponFor(tx, actor, await scopedMerchant(ctx, tx, actor, merchantId), body),
  );
}

export function listTariffs(ctx: SubadminContext, actor: Actor, q: Parameters<SubadminContext['deps']['commerceViews']['listTariffs']>[2]) {
  return ctx.db.withTenant(actor, (tx) => ctx.deps.commerceViews.listTariffs(tx, scopeOf(actor), q));
}

/**
 * A report workbook of the caller's scope and period: the `reports` permission for sub-administrators (403),
 * at most REPORT_MAX_ROWS rows (422 REPORT_TOO_LARGE), the scope line naming the territories.
 */
export async function report(
  ctx: SubadminContext,
  actor: Actor,
  kind: 'sales' | 'deliveries',
  period: Period,
): Promise<{ file: Buffer; name: string }> {
  if (actor.kind === 'subadmin' && !actor.subadmin!.permissions.reports)
    throw AppError.forbidden("Missing permission 'reports'", 'PERMISSION_DENIED');
  const scope = scopeOf(actor);
  const read = async <R>(rowsOf: (tx: Tx) => Promise<R[]>) =>
    ctx.db.withTenant(actor, async (tx) => ({
      rows: await rowsOf(tx),
      label: await scopeLabel(scope, async (id) => (await ctx.deps.logistics.getTerritory(tx, id))?.name ?? null),
    }));
  const tooLarge = () =>
    AppError.unprocessable(`The report has more than ${REPORT_MAX_ROWS} rows; choose a shorter period`, 'REPORT_TOO_LARGE');
  if (kind === 'sales') {
    const { rows, label } = await read((tx) => ctx.deps.commerceViews.orderReportRows(tx, scope, period, REPORT_MAX_ROWS + 1));
    if (rows.length > REPORT_MAX_ROWS) throw tooLarge();
    return { file: await salesWorkbook(rows, period, label), name: reportFileName('sales', period) };
  }
  const { rows, label } = await read((tx) => ctx.deps.logistics.tripReportRows(tx, scope, period, REPORT_MAX_ROWS + 1));
  if (rows.length > REPORT_MAX_ROWS) throw tooLarge();
  return { file: await deliveriesWorkbook(rows, period, label), name: reportFileName('deliveries', period) };
}
