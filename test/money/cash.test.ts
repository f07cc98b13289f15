import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { XLSX_TYPE } from '../../src/platform/workbook.js';
import { newId } from '../../src/platform/ids.js';
import { formatMoney, money } from '../../src/platform/money.js';
import { createTestApp, type Session, type TestApp } from '../helpers.js';
import { newDriver, pt, tripDb, type TestDriver } from '../logistics/fixtures.js';
import { newSubadmin } from '../subadmin/fixtures.js';
import { newMerchant, ok, orderKit, orderRow, setCashCollector, type MoneyShop, type OrderKit } from './fixtures.js';

/**
 * Cash on delivery through HTTP: who collects is a fact on the order, the trip tells the driver what to collect and refuses a
 * delivery without the cash step, the driver's cash ledger (collections, remittances, adjustments) is the only source of his cash
 * in hand, the merchant's net of a driver-collected order is pending until the cash is remitted, cash limits keep cash orders
 * away from drivers holding too much, and driver settlements net the cash first. Every bad input is a 4xx that writes nothing.
 */
let t: TestApp;
let kit: OrderKit;
let admin: Session;
let territoryId: string;

beforeAll(async () => {
  t = await createTestApp();
  kit = await orderKit(t);
  admin = kit.admin;
  territoryId = ok(await t.req(admin, { method: 'GET', url: '/territories' })).data[0].id;
}, 60_000);
afterAll(() => t?.close());

const q = async (sql: string, params: unknown[] = []) => (await t.db.withSystem((tx) => tx.query(sql, params))).rows;
const cashEntries = (driverId: string) =>
  q(
    'SELECT entry_type, amount::text, order_id, expected_amount::text, method, note FROM driver_cash_entry WHERE driver_id = $1 ORDER BY created_at, id',
    [driverId],
  );
const entryCount = async () => Number((await q('SELECT count(*)::int AS n FROM driver_cash_entry'))[0].n);
const wallet = async (shop: MoneyShop) => ok(await t.req(shop.session, { method: 'GET', url: '/merchant/settlement-rule' })).wallet;
const driverCash = async (d: TestDriver) => ok(await t.req(d.session, { method: 'GET', url: '/driver/cash' }));

/** A fresh driver (own ledger) in the demo territory. */
const freshDriver = () => newDriver(t, { lon: -68.135, lat: -16.5 }, { capacity: 20, admin, territory_ids: [territoryId] });

/** A driver-collected cash order of `shop`, delivered by `d` (collecting `collected`, with a reason when it differs). */
async function cashDelivered(
  shop: MoneyShop,
  d: TestDriver,
  spec: { subtotal: string; fee?: string },
  cash?: { collected: string; reason?: string },
) {
  const o = await kit.place(shop, { destination: 'cash', collectedBy: 'driver', subtotal: spec.subtotal, fee: spec.fee ?? '5.00' });
  const tripId = await kit.deliver(shop, o.id, d, cash);
  return { orderId: o.id, total: o.total, tripId };
}

/** Ready, assigned to `d`, accepted, picked up and on the way: the delivery PIN is all that is left. */
async function inTransit(shop: MoneyShop, d: TestDriver, orderId: string) {
  const tripId = await kit.ready(shop, orderId);
  ok(await t.req(admin, { method: 'POST', url: `/trips/${tripId}/assign`, payload: { driver_id: d.id } }));
  ok(await t.req(d.session, { method: 'POST', url: `/driver/trips/${tripId}/accept` }));
  const trip = await tripDb(t, tripId);
  ok(await t.req(d.session, { method: 'POST', url: `/trips/${tripId}/verify-pickup`, payload: { pin: trip.pickup_pin } }));
  ok(await t.req(d.session, { method: 'POST', url: `/driver/trips/${tripId}/start-delivery` }));
  return tripDb(t, tripId);
}

