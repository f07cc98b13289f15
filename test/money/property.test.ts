import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers.js';
import { pt, setFailedDeliveryPolicy, tripDb } from '../logistics/fixtures.js';
import { formatMoney, money, toCents } from '../../src/platform/money.js';
import type { PaymentDestination } from '../../src/modules/commerce/index.js';
import { newMerchant, ok, orderKit, type MoneyShop, type OrderKit } from './fixtures.js';
import { newId } from '../../src/platform/ids.js';

/**
 * Property-based money test. Random sequences of real operations over HTTP — orders over every payment
 * destination (with and without a coupon, delivered or left open), platform payments received, cancellations, full and
 * partial refunds, express deliveries, debt payments and settlement runs — on a fresh merchant per run. After every step:
 *  1. the wallet the API reports equals the sum of the ledger, and balance = available + pending − debt + credit;
 *  2. available >= 0, pending is exactly the net of the delivered platform orders not received (computed here), and
 *     everything settlements ever paid out is covered by the nets of orders the platform recorded as received (a refund
 *     after a payout does not undo the payout: it becomes the merchant's debt);
 *  3. each order's entries add up to what the customer paid minus the commission and the delivery fee (the merchant of a
 *     merchant_direct or cash order holds the total himself), and an open or cancelled order has none;
 *  4. at most one delivery_fee_debit per order and per trip;
 *  5. every completed trip of the merchant that earns its driver something has its delivery_fee_debit.
 * Failed deliveries are among the operations: an open order or an express request fails at the door (then
 * maybe returns to the merchant); the order's only entry is the delivery fee charged to the merchant, a received payment
 * is refunded in full (so it covers no payout), and the attempt's trip is backed like a completed one (invariants 3–5).
 *
 * Cash on delivery: cash orders are collected by the platform's driver or by the merchant's own staff; the driver's cash
 * is remitted (in parts), adjusted, capped by a cash limit, and netted by driver settlements. After every step also:
 *  6. the driver's cash in hand (API) = SUM(his entries) = collected − remitted ± adjustments >= 0, and only delivered
 *     trips carry a collection (a failed one collects nothing);
 *  7. coverage: his remittances cover his collections (and the shortfalls charged to him) oldest first; an order counts as
 *     received (its merchant net available) exactly when covered — a driver-collected cash order's net is available only
 *     after remittance; a short collection's only once staff charged the shortfall (to the merchant: when the collected cash
 *     is covered; to the driver: when his shortfall is covered too), never while unresolved;
 *  8. at or over his cash limit, a cash order is assigned to him only with an override (a plain assignment is 422
 *     CASH_LIMIT), and the API says at_cash_limit;
 *  9. a driver settlement nets min(earnings, cash in hand): it pays nothing while he holds at least his earnings, and
 *     what it pays plus what it netted is exactly the earnings.
 *
 * CI runs a bounded number of sequences (MONEY_RUNS, default 10, of at most MONEY_STEPS = 8 steps);
 * `npm run test:money` runs more (MONEY_RUNS=100 of MONEY_STEPS=12 by default; MONEY_SEED replays a run, MONEY_SHRINK=1 shrinks a failure).
 */
const RUNS = Number(process.env.MONEY_RUNS ?? 10);
const STEPS = Number(process.env.MONEY_STEPS ?? 8);
const DAY = 86_400_000;

let t: TestApp;
let kit: OrderKit;
let day = 1;

beforeAll(async () => {
  t = await createTestApp();
  kit = await orderKit(t);
}, 60_000);
afterAll(() => t?.close());

interface ModelOrder {
  id: string;
  destination: PaymentDestination;
  /** Cash orders: who collects the cash. */
  collectedBy: 'driver' | 'merchant' | null;
  subtotal: string;
  discount: string;
  fee: string;
  total: string;
  state: 'open' | 'delivered' | 'cancelled' | 'failed';
  received: boolean;
  refunded: string;
  /** Driver-collected cash: what the driver failed to collect at the door (0.00: the whole total), and who staff charged it to. */
  shortfall: string;
  chargedTo: 'driver' | 'merchant' | null;
}

