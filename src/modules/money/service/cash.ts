import type { Static } from '@sinclair/typebox';
import type { Decimal } from 'decimal.js';
import { recordAudit } from '../../../platform/audit.js';
import type { Actor } from '../../../platform/auth.js';
import type { Tx } from '../../../platform/db/index.js';
import { AppError } from '../../../platform/errors.js';
import { once, requestHash } from '../../../platform/idempotency.js';
import { newId } from '../../../platform/ids.js';
import { formatMoney, minMoney, money } from '../../../platform/money.js';
import type { OrderMoneyFacts } from '../../commerce/index.js';
import { pageRequest, toPage } from '../../../platform/pagination.js';
import { scopeOf } from '../../../platform/scope.js';
import { assertObjectLink } from '../../storage/index.js';
import type { DriverRow, TripRow } from '../../logistics/index.js';
import type { MoneyContext } from '../context.js';
import {
  type CashEntryRecord,
  cashInHandOf,
  type CashSums,
  cashSums,
  type CoveredCollection,
  entryCovered,
  findCashEntry,
  findCollection,
  insertCashEntry,
  listCashEntries,
  lockDriverCash,
  newlyCoveredCollections,
  type ReconciliationRow,
  reconciliationRows,
  shortfallResolution,
} from '../repo/cash.js';
import { insertReceipt, lockMerchantWallet } from '../repo/wallet.js';
import { CashEntryOut, CashSummaryOut, type CashierRemittanceMethod, type RemittanceMethod, type ShortfallChargedTo } from '../schemas.js';
import { appendEntry } from './ledger.js';

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

/** A reconciliation row with the names it is read by. */
export type ReconciliationLine = ReconciliationRow & { driver_name: string | null; territory_name: string | null };

/** `scope`: the sub-administrator's territory names, null for the whole organization. */
export interface ReconciliationFilter {
  from?: string;
  to?: string;
  territory_id?: string;
  driver_id?: string;
}

export interface Reconciliation {
  timezone: string;
  from: string;
  to: string;
  scope: string[] | null;
  data: ReconciliationLine[];
}

export interface ShortfallInput {
  charge_to: ShortfallChargedTo;
  reason: string;
}

export interface RemittanceInput {
  amount: string;
  method: CashierRemittanceMethod;
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
      open_shortfalls: s.open_shortfalls,
      open_shortfall_amount: formatMoney(money(s.open_shortfall_amount)),
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
   * The platform now holds an order's cash: a receipt (method driver_cash) of what reached it, so the merchant's net of the
   * order moves from pending to available. Null when the order was received already.
   */
  async function receive(tx: Tx, actor: Actor, c: Pick<CoveredCollection, 'order_id' | 'merchant_id'>, amount: Decimal, reference: string) {
    if (!c.order_id || !c.merchant_id) return null;
    const receipt = await insertReceipt(tx, {
      organizationId: actor.organizationId,
      orderId: c.order_id,
      merchantId: c.merchant_id,
      amount: formatMoney(amount),
      currency: await currencyOf(tx),
      method: 'driver_cash',
      reference,
      note: null,
      recordedByUserId: actor.userId,
    });
    return receipt ? { order_id: c.order_id, merchant_id: c.merchant_id, amount: formatMoney(amount) } : null;
  }

  /**
   * The entries a remittance of `amount` newly covers (oldest first) whose orders' cash the platform now holds. A full (or larger)
   * collection: its order is received. A short one: only once staff resolved it — charged to the merchant, its order is received
   * with the collected cash; charged to the driver, when the shortfall (a later entry of the sequence) is covered too. Until then
   * the merchant's net stays pending: it is never available on cash that did not reach the platform.
   */
  async function cover(tx: Tx, actor: Actor, driverId: string, amount: string, remittanceId: string) {
    const out: { order_id: string; merchant_id: string; amount: string }[] = [];
    for (const c of await newlyCoveredCollections(tx, driverId, amount)) {
      const got = await receivable(tx, driverId, c);
      const r = got && (await receive(tx, actor, c, got, `cash remittance ${remittanceId}`));
      if (r) out.push(r);
    }
    return out;
  }