describe('at the door', () => {
  it('a cash order is collected by the driver by default: the order says so and the trip shows cash_to_collect to the driver', async () => {
    const shop = await newMerchant(t, admin);
    // No payment profile at all: the default is the platform's driver.
    const item = ok(
      await t.req(shop.session, { method: 'POST', url: '/merchant/catalog', payload: { name: 'Salteña', price: '20.00' } }),
      201,
    );
    await kit.setFee('5.00');
    const o = ok(
      await t.req(kit.customer.session, {
        method: 'POST',
        url: '/customer/orders',
        payload: {
          branch_id: shop.branchId,
          address_id: kit.customer.addressId,
          items: [{ catalog_item_id: item.id, quantity: 1 }],
          payment_destination: 'cash',
        },
      }),
      201,
    );
    expect(o).toMatchObject({ payment_destination: 'cash', collected_by: 'driver', total: '25.00' });
    const d = await freshDriver();
    const trip = await inTransit(shop, d, o.id);
    expect(trip.cash_to_collect).toBe('25.00');
    const mine = ok(await t.req(d.session, { method: 'GET', url: '/driver/trips' })).data.find((x: { id: string }) => x.id === trip.id);
    expect(mine).toMatchObject({ cash_to_collect: '25.00', cash_collected: null });
    // A platform order carries no cash.
    const p = await kit.place(shop, { destination: 'platform', subtotal: '10.00', fee: '5.00' });
    expect((await tripDb(t, await kit.ready(shop, p.id))).cash_to_collect).toBe('0.00');
    // The offer (trip.assigned) tells the driver too.
    const [ev] = await q(`SELECT payload FROM event WHERE type = 'trip.assigned' AND entity_id = $1 ORDER BY seq DESC LIMIT 1`, [trip.id]);
    expect(ev.payload.cash_to_collect).toBe('25.00');
  });

  it('a delivery without the cash step is refused (422 CASH_COLLECTION_REQUIRED), also pushed offline; a different amount needs a reason; nothing is written', async () => {
    const shop = await newMerchant(t, admin);
    await setCashCollector(t, shop, 'driver');
    const d = await freshDriver();
    const o = await kit.place(shop, { destination: 'cash', collectedBy: 'driver', subtotal: '30.00', fee: '5.00' });
    const trip = await inTransit(shop, d, o.id);
    const before = await entryCount();
    const url = `/trips/${trip.id}/verify-delivery`;
    const refused = await t.req(d.session, { method: 'POST', url, payload: { pin: trip.delivery_pin } });
    expect(refused.statusCode, refused.body).toBe(422);
    expect(refused.json().code).toBe('CASH_COLLECTION_REQUIRED');
    // The offline path obeys the same rule.
    const pushed = ok(
      await t.req(d.session, {
        method: 'POST',
        url: '/mobile/sync/push',
        payload: {
          operations: [
            { client_operation_id: `op-${newId()}`, type: 'trip.verify_delivery', payload: { trip_id: trip.id, pin: trip.delivery_pin } },
          ],
        },
      }),
    );
    expect(pushed.results[0]).toMatchObject({ status: 'rejected', code: 'CASH_COLLECTION_REQUIRED' });
    for (const [payload, status, code] of [
      [{ pin: trip.delivery_pin, cash_collected: '30.00' }, 422, 'CASH_DISCREPANCY_REASON_REQUIRED'],
      [{ pin: trip.delivery_pin, cash_collected: '0' }, 422, 'INVALID_AMOUNT'],
      [{ pin: trip.delivery_pin, cash_collected: '-35.00' }, 400, 'VALIDATION_FAILED'],
      [{ pin: trip.delivery_pin, cash_collected: '35.001' }, 400, 'VALIDATION_FAILED'],
    ] as const) {
      const r = await t.req(d.session, { method: 'POST', url, payload });
      expect(r.statusCode, r.body).toBe(status);
      expect(r.json().code).toBe(code);
    }
    expect((await tripDb(t, trip.id)).status).toBe('in_transit');
    expect(await entryCount()).toBe(before);
    expect((await orderRow(t, o.id)).status).toBe('in_delivery');
    // The pickup takes no cash.
    const p2 = await kit.place(shop, { destination: 'cash', collectedBy: 'driver', subtotal: '10.00', fee: '5.00' });
    const t2 = await kit.ready(shop, p2.id);
    ok(await t.req(admin, { method: 'POST', url: `/trips/${t2}/assign`, payload: { driver_id: d.id } }));
    ok(await t.req(d.session, { method: 'POST', url: `/driver/trips/${t2}/accept` }));
    const early = await t.req(d.session, {
      method: 'POST',
      url: `/trips/${t2}/verify-pickup`,
      payload: { pin: (await tripDb(t, t2)).pickup_pin, cash_collected: '15.00' },
    });
    expect(early.statusCode, early.body).toBe(422);
    expect(early.json().code).toBe('NO_CASH_TO_COLLECT');

    // 30.00 instead of 35.00 with a reason: delivered, recorded as a discrepancy for review.
    const done = ok(
      await t.req(d.session, {
        method: 'POST',
        url,
        payload: { pin: trip.delivery_pin, cash_collected: '30.00', cash_discrepancy_reason: 'customer had 30 only' },
      }),
    );
    expect(done).toMatchObject({
      status: 'completed',
      cash_to_collect: '35.00',
      cash_collected: '30.00',
      cash_discrepancy_reason: 'customer had 30 only',
    });
    expect(await cashEntries(d.id)).toEqual([
      {
        entry_type: 'cash_collected',
        amount: '30.00',
        order_id: o.id,
        expected_amount: '35.00',
        method: null,
        note: 'customer had 30 only',
      },
    ]);
    expect(await driverCash(d)).toMatchObject({ cash_in_hand: '30.00', collected: '30.00', remitted: '0.00', discrepancies: 1 });
    const audit = await q(
      `SELECT after FROM audit_log WHERE action = 'driver_cash.cash_collected' AND entity_id IN (SELECT id FROM driver_cash_entry WHERE driver_id = $1)`,
      [d.id],
    );
    expect(audit).toHaveLength(1);
  });

  it('a failed delivery of a cash order collects nothing (also pushed offline)', async () => {
    const shop = await newMerchant(t, admin);
    const d = await freshDriver();
    const o = await kit.place(shop, { destination: 'cash', collectedBy: 'driver', subtotal: '40.00', fee: '5.00' });
    const trip = await inTransit(shop, d, o.id);
    ok(
      await t.req(d.session, {
        method: 'POST',
        url: '/mobile/sync/push',
        payload: {
          operations: [
            { client_operation_id: `op-${newId()}`, type: 'trip.fail_delivery', payload: { trip_id: trip.id, reason: 'recipient_absent' } },
          ],
        },
      }),
    );
    expect((await tripDb(t, trip.id)).status).toBe('returning');
    expect(await cashEntries(d.id)).toEqual([]);
    expect(await driverCash(d)).toMatchObject({ cash_in_hand: '0.00' });
    // The merchant pays the attempt's fee, nothing is pending.
    expect(await wallet(shop)).toMatchObject({ balance: '-5.00', pending: '0.00' });
  });
});

