import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, waitFor, type Session, type TestApp } from '../helpers.js';
import { newDriver, tripIn, type TestDriver } from '../logistics/fixtures.js';
import { dbBalance, newMerchant as makeMerchant, orderKit, walletEntries, type OrderKit } from './fixtures.js';

let t: TestApp;
let admin: Session;
let customer: Session;
let kit: OrderKit;

beforeAll(async () => {
  t = await createTestApp();
  [admin, customer] = await Promise.all([t.as('admin'), t.as('customer')]);
  kit = await orderKit(t);
});
afterAll(() => t?.close());

const newMerchant = (commission = '10.00') => makeMerchant(t, admin, commission);

const DAY = 86_400_000;
const settlements = async (merchantId: string) =>
  (
    await t.db.withSystem((tx) =>
      tx.query(
        'SELECT status, gross_amount::text AS gross, debt_netted::text AS netted, payout_amount::text AS payout, period_start, period_end FROM merchant_settlement WHERE merchant_id = $1 ORDER BY period_start',
        [merchantId],
      ),
    )
  ).rows;

describe('merchant settlement rule', () => {
  it('GET gives defaults; PATCH validates, saves and audits', async () => {
    const m = await newMerchant();
    const g = await t.req(m.session, { method: 'GET', url: '/merchant/settlement-rule' });
    expect(g.statusCode, g.body).toBe(200);
    expect(g.json()).toMatchObject({
      merchant_id: m.id,
      enabled: false,
      frequency: 'weekly',
      minimum_balance: '0.00',
      net_debt_first: true,
      created_at: null,
    });
    for (const payload of [
      {},
      { frequency: 'hourly' },
      { minimum_balance: '-1.00' },
      { minimum_balance: 5 },
      { enabled: 'yes' },
      { other: 1 },
    ]) {
      expect(
        (await t.req(m.session, { method: 'PATCH', url: '/merchant/settlement-rule', payload })).statusCode,
        JSON.stringify(payload),
      ).toBe(400);
    }
    expect(
      (await t.db.withSystem((tx) => tx.query('SELECT 1 FROM merchant_settlement_rule WHERE merchant_id = $1', [m.id]))).rowCount,
    ).toBe(0);
    const p = await t.req(m.session, {
      method: 'PATCH',
      url: '/merchant/settlement-rule',
      payload: { enabled: true, frequency: 'daily', minimum_balance: '25.00' },
    });
    expect(p.statusCode, p.body).toBe(200);
    expect(p.json()).toMatchObject({ enabled: true, frequency: 'daily', minimum_balance: '25.00', net_debt_first: true });
    const p2 = await t.req(m.session, { method: 'PATCH', url: '/merchant/settlement-rule', payload: { net_debt_first: false } });
    expect(p2.json()).toMatchObject({ enabled: true, frequency: 'daily', minimum_balance: '25.00', net_debt_first: false });
    const audit = await t.db.withSystem((tx) =>
      tx.query("SELECT count(*)::int AS n FROM audit_log WHERE action = 'merchant_settlement_rule.updated' AND entity_id = $1", [m.id]),
    );
    expect(audit.rows[0].n).toBe(2);
    expect((await t.req(customer, { method: 'GET', url: '/merchant/settlement-rule' })).statusCode).toBe(403);
    const list = await t.req(admin, { method: 'GET', url: '/admin/merchant-settlement-rules?enabled=true' });
    expect(list.statusCode, list.body).toBe(200);
    expect(list.json().data.map((r: { merchant_id: string }) => r.merchant_id)).toContain(m.id);
    expect((await t.req(m.session, { method: 'GET', url: '/admin/merchant-settlement-rules' })).statusCode).toBe(403);
  });
});

