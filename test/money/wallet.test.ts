import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type Session, type TestApp } from '../helpers.js';
import { newDriver } from '../logistics/fixtures.js';
import {
  dbBalance,
  newMerchant as makeMerchant,
  orderDeliveredAgain,
  orderKit,
  orderRow,
  walletEntries,
  type MoneyShop,
  type OrderKit,
} from './fixtures.js';

let t: TestApp;
let admin: Session;
let kit: OrderKit;

beforeAll(async () => {
  t = await createTestApp();
  admin = await t.as('admin');
  kit = await orderKit(t);
});
afterAll(() => t?.close());

/** A fresh approved merchant with its own owner session and a branch (so its wallet starts empty). */
const newMerchant = (commission = '12.50') => makeMerchant(t, admin, commission);

/** A real order placed by the kit's customer and delivered through commerce and logistics. */
const delivered = (
  m: MoneyShop,
  destination: 'platform' | 'merchant_direct' | 'cash',
  subtotal: string,
  fee: string,
  extra: { discount?: string } = {},
) => kit.delivered(m, { destination, subtotal, fee, ...extra });

describe('orderDelivered', () => {
  it('writes the hand-computed entries for each payment destination (commission 12.50%)', async () => {
    const m = await newMerchant('12.50');
    const p = await delivered(m, 'platform', '33.33', '7.50', { discount: '3.33' }); // total 37.50; commission 12.5% of 30.00 = 3.75
    const d = await delivered(m, 'merchant_direct', '80.00', '10.00'); // commission 10.00
    const c = await delivered(m, 'cash', '45.55', '12.00'); // commission 5.69375 → 5.69
    expect(await walletEntries(t, { orderId: p })).toEqual([
      { entry_type: 'sale_credit', amount: '37.50' },
      { entry_type: 'platform_commission', amount: '-3.75' },
      { entry_type: 'delivery_fee_debit', amount: '-7.50' },
    ]);
    expect(await walletEntries(t, { orderId: d })).toEqual([
      { entry_type: 'platform_commission', amount: '-10.00' },
      { entry_type: 'delivery_fee_debit', amount: '-10.00' },
    ]);
    expect(await walletEntries(t, { orderId: c })).toEqual([
      { entry_type: 'platform_commission', amount: '-5.69' },
      { entry_type: 'delivery_fee_debit', amount: '-12.00' },
    ]);
    // balance 37.5 − 3.75 − 7.5 − 10 − 10 − 5.69 − 12 = −11.44; debt = 10 + 10 + 5.69 + 12 = 37.69; the platform order nets 37.5 − 3.75 − 7.5 = 26.25,
    // pending until the platform records its payment as received, then available.
    expect(await dbBalance(t, m.id)).toBe('-11.44');
    const rule = await t.req(m.session, { method: 'GET', url: '/merchant/settlement-rule' });
    expect(rule.json().wallet).toEqual({
      balance: '-11.44',
      pending: '26.25',
      available: '0.00',
      debt: '37.69',
      credit: '0.00',
      payable: '0.00',
      currency: 'BOB',
      organization_id: t.demo.organizationId,
    });
    await kit.receive(p);
    const after = await t.req(m.session, { method: 'GET', url: '/merchant/settlement-rule' });
    expect(after.json().wallet).toEqual({
      balance: '-11.44',
      pending: '0.00',
      available: '26.25',
      debt: '37.69',
      credit: '0.00',
      payable: '26.25',
      currency: 'BOB',
      organization_id: t.demo.organizationId,
    });
    const audits = await t.db.withSystem((tx) =>
      tx.query("SELECT count(*)::int AS n FROM audit_log WHERE entity_type = 'merchant_wallet_entry' AND after->>'merchant_id' = $1", [
        m.id,
      ]),
    );
    expect(audits.rows[0].n).toBe(7);
  });

  it('is idempotent per order: after the delivery, a repeat and 8 concurrent calls write no second set of entries', async () => {
    const m = await newMerchant();
    const id = await delivered(m, 'platform', '50.00', '10.00');
    await Promise.all(Array.from({ length: 8 }, () => orderDeliveredAgain(t, id)));
    await orderDeliveredAgain(t, id);
    expect((await walletEntries(t, { orderId: id })).map((e) => e.entry_type)).toEqual([
      'sale_credit',
      'platform_commission',
      'delivery_fee_debit',
    ]);
  });

  it('stores the trip driver; a second order claiming the same trip gets no second delivery_fee_debit (23505, rolled back)', async () => {
    const m = await newMerchant();
    const first = await kit.place(m, { destination: 'cash', subtotal: '10.00', fee: '5.00' });
    const tripId = await kit.deliver(m, first.id);
    const { rows } = await t.db.withSystem((tx) =>
      tx.query('SELECT DISTINCT driver_id, trip_id FROM merchant_wallet_entry WHERE order_id = $1', [first.id]),
    );
    expect(rows).toEqual([{ driver_id: kit.driver.id, trip_id: tripId }]);
    // Commerce gives every order its own trip; a second order whose facts name the first order's trip is refused by the per-trip key.
    const second = (await kit.place(m, { destination: 'cash', subtotal: '10.00', fee: '5.00' })).id;
    await expect(orderDeliveredAgain(t, second, { tripId })).rejects.toMatchObject({ code: '23505' });
    expect(await walletEntries(t, { orderId: second })).toEqual([]);
    expect((await t.db.withSystem((tx) => tx.query('SELECT 1 FROM merchant_order_posting WHERE order_id = $1', [second]))).rowCount).toBe(
      0,
    );
  });

  it('at most one delivery_fee_debit per order and per trip, also when two writers race past the posting anchor', async () => {
    const m = await newMerchant();
    const orderId = 'race-order-1';
    const insert = (id: string, orderRef: string | null, tripRef: string | null) =>
      t.db.withTenant({ organizationId: t.demo.organizationId, userId: t.demo.users.admin }, (tx) =>
        tx.query(
          `INSERT INTO merchant_wallet_entry (organization_id, id, merchant_id, order_id, trip_id, entry_type, amount, currency)
           VALUES ($1, $2, $3, $4, $5, 'delivery_fee_debit', -5, 'BOB')`,
          [t.demo.organizationId, id, m.id, orderRef, tripRef],
        ),
      );
    const byOrder = await Promise.allSettled([insert('fee-a', orderId, 'trip-a'), insert('fee-b', orderId, 'trip-b')]);
    expect(byOrder.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    expect(byOrder.find((r) => r.status === 'rejected')).toMatchObject({ reason: { code: '23505' } });
    const byTrip = await Promise.allSettled([insert('fee-c', 'race-order-2', 'trip-x'), insert('fee-d', 'race-order-3', 'trip-x')]);
    expect(byTrip.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const { rows } = await t.db.withSystem((tx) =>
      tx.query("SELECT count(*)::int AS n FROM merchant_wallet_entry WHERE merchant_id = $1 AND entry_type = 'delivery_fee_debit'", [m.id]),
    );
    expect(rows[0].n).toBe(2);
  });

  it('the wallet is append-only for the tenant role, and each entry type has a fixed sign', async () => {
    const m = await newMerchant();
    await delivered(m, 'platform', '10.00', '1.00');
    const tenant = { organizationId: t.demo.organizationId, userId: t.demo.users.admin };
    await expect(
      t.db.withTenant(tenant, (tx) => tx.query('UPDATE merchant_wallet_entry SET amount = 0 WHERE merchant_id = $1', [m.id])),
    ).rejects.toMatchObject({ code: '42501' });
    await expect(
      t.db.withTenant(tenant, (tx) => tx.query('DELETE FROM merchant_wallet_entry WHERE merchant_id = $1', [m.id])),
    ).rejects.toMatchObject({ code: '42501' });
    await expect(
      t.db.withTenant(tenant, (tx) =>
        tx.query(
          `INSERT INTO merchant_wallet_entry (organization_id, id, merchant_id, entry_type, amount) VALUES ($1, 'bad-sign', $2, 'sale_credit', -1)`,
          [t.demo.organizationId, m.id],
        ),
      ),
    ).rejects.toMatchObject({ code: '23514' });
  });
});

describe('refunds (POST /admin/orders/:id/refunds)', () => {
  it('partial then full refund of a received platform order: refund entries, payment status, audit with reason; more than the total is refused', async () => {
    const m = await newMerchant('10.00');
    const { id } = await kit.place(m, { destination: 'platform', subtotal: '40.00', fee: '10.00' });
    await kit.deliver(m, id);
    const refund = (payload: Record<string, unknown>, s: Session = admin) =>
      t.req(s, { method: 'POST', url: `/admin/orders/${id}/refunds`, payload });
    // Not received yet: nothing to refund.
    const early = await refund({ amount: '1.00', reason: 'x' });
    expect(early.statusCode, early.body).toBe(409);
    expect(early.json().code).toBe('INVALID_TRANSITION');
    await kit.receive(id);
    expect((await refund({ amount: '1.00' })).statusCode).toBe(400); // reason required
    expect((await refund({ amount: '1.00', reason: 'x' }, m.session)).statusCode).toBe(403);
    const partial = await refund({ amount: '20.00', reason: 'cold food' });
    expect(partial.statusCode, partial.body).toBe(201);
    expect(partial.json().payment_status).toBe('partially_refunded');
    expect((await orderRow(t, id)).payment_status).toBe('partially_refunded');
    const tooMuch = await refund({ amount: '30.01', reason: 'x' });
    expect(tooMuch.statusCode).toBe(422);
    expect(tooMuch.json().code).toBe('REFUND_EXCEEDS_TOTAL');
    const rest = await refund({ reason: 'order lost' }); // no amount: what is left
    expect(rest.statusCode, rest.body).toBe(201);
    expect(rest.json().payment_status).toBe('refunded');
    expect((await walletEntries(t, { orderId: id })).filter((e) => e.entry_type === 'refund').map((e) => e.amount)).toEqual([
      '-20.00',
      '-30.00',
    ]);
    // The merchant nets 40 − 4 − 10 − 50 = −24: never available below zero, the shortfall is his debt.
    expect(rest.json().wallet).toMatchObject({ balance: '-14.00', pending: '0.00', available: '0.00', debt: '14.00' });
    expect((await refund({ amount: '0.01', reason: 'x' })).statusCode).toBe(422);
    const audit = await t.db.withSystem((tx) =>
      tx.query(
        "SELECT action, after->>'reason' AS reason FROM audit_log WHERE entity_id = $1 AND action LIKE 'order_payment.%' ORDER BY created_at",
        [id],
      ),
    );
    expect(audit.rows.map((r) => [r.action, r.reason])).toEqual([
      ['order_payment.received', null],
      ['order_payment.partially_refunded', 'cold food'],
      ['order_payment.refunded', 'order lost'],
    ]);
  });
});

describe('debt payments', () => {
  it('cover commission and delivery-fee debt oldest first; never more than the debt unless as_credit', async () => {
    const m = await newMerchant('10.00');
    const a = await delivered(m, 'merchant_direct', '50.00', '10.00'); // debt 5.00 + 10.00
    const b = await delivered(m, 'cash', '30.00', '8.00'); // debt 3.00 + 8.00
    const pay = (payload: Record<string, unknown>, s: Session = admin, headers: Record<string, string> = {}) =>
      t.req(s, { method: 'POST', url: `/admin/merchants/${m.id}/debt-payments`, payload, headers });

    const tooMuch = await pay({ amount: '26.01' });
    expect(tooMuch.statusCode).toBe(422);
    expect(tooMuch.json().code).toBe('PAYMENT_EXCEEDS_DEBT');
    for (const payload of [{ amount: '0' }, { amount: '-1.00' }, { amount: '1.001' }, { amount: 5 }, { amount: '1.00', extra: true }]) {
      expect((await pay(payload)).statusCode, JSON.stringify(payload)).toBe(400);
    }
    expect((await pay({ amount: '1.00' }, await t.as('merchant'))).statusCode).toBe(403);
    const other = await t.newOrganization();
    expect((await pay({ amount: '1.00' }, await t.login(other.logins.admin))).statusCode).toBe(404);
    expect((await walletEntries(t, { merchantId: m.id })).filter((e) => e.entry_type === 'merchant_debt_payment')).toEqual([]);

    const first = await pay({ amount: '17.00', note: 'cash at office' }, admin, { 'idempotency-key': 'debt-pay-0001' });
    expect(first.statusCode, first.body).toBe(201);
    expect(
      first.json().applied_to.map((x: { order_id: string; entry_type: string; covered: string }) => [x.order_id, x.entry_type, x.covered]),
    ).toEqual([
      [a, 'platform_commission', '5.00'],
      [a, 'delivery_fee_debit', '10.00'],
      [b, 'platform_commission', '2.00'],
    ]);
    expect(first.json()).toMatchObject({
      debt_before: '26.00',
      wallet: { balance: '-9.00', debt: '9.00', credit: '0.00', payable: '0.00' },
    });
    const replay = await pay({ amount: '17.00', note: 'cash at office' }, admin, { 'idempotency-key': 'debt-pay-0001' });
    expect(replay.statusCode).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.json().entry.id).toBe(first.json().entry.id);

    const second = await pay({ amount: '12.00', as_credit: true });
    expect(second.statusCode, second.body).toBe(201);
    expect(second.json().applied_to.map((x: { entry_type: string; covered: string }) => [x.entry_type, x.covered])).toEqual([
      ['platform_commission', '1.00'],
      ['delivery_fee_debit', '8.00'],
    ]);
    expect(second.json().wallet).toEqual({
      balance: '3.00',
      pending: '0.00',
      available: '0.00',
      debt: '0.00',
      credit: '3.00',
      payable: '0.00',
      currency: 'BOB',
      organization_id: t.demo.organizationId,
    });
    expect(await dbBalance(t, m.id)).toBe('3.00');
    const audit = await t.db.withSystem((tx) =>
      tx.query("SELECT count(*)::int AS n FROM audit_log WHERE action = 'wallet.merchant_debt_payment' AND after->>'merchant_id' = $1", [
        m.id,
      ]),
    );
    expect(audit.rows[0].n).toBe(2);
  });
});

describe('debt payments race', () => {
  it('concurrent payments of the whole debt: one wins, the rest are refused; the debt never goes below zero', async () => {
    const m = await newMerchant('10.00');
    await delivered(m, 'cash', '40.00', '6.00'); // debt 4.00 + 6.00
    const results = await Promise.all(
      Array.from({ length: 5 }, () =>
        t.req(admin, { method: 'POST', url: `/admin/merchants/${m.id}/debt-payments`, payload: { amount: '10.00' } }),
      ),
    );
    expect(results.filter((r) => r.statusCode === 201)).toHaveLength(1);
    expect(results.filter((r) => r.statusCode === 422).every((r) => r.json().code === 'PAYMENT_EXCEEDS_DEBT')).toBe(true);
    expect(await dbBalance(t, m.id)).toBe('0.00');
  });
});

describe('ledger invariant and finance', () => {
  it('the sum of the entries is the balance every endpoint reports', async () => {
    const m = await newMerchant('7.00');
    // The first order goes with a driver of its own, so the driver filter below finds exactly its entries.
    const driver = await newDriver(t, { lon: -68.13, lat: -16.5 }, { capacity: 5, admin });
    const first = await kit.place(m, { destination: 'platform', subtotal: '123.45', fee: '9.99' });
    await kit.deliver(m, first.id, driver);
    await delivered(m, 'merchant_direct', '67.89', '4.50');
    await delivered(m, 'cash', '10.01', '3.33', { discount: '1.00' });
    await delivered(m, 'platform', '5.55', '0.00');
    expect(
      (await t.req(admin, { method: 'POST', url: `/admin/merchants/${m.id}/debt-payments`, payload: { amount: '3.21' } })).statusCode,
    ).toBe(201);
    expect(
      (await t.req(m.session, { method: 'PATCH', url: '/merchant/settlement-rule', payload: { enabled: false, minimum_balance: '10.00' } }))
        .statusCode,
    ).toBe(200);

    const balance = await dbBalance(t, m.id);
    // Every page of the ledger, summed by hand.
    let cursor: string | null = null;
    const amounts: string[] = [];
    let totals: { merchant_wallet_net: string; by_type: Record<string, string> } | null;
    do {
      const url: string = `/finance/ledger?merchant_id=${m.id}&limit=3${cursor ? `&cursor=${cursor}` : ''}`;
      const r = await t.req(admin, { method: 'GET', url });
      expect(r.statusCode, r.body).toBe(200);
      amounts.push(...r.json().data.map((e: { amount: string }) => e.amount));
      totals = r.json().totals;
      cursor = r.json().next_cursor;
    } while (cursor);
    const cents = (s: string) => Math.round(Number(s) * 100);
    const sum = (xs: string[]) => xs.reduce((s, x) => s + cents(x), 0);
    expect(amounts).toHaveLength(10);
    expect(sum(amounts)).toBe(cents(balance));
    expect(totals!.merchant_wallet_net).toBe(balance);
    expect(sum(Object.values(totals!.by_type))).toBe(cents(balance));
    const own = await t.req(m.session, { method: 'GET', url: '/merchant/settlement-rule' });
    expect(own.json().wallet.balance).toBe(balance);
    const rules = await t.req(admin, { method: 'GET', url: '/admin/merchant-settlement-rules?limit=200' });
    expect(rules.json().data.find((r: { merchant_id: string }) => r.merchant_id === m.id).wallet.balance).toBe(balance);
    const last = await t.req(admin, { method: 'POST', url: `/admin/merchants/${m.id}/debt-payments`, payload: { amount: '0.01' } });
    expect(cents(last.json().wallet.balance)).toBe(cents(balance) + 1);

    // Charges: positive amounts, totals per type equal to the wallet entries of those types.
    const charges = await t.req(admin, { method: 'GET', url: `/finance/charges?merchant_id=${m.id}` });
    expect(charges.statusCode, charges.body).toBe(200);
    const { rows } = await t.db.withSystem((tx) =>
      tx.query(
        `SELECT entry_type, (-sum(amount))::numeric(14,2)::text AS s FROM merchant_wallet_entry WHERE merchant_id = $1 AND entry_type IN ('platform_commission', 'delivery_fee_debit') GROUP BY entry_type`,
        [m.id],
      ),
    );
    expect(charges.json().totals.by_type).toEqual(
      Object.fromEntries(rows.map((r: { entry_type: string; s: string }) => [r.entry_type, r.s])),
    );
    expect(charges.json().data.filter((c: { collection: string }) => c.collection === 'debt')).toHaveLength(4);
    expect(charges.json().data.every((c: { amount: string }) => !c.amount.startsWith('-'))).toBe(true);

    // Filters: driver, type, period.
    const byDriver = await t.req(admin, { method: 'GET', url: `/finance/ledger?driver_id=${driver.id}` });
    expect(
      byDriver
        .json()
        .data.map((e: { type: string }) => e.type)
        .sort(),
    ).toEqual(['delivery_fee_debit', 'platform_commission', 'sale_credit']);
    const byType = await t.req(admin, { method: 'GET', url: `/finance/ledger?merchant_id=${m.id}&type=sale_credit` });
    expect(byType.json().data).toHaveLength(2);
    expect(byType.json().totals.by_type).toEqual({ sale_credit: formatCents(cents('133.44') + cents('5.55')) });
    const future = new Date(Date.now() + 86_400_000).toISOString();
    expect(
      (await t.req(admin, { method: 'GET', url: `/finance/ledger?merchant_id=${m.id}&from=${encodeURIComponent(future)}` })).json().data,
    ).toEqual([]);
    expect(
      (await t.req(admin, { method: 'GET', url: `/finance/ledger?merchant_id=${m.id}&to=${encodeURIComponent(future)}` })).json().data,
    ).toHaveLength(11);
    expect((await t.req(admin, { method: 'GET', url: '/finance/ledger?type=bogus' })).statusCode).toBe(400);
    expect((await t.req(m.session, { method: 'GET', url: '/finance/ledger' })).statusCode).toBe(403);
    const other = await t.newOrganization();
    const otherLedger = await t.req(await t.login(other.logins.admin), { method: 'GET', url: `/finance/ledger?merchant_id=${m.id}` });
    expect(otherLedger.json()).toMatchObject({ data: [], totals: { merchant_wallet_net: '0.00', count: 0 } });

    // Dashboard: total merchant debt is the sum of each merchant's uncovered debt.
    const dash = await t.req(admin, { method: 'GET', url: '/dashboard' });
    const debt = await t.db.withSystem((tx) =>
      tx.query(
        `SELECT COALESCE(sum(d), 0)::numeric(14,2)::text AS total FROM (
                  SELECT GREATEST(0, -sum(amount)) AS d FROM merchant_wallet_entry
                   WHERE organization_id = $1 AND ((entry_type IN ('platform_commission', 'delivery_fee_debit') AND payment_destination IN ('merchant_direct', 'cash')) OR entry_type = 'merchant_debt_payment')
                   GROUP BY merchant_id) x`,
        [t.demo.organizationId],
      ),
    );
    expect(dash.json().sections.money.total_merchant_debt).toBe(debt.rows[0].total);
  });
});

function formatCents(c: number): string {
  return (c / 100).toFixed(2);
}