  /** What the platform holds of a covered entry's order (null: not received yet, see cover). */
  async function receivable(tx: Tx, driverId: string, c: CoveredCollection): Promise<Decimal | null> {
    const short = c.entry_type === 'cash_collected' && c.expected_amount !== null && money(c.expected_amount).gt(c.amount);
    if (c.entry_type === 'cash_adjustment') {
      const collection = c.trip_id ? await findCollection(tx, c.trip_id) : null;
      return money(c.amount).plus(collection?.amount ?? 0);
    }
    if (!short) return money(c.amount);
    return c.trip_id && (await shortfallResolution(tx, driverId, c.trip_id)) === 'merchant' ? money(c.amount) : null;
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
    // Coverage is derived: cash he remitted beyond his earlier collections (an adjustment he handed in) covers this one at once.
    const covered = !differs || collected.gt(trip.cash_to_collect) ? await entryCovered(tx, trip.driver_id, row.id) : false;
    if (covered)
      await receive(
        tx,
        actor,
        { order_id: row.orderId, merchant_id: row.merchantId },
        collected,
        `cash remitted before collection ${row.id}`,
      );
    await recordAudit(tx, actor, {
      action: 'driver_cash.cash_collected',
      entityType: 'driver_cash_entry',
      entityId: row.id,
      after: {
        driver_id: row.driverId,
        order_id: row.orderId,
        trip_id: row.tripId,
        amount: row.amount,
        expected_amount: row.expectedAmount,
        reason: row.note,
      },
    });
  }