describe('the merchant is credited once the cash is remitted', () => {
  it('pending until a remittance covers the order (oldest collected first), then available; remittance bad inputs are 4xx and write nothing; a repeated key returns the first', async () => {
    const shop = await newMerchant(t, admin, '10.00');
    const d = await freshDriver();
    const a = await cashDelivered(shop, d, { subtotal: '20.00' }); // total 25, net 20 - 2 = 18
    const b = await cashDelivered(shop, d, { subtotal: '40.00' }); // total 45, net 40 - 4 = 36
    expect(await wallet(shop)).toMatchObject({ balance: '54.00', pending: '54.00', available: '0.00', debt: '0.00' });
    expect(await driverCash(d)).toMatchObject({ cash_in_hand: '70.00', collected: '70.00' });

    const url = `/drivers/${d.id}/cash-remittances`;
    const before = await entryCount();
    const receipts = async () =>
      Number((await q('SELECT count(*)::int AS n FROM merchant_payment_receipt WHERE merchant_id = $1', [shop.id]))[0].n);
    const other = await t.newOrganization();
    const otherAdmin = await t.login(other.logins.admin, undefined, other.organizationId);
    const foreign = await newDriver(t, { lon: -68.1, lat: -16.5 }, { admin: otherAdmin });
    for (const [who, target, payload, status, code] of [
      [admin, url, { amount: '70.01', method: 'cash' }, 422, 'REMITTANCE_EXCEEDS_CASH_IN_HAND'],
      [admin, url, { amount: '-5.00', method: 'cash' }, 400, 'VALIDATION_FAILED'],
      [admin, url, { amount: '5.001', method: 'cash' }, 400, 'VALIDATION_FAILED'],
      [admin, url, { amount: '0.00', method: 'cash' }, 400, 'VALIDATION_FAILED'],
      [admin, url, { amount: '5.00', method: 'settlement' }, 400, 'VALIDATION_FAILED'],
      [admin, `/drivers/${foreign.id}/cash-remittances`, { amount: '5.00', method: 'cash' }, 404, 'NOT_FOUND'],
      [otherAdmin, url, { amount: '5.00', method: 'cash' }, 404, 'NOT_FOUND'],
      [d.session, url, { amount: '5.00', method: 'cash' }, 403, 'FORBIDDEN'],
    ] as const) {
      const r = await t.req(who, { method: 'POST', url: target, payload });
      expect(r.statusCode, `${JSON.stringify(payload)} ${r.body}`).toBe(status);
      expect(r.json().code).toBe(code);
    }
    expect(await entryCount()).toBe(before);
    expect(await receipts()).toBe(0);

    // 30.00 covers the first collection (25.00) but not the second: only order a becomes available.
    const key = `remit-${newId()}`;
    const first = await t.req(admin, {
      method: 'POST',
      url,
      payload: { amount: '30.00', method: 'cash', reference: 'caja 1' },
      headers: { 'idempotency-key': key },
    });
    expect(first.statusCode, first.body).toBe(201);
    expect(first.json().covered_orders).toEqual([{ order_id: a.orderId, merchant_id: shop.id, amount: '25.00' }]);
    expect(first.json().cash).toMatchObject({ cash_in_hand: '40.00', remitted: '30.00' });
    expect(await wallet(shop)).toMatchObject({ balance: '54.00', pending: '36.00', available: '18.00' });
    // The same key again returns the first result and writes nothing.
    const again = await t.req(admin, {
      method: 'POST',
      url,
      payload: { amount: '30.00', method: 'cash', reference: 'caja 1' },
      headers: { 'idempotency-key': key },
    });
    expect(again.statusCode).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json().entry.id).toBe(first.json().entry.id);
    const reused = await t.req(admin, {
      method: 'POST',
      url,
      payload: { amount: '31.00', method: 'cash' },
      headers: { 'idempotency-key': key },
    });
    expect(reused.statusCode).toBe(422);
    expect(reused.json().code).toBe('IDEMPOTENCY_KEY_REUSED');
    expect(await driverCash(d)).toMatchObject({ cash_in_hand: '40.00' });

    // The rest covers order b.
    const rest = ok(await t.req(admin, { method: 'POST', url, payload: { amount: '40.00', method: 'bank_transfer' } }), 201);
    expect(rest.covered_orders.map((c: { order_id: string }) => c.order_id)).toEqual([b.orderId]);
    expect(await wallet(shop)).toMatchObject({ balance: '54.00', pending: '0.00', available: '54.00' });
    expect(await driverCash(d)).toMatchObject({ cash_in_hand: '0.00', collected: '70.00', remitted: '70.00' });
    const audits = await q(
      `SELECT count(*)::int AS n FROM audit_log WHERE action = 'driver_cash.cash_remitted' AND after->>'driver_id' = $1`,
      [d.id],
    );
    expect(audits[0].n).toBe(2);
  });

  it("a merchant who collects himself keeps today's model: no sale credit, commission and fee are his debt, no cash in the driver's hand", async () => {
    const shop = await newMerchant(t, admin, '10.00');
    const d = await freshDriver();
    const o = await kit.place(shop, { destination: 'cash', collectedBy: 'merchant', subtotal: '20.00', fee: '5.00' });
    const tripId = await kit.deliver(shop, o.id, d);
    expect((await tripDb(t, tripId)).cash_to_collect).toBe('0.00');
    expect(await wallet(shop)).toMatchObject({ balance: '-7.00', debt: '7.00', pending: '0.00' });
    expect(await cashEntries(d.id)).toEqual([]);
    // He refunds his own customer: the platform does not.
    const r = await t.req(admin, { method: 'POST', url: `/admin/orders/${o.id}/refunds`, payload: { reason: 'x' } });
    expect(r.statusCode).toBe(422);
    expect(r.json().code).toBe('NOT_PLATFORM_PAYMENT');
  });

  it('a refund of a delivered driver-collected cash order is paid by the platform and charged to the merchant: one refund row', async () => {
    const shop = await newMerchant(t, admin, '10.00');
    const d = await freshDriver();
    const a = await cashDelivered(shop, d, { subtotal: '20.00' });
    ok(await t.req(admin, { method: 'POST', url: `/drivers/${d.id}/cash-remittances`, payload: { amount: '25.00', method: 'cash' } }), 201);
    const r = ok(
      await t.req(admin, { method: 'POST', url: `/admin/orders/${a.orderId}/refunds`, payload: { amount: '10.00', reason: 'broken' } }),
      201,
    );
    expect(r.entry).toMatchObject({ entry_type: 'refund', amount: '-10.00', payment_destination: 'cash' });
    expect(r.payment_status).toBe('partially_refunded');
    const rows = await q(`SELECT entry_type FROM merchant_wallet_entry WHERE order_id = $1 AND entry_type = 'refund'`, [a.orderId]);
    expect(rows).toHaveLength(1);
    expect(await wallet(shop)).toMatchObject({ balance: '8.00', available: '8.00' });
  });
});