const cents = (min: number, max: number) => fc.integer({ min, max }).map((n) => formatMoney(money(n).dividedBy(100)));
const pick = fc.nat({ max: 1000 });

const Action = fc.oneof(
  fc.record({
    kind: fc.constant('order' as const),
    destination: fc.constantFrom<PaymentDestination>('platform', 'merchant_direct', 'cash'),
    collectedBy: fc.constantFrom<'driver' | 'merchant'>('driver', 'driver', 'merchant'),
    subtotal: cents(100, 20_000),
    couponShare: fc.option(fc.integer({ min: 1, max: 60 }), { nil: null }),
    fee: fc.constantFrom('0.00', '5.00', '12.50'),
    deliver: fc.boolean(),
    receiveFirst: fc.boolean(),
    shortPct: fc.option(fc.integer({ min: 1, max: 90 }), { nil: null, freq: 2 }),
  }),
  fc.record({ kind: fc.constant('deliver' as const), i: pick }),
  fc.record({ kind: fc.constant('resolve' as const), i: pick, to: fc.constantFrom<'driver' | 'merchant'>('driver', 'merchant') }),
  fc.record({
    kind: fc.constant('fail' as const),
    i: pick,
    returned: fc.boolean(),
    destination: fc.constantFrom<PaymentDestination>('platform', 'merchant_direct', 'cash'),
    collectedBy: fc.constantFrom<'driver' | 'merchant'>('driver', 'merchant'),
    receiveFirst: fc.boolean(),
  }),
  fc.record({ kind: fc.constant('receive' as const), i: pick }),
  fc.record({ kind: fc.constant('cancel' as const), i: pick }),
  fc.record({ kind: fc.constant('refund' as const), i: pick, share: fc.option(fc.integer({ min: 1, max: 99 }), { nil: null }) }),
  fc.record({ kind: fc.constant('express' as const), outcome: fc.constantFrom('complete', 'cancel', 'fail') }),
  fc.record({ kind: fc.constant('debt_payment' as const), share: fc.integer({ min: 1, max: 150 }) }),
  fc.record({ kind: fc.constant('settle' as const) }),
  fc.record({ kind: fc.constant('remit' as const), share: fc.integer({ min: 1, max: 100 }) }),
  fc.record({ kind: fc.constant('cash_adjust' as const), cents: fc.integer({ min: -5_000, max: 5_000 }).filter((n) => n !== 0) }),
  fc.record({
    kind: fc.constant('cash_limit' as const),
    limit: fc.option(fc.constantFrom('0.00', '50.00', '200.00', '1000.00'), { nil: null }),
  }),
  fc.record({ kind: fc.constant('settle_driver' as const) }),
);
type ActionT = typeof Action extends fc.Arbitrary<infer A> ? A : never;

const commissionOf = (o: ModelOrder, pct: string) => toCents(money(o.subtotal).minus(o.discount).times(pct).dividedBy(100));
/** Orders whose customer payment the platform collects: platform payments and cash its driver takes at the door. */
const platformCollects = (o: ModelOrder) => o.destination === 'platform' || (o.destination === 'cash' && o.collectedBy === 'driver');
const cashByDriver = (o: ModelOrder) => o.destination === 'cash' && o.collectedBy === 'driver';

/** The driver's cash summary (GET /drivers/:id/cash). */
const cashOf = async () => ok(await t.req(kit.admin, { method: 'GET', url: `/drivers/${kit.driver.id}/cash?limit=1` }));

/**
 * Delivers an order with the kit's driver; a driver-collected cash order while he is at his cash limit must first be refused
 * (422 CASH_LIMIT), then goes through with the dispatcher's override (invariant 8).
 */