  /**
   * The one way cash leaves a driver's hand: a `cash_remitted` entry of −amount (a cashier's hand-in, or netted by a driver
   * settlement), covering his oldest collections (their orders received), audited. The caller holds the driver's cash lock and
   * passed the sums read under it.
   */
  async function writeRemittance(
    tx: Tx,
    actor: Actor,
    d: DriverRow,
    before: CashSums,
    amount: Decimal,
    how: {
      method: RemittanceMethod;
      reference?: string | null;
      proofStorageObjectId?: string | null;
      note?: string | null;
      settlementId?: string | null;
    },
  ) {
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
      method: how.method,
      reference: how.reference ?? null,
      proofStorageObjectId: how.proofStorageObjectId ?? null,
      settlementId: how.settlementId ?? null,
      note: how.note ?? null,
      createdByUserId: actor.userId,
    }))!;
    await recordAudit(tx, actor, {
      action: 'driver_cash.cash_remitted',
      entityType: 'driver_cash_entry',
      entityId: row.id,
      before: { cash_in_hand: before.cash_in_hand },
      after: {
        driver_id: d.id,
        amount: row.amount,
        method: row.method,
        reference: row.reference,
        settlement_id: row.settlementId,
        covered_orders: covered.map((c) => c.order_id),
      },
    });
    return { row, covered };
  }

  async function remitIn(tx: Tx, actor: Actor, driverId: string, input: RemittanceInput) {
    const d = await scopedDriver(tx, actor, driverId);
    const amount = money(input.amount);
    if (!amount.gt(0)) throw AppError.badRequest('amount must be greater than 0', [{ field: 'amount', message: 'must be > 0' }]);
    if (input.proof_storage_object_id) await assertObjectLink(ctx, tx, actor, input.proof_storage_object_id, ['payment_proof', 'document']);
    await lockDriverCash(tx, actor.organizationId, d.id);
    const before = await cashSums(tx, d.id);
    if (amount.gt(money(before.cash_in_hand))) {
      throw AppError.unprocessable(
        `The remittance exceeds the driver's cash in hand (${formatMoney(money(before.cash_in_hand))})`,
        'REMITTANCE_EXCEEDS_CASH_IN_HAND',
        [{ field: 'amount', message: `at most ${formatMoney(money(before.cash_in_hand))}` }],
      );
    }
    const { row, covered } = await writeRemittance(tx, actor, d, before, amount, {
      method: input.method,
      reference: input.reference ?? null,
      proofStorageObjectId: input.proof_storage_object_id ?? null,
      note: input.note ?? null,
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
      throw AppError.unprocessable(
        `The adjustment would leave negative cash in hand (cash in hand ${formatMoney(money(before.cash_in_hand))})`,
        'ADJUSTMENT_EXCEEDS_CASH_IN_HAND',
        [{ field: 'amount', message: `at least -${formatMoney(money(before.cash_in_hand))}` }],
      );
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
   * Staff resolve a short collection (the driver collected less than the order asked for): the shortfall is charged to the
   * driver (a `cash_adjustment` +shortfall carrying the order and trip: he owes it, and the order is received once his
   * remittances cover it too) or to the merchant (a wallet `adjustment` −shortfall carrying the order and trip: the customer
   * paid less, and the order is received with the cash collected once that is covered). Once per collection; audited.
   */
  async function resolveIn(tx: Tx, actor: Actor, driverId: string, entryId: string, input: ShortfallInput) {
    const d = await scopedDriver(tx, actor, driverId);
    await lockDriverCash(tx, actor.organizationId, d.id);
    const c = await findCashEntry(tx, d.id, entryId);
    if (!c || c.entryType !== 'cash_collected' || !c.tripId) throw AppError.notFound('Cash collection');
    const shortfall = money(c.expectedAmount ?? c.amount).minus(c.amount);
    if (!shortfall.gt(0)) throw AppError.unprocessable('This collection is not short of what the order asked for', 'NOT_A_SHORTFALL');
    if (await shortfallResolution(tx, d.id, c.tripId))
      throw AppError.conflict('This shortfall is resolved already', 'SHORTFALL_ALREADY_RESOLVED');
    const before = await cashSums(tx, d.id);
    const note = `shortfall of ${formatMoney(shortfall)} on order ${c.orderId ?? c.tripId} charged to the ${input.charge_to}: ${input.reason}`;
    let cashEntry: CashEntryRecord | null = null;
    let walletEntry: Awaited<ReturnType<typeof appendEntry>> | null = null;
    let received: Awaited<ReturnType<typeof receive>> = null;
    const reference = `shortfall resolution ${c.id}`;
    if (input.charge_to === 'driver') {
      cashEntry = (await insertCashEntry(tx, {
        organizationId: actor.organizationId,
        id: newId(),
        driverId: d.id,
        entryType: 'cash_adjustment',
        amount: formatMoney(shortfall),
        currency: c.currency,
        orderId: c.orderId,
        tripId: c.tripId,
        merchantId: c.merchantId,
        territoryId: c.territoryId,
        note,
        createdByUserId: actor.userId,
      }))!;
      if (await entryCovered(tx, d.id, cashEntry.id))
        received = await receive(tx, actor, { order_id: c.orderId, merchant_id: c.merchantId }, money(c.amount).plus(shortfall), reference);
    } else {
      if (!c.merchantId) throw AppError.unprocessable('The collection names no merchant', 'NOT_A_SHORTFALL');
      await lockMerchantWallet(tx, actor.organizationId, c.merchantId);
      walletEntry = await appendEntry(tx, actor, {
        merchantId: c.merchantId,
        entryType: 'adjustment',
        amount: formatMoney(shortfall.negated()),
        currency: c.currency,
        orderId: c.orderId,
        tripId: c.tripId,
        driverId: d.id,
        territoryId: c.territoryId,
        note,
      });
      if (await entryCovered(tx, d.id, c.id))
        received = await receive(tx, actor, { order_id: c.orderId, merchant_id: c.merchantId }, money(c.amount), reference);
    }
    await recordAudit(tx, actor, {
      action: 'driver_cash.shortfall_resolved',
      entityType: 'driver_cash_entry',
      entityId: c.id,
      before: { cash_in_hand: before.cash_in_hand, open_shortfalls: before.open_shortfalls },
      after: {
        driver_id: d.id,
        order_id: c.orderId,
        charge_to: input.charge_to,
        shortfall: formatMoney(shortfall),
        reason: input.reason,
        cash_entry_id: cashEntry?.id ?? null,
        wallet_entry_id: walletEntry?.id ?? null,
        received: received !== null,
      },
    });
    return {
      collection: cashEntryOut(c),
      charge_to: input.charge_to,
      shortfall: formatMoney(shortfall),
      cash_entry: cashEntry ? cashEntryOut(cashEntry) : null,
      wallet_entry: walletEntry,
      received_order: received,
      cash: await summary(tx, d),
    };
  }

  /**
   * A driver settlement nets the cash the driver holds against his earnings: min(earnings, cash in hand) is recorded as a
   * `cash_remitted` entry of method `settlement` (covering his oldest collections, as a remittance does). Returns what was netted
   * and what he still owes.
   */
  async function netForSettlement(
    tx: Tx,
    actor: Actor,
    d: DriverRow,
    earnings: string,
    settlementId: string,
  ): Promise<{ netted: string; owes: string }> {
    await lockDriverCash(tx, actor.organizationId, d.id);
    const s = await cashSums(tx, d.id);
    const inHand = money(s.cash_in_hand);
    const netted = inHand.gt(0) ? minMoney(inHand, money(earnings)) : money(0);
    if (netted.gt(0))
      await writeRemittance(tx, actor, d, s, netted, { method: 'settlement', settlementId, note: 'netted from the driver settlement' });
    return { netted: formatMoney(netted), owes: formatMoney(inHand.minus(netted).isNegative() ? money(0) : inHand.minus(netted)) };
  }

  /**
   * Reconciliation rows per driver, territory and day, with the driver's and territory's names, and the scope's label
   * (the sub-administrator's territory names, or "organization").
   */
  async function reconciliation(actor: Actor, filter: ReconciliationFilter): Promise<Reconciliation> {
    if (filter.to && !filter.from) throw AppError.badRequest('to needs from', [{ field: 'from', message: 'required with to' }]);
    return ctx.db.withTenant(actor, async (tx) => {
      const timeZone = (await ctx.deps.organizations.settingsIn(tx)).timezone;
      const from = filter.from ?? new Intl.DateTimeFormat('en-CA', { timeZone }).format(new Date());
      const q = { ...filter, from, to: filter.to ?? new Date(Date.parse(`${from}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10) };
      assertPeriod(q);
      const scope = scopeOf(actor);
      if (q.territory_id && scope && !scope.includes(q.territory_id)) throw AppError.notFound('Territory');
      const rows = await reconciliationRows(tx, {
        from: q.from,
        to: q.to,
        timeZone,
        scope,
        territoryId: q.territory_id ?? null,
        driverId: q.driver_id ?? null,
      });
      const drivers = new Map<string, string | null>();
      const territories = new Map<string, string | null>();
      const territoryName = async (id: string) => {
        if (!territories.has(id)) territories.set(id, (await ctx.deps.logistics.getTerritory(tx, id))?.name ?? null);
        return territories.get(id) ?? null;
      };
      const data: ReconciliationLine[] = [];
      for (const r of rows) {
        if (!drivers.has(r.driver_id))
          drivers.set(r.driver_id, (await ctx.deps.logistics.getDriver(tx, r.driver_id))?.display_name ?? null);
        data.push({
          ...r,
          driver_name: drivers.get(r.driver_id) ?? null,
          territory_name: r.territory_id ? await territoryName(r.territory_id) : null,
        });
      }
      const names = scope === null ? null : await Promise.all(scope.map(territoryName));
      return {
        timezone: timeZone,
        from: q.from,
        to: q.to,
        scope: names === null ? null : names.map((n) => n ?? '?').sort((x, y) => x.localeCompare(y)),
        data,
      };
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
    ofDriver: (actor: Actor, driverId: string, q: { limit?: number; cursor?: string }) =>
      ctx.db.withTenant(actor, async (tx) => page(tx, await scopedDriver(tx, actor, driverId), q)),
    remit: (actor: Actor, driverId: string, input: RemittanceInput, key: string | null) =>
      ctx.db.withTenant(actor, async (tx) => {
        if (!key) return { status: 201, body: await remitIn(tx, actor, driverId, input), replayed: false };
        return once(
          tx,
          { organizationId: actor.organizationId, scope: `cash-remittance:${driverId}`, key, hash: requestHash(input) },
          async () => ({
            status: 201,
            body: await remitIn(tx, actor, driverId, input),
          }),
        );
      }),
    adjust: (actor: Actor, driverId: string, input: { amount: string; reason: string }) =>
      ctx.db.withTenant(actor, (tx) => adjustIn(tx, actor, driverId, input)),
    resolveShortfall: (actor: Actor, driverId: string, entryId: string, input: ShortfallInput) =>
      ctx.db.withTenant(actor, (tx) => resolveIn(tx, actor, driverId, entryId, input)),
  };
}

export type CashService = ReturnType<typeof createCashService>;

/** A reconciliation period: from < to, at most 93 days. */
export function assertPeriod(q: { from: string; to: string }) {
  const days = (Date.parse(q.to) - Date.parse(q.from)) / 86_400_000;
  if (!(days > 0)) throw AppError.badRequest('to must be after from', [{ field: 'to', message: 'must be after from' }]);
  if (days > 93)
    throw AppError.unprocessable('At most 93 days per reconciliation', 'PERIOD_TOO_LONG', [
      { field: 'to', message: 'at most 93 days after from' },
    ]);
}
