import { Type, type Static } from '@sinclair/typebox';
import type { Actor } from '../../platform/auth.js';
import { recordAudit } from '../../platform/audit.js';
import type { Tx } from '../../platform/db/index.js';
import { AppError } from '../../platform/errors.js';
import { once, requestHash } from '../../platform/idempotency.js';
import { newId } from '../../platform/ids.js';
import { formatMoney, minMoney, money } from '../../platform/money.js';
import type { OrderMoneyFacts } from '../../platform/order-contracts.js';
import { pageRequest, toPage } from '../../platform/pagination.js';
import { Money, Nullable, Timestamp } from '../../platform/schemas.js';
import { scopeOf } from '../../platform/scope.js';
import { assertObjectLink } from '../../platform/storage-links.js';
import type { DriverRow, TripRow } from '../logistics/index.js';
import type { MoneyContext } from './index.js';
import { cashInHandOf, cashSums, insertCashEntry, listCashEntries, lockDriverCash, newlyCoveredCollections, reconciliationRows, type CashEntryRecord, type ReconciliationRow } from './repo/cash.js';
import { insertReceipt } from './repo/wallet.js';
import { CASH_ENTRY_TYPES, REMITTANCE_METHODS } from './tables.js';

export type RemittanceMethod = (typeof REMITTANCE_METHODS)[number];

export const CashEntryOut = Type.Object({
  id: Type.String(),
  driver_id: Type.String(),
  entry_type: Type.Union(CASH_ENTRY_TYPES.map((t) => Type.Literal(t)), {
    description: 'cash_collected (+, at the door of a cash order), cash_remitted (−, handed in to a cashier or netted by a driver settlement), cash_adjustment (±, an administrator\'s correction)',
  }),
  amount: Money,
  currency: Type.String(),
  order_id: Nullable(Type.String()),
  trip_id: Nullable(Type.String()),
  merchant_id: Nullable(Type.String()),
  territory_id: Nullable(Type.String()),
  expected_amount: Nullable(Type.String({ description: 'cash_collected only: the amount the order asked for when the driver collected a different one (a discrepancy for review)' })),
  method: Nullable(Type.Union(REMITTANCE_METHODS.map((m) => Type.Literal(m)))),
  reference: Nullable(Type.String()),
  proof_storage_object_id: Nullable(Type.String()),
  settlement_id: Nullable(Type.String()),
  note: Nullable(Type.String()),
  created_by_user_id: Nullable(Type.String()),
  created_at: Timestamp,
});

export const CashSummaryOut = Type.Object({
  driver_id: Type.String(),
  cash_in_hand: Type.String({ description: 'always the sum of the entries: collected − remitted ± adjustments' }),
  collected: Money,
  remitted: Money,
  adjusted: Type.String({ description: 'signed sum of the adjustments' }),
  discrepancies: Type.Integer({ description: 'collections recorded with an amount different from the order\'s' }),
  cash_limit: Nullable(Type.String({ description: "the driver's own limit, else the organization's (logistics settings cash_limit); null = no limit" })),
  at_cash_limit: Type.Boolean({ description: 'cash_in_hand >= cash_limit: no cash order is offered to him (reason cash_limit)' }),
  currency: Type.String(),
});

const cashEntryOut = (e: CashEntryRecord): Static<typeof CashEntryOut> => ({
  id: e.id,
  driver_id: e.driverId,
  entry_type: e.entryType,
  amount: e.amount,
  currency: e.currency,
  order_id: e.orderId,
  trip_id: e.tripId,
  merchant_id: e.merchantId,
  territory_id: e.territoryId,
  expected_amount: e.expectedAmount,
  method: e.method,
  reference: e.reference,
  proof_storage_object_id: e.proofStorageObjectId,
  settlement_id: e.settlementId,
  note: e.note,
  created_by_user_id: e.createdByUserId,
  created_at: e.createdAt,
});

export interface RemittanceInput {
  amount: string;
  method: Exclude<RemittanceMethod, 'settlement'>;
  reference?: string;
  proof_storage_object_id?: string;
  note?: string;
}

/** The driver's limit: his own `cash_limit`, else the organization's; null = none. */
export function effectiveCashLimit(driver: Pick<DriverRow, 'cash_limit'>, orgLimit: string | null): string | null {
  return driver.cash_limit ?? orgLimit;
}