async function deliverOrder(shop: MoneyShop, o: ModelOrder) {
  if (!cashByDriver(o)) return kit.deliver(shop, o.id);
  const c = await cashOf();
  const tripId = await kit.ready(shop, o.id);
  const plain = await t.req(kit.admin, { method: 'POST', url: `/trips/${tripId}/assign`, payload: { driver_id: kit.driver.id } });
  const atLimit = c.cash_limit !== null && money(c.cash_in_hand).gte(c.cash_limit);
  expect(c.at_cash_limit).toBe(atLimit);
  if (atLimit) {
    expect(plain.statusCode, plain.body).toBe(422);
    expect(plain.json().code).toBe('CASH_LIMIT');
    ok(
      await t.req(kit.admin, {
        method: 'POST',
        url: `/trips/${tripId}/assign`,
        payload: { driver_id: kit.driver.id, cash_limit_override: { reason: 'property' } },
      }),
    );
  } else ok(plain);
  const d = kit.driver;
  const trip = await tripDb(t, tripId);
  expect(trip.cash_to_collect).toBe(o.total);
  ok(await t.req(d.session, { method: 'POST', url: `/driver/trips/${tripId}/accept` }));
  ok(await t.req(d.session, { method: 'POST', url: `/trips/${tripId}/verify-pickup`, payload: { pin: trip.pickup_pin } }));
  ok(await t.req(d.session, { method: 'POST', url: `/driver/trips/${tripId}/start-delivery` }));
  const missing = await t.req(d.session, { method: 'POST', url: `/trips/${tripId}/verify-delivery`, payload: { pin: trip.delivery_pin } });
  expect(missing.json().code).toBe('CASH_COLLECTION_REQUIRED');
  const collected = formatMoney(money(trip.cash_to_collect).minus(o.shortfall));
  const reason = money(o.shortfall).gt(0) ? { cash_discrepancy_reason: 'property: short' } : {};
  ok(
    await t.req(d.session, {
      method: 'POST',
      url: `/trips/${tripId}/verify-delivery`,
      payload: { pin: trip.delivery_pin, cash_collected: collected, ...reason },
    }),
  );
  return tripId;
}

/**
 * The driver carries the trip to the door (assign, accept, pickup PIN, start) and reports the delivery failed: with the
 * policy return_to_merchant he brings it back (pickup PIN), with `close` it ends there (either way his capacity is freed).
 */
async function failAtTheDoor(tripId: string, returned: boolean) {
  const d = kit.driver;
  const trip = await tripDb(t, tripId);
  // (A cash order to a driver at his cash limit: the dispatcher overrides; invariant 8 is checked on deliveries.)
  ok(
    await t.req(kit.admin, {
      method: 'POST',
      url: `/trips/${tripId}/assign`,
      payload: { driver_id: d.id, cash_limit_override: { reason: 'property' } },
    }),
  );
  ok(await t.req(d.session, { method: 'POST', url: `/driver/trips/${tripId}/accept` }));
  ok(await t.req(d.session, { method: 'POST', url: `/trips/${tripId}/verify-pickup`, payload: { pin: trip.pickup_pin } }));
  ok(await t.req(d.session, { method: 'POST', url: `/driver/trips/${tripId}/start-delivery` }));
  if (!returned) await setFailedDeliveryPolicy(t, 'close', kit.admin);
  ok(await t.req(d.session, { method: 'POST', url: `/driver/trips/${tripId}/fail-delivery`, payload: { reason: 'recipient_absent' } }));
  if (!returned) await setFailedDeliveryPolicy(t, 'return_to_merchant', kit.admin);
  if (returned) ok(await t.req(d.session, { method: 'POST', url: `/driver/trips/${tripId}/return`, payload: { pin: trip.pickup_pin } }));
}