describe('a short collection', () => {
  it('keeps the order pending after its cash is remitted until staff charge the shortfall to the merchant (customer paid less) or to the driver (he owes it)', async () => {
    const shop = await newMerchant(t, admin, '10.00');
    const d = await freshDriver();
    // Total 35.00, the merchant nets 30 - 3 = 27.00; the driver collects 30.00.
    const a = await cashDelivered(shop, d, { subtotal: '30.00' }, { collected: '30.00', reason: 'customer had 30 only' });
    expect(await driverCash(d)).toMatchObject({
      cash_in_hand: '30.00',
      discrepancies: 1,
      open_shortfalls: 1,
      open_shortfall_amount: '5.00',
    });
    const r1 = ok(
      await t.req(admin, { method: 'POST', url: `/drivers/${d.id}/cash-remittances`, payload: { amount: '30.00', method: 'cash' } }),
      201,
    );
    // Everything the driver collected reached the platform, but 5.00 of the order never did: nothing becomes available yet.
    expect(r1.covered_orders).toEqual([]);
    expect(await wallet(shop)).toMatchObject({ pending: '27.00', available: '0.00' });

    const [collection] = (await driverCash(d)).data.filter((e: { entry_type: string }) => e.entry_type === 'cash_collected');
    const url = `/drivers/${d.id}/cash-entries/${collection.id}/shortfall-resolution`;
    const full = await cashDelivered(shop, d, { subtotal: '10.00' });
    const fullEntry = (await driverCash(d)).data.find((e: { order_id: string }) => e.order_id === full.orderId);
    const other = await t.newOrganization();
    const otherAdmin = await t.login(other.logins.admin, undefined, other.organizationId);
    const dispatch = await t.as('dispatch');
    const before = [await entryCount(), (await q('SELECT count(*)::int AS n FROM merchant_wallet_entry'))[0].n];
    for (const [who, target, payload, status, code] of [
      [dispatch, url, { charge_to: 'merchant', reason: 'x' }, 403, 'FORBIDDEN'],
      [otherAdmin, url, { charge_to: 'merchant', reason: 'x' }, 404, 'NOT_FOUND'],
      [admin, url, { charge_to: 'platform', reason: 'x' }, 400, 'VALIDATION_FAILED'],
      [admin, url, { charge_to: 'merchant' }, 400, 'VALIDATION_FAILED'],
      [admin, `/drivers/${d.id}/cash-entries/${newId()}/shortfall-resolution`, { charge_to: 'merchant', reason: 'x' }, 404, 'NOT_FOUND'],
      [
        admin,
        `/drivers/${d.id}/cash-entries/${r1.entry.id}/shortfall-resolution`,
        { charge_to: 'merchant', reason: 'x' },
        404,
        'NOT_FOUND',
      ],
      [
        admin,
        `/drivers/${d.id}/cash-entries/${fullEntry.id}/shortfall-resolution`,
        { charge_to: 'merchant', reason: 'x' },
        422,
        'NOT_A_SHORTFALL',
      ],
    ] as const) {
      const r = await t.req(who, { method: 'POST', url: target, payload });
      expect(r.statusCode, `${target} ${r.body}`).toBe(status);
      expect(r.json().code).toBe(code);
    }
    expect([await entryCount(), (await q('SELECT count(*)::int AS n FROM merchant_wallet_entry'))[0].n]).toEqual(before);

    // Charged to the merchant: his wallet is charged 5.00 and the order counts as received with the 30.00 the platform holds.
    const res = ok(
      await t.req(admin, { method: 'POST', url, payload: { charge_to: 'merchant', reason: 'customer disputed an item' } }),
      201,
    );
    expect(res).toMatchObject({
      charge_to: 'merchant',
      shortfall: '5.00',
      cash_entry: null,
      received_order: { order_id: a.orderId, amount: '30.00' },
    });
    expect(res.wallet_entry).toMatchObject({ entry_type: 'adjustment', amount: '-5.00', order_id: a.orderId, trip_id: a.tripId });
    expect(res.cash).toMatchObject({ open_shortfalls: 0, cash_in_hand: '15.00' });
    expect(await wallet(shop)).toMatchObject({ pending: '9.00', available: '22.00' });
    const again = await t.req(admin, { method: 'POST', url, payload: { charge_to: 'driver', reason: 'x' } });
    expect(again.statusCode).toBe(409);
    expect(again.json().code).toBe('SHORTFALL_ALREADY_RESOLVED');
    expect(
      await q(`SELECT after->>'charge_to' AS c FROM audit_log WHERE action = 'driver_cash.shortfall_resolved' AND entity_id = $1`, [
        collection.id,
      ]),
    ).toEqual([{ c: 'merchant' }]);

    // Charged to the driver: he owes the 5.00 (cash in hand 30 + 5); the order is received when his remittances cover all 35.00.
    const d2 = await freshDriver();
    const b = await cashDelivered(shop, d2, { subtotal: '30.00' }, { collected: '30.00', reason: 'no change' });
    const [c2] = (await driverCash(d2)).data;
    const res2 = ok(
      await t.req(admin, {
        method: 'POST',
        url: `/drivers/${d2.id}/cash-entries/${c2.id}/shortfall-resolution`,
        payload: { charge_to: 'driver', reason: 'he lost it' },
      }),
      201,
    );
    expect(res2).toMatchObject({ wallet_entry: null, received_order: null, cash: { cash_in_hand: '35.00', open_shortfalls: 0 } });
    expect(res2.cash_entry).toMatchObject({ entry_type: 'cash_adjustment', amount: '5.00', order_id: b.orderId, trip_id: b.tripId });
    const remit = async (amount: string) =>
      ok(await t.req(admin, { method: 'POST', url: `/drivers/${d2.id}/cash-remittances`, payload: { amount, method: 'cash' } }), 201);
    expect((await remit('30.00')).covered_orders).toEqual([]);
    expect(await wallet(shop)).toMatchObject({ pending: '36.00', available: '22.00' });
    expect((await remit('5.00')).covered_orders).toEqual([{ order_id: b.orderId, merchant_id: shop.id, amount: '35.00' }]);
    expect(await wallet(shop)).toMatchObject({ pending: '9.00', available: '49.00' });
  });
});