describe('settlement worker', () => {
  it('settles a due period once, netting the debt first; a repeat and a concurrent run change nothing', async () => {
    const m = await newMerchant('10.00');
    await kit.receive(await kit.delivered(m, { destination: 'platform', subtotal: '100.00', fee: '10.00' })); // +110 −10 −10, received
    await kit.delivered(m, { destination: 'merchant_direct', subtotal: '50.00', fee: '5.00' }); // debt 5 + 5
    expect(
      (await t.req(m.session, { method: 'PATCH', url: '/merchant/settlement-rule', payload: { enabled: true, frequency: 'daily' } }))
        .statusCode,
    ).toBe(200);

    expect(await t.app.services.settlements(new Date())).toBe(0); // today's period is not over
    const tomorrow = new Date(Date.now() + DAY);
    const runs = await Promise.all([t.app.services.settlements(tomorrow), t.app.services.settlements(tomorrow)]);
    expect(runs.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(1);
    const rows = await settlements(m.id);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ status: 'settled', gross: '90.00', netted: '10.00', payout: '80.00' });
    const todayUtc = new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate()));
    expect(new Date(rows[0].period_start).toISOString()).toBe(todayUtc.toISOString());
    expect(new Date(rows[0].period_end).getTime() - new Date(rows[0].period_start).getTime()).toBe(DAY);
    const entries = (await walletEntries(t, { merchantId: m.id })).slice(-2);
    expect(entries).toEqual([
      { entry_type: 'settlement_debit', amount: '-90.00' },
      { entry_type: 'merchant_debt_payment', amount: '10.00' },
    ]);
    expect(await dbBalance(t, m.id)).toBe('0.00');
    const w = (await t.req(m.session, { method: 'GET', url: '/merchant/settlement-rule' })).json();
    expect(w.wallet).toEqual({
      balance: '0.00',
      pending: '0.00',
      available: '0.00',
      debt: '0.00',
      credit: '0.00',
      payable: '0.00',
      currency: 'BOB',
      organization_id: t.demo.organizationId,
    });
    expect(new Date(w.settled_through).toISOString()).toBe(new Date(todayUtc.getTime() + DAY).toISOString());

    await t.app.services.settlements(tomorrow);
    expect(await settlements(m.id)).toHaveLength(1);
    const audit = await t.db.withSystem((tx) =>
      tx.query("SELECT actor_user_id FROM audit_log WHERE action = 'merchant_settlement.settled' AND after->>'merchant_id' = $1", [m.id]),
    );
    expect(audit.rows).toEqual([{ actor_user_id: null }]);
    // The next day: nothing payable, so the period is recorded as skipped, once.
    const dayAfter = new Date(Date.now() + 2 * DAY);
    await Promise.all([t.app.services.settlements(dayAfter), t.app.services.settlements(dayAfter)]);
    expect((await settlements(m.id)).map((s) => s.status)).toEqual(['settled', 'skipped']);
  });

  it('without net_debt_first the whole payable is paid out and the debt stays; below the minimum the period is skipped', async () => {
    const a = await newMerchant('10.00');
    const b = await newMerchant('10.00');
    for (const m of [a, b]) {
      await kit.receive(await kit.delivered(m, { destination: 'platform', subtotal: '30.00', fee: '5.00' })); // payable 35 − 3 − 5 = 27
      await kit.delivered(m, { destination: 'cash', subtotal: '20.00', fee: '4.00' }); // debt 2 + 4
    }
    await t.req(a.session, {
      method: 'PATCH',
      url: '/merchant/settlement-rule',
      payload: { enabled: true, frequency: 'monthly', net_debt_first: false },
    });
    await t.req(b.session, {
      method: 'PATCH',
      url: '/merchant/settlement-rule',
      payload: { enabled: true, frequency: 'weekly', minimum_balance: '27.01' },
    });
    const later = new Date(Date.now() + 40 * DAY);
    await t.app.services.settlements(later);
    const sa = await settlements(a.id);
    expect(sa).toHaveLength(1);
    expect(sa[0]).toMatchObject({ status: 'settled', gross: '27.00', netted: '0.00', payout: '27.00' });
    expect(await dbBalance(t, a.id)).toBe('-6.00');
    expect((await t.req(a.session, { method: 'GET', url: '/merchant/settlement-rule' })).json().wallet).toMatchObject({
      debt: '6.00',
      payable: '0.00',
    });
    expect(new Date(sa[0].period_start).getUTCDate()).toBe(1);
    const sb = await settlements(b.id);
    expect(sb).toEqual([expect.objectContaining({ status: 'skipped', gross: '0.00', payout: '0.00' })]);
    expect(new Date(sb[0].period_start).getUTCDay()).toBe(1); // ISO weeks start on Monday
    expect(await dbBalance(t, b.id)).toBe('21.00');
  });
});