async function express(shop: MoneyShop, outcome: 'complete' | 'cancel' | 'fail') {
  const r = ok(
    await t.req(shop.session, {
      method: 'POST',
      url: '/merchant/delivery-express',
      payload: { branch_id: shop.branchId, customer_name: 'P', dropoff_address: 'Calle 9', dropoff_location: pt(-68.121, -16.512) },
    }),
    201,
  );
  const trip = await tripDb(t, r.trip_id);
  if (outcome === 'fail') return failAtTheDoor(r.trip_id, true);
  if (outcome === 'cancel') {
    ok(await t.req(kit.admin, { method: 'POST', url: `/trips/${r.trip_id}/status`, payload: { status: 'cancelled', reason: 'property' } }));
    return;
  }
  const d = kit.driver;
  ok(await t.req(kit.admin, { method: 'POST', url: `/trips/${r.trip_id}/assign`, payload: { driver_id: d.id } }));
  ok(await t.req(d.session, { method: 'POST', url: `/driver/trips/${r.trip_id}/accept` }));
  ok(await t.req(d.session, { method: 'POST', url: `/trips/${r.trip_id}/verify-pickup`, payload: { pin: trip.pickup_pin } }));
  ok(await t.req(d.session, { method: 'POST', url: `/driver/trips/${r.trip_id}/start-delivery` }));
  ok(await t.req(d.session, { method: 'POST', url: `/trips/${r.trip_id}/verify-delivery`, payload: { pin: trip.delivery_pin } }));
}