describe('cash remitted ahead', () => {
  it('an adjustment he handed in covers his next collection at once: its order is received when he collects', async () => {
    const shop = await newMerchant(t, admin, '10.00');
    const d = await freshDriver();
    ok(
      await t.req(admin, {
        method: 'POST',
        url: `/drivers/${d.id}/cash-adjustments`,
        payload: { amount: '30.00', reason: 'found in his bag' },
      }),
      201,
    );
    ok(await t.req(admin, { method: 'POST', url: `/drivers/${d.id}/cash-remittances`, payload: { amount: '30.00', method: 'cash' } }), 201);
    const a = await cashDelivered(shop, d, { subtotal: '20.00' }); // 25.00, within the 30.00 already remitted
    expect(await q('SELECT amount::text, method FROM merchant_payment_receipt WHERE order_id = $1', [a.orderId])).toEqual([
      { amount: '25.00', method: 'driver_cash' },
    ]);
    expect(await wallet(shop)).toMatchObject({ pending: '0.00', available: '18.00' });
  });
});

describe('a short collection refunded', () => {
  it('gives the customer back at most what the driver took from him', async () => {
    const shop = await newMerchant(t, admin, '10.00');
    const d = await freshDriver();
    const a = await cashDelivered(shop, d, { subtotal: '30.00' }, { collected: '30.00', reason: 'customer had 30 only' }); // total 35.00
    const before = (await q(`SELECT count(*)::int AS n FROM merchant_wallet_entry WHERE order_id = $1`, [a.orderId]))[0].n;
    const over = await t.req(admin, {
      method: 'POST',
      url: `/admin/orders/${a.orderId}/refunds`,
      payload: { amount: '35.00', reason: 'returned' },
    });
    expect(over.statusCode, over.body).toBe(422);
    expect(over.json().code).toBe('REFUND_EXCEEDS_TOTAL');
    expect((await q(`SELECT count(*)::int AS n FROM merchant_wallet_entry WHERE order_id = $1`, [a.orderId]))[0].n).toBe(before);
    // In full: the 30.00 he paid.
    const r = ok(await t.req(admin, { method: 'POST', url: `/admin/orders/${a.orderId}/refunds`, payload: { reason: 'returned' } }), 201);
    expect(r).toMatchObject({ payment_status: 'refunded', entry: { amount: '-30.00' } });
  });
});