/** Whether a driver holding `cashInHand` may be offered a cash order under `limit` (at or over the limit: no). */
export function underCashLimit(cashInHand: string, limit: string | null): boolean {
  return limit === null || money(cashInHand).lt(money(limit));
}

export function createCashService(ctx: MoneyContext) {
  async function currencyOf(tx: Tx): Promise<string> {
    return (await ctx.deps.organizations.settingsIn(tx)).default_currency;
  }

  async function summary(tx: Tx, d: DriverRow): Promise<Static<typeof CashSummaryOut>> {
    const s = await cashSums(tx, d.id);
    const limit = effectiveCashLimit(d, (await ctx.deps.logistics.settings(tx, d.organization_id)).cash_limit);
    return {
      driver_id: d.id,
      cash_in_hand: formatMoney(money(s.cash_in_hand)),
      collected: formatMoney(money(s.collected)),
      remitted: formatMoney(money(s.remitted)),
      adjusted: formatMoney(money(s.adjusted)),
      discrepancies: s.discrepancies,
      cash_limit: limit === null ? null : formatMoney(money(limit)),
      at_cash_limit: !underCashLimit(s.cash_in_hand, limit),
      currency: s.currency ?? (await currencyOf(tx)),
    };
  }

  /** A driver the actor may see (sub-administrators: drivers linked to their territories); 404 otherwise. */
  async function scopedDriver(tx: Tx, actor: Actor, driverId: string): Promise<DriverRow> {
    const d = await ctx.deps.logistics.getDriverInScope(tx, actor, driverId);
    if (!d) throw AppError.notFound('Driver');
    return d;
  }

  /** The territory a remittance or adjustment is reconciled under: the driver's first territory the actor may see. */
  function territoryOf(actor: Actor, d: DriverRow): string | null {
    const scope = scopeOf(actor);
    return d.territory_ids.find((t) => !scope || scope.includes(t)) ?? null;
  }

  async function page(tx: Tx, d: DriverRow, q: { limit?: number; cursor?: string }) {
    const p = pageRequest(q);
    const rows = await listCashEntries(tx, d.id, p.after, p.limit + 1);
    return { ...(await summary(tx, d)), ...toPage(rows, p, cashEntryOut) };
  }

  /**
   * The collections a remittance of `amount` newly covers (oldest collected first): their orders' payments count as received by the
   * platform (a receipt, method driver_cash), so the merchants' nets of those orders move from pending to available.
   */
  async function cover(tx: Tx, actor: Actor, driverId: string, amount: string, remittanceId: string) {
    const covered = await newlyCoveredCollections(tx, driverId, amount);
    const out: { order_id: string; merchant_id: string; amount: string }[] = [];
    for (const c of covered) {
      if (!c.order_id || !c.merchant_id) continue;
      const receipt = await insertReceipt(tx, {
        organizationId: actor.organizationId,
        orderId: c.order_id,
        merchantId: c.merchant_id,
        amount: formatMoney(money(c.amount)),
        currency: await currencyOf(tx),
        method: 'driver_cash',
        reference: `cash remittance ${remittanceId}`,
        note: null,
        recordedByUserId: actor.userId,
      });
      if (receipt) out.push({ order_id: c.order_id, merchant_id: c.merchant_id, amount: formatMoney(money(c.amount)) });
    }
    return out;
  }

  /**
   * A delivered cash order the platform's driver collected (called by the wallet in the delivery's transaction): a `cash_collected`
   * entry of what the driver recorded at the door, once per trip. A different amount than the order's keeps the expected one
   * (a discrepancy for review).
   */
  async function recordCollection(tx: Tx, actor: Actor, facts: OrderMoneyFacts, trip: TripRow | null): Promise<void> {
    if (!trip?.driver_id || trip.cash_collected === null) return;
    await lockDriverCash(tx, actor.organizationId, trip.driver_id);
    const collected = money(trip.cash_collected);
    const differs = !collected.eq(money(trip.cash_to_collect));
    const row = await insertCashEntry(tx, {
      organizationId: actor.organizationId,
      id: newId(),
      driverId: trip.driver_id,
      entryType: 'cash_collected',
      amount: formatMoney(collected),
      currency: facts.currency,
      orderId: facts.orderId,
      tripId: trip.id,
      merchantId: facts.merchantId,
      territoryId: trip.territory_id ?? facts.territoryId,
      expectedAmount: differs ? formatMoney(money(trip.cash_to_collect)) : null,
      note: differs ? trip.cash_discrepancy_reason : null,
      createdByUserId: actor.userId,
    });
    if (!row) return;
    await recordAudit(tx, actor, {
      action: 'driver_cash.cash_collected',
      entityType: 'driver_cash_entry',
      entityId: row.id,
      after: { driver_id: row.driverId, order_id: row.orderId, trip_id: row.tripId, amount: row.amount, expected_amount: row.expectedAmount, reason: row.note },
    });
  }

  async function remitIn(tx: Tx, actor: Actor, driverId: string, input: RemittanceInput) {
    const d = await scopedDriver(tx, actor, driverId);
    const amount = money(input.amount);
    if (!amount.gt(0)) throw AppError.badRequest('amount must be greater than 0', [{ field: 'amount', message: 'must be > 0' }]);
    if (input.proof_storage_object_id) await assertObjectLink(ctx, tx, actor, input.proof_storage_object_id, ['payment_proof', 'document']);
    await lockDriverCash(tx, actor.organizationId, d.id);
    const before = await cashSums(tx, d.id);
    if (amount.gt(money(before.cash_in_hand))) {
      throw AppError.unprocessable(`The remittance exceeds the driver's cash in hand (${formatMoney(money(before.cash_in_hand))})`, 'REMITTANCE_EXCEEDS_CASH_IN_HAND', [
        { field: 'amount', message: `at most ${formatMoney(money(before.cash_in_hand))}` },
      ]);
    }
    const id = newId();
    const covered = await cover(tx, actor, d.id, formatMoney(amount), id);
    const row = (await insertCashEntry(tx, {
      organizationId: actor.organizationId,
      id,
      driverId: d.id,
      entryType: 'cash_remitted',
      amount: formatMoney(amount.negated()),
      currency: before.currency ?? (await currencyOf(tx)),
      territoryId: territoryOf(actor, d),
      method: input.method,
      reference: input.reference ?? null,
      proofStorageObjectId: input.proof_storage_object_id ?? null,
      note: input.note ?? null,
      createdByUserId: actor.userId,
    }))!;
    await recordAudit(tx, actor, {
      action: 'driver_cash.cash_remitted',
      entityType: 'driver_cash_entry',
      entityId: row.id,
      before: { cash_in_hand: before.cash_in_hand },
      after: { driver_id: d.id, amount: row.amount, method: row.method, reference: row.reference, covered_orders: covered.map((c) => c.order_id) },
    });
    await ctx.events.record(tx, actor.organizationId, {
      type: 'driver_cash.remitted',
      entityType: 'driver',
      entityId: d.id,
      territoryId: row.territoryId,
      actorUserId: actor.userId,
      audienceUserIds: [d.user_id],
      payload: { driver_id: d.id, amount: formatMoney(amount), currency: row.currency, entry_id: row.id },
    });
    return { entry: cashEntryOut(row), covered_orders: covered, cash: await summary(tx, d) };
  }

  async function adjustIn(tx: Tx, actor: Actor, driverId: string, input: { amount: string; reason: string }) {
    const d = await scopedDriver(tx, actor, driverId);
    const amount = money(input.amount);
    if (amount.isZero()) throw AppError.badRequest('amount may not be zero', [{ field: 'amount', message: 'must not be 0' }]);
    await lockDriverCash(tx, actor.organizationId, d.id);
    const before = await cashSums(tx, d.id);
    if (money(before.cash_in_hand).plus(amount).isNegative()) {
      throw AppError.unprocessable(`The adjustment would leave negative cash in hand (cash in hand ${formatMoney(money(before.cash_in_hand))})`, 'ADJUSTMENT_EXCEEDS_CASH_IN_HAND', [
        { field: 'amount', message: `at least -${formatMoney(money(before.cash_in_hand))}` },
      ]);
    }
    const row = (await insertCashEntry(tx, {
      organizationId: actor.organizationId,
      id: newId(),
      driverId: d.id,
      entryType: 'cash_adjustment',
      amount: formatMoney(amount),
      currency: before.currency ?? (await currencyOf(tx)),
      territoryId: territoryOf(actor, d),
      note: input.reason,
      createdByUserId: actor.userId,
    }))!;
    await recordAudit(tx, actor, {
      action: 'driver_cash.cash_adjustment',
      entityType: 'driver_cash_entry',
      entityId: row.id,
      before: { cash_in_hand: before.cash_in_hand },
      after: { driver_id: d.id, amount: row.amount, reason: input.reason },
    });
    return { entry: cashEntryOut(row), cash: await summary(tx, d) };
  }

  /**
   * A driver settlement nets the cash the driver holds against his earnings: min(earnings, cash in hand) is recorded as a
   * `cash_remitted` entry of method `settlement` (covering his oldest collections, as a remittance does). Returns what was netted
   * and what he still owes.
   */
  async function netForSettlement(tx: Tx, actor: Actor, d: DriverRow, earnings: string, settlementId: string): Promise<{ netted: string; owes: string }> {
    await lockDriverCash(tx, actor.organizationId, d.id);
    const s = await cashSums(tx, d.id);
    const inHand = money(s.cash_in_hand);
    const netted = inHand.gt(0) ? minMoney(inHand, money(earnings)) : money(0);
    if (netted.gt(0)) {
      const id = newId();
      const covered = await cover(tx, actor, d.id, formatMoney(netted), id);
      const row = (await insertCashEntry(tx, {
        organizationId: actor.organizationId,
        id,
        driverId: d.id,
        entryType: 'cash_remitted',
        amount: formatMoney(netted.negated()),
        currency: s.currency ?? (await currencyOf(tx)),
        territoryId: territoryOf(actor, d),
        method: 'settlement',
        settlementId,
        note: 'netted from the driver settlement',
        createdByUserId: actor.userId,
      }))!;
      await recordAudit(tx, actor, {
        action: 'driver_cash.cash_remitted',
        entityType: 'driver_cash_entry',
        entityId: row.id,
        before: { cash_in_hand: s.cash_in_hand },
        after: { driver_id: d.id, amount: row.amount, method: 'settlement', settlement_id: settlementId, covered_orders: covered.map((c) => c.order_id) },
      });
    }
    return { netted: formatMoney(netted), owes: formatMoney(inHand.minus(netted).isNegative() ? money(0) : inHand.minus(netted)) };
  }

  async function reconciliation(actor: Actor, q: { from: string; to: string; territory_id?: string; driver_id?: string }): Promise<{ timezone: string; data: ReconciliationRow[] }> {
    return ctx.db.withTenant(actor, async (tx) => {
      const timeZone = (await ctx.deps.organizations.settingsIn(tx)).timezone;
      const scope = scopeOf(actor);
      if (q.territory_id && scope && !scope.includes(q.territory_id)) throw AppError.notFound('Territory');
      const rows = await reconciliationRows(tx, { from: q.from, to: q.to, timeZone, scope, territoryId: q.territory_id ?? null, driverId: q.driver_id ?? null });
      return { timezone: timeZone, data: rows };
    });
  }

  return {
    recordCollection,
    netForSettlement,
    cashInHandOf,
    reconciliation,
    own: (actor: Actor, q: { limit?: number; cursor?: string }) =>
      ctx.db.withTenant(actor, async (tx) => {
        const d = await ctx.deps.logistics.driverOfUser(tx, actor.userId);
        if (!d) throw new AppError(404, 'DRIVER_PROFILE_NOT_FOUND', 'You have no driver profile');
        return page(tx, d, q);
      }),
    ofDriver: (actor: Actor, driverId: string, q: { limit?: number; cursor?: string }) => ctx.db.withTenant(actor, async (tx) => page(tx, await scopedDriver(tx, actor, driverId), q)),
    remit: (actor: Actor, driverId: string, input: RemittanceInput, key: string | null) =>
      ctx.db.withTenant(actor, async (tx) => {
        if (!key) return { status: 201, body: await remitIn(tx, actor, driverId, input), replayed: false };
        return once(tx, { organizationId: actor.organizationId, scope: `cash-remittance:${driverId}`, key, hash: requestHash(input) }, async () => ({
          status: 201,
          body: await remitIn(tx, actor, driverId, input),
        }));
      }),
    adjust: (actor: Actor, driverId: string, input: { amount: string; reason: string }) => ctx.db.withTenant(actor, (tx) => adjustIn(tx, actor, driverId, input)),
  };
}

export type CashService = ReturnType<typeof createCashService>;