async function step(shop: MoneyShop, orders: ModelOrder[], a: ActionT): Promise<void> {
  const among = (f: (o: ModelOrder) => boolean, i: number) => {
    const c = orders.filter(f);
    return c.length ? c[i % c.length] : null;
  };
  switch (a.kind) {
    case 'order': {
      const discount = a.couponShare ? formatMoney(toCents(money(a.subtotal).times(a.couponShare).dividedBy(100))) : '0.00';
      const collectedBy = a.destination === 'cash' ? a.collectedBy : null;
      const placed = await kit.place(shop, {
        destination: a.destination,
        subtotal: a.subtotal,
        fee: a.fee,
        ...(collectedBy ? { collectedBy } : {}),
        ...(money(discount).gt(0) ? { discount } : {}),
      });
      const shortfall =
        collectedBy === 'driver' && a.shortPct ? formatMoney(toCents(money(placed.total).times(a.shortPct).dividedBy(100))) : '0.00';
      const o: ModelOrder = {
        id: placed.id,
        destination: a.destination,
        collectedBy,
        subtotal: a.subtotal,
        discount,
        fee: a.fee,
        total: placed.total,
        state: 'open',
        received: false,
        refunded: '0.00',
        shortfall,
        chargedTo: null,
      };
      orders.push(o);
      if (a.destination === 'platform' && a.receiveFirst) {
        await kit.receive(o.id);
        o.received = true;
      }
      if (a.deliver) {
        await deliverOrder(shop, o);
        o.state = 'delivered';
      }
      return;
    }
    case 'deliver': {
      const o = among((x) => x.state === 'open', a.i);
      if (!o) return;
      await deliverOrder(shop, o);
      o.state = 'delivered';
      return;
    }
    case 'receive': {
      const o = among((x) => x.destination === 'platform' && !x.received && (x.state === 'open' || x.state === 'delivered'), a.i);
      if (!o) return;
      await kit.receive(o.id);
      o.received = true;
      return;
    }
    case 'cancel': {
      const o = among((x) => x.state === 'open', a.i);
      if (!o) return;
      ok(await t.req(kit.admin, { method: 'POST', url: `/admin/orders/${o.id}/cancel`, payload: { reason: 'property' } }));
      o.state = 'cancelled';
      return;
    }
    case 'refund': {
      const o = among(
        (x) =>
          ((x.destination === 'platform' && x.received) || cashByDriver(x)) &&
          x.state === 'delivered' &&
          money(x.refunded).lt(money(x.total).minus(x.shortfall)),
        a.i,
      );
      if (!o) return;
      // A short collection: the customer paid only what the driver took.
      const left = money(o.total).minus(o.shortfall).minus(o.refunded);
      const amount = a.share ? toCents(left.times(a.share).dividedBy(100)) : left;
      if (!amount.gt(0)) return;
      ok(
        await t.req(kit.admin, {
          method: 'POST',
          url: `/admin/orders/${o.id}/refunds`,
          payload: { amount: formatMoney(amount), reason: 'property' },
        }),
        201,
      );
      o.refunded = formatMoney(money(o.refunded).plus(amount));
      return;
    }
    case 'express':
      return express(shop, a.outcome);
    case 'resolve': {
      const o = among((x) => x.state === 'delivered' && money(x.shortfall).gt(0) && x.chargedTo === null, a.i);
      if (!o) return;
      const [c] = await t.db.withSystem(
        async (tx) =>
          (await tx.query(`SELECT id FROM driver_cash_entry WHERE order_id = $1 AND entry_type = 'cash_collected'`, [o.id])).rows,
      );
      const r = ok(
        await t.req(kit.admin, {
          method: 'POST',
          url: `/drivers/${kit.driver.id}/cash-entries/${c.id}/shortfall-resolution`,
          payload: { charge_to: a.to, reason: 'property' },
        }),
        201,
      );
      expect(r.shortfall).toBe(o.shortfall);
      o.chargedTo = a.to;
      return;
    }
    case 'fail': {
      // An open order fails at the door; without one, a new order (maybe paid to the platform first) does.
      let o = among((x) => x.state === 'open', a.i);
      if (!o) {
        const collectedBy = a.destination === 'cash' ? a.collectedBy : null;
        const placed = await kit.place(shop, {
          destination: a.destination,
          subtotal: '50.00',
          fee: '12.50',
          ...(collectedBy ? { collectedBy } : {}),
        });
        o = {
          id: placed.id,
          destination: a.destination,
          collectedBy,
          subtotal: '50.00',
          discount: '0.00',
          fee: '12.50',
          total: placed.total,
          state: 'open',
          received: false,
          refunded: '0.00',
          shortfall: '0.00',
          chargedTo: null,
        };
        orders.push(o);
        if (a.destination === 'platform' && a.receiveFirst) {
          await kit.receive(o.id);
          o.received = true;
        }
      }
      await failAtTheDoor(await kit.ready(shop, o.id), a.returned);
      o.state = 'failed';
      return;
    }
    case 'debt_payment': {
      const w = ok(await t.req(shop.session, { method: 'GET', url: '/merchant/settlement-rule' })).wallet;
      const amount = toCents(money(w.debt).times(a.share).dividedBy(100));
      if (!amount.gt(0)) return;
      const asCredit = amount.gt(w.debt);
      ok(
        await t.req(kit.admin, {
          method: 'POST',
          url: `/admin/merchants/${shop.id}/debt-payments`,
          payload: { amount: formatMoney(amount), as_credit: asCredit },
        }),
        201,
      );
      return;
    }
    case 'settle':
      await t.app.services.settlements(new Date(Date.now() + day++ * DAY), 500);
      return;
    case 'remit': {
      const c = await cashOf();
      const amount = toCents(money(c.cash_in_hand).times(a.share).dividedBy(100));
      const url = `/drivers/${kit.driver.id}/cash-remittances`;
      // More than he holds is refused and writes nothing.
      const over = await t.req(kit.admin, {
        method: 'POST',
        url,
        payload: { amount: formatMoney(money(c.cash_in_hand).plus('0.01')), method: 'cash' },
      });
      expect(over.statusCode, over.body).toBe(422);
      if (!amount.gt(0)) return;
      ok(
        await t.req(kit.admin, {
          method: 'POST',
          url,
          payload: { amount: formatMoney(amount), method: 'cash' },
          headers: { 'idempotency-key': `p-${newId()}` },
        }),
        201,
      );
      return;
    }
    case 'cash_adjust': {
      const c = await cashOf();
      const amount = money(a.cents).dividedBy(100);
      const r = await t.req(kit.admin, {
        method: 'POST',
        url: `/drivers/${kit.driver.id}/cash-adjustments`,
        payload: { amount: formatMoney(amount), reason: 'property' },
      });
      if (money(c.cash_in_hand).plus(amount).isNegative()) expect(r.json().code, r.body).toBe('ADJUSTMENT_EXCEEDS_CASH_IN_HAND');
      else ok(r, 201);
      return;
    }
    case 'cash_limit':
      ok(await t.req(kit.admin, { method: 'PATCH', url: `/drivers/${kit.driver.id}`, payload: { cash_limit: a.limit } }));
      return;
    case 'settle_driver': {
      const before = await cashOf();
      const r = await t.req(kit.admin, { method: 'POST', url: `/admin/drivers/${kit.driver.id}/settlements`, payload: {} });
      if (r.statusCode === 422) {
        expect(r.json().code).toBe('NOTHING_TO_SETTLE');
        return;
      }
      const s = ok(r, 201);
      const netted = money(before.cash_in_hand).lt(s.amount) ? money(before.cash_in_hand) : money(s.amount);
      // 9. netted = min(earnings, cash in hand); payout + netted = earnings; nothing paid while holding at least the earnings.
      expect(s.cash_netted).toBe(formatMoney(netted));
      expect(formatMoney(money(s.payout_amount).plus(s.cash_netted))).toBe(s.amount);
      expect(s.driver_owes).toBe(formatMoney(money(before.cash_in_hand).minus(netted)));
      if (money(before.cash_in_hand).gte(s.amount)) expect(s.payout_amount).toBe('0.00');
      expect((await cashOf()).cash_in_hand).toBe(formatMoney(money(before.cash_in_hand).minus(netted)));
      return;
    }
  }
}