describe('adjustments and who may record cash', () => {
  it('administrators adjust with a reason; dispatch may not; zero, over-precise or below-zero results are refused and write nothing', async () => {
    const shop = await newMerchant(t, admin);
    const d = await freshDriver();
    await cashDelivered(shop, d, { subtotal: '10.00' }); // 15.00 in hand
    const url = `/drivers/${d.id}/cash-adjustments`;
    const before = await entryCount();
    const dispatch = await t.as('dispatch');
    for (const [who, payload, status, code] of [
      [dispatch, { amount: '1.00', reason: 'x' }, 403, 'FORBIDDEN'],
      [admin, { amount: '0.00', reason: 'x' }, 400, 'VALIDATION_FAILED'],
      [admin, { amount: '1.001', reason: 'x' }, 400, 'VALIDATION_FAILED'],
      [admin, { amount: '-15.01', reason: 'x' }, 422, 'ADJUSTMENT_EXCEEDS_CASH_IN_HAND'],
      [admin, { amount: '1.00' }, 400, 'VALIDATION_FAILED'],
    ] as const) {
      const r = await t.req(who, { method: 'POST', url, payload });
      expect(r.statusCode, r.body).toBe(status);
      expect(r.json().code).toBe(code);
    }
    expect(await entryCount()).toBe(before);
    const adj = ok(await t.req(admin, { method: 'POST', url, payload: { amount: '-5.00', reason: 'lost a bill' } }), 201);
    expect(adj.entry).toMatchObject({ entry_type: 'cash_adjustment', amount: '-5.00', note: 'lost a bill' });
    expect(adj.cash).toMatchObject({ cash_in_hand: '10.00', adjusted: '-5.00' });
    const staff = ok(await t.req(dispatch, { method: 'GET', url: `/drivers/${d.id}/cash` }));
    expect(staff).toMatchObject({ cash_in_hand: '10.00', collected: '15.00', adjusted: '-5.00' });
    expect(staff.data.map((e: { entry_type: string }) => e.entry_type)).toEqual(['cash_adjustment', 'cash_collected']);
  });

  it('a sub-administrator records remittances only with cash_remittances_record and only for drivers of his territories', async () => {
    const shop = await newMerchant(t, admin);
    const d = await freshDriver();
    await cashDelivered(shop, d, { subtotal: '10.00' });
    const outside = await newDriver(t, { lon: -68.135, lat: -16.5 }, { admin });
    const before = await entryCount();
    const plain = await newSubadmin(t, admin, { territory_ids: [territoryId] });
    const denied = await t.req(plain.session, {
      method: 'POST',
      url: `/drivers/${d.id}/cash-remittances`,
      payload: { amount: '5.00', method: 'cash' },
    });
    expect(denied.statusCode).toBe(403);
    const cashier = await newSubadmin(t, admin, { territory_ids: [territoryId], permissions: { cash_remittances_record: true } });
    const away = await t.req(cashier.session, {
      method: 'POST',
      url: `/drivers/${outside.id}/cash-remittances`,
      payload: { amount: '5.00', method: 'cash' },
    });
    expect(away.statusCode).toBe(404);
    expect((await t.req(cashier.session, { method: 'GET', url: `/drivers/${outside.id}/cash` })).statusCode).toBe(404);
    expect(await entryCount()).toBe(before);
    const r = ok(
      await t.req(cashier.session, {
        method: 'POST',
        url: `/drivers/${d.id}/cash-remittances`,
        payload: { amount: '5.00', method: 'cash' },
      }),
      201,
    );
    expect(r.entry).toMatchObject({ entry_type: 'cash_remitted', amount: '-5.00', territory_id: territoryId });
    // Reconciliation: the sub-administrator sees his territory; another territory is 404.
    const today = new Date().toISOString().slice(0, 10);
    const tomorrow = new Date(Date.now() + 86_400_000 * 2).toISOString().slice(0, 10);
    const yesterday = new Date(Date.now() - 86_400_000 * 2).toISOString().slice(0, 10);
    const rec = ok(
      await t.req(cashier.session, { method: 'GET', url: `/admin/cash-reconciliation?from=${yesterday}&to=${tomorrow}&driver_id=${d.id}` }),
    );
    const mine = rec.data.filter((x: { driver_id: string }) => x.driver_id === d.id);
    expect(mine.length).toBeGreaterThan(0);
    const sum = (k: string) => formatMoney(mine.reduce((s: ReturnType<typeof money>, x: Record<string, string>) => s.plus(x[k]), money(0)));
    expect([sum('collected'), sum('remitted')]).toEqual(['15.00', '5.00']);
    expect(mine.every((x: { territory_id: string }) => x.territory_id === territoryId)).toBe(true);
    expect(today <= tomorrow).toBe(true);
    const foreignTerritory = await t.req(cashier.session, {
      method: 'GET',
      url: `/admin/cash-reconciliation?from=${yesterday}&to=${tomorrow}&territory_id=${newId()}`,
    });
    expect(foreignTerritory.statusCode).toBe(404);
  });
});

