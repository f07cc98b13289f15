import { recordAudit } from '../../../platform/audit.js';
import type { Actor } from '../../../platform/auth.js';
import type { Tx } from '../../../platform/db/index.js';
import { AppError } from '../../../platform/errors.js';
import { newId } from '../../../platform/ids.js';
import { formatMoney, money } from '../../../platform/money.js';
import { pageRequest, toPage } from '../../../platform/pagination.js';
import { assertTransition, type Transitions } from '../../../platform/state-machine.js';
import type { MoneyContext } from '../context.js';
import * as repo from '../repo/driver-settlements.js';
import type { DriverSettlementStatus } from '../repo/driver-settlements.js';
import type { CashService } from './cash.js';

export const DRIVER_SETTLEMENT_TRANSITIONS: Transitions<DriverSettlementStatus> = { pending: ['paid'], paid: [] };

export function createDriverSettlementService(ctx: MoneyContext, cash: Pick<CashService, 'netForSettlement'>) {
  /** The driver's completed-trip earnings up to the cut-off (from logistics), without the trips already in a settlement. */
  async function earnings(tx: Tx, driverId: string, upTo: Date) {
    const all = await ctx.deps.logistics.completedTripEarnings(tx, driverId, upTo);
    if (all.length === 0) return all;
    const settled = await repo.settledTripIds(
      tx,
      all.map((e) => e.trip_id),
    );
    return all.filter((e) => !settled.has(e.trip_id));
  }

  /**
   * Settles every unsettled earning up to the cut-off. Each trip goes in with INSERT ... ON CONFLICT DO NOTHING on
   * the item's key (organization, trip): when two requests race, the second waits for the first and keeps only
   * what the first did not take; with nothing left it is refused (422 NOTHING_TO_SETTLE) and rolls back.
   */
  async function create(actor: Actor, driverId: string, input: { up_to?: string; note?: string }) {
    const upTo = input.up_to ? new Date(input.up_to) : new Date();
    if (upTo.getTime() > Date.now() + 60_000)
      throw AppError.unprocessable('The cut-off may not be in the future', 'CUTOFF_IN_FUTURE', [
        { field: 'up_to', message: 'in the future' },
      ]);
    return ctx.db.withTenant(actor, async (tx) => {
      const driver = await ctx.deps.logistics.getDriver(tx, driverId);
      if (!driver) throw AppError.notFound('Driver');
      const candidates = await earnings(tx, driverId, upTo);
      if (candidates.length === 0)
        throw AppError.unprocessable('The driver has no unsettled earnings up to the cut-off', 'NOTHING_TO_SETTLE');
      const currencies = new Set(candidates.map((c) => c.currency));
      if (currencies.size > 1) throw AppError.unprocessable('Earnings in more than one currency', 'MIXED_CURRENCIES');
      const id = newId();
      await repo.insertSettlement(tx, {
        organizationId: actor.organizationId,
        id,
        driverId,
        cutoffAt: upTo,
        currency: candidates[0].currency,
        note: input.note ?? null,
        createdByUserId: actor.userId,
      });
      const items = await repo.insertItems(tx, actor.organizationId, id, candidates);
      if (items.length === 0) throw AppError.unprocessable('The driver has no unsettled earnings up to the cut-off', 'NOTHING_TO_SETTLE');
      const earned = await repo.totalSettlement(tx, id, items.length);
      // Cash on delivery: the cash the driver holds is netted against his earnings; when he holds more, he is paid nothing and owes the rest.
      const net = await cash.netForSettlement(tx, actor, driver, earned.amount, id);
      const created = await repo.setSettlementCash(tx, id, net.netted, formatMoney(money(earned.amount).minus(net.netted)), net.owes);
      await recordAudit(tx, actor, {
        action: 'driver_settlement.created',
        entityType: 'driver_settlement',
        entityId: id,
        after: {
          driver_id: driverId,
          amount: created.amount,
          cash_netted: created.cash_netted,
          payout_amount: created.payout_amount,
          driver_owes: created.driver_owes,
          trip_count: items.length,
          cutoff_at: upTo,
        },
      });
      await ctx.events.record(tx, actor.organizationId, {
        type: 'driver_settlement.created',
        entityType: 'driver_settlement',
        entityId: id,
        actorUserId: actor.userId,
        audienceUserIds: [driver.user_id],
        payload: {
          amount: created.amount,
          cash_netted: created.cash_netted,
          payout_amount: created.payout_amount,
          driver_owes: created.driver_owes,
          currency: created.currency,
          trip_count: items.length,
        },
      });
      return created;
    });
  }

  async function markPaid(actor: Actor, id: string, input: { payment_reference?: string }) {
    return ctx.db.withTenant(actor, async (tx) => {
      const before = await repo.findSettlementForUpdate(tx, id);
      if (!before) throw AppError.notFound('Settlement');
      assertTransition('Settlement', DRIVER_SETTLEMENT_TRANSITIONS, before.status, 'paid');
      const paid = await repo.markSettlementPaid(tx, id, actor.userId, input.payment_reference ?? null);
      await recordAudit(tx, actor, {
        action: 'driver_settlement.paid',
        entityType: 'driver_settlement',
        entityId: id,
        before: { status: 'pending' },
        after: { status: 'paid', amount: paid.amount },
      });
      const driver = await ctx.deps.logistics.getDriver(tx, paid.driver_id);
      await ctx.events.record(tx, actor.organizationId, {
        type: 'driver_settlement.paid',
        entityType: 'driver_settlement',
        entityId: id,
        actorUserId: actor.userId,
        audienceUserIds: driver ? [driver.user_id] : [],
        payload: { amount: paid.amount, payout_amount: paid.payout_amount, currency: paid.currency },
      });
      return paid;
    });
  }

  async function listOwn(actor: Actor, q: { status?: DriverSettlementStatus; limit?: number; cursor?: string }) {
    const page = pageRequest(q);
    return ctx.db.withTenant(actor, async (tx) => {
      const driver = await ctx.deps.logistics.driverOfUser(tx, actor.userId);
      if (!driver) throw AppError.notFound('Driver');
      const rows = await repo.listDriverSettlements(tx, {
        driverId: driver.id,
        status: q.status ?? null,
        after: page.after,
        limit: page.limit + 1,
      });
      return { ...toPage(rows, page), totals: await repo.driverSettlementTotals(tx, driver.id) };
    });
  }

  return { create, markPaid, listOwn };
}