/**
 * The driver's entries covered by his remittances, oldest first (coverage is derived: the remitted total covers a prefix of his
 * collections and the shortfalls charged to him), and the orders that makes received: see invariant 7.
 */
async function coveredCollections(q: (sql: string, params?: unknown[]) => Promise<any[]>, orders: ModelOrder[]) {
  const rows = await q(
    `SELECT entry_type, amount::text AS amount, order_id, trip_id FROM driver_cash_entry WHERE driver_id = $1 ORDER BY created_at, id`,
    [kit.driver.id],
  );
  const remitted = rows.filter((r) => r.entry_type === 'cash_remitted').reduce((s, r) => s.minus(r.amount), money(0));
  let cum = money(0);
  const covered = new Map<string, Set<string>>();
  for (const r of rows.filter(
    (x) => x.entry_type === 'cash_collected' || (x.entry_type === 'cash_adjustment' && x.trip_id !== null && money(x.amount).gt(0)),
  )) {
    cum = cum.plus(r.amount);
    if (cum.lte(remitted)) covered.set(r.order_id, (covered.get(r.order_id) ?? new Set()).add(r.entry_type));
  }
  const received = new Set<string>();
  for (const o of orders) {
    const c = covered.get(o.id);
    if (!c) continue;
    const short = money(o.shortfall).gt(0);
    if (!short || o.chargedTo === 'merchant' ? c.has('cash_collected') : o.chargedTo === 'driver' && c.has('cash_adjustment'))
      received.add(o.id);
  }
  return { rows, covered: received };
}