describe('no payout of money the platform has not received', () => {
  it('a delivered platform order stays pending until its payment is recorded: the settlement skips it, then pays it once received', async () => {
    const m = await newMerchant('10.00');
    const orderId = await kit.delivered(m, { destination: 'platform', subtotal: '100.00', fee: '10.00' }); // +110 −10 −10 = 90, not received
    const order = (await t.db.withSystem((tx) => tx.query('SELECT payment_status FROM merchant_order WHERE id = $1', [orderId]))).rows[0];
    expect(order.payment_status).toBe('pending');
    const wallet = async () => (await t.req(m.session, { method: 'GET', url: '/merchant/settlement-rule' })).json().wallet;
    expect(await wallet()).toMatchObject({ balance: '90.00', pending: '90.00', available: '0.00', payable: '0.00' });
    expect(
      (await t.req(m.session, { method: 'PATCH', url: '/merchant/settlement-rule', payload: { enabled: true, frequency: 'daily' } }))
        .statusCode,
    ).toBe(200);
    await t.app.services.settlements(new Date(Date.now() + DAY));
    expect(await settlements(m.id)).toEqual([expect.objectContaining({ status: 'skipped', gross: '0.00', payout: '0.00' })]);
    expect((await walletEntries(t, { merchantId: m.id })).map((e) => e.entry_type)).not.toContain('settlement_debit');

    // Refused receipts write nothing: wrong amount, a merchant, another destination.
    const bad = await t.req(admin, {
      method: 'POST',
      url: `/admin/orders/${orderId}/payment-received`,
      payload: { method: 'driver_cash', amount: '109.99' },
    });
    expect(bad.statusCode).toBe(422);
    expect(bad.json().code).toBe('AMOUNT_MISMATCH');
    expect(
      (await t.req(m.session, { method: 'POST', url: `/admin/orders/${orderId}/payment-received`, payload: { method: 'driver_cash' } }))
        .statusCode,
    ).toBe(403);
    expect(
      (await t.req(admin, { method: 'POST', url: `/admin/orders/${orderId}/payment-received`, payload: { method: 'pigeon' } })).statusCode,
    ).toBe(400);
    const cash = await kit.delivered(m, { destination: 'cash', subtotal: '10.00', fee: '1.00' });
    const notPlatform = await t.req(admin, {
      method: 'POST',
      url: `/admin/orders/${cash}/payment-received`,
      payload: { method: 'driver_cash' },
    });
    expect(notPlatform.json().code).toBe('NOT_PLATFORM_PAYMENT');

    const received = await t.req(admin, {
      method: 'POST',
      url: `/admin/orders/${orderId}/payment-received`,
      payload: { method: 'driver_cash', amount: '110.00', reference: 'route 7' },
    });
    expect(received.statusCode, received.body).toBe(201);
    expect(received.json()).toMatchObject({
      payment_status: 'paid',
      receipt: { amount: '110.00', method: 'driver_cash', reference: 'route 7' },
    });
    expect(received.json().wallet).toMatchObject({ pending: '0.00', available: '90.00' });
    const again = await t.req(admin, {
      method: 'POST',
      url: `/admin/orders/${orderId}/payment-received`,
      payload: { method: 'driver_cash' },
    });
    expect(again.statusCode).toBe(409);
    const audit = await t.db.withSystem((tx) =>
      tx.query("SELECT count(*)::int AS n FROM audit_log WHERE action = 'order_payment.received' AND entity_id = $1", [orderId]),
    );
    expect(audit.rows[0].n).toBe(1);

    await t.app.services.settlements(new Date(Date.now() + 2 * DAY));
    const rows = await settlements(m.id);
    expect(rows.map((r) => r.status)).toEqual(['skipped', 'settled']);
    // 90 available; the cash order's debt (1 + 1) is netted first.
    expect(rows[1]).toMatchObject({ gross: '90.00', netted: '2.00', payout: '88.00' });
    expect(await wallet()).toMatchObject({ balance: '0.00', pending: '0.00', available: '0.00', debt: '0.00' });
  });
});