describe('reconciliation', () => {
  it('per driver and day with names, as JSON and as a real workbook (Spanish by default, English on request); a sub-administrator sees his territories only', async () => {
    const shop = await newMerchant(t, admin, '10.00');
    const d = await freshDriver();
    await cashDelivered(shop, d, { subtotal: '20.00' }); // 25.00
    await cashDelivered(shop, d, { subtotal: '30.00' }, { collected: '31.00', reason: 'kept the change' }); // 35.00 expected, 31 collected
    ok(await t.req(admin, { method: 'POST', url: `/drivers/${d.id}/cash-remittances`, payload: { amount: '40.00', method: 'cash' } }), 201);
    const from = new Date(Date.now() - 86_400_000 * 2).toISOString().slice(0, 10);
    const to = new Date(Date.now() + 86_400_000 * 2).toISOString().slice(0, 10);
    const query = `from=${from}&to=${to}&driver_id=${d.id}`;
    const json = ok(await t.req(admin, { method: 'GET', url: `/admin/cash-reconciliation?${query}` }));
    expect(json.scope).toBeNull();
    const name = (await q('SELECT u.display_name FROM driver d JOIN users u ON u.id = d.user_id WHERE d.id = $1', [d.id]))[0].display_name;
    const [row] = json.data;
    expect(json.data).toHaveLength(1);
    expect(row).toMatchObject({
      driver_id: d.id,
      driver_name: name,
      territory_id: territoryId,
      collected: '56.00',
      remitted: '40.00',
      outstanding: '16.00',
      collections: 2,
      discrepancies: 1,
      discrepancy_amount: '4.00',
    });
    expect(row.territory_name).toEqual(expect.any(String));

    const xlsx = await t.req(admin, { method: 'GET', url: `/admin/cash-reconciliation.xlsx?${query}` });
    expect(xlsx.statusCode, xlsx.body).toBe(200);
    expect(xlsx.headers['content-type']).toBe(XLSX_TYPE);
    expect(xlsx.headers['content-disposition']).toBe(`attachment; filename="cash-reconciliation_${from}_${to}.xlsx"`);
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.load(xlsx.rawPayload as unknown as ArrayBuffer);
    const ws = wb.getWorksheet('Conciliación')!;
    const header = ws.getRow(5).values as unknown[];
    expect(header).toEqual(expect.arrayContaining(['Día', 'Repartidor', 'Cobrado', 'Entregado a caja', 'Pendiente al cierre', 'Faltante']));
    const cell = (r: number, h: string) => ws.getRow(r).getCell(header.indexOf(h)).value;
    expect([
      cell(6, 'Repartidor'),
      cell(6, 'Territorio'),
      cell(6, 'Cobrado'),
      cell(6, 'Entregado a caja'),
      cell(6, 'Pendiente al cierre'),
      cell(6, 'Faltante'),
    ]).toEqual([name, row.territory_name, 56, 40, 16, 4]);
    expect(cell(7, 'Día')).toBe('TOTAL');
    expect(cell(7, 'Cobrado')).toMatchObject({ formula: 'SUM(D6:D6)', result: 56 });
    expect(cell(7, 'Pendiente al cierre')).toBeNull();
    const en = await t.req(admin, { method: 'GET', url: `/admin/cash-reconciliation.xlsx?${query}&lang=en` });
    const wbEn = new ExcelJS.Workbook();
    await wbEn.xlsx.load(en.rawPayload as unknown as ArrayBuffer);
    expect(wbEn.getWorksheet('Reconciliation')!.getRow(5).values).toEqual(
      expect.arrayContaining(['Day', 'Driver', 'Collected', 'Remitted', 'Outstanding at day end']),
    );
    // Without a period: the organization's today (La Paz), which the answer names.
    const orgToday = new Intl.DateTimeFormat('en-CA', { timeZone: json.timezone }).format(new Date());
    const todays = ok(await t.req(admin, { method: 'GET', url: `/admin/cash-reconciliation?driver_id=${d.id}` }));
    expect([todays.from, todays.to]).toEqual([
      orgToday,
      new Date(Date.parse(`${orgToday}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10),
    ]);
    expect(todays.data.map((x: { day: string }) => x.day)).toEqual([row.day]);
    expect(row.day).toBe(orgToday);
    for (const bad of [`from=${to}&to=${from}`, `from=${from}&to=${to}&lang=fr`, 'from=2020-01-01&to=2020-06-01', `to=${to}`]) {
      const r = await t.req(admin, { method: 'GET', url: `/admin/cash-reconciliation.xlsx?${bad}` });
      expect(r.statusCode, bad).toBeGreaterThanOrEqual(400);
      expect(r.statusCode, bad).toBeLessThan(500);
    }

    // A sub-administrator with the reports permission: his territory only, named in the scope line.
    const sub = await newSubadmin(t, admin, { territory_ids: [territoryId], permissions: { reports: true } });
    const mine = ok(await t.req(sub.session, { method: 'GET', url: `/admin/cash-reconciliation?from=${from}&to=${to}` }));
    expect(mine.scope).toEqual([row.territory_name]);
    expect(mine.data.every((x: { territory_id: string }) => x.territory_id === territoryId)).toBe(true);
    const subXlsx = await t.req(sub.session, { method: 'GET', url: `/admin/cash-reconciliation.xlsx?from=${from}&to=${to}` });
    const wbSub = new ExcelJS.Workbook();
    await wbSub.xlsx.load(subXlsx.rawPayload as unknown as ArrayBuffer);
    expect(wbSub.getWorksheet('Conciliación')!.getRow(3).getCell(2).value).toBe(row.territory_name);
    const elsewhere = await t.req(sub.session, {
      method: 'GET',
      url: `/admin/cash-reconciliation.xlsx?from=${from}&to=${to}&territory_id=${newId()}`,
    });
    expect(elsewhere.statusCode).toBe(404);
    const noReports = await newSubadmin(t, admin, { territory_ids: [territoryId], permissions: { reports: false } });
    expect(
      (await t.req(noReports.session, { method: 'GET', url: `/admin/cash-reconciliation.xlsx?from=${from}&to=${to}` })).statusCode,
    ).toBe(403);
  });
});

describe('cash limits', () => {
  it('a driver at his limit is offered no cash order (candidates, automatic assignment); a manual assignment needs an audited override', async () => {
    const shop = await newMerchant(t, admin);
    const d = await newDriver(t, { lon: -68.1349, lat: -16.5 }, { capacity: 20, admin, territory_ids: [territoryId] });
    await cashDelivered(shop, d, { subtotal: '45.00' }); // 50.00 in hand
    ok(await t.req(admin, { method: 'PATCH', url: `/drivers/${d.id}`, payload: { cash_limit: '50.00' } }));
    expect(await driverCash(d)).toMatchObject({ cash_in_hand: '50.00', cash_limit: '50.00', at_cash_limit: true });
    const o = await kit.place(shop, { destination: 'cash', collectedBy: 'driver', subtotal: '10.00', fee: '5.00' });
    const tripId = await kit.ready(shop, o.id);
    const cands = ok(await t.req(admin, { method: 'GET', url: `/trips/${tripId}/candidates?radius_m=50000&limit=200` }));
    const mine = cands.data.find((c: { driver: { id: string } }) => c.driver.id === d.id);
    expect(mine).toMatchObject({ eligible: false });
    expect(mine.reasons).toContain('cash_limit');
    const refused = await t.req(admin, { method: 'POST', url: `/trips/${tripId}/assign`, payload: { driver_id: d.id } });
    expect(refused.statusCode, refused.body).toBe(422);
    expect(refused.json().code).toBe('CASH_LIMIT');
    expect((await tripDb(t, tripId)).status).toBe('pending');
    const forced = ok(
      await t.req(admin, {
        method: 'POST',
        url: `/trips/${tripId}/assign`,
        payload: { driver_id: d.id, cash_limit_override: { reason: 'only driver on shift' } },
      }),
    );
    expect(forced).toMatchObject({ status: 'assigned', driver_id: d.id });
    const audit = await q(`SELECT after FROM audit_log WHERE action = 'trip.cash_limit_override' AND entity_id = $1`, [tripId]);
    expect(audit[0].after).toMatchObject({ driver_id: d.id, reason: 'only driver on shift' });
    // A platform order is not a cash order: the limit does not apply.
    const p = await kit.place(shop, { destination: 'platform', subtotal: '10.00', fee: '5.00' });
    const pTrip = await kit.ready(shop, p.id);
    const pc = ok(await t.req(admin, { method: 'GET', url: `/trips/${pTrip}/candidates?radius_m=50000&limit=200` })).data.find(
      (c: { driver: { id: string } }) => c.driver.id === d.id,
    );
    expect(pc.reasons).not.toContain('cash_limit');
  });

  it('the organization limit applies to every driver without his own; the optimizer plans no cash trip for a driver at it (CASH_LIMIT)', async () => {
    const shop = await newMerchant(t, admin);
    const d = await newDriver(t, { lon: -68.1351, lat: -16.5 }, { capacity: 20, admin, territory_ids: [territoryId] });
    await cashDelivered(shop, d, { subtotal: '15.00' }); // 20.00 in hand
    const settings = ok(await t.req(admin, { method: 'PATCH', url: '/logistics/settings', payload: { cash_limit: '20.00' } }));
    expect(settings.cash_limit).toBe('20.00');
    try {
      expect(await driverCash(d)).toMatchObject({ at_cash_limit: true, cash_limit: '20.00' });
      const o = await kit.place(shop, { destination: 'cash', collectedBy: 'driver', subtotal: '10.00', fee: '5.00' });
      const tripId = await kit.ready(shop, o.id);
      const plan = await t.req(admin, {
        method: 'POST',
        url: '/admin/dispatch-batches/optimize',
        payload: { trip_ids: [tripId], driver_ids: [d.id] },
      });
      expect(plan.statusCode, plan.body).toBe(201);
      expect(plan.json().unassigned).toEqual([{ trip_id: tripId, reason: 'CASH_LIMIT' }]);
      // Automatic assignment skips him.
      const auto = await t.req(admin, { method: 'POST', url: `/trips/${tripId}/auto-assign` });
      if (auto.statusCode === 200) expect(auto.json().driver_id).not.toBe(d.id);
      else expect(auto.json().code).toBe('NO_ELIGIBLE_DRIVER');
    } finally {
      ok(await t.req(admin, { method: 'PATCH', url: '/logistics/settings', payload: { cash_limit: null } }));
    }
  });
});

describe('driver settlements net the cash in hand', () => {
  it('earnings minus cash in hand; a driver holding more than his earnings is paid nothing and owes the rest; he sees the same figures', async () => {
    const shop = await newMerchant(t, admin, '10.00');
    const d = await freshDriver();
    const a = await cashDelivered(shop, d, { subtotal: '20.00' }); // 25.00 in hand
    const earning = (await tripDb(t, a.tripId)).driver_earning as string;
    expect(money(earning).lt(25)).toBe(true);
    const s = ok(await t.req(admin, { method: 'POST', url: `/admin/drivers/${d.id}/settlements`, payload: {} }), 201);
    const owes = formatMoney(money('25.00').minus(earning));
    expect(s).toMatchObject({ amount: earning, cash_netted: earning, payout_amount: '0.00', driver_owes: owes });
    expect(await driverCash(d)).toMatchObject({ cash_in_hand: owes, remitted: earning });
    const entries = await cashEntries(d.id);
    expect(entries[1]).toMatchObject({ entry_type: 'cash_remitted', amount: `-${earning}`, method: 'settlement' });
    const mine = ok(await t.req(d.session, { method: 'GET', url: '/driver/settlements' }));
    expect(mine.data[0]).toMatchObject({ id: s.id, payout_amount: '0.00', driver_owes: owes, cash_netted: earning });
    expect(mine.totals.pending).toBe('0.00');
    // Not enough was netted to cover the 25.00 collection: the merchant's net stays pending.
    expect(await wallet(shop)).toMatchObject({ pending: '18.00', available: '0.00' });

    // A driver without cash is paid his earnings in full.
    const clean = await freshDriver();
    const p = await kit.place(shop, { destination: 'platform', subtotal: '10.00', fee: '5.00' });
    const pt2 = await kit.deliver(shop, p.id, clean);
    const e2 = (await tripDb(t, pt2)).driver_earning as string;
    const s2 = ok(await t.req(admin, { method: 'POST', url: `/admin/drivers/${clean.id}/settlements`, payload: {} }), 201);
    expect(s2).toMatchObject({ amount: e2, cash_netted: '0.00', payout_amount: e2, driver_owes: '0.00' });
  });
});

void pt;