async function checkInvariants(shop: MoneyShop, pct: string, orders: ModelOrder[], trail: string) {
  const q = async (sql: string, params: unknown[] = []) => (await t.db.withSystem((tx) => tx.query(sql, params))).rows;
  const w = ok(await t.req(shop.session, { method: 'GET', url: '/merchant/settlement-rule' })).wallet;
  const [{ sum }] = await q(
    'SELECT COALESCE(sum(amount), 0)::numeric(14,2)::text AS sum FROM merchant_wallet_entry WHERE merchant_id = $1',
    [shop.id],
  );
  // 1. wallet = ledger, and its parts add up.
  expect(w.balance, trail).toBe(sum);
  expect(formatMoney(money(w.available).plus(w.pending).minus(w.debt).plus(w.credit)), trail).toBe(w.balance);
  expect(w.payable, trail).toBe(w.available);
  // 6. the driver's cash in hand = the sum of his entries = collected − remitted ± adjustments >= 0; only delivered trips collected.
  const cash = await cashOf();
  const { rows: cashRows, covered } = await coveredCollections(q, orders);
  const sumOf = (type: string | null) =>
    cashRows.filter((r) => type === null || r.entry_type === type).reduce((s, r) => s.plus(r.amount), money(0));
  expect(cash.cash_in_hand, trail).toBe(formatMoney(sumOf(null)));
  expect(formatMoney(money(cash.collected).minus(cash.remitted).plus(cash.adjusted)), trail).toBe(cash.cash_in_hand);
  expect(money(cash.cash_in_hand).gte(0), trail).toBe(true);
  const [{ n: badCollections }] = await q(
    `SELECT count(*)::int AS n FROM driver_cash_entry e JOIN trip t ON t.id = e.trip_id WHERE e.driver_id = $1 AND e.entry_type = 'cash_collected' AND t.status <> 'completed'`,
    [kit.driver.id],
  );
  expect(badCollections, trail).toBe(0);
  // 7. a driver-collected cash order is received (its receipt written, its net available) exactly when remittances cover it.
  const receipts = new Set(
    (await q('SELECT order_id FROM merchant_payment_receipt WHERE merchant_id = $1', [shop.id])).map((r) => r.order_id),
  );
  for (const o of orders.filter((x) => cashByDriver(x) && x.state === 'delivered')) {
    o.received = covered.has(o.id);
    expect(receipts.has(o.id), `cash order ${o.id} receipt vs coverage ${trail}`).toBe(o.received);
  }
  // 2. available >= 0; pending = the net of delivered orders the platform collects and has not received; payouts covered by received money.
  for (const k of ['available', 'pending', 'debt', 'credit']) expect(money(w[k]).gte(0), `${k} ${trail}`).toBe(true);
  const pending = orders
    .filter((o) => platformCollects(o) && o.state === 'delivered' && !o.received)
    .reduce((s, o) => s.plus(money(o.total).minus(commissionOf(o, pct)).minus(o.fee)), money(0));
  expect(w.pending, trail).toBe(formatMoney(pending));
  // A received payment of a failed delivery was refunded in full: it covers no payout.
  const received = orders.filter((o) => platformCollects(o) && o.received && o.state !== 'failed').map((o) => o.id);
  const [cover] = await q(
    `SELECT COALESCE(-sum(amount) FILTER (WHERE entry_type = 'settlement_debit'), 0)::numeric(14,2)::text AS paid,
            COALESCE(sum(amount) FILTER (WHERE order_id = ANY($2::text[]) AND entry_type <> 'refund'), 0)::numeric(14,2)::text AS received
       FROM merchant_wallet_entry WHERE merchant_id = $1`,
    [shop.id, received],
  );
  expect(money(cover.paid).lte(money(cover.received)), `paid out ${cover.paid} > received ${cover.received} ${trail}`).toBe(true);
  // 3. each order's entries.
  const byOrder = new Map<string, string>(
    (
      await q(
        'SELECT order_id, sum(amount)::numeric(14,2)::text AS s FROM merchant_wallet_entry WHERE merchant_id = $1 AND order_id IS NOT NULL GROUP BY order_id',
        [shop.id],
      )
    ).map((r) => [r.order_id, r.s]),
  );
  for (const o of orders) {
    const entries = money(byOrder.get(o.id) ?? '0');
    if (o.state === 'failed') {
      // The merchant pays the attempt: its delivery fee, nothing else (no sale, no commission).
      expect(formatMoney(entries), `failed order ${o.id} ${trail}`).toBe(formatMoney(money(0).minus(o.fee)));
      continue;
    }
    if (o.state !== 'delivered') {
      expect(byOrder.has(o.id), `${o.state} order ${o.id} has entries ${trail}`).toBe(false);
      continue;
    }
    const paid = money(o.total).minus(o.refunded);
    const held = platformCollects(o) ? money(0) : money(o.total);
    // A shortfall charged to the merchant: the customer paid that much less.
    const paidLess = o.chargedTo === 'merchant' ? money(o.shortfall) : money(0);
    expect(formatMoney(entries.plus(held).plus(paidLess)), `order ${o.id} ${o.destination} ${trail}`).toBe(
      formatMoney(paid.minus(commissionOf(o, pct)).minus(o.fee)),
    );
  }
  // 4. one delivery_fee_debit per order and per trip (whole organization).
  const dupes = await q(
    `SELECT 'order' AS k, order_id AS id FROM merchant_wallet_entry WHERE entry_type = 'delivery_fee_debit' AND order_id IS NOT NULL GROUP BY order_id HAVING count(*) > 1
     UNION ALL
     SELECT 'trip', trip_id FROM merchant_wallet_entry WHERE entry_type = 'delivery_fee_debit' AND trip_id IS NOT NULL GROUP BY trip_id HAVING count(*) > 1`,
  );
  expect(dupes, trail).toEqual([]);
  // 5. driver earnings backed by a ledger entry.
  const unbacked = await q(
    `SELECT t.id FROM trip t WHERE t.merchant_id = $1 AND t.status IN ('completed', 'returning', 'returned', 'failed') AND t.driver_earning > 0
        AND NOT EXISTS (SELECT 1 FROM merchant_wallet_entry e WHERE e.trip_id = t.id AND e.entry_type = 'delivery_fee_debit')`,
    [shop.id],
  );
  expect(unbacked, trail).toEqual([]);
}