describe('driver settlements', () => {
  let driver: TestDriver;

  beforeAll(async () => {
    driver = await newDriver(t, { lon: -68.13, lat: -16.5 });
  });

  const settle = (driverId: string, payload?: Record<string, unknown>, s: Session = admin) =>
    t.req(s, { method: 'POST', url: `/admin/drivers/${driverId}/settlements`, ...(payload ? { payload } : {}) });

  it('settles the earnings up to the cut-off, each trip once; then pending → paid, and paid again is 409', async () => {
    const t1 = await tripIn(t, admin, driver, 'completed');
    const cutoff = new Date().toISOString();
    // The next trip completes on a later clock reading than the cut-off.
    await waitFor(() => Date.now() > Date.parse(cutoff));
    const t2 = await tripIn(t, admin, driver, 'completed');
    await tripIn(t, admin, driver, 'in_transit'); // not completed: never settled
    const first = await settle(driver.id, { up_to: cutoff, note: 'week 1' });
    expect(first.statusCode, first.body).toBe(201);
    const earning = (await t.db.withSystem((tx) => tx.query('SELECT driver_earning::text AS e FROM trip WHERE id = $1', [t1]))).rows[0].e;
    expect(first.json()).toMatchObject({ driver_id: driver.id, status: 'pending', amount: earning, trip_count: 1, note: 'week 1' });
    const second = await settle(driver.id);
    expect(second.statusCode, second.body).toBe(201);
    expect(second.json().trip_count).toBe(1);
    const items = await t.db.withSystem((tx) =>
      tx.query('SELECT trip_id, settlement_id FROM driver_settlement_item WHERE settlement_id IN ($1, $2) ORDER BY completed_at', [
        first.json().id,
        second.json().id,
      ]),
    );
    expect(items.rows).toEqual([
      { trip_id: t1, settlement_id: first.json().id },
      { trip_id: t2, settlement_id: second.json().id },
    ]);
    const none = await settle(driver.id);
    expect(none.statusCode).toBe(422);
    expect(none.json().code).toBe('NOTHING_TO_SETTLE');

    const paid = await t.req(admin, {
      method: 'POST',
      url: `/admin/settlements/${first.json().id}/paid`,
      payload: { payment_reference: 'TRF-9' },
    });
    expect(paid.statusCode, paid.body).toBe(200);
    expect(paid.json()).toMatchObject({ status: 'paid', payment_reference: 'TRF-9', paid_by_user_id: admin.userId });
    const again = await t.req(admin, { method: 'POST', url: `/admin/settlements/${first.json().id}/paid` });
    expect(again.statusCode).toBe(409);
    expect(again.json()).toMatchObject({ code: 'INVALID_TRANSITION', current_status: 'paid' });
    const audit = await t.db.withSystem((tx) =>
      tx.query('SELECT action FROM audit_log WHERE entity_id = $1 ORDER BY created_at', [first.json().id]),
    );
    expect(audit.rows.map((r: { action: string }) => r.action)).toEqual(['driver_settlement.created', 'driver_settlement.paid']);

    const mine = await t.req(driver.session, { method: 'GET', url: '/driver/settlements' });
    expect(mine.statusCode, mine.body).toBe(200);
    expect(mine.json().data.map((s: { id: string }) => s.id)).toEqual([second.json().id, first.json().id]);
    expect(mine.json().totals).toEqual({ pending: second.json().amount, paid: first.json().amount });
    const ledger = await t.req(admin, { method: 'GET', url: `/finance/ledger?driver_id=${driver.id}&type=driver_settlement` });
    expect(ledger.json().data.map((e: { id: string; status: string }) => [e.id, e.status])).toEqual([
      [second.json().id, 'pending'],
      [first.json().id, 'paid'],
    ]);
  });

  it('two racing requests settle each trip once', async () => {
    const d = await newDriver(t, { lon: -68.13, lat: -16.5 });
    for (let i = 0; i < 3; i++) await tripIn(t, admin, d, 'completed');
    const results = await Promise.all(Array.from({ length: 5 }, () => settle(d.id, {})));
    const created = results.filter((r) => r.statusCode === 201);
    expect(results.every((r) => r.statusCode === 201 || (r.statusCode === 422 && r.json().code === 'NOTHING_TO_SETTLE'))).toBe(true);
    expect(created.reduce((n, r) => n + r.json().trip_count, 0)).toBe(3);
    const { rows } = await t.db.withSystem((tx) =>
      tx.query(
        `SELECT count(*)::int AS items, count(DISTINCT i.trip_id)::int AS trips, (SELECT count(*)::int FROM driver_settlement WHERE driver_id = $1) AS settlements,
                (SELECT sum(amount)::text FROM driver_settlement WHERE driver_id = $1) AS total, (SELECT sum(driver_earning)::text FROM trip WHERE driver_id = $1) AS earned
           FROM driver_settlement_item i JOIN driver_settlement s ON s.id = i.settlement_id WHERE s.driver_id = $1`,
        [d.id],
      ),
    );
    expect(rows[0]).toMatchObject({ items: 3, trips: 3, settlements: created.length });
    expect(rows[0].total).toBe(rows[0].earned);
  });

  it('refuses bad input, other roles and other organizations', async () => {
    expect((await settle(driver.id, { up_to: new Date(Date.now() + DAY).toISOString() })).json().code).toBe('CUTOFF_IN_FUTURE');
    expect((await settle(driver.id, { up_to: 'yesterday' })).statusCode).toBe(400);
    expect((await settle(driver.id, { extra: 1 })).statusCode).toBe(400);
    expect((await settle('no-such-driver', {})).statusCode).toBe(404);
    expect((await settle(driver.id, {}, driver.session)).statusCode).toBe(403);
    const other = await t.newOrganization();
    const otherAdmin = await t.login(other.logins.admin);
    expect((await settle(driver.id, {}, otherAdmin)).statusCode).toBe(404);
    const anyId = (await t.db.withSystem((tx) => tx.query("SELECT id FROM driver_settlement WHERE status = 'pending' LIMIT 1"))).rows[0].id;
    expect((await t.req(otherAdmin, { method: 'POST', url: `/admin/settlements/${anyId}/paid` })).statusCode).toBe(404);
    expect((await t.req(admin, { method: 'POST', url: '/admin/settlements/nope/paid' })).statusCode).toBe(404);
    const otherDriver = await newDriver(t, { lon: -68.13, lat: -16.5 });
    const theirs = await t.req(otherDriver.session, { method: 'GET', url: '/driver/settlements' });
    expect(theirs.json()).toEqual({ data: [], next_cursor: null, totals: { pending: '0.00', paid: '0.00' } });
  });
});