const shortOrder = (shortPct: number) =>
  ({
    kind: 'order',
    destination: 'cash',
    collectedBy: 'driver',
    subtotal: '80.00',
    couponShare: null,
    fee: '5.00',
    deliver: true,
    receiveFirst: false,
    shortPct,
  }) as const;
/** Short collections, always replayed first: remitted before and after staff charge the shortfall to either side. */
const SHORT_EXAMPLES: [ActionT[], string, boolean][] = [
  [
    [
      shortOrder(20),
      { kind: 'remit', share: 100 },
      { kind: 'resolve', i: 0, to: 'driver' },
      { kind: 'remit', share: 100 },
      { kind: 'settle' },
    ],
    '10.00',
    false,
  ],
  [
    [
      shortOrder(35),
      shortOrder(10),
      { kind: 'remit', share: 60 },
      { kind: 'resolve', i: 1, to: 'merchant' },
      { kind: 'remit', share: 100 },
      { kind: 'resolve', i: 0, to: 'driver' },
      { kind: 'settle_driver' },
    ],
    '12.50',
    true,
  ],
];

describe('money property (fast-check)', () => {
  it(`random sequences keep the ledger invariants after every step (${RUNS} runs of at most ${STEPS} steps)`, async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(Action, { minLength: 1, maxLength: STEPS }),
        fc.constantFrom('0.00', '10.00', '12.50', '33.33'),
        fc.boolean(),
        async (actions, pct, netDebtFirst) => {
          const shop = await newMerchant(t, kit.admin, pct);
          ok(
            await t.req(shop.session, {
              method: 'PATCH',
              url: '/merchant/settlement-rule',
              payload: { enabled: true, frequency: 'daily', net_debt_first: netDebtFirst },
            }),
          );
          const orders: ModelOrder[] = [];
          const done: string[] = [];
          for (const a of actions) {
            await step(shop, orders, a);
            done.push(a.kind);
            await checkInvariants(shop, pct, orders, `after [${done.join(', ')}] commission ${pct}%`);
          }
        },
      ),
      {
        numRuns: RUNS,
        examples: SHORT_EXAMPLES,
        endOnFailure: !process.env.MONEY_SHRINK,
        seed: process.env.MONEY_SEED ? Number(process.env.MONEY_SEED) : undefined,
      },
    );
  }, 600_000);
});
