import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type Session, type TestApp } from '../helpers.js';
import { newUser } from '../logistics/fixtures.js';
import { newMerchant, ok, orderKit, walletEntries, type OrderKit } from './fixtures.js';

/** The merchant's own money: GET /merchant/wallet (wallet, entries, totals over a period) and GET /merchant/settlements. */

let t: TestApp;
let admin: Session;
let kit: OrderKit;

beforeAll(async () => {
  t = await createTestApp();
  admin = await t.as('admin');
  kit = await orderKit(t);
});
afterAll(() => t?.close());

const DAY = 86_400_000;

describe('merchant wallet and settlements', () => {
  it("shows his own entries with totals, his debt payments and the settlements paid out; never another merchant's", async () => {
    const m = await newMerchant(t, admin, '10.00');
    const other = await newMerchant(t, admin, '10.00');
    await kit.receive(await kit.delivered(m, { destination: 'platform', subtotal: '100.00', fee: '10.00' })); // +110 −10 −10
    await kit.delivered(m, { destination: 'cash', subtotal: '50.00', fee: '5.00' }); // debt −5 −5
    await kit.delivered(other, { destination: 'platform', subtotal: '20.00', fee: '5.00' });
    ok(
      await t.req(admin, {
        method: 'POST',
        url: `/admin/merchants/${m.id}/debt-payments`,
        payload: { amount: '4.00', note: 'cash at the office' },
      }),
      201,
    );

    const w = ok(await t.req(m.session, { method: 'GET', url: '/merchant/wallet' }));
    const rule = ok(await t.req(m.session, { method: 'GET', url: '/merchant/settlement-rule' }));
    expect(w.wallet).toEqual(rule.wallet);
    expect(w.wallet).toMatchObject({ available: '90.00', debt: '6.00', credit: '0.00', pending: '0.00' });
    const stored = await walletEntries(t, { merchantId: m.id });
    expect(w.data).toHaveLength(stored.length);
    expect(w.data.every((e: { merchant_id: string; source: string }) => e.merchant_id === m.id && e.source === 'merchant_wallet')).toBe(
      true,
    );
    expect(w.totals).toMatchObject({ net: w.wallet.balance, count: stored.length });
    expect(w.totals.by_type).toMatchObject({
      sale_credit: '110.00',
      platform_commission: '-15.00',
      delivery_fee_debit: '-15.00',
      merchant_debt_payment: '4.00',
    });

    const debts = ok(await t.req(m.session, { method: 'GET', url: '/merchant/wallet?type=merchant_debt_payment' }));
    expect(debts.data.map((e: { amount: string; note: string }) => [e.amount, e.note])).toEqual([['4.00', 'cash at the office']]);
    // A period that ended before any entry: nothing, and the wallet is still the current one.
    const past = ok(
      await t.req(m.session, { method: 'GET', url: `/merchant/wallet?to=${encodeURIComponent(new Date(Date.now() - DAY).toISOString())}` }),
    );
    expect(past.data).toEqual([]);
    expect(past.totals).toEqual({ by_type: {}, net: '0.00', count: 0 });
    expect(past.wallet).toEqual(w.wallet);
    // Pages: two at a time, the cursor walks all of them once.
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { data: { id: string }[]; next_cursor: string | null } = ok(
        await t.req(m.session, { method: 'GET', url: `/merchant/wallet?limit=2${cursor ? `&cursor=${cursor}` : ''}` }),
      );
      seen.push(...page.data.map((e) => e.id));
      cursor = page.next_cursor;
    } while (cursor);
    expect(new Set(seen).size).toBe(stored.length);

    // The automatic rule settles tomorrow: the settlement shows in his list and as a settlement_debit entry.
    ok(await t.req(m.session, { method: 'PATCH', url: '/merchant/settlement-rule', payload: { enabled: true, frequency: 'daily' } }));
    await t.app.services.settlements(new Date(Date.now() + DAY));
    const s = ok(await t.req(m.session, { method: 'GET', url: '/merchant/settlements' }));
    expect(s.data).toHaveLength(1);
    expect(s.data[0]).toMatchObject({
      merchant_id: m.id,
      status: 'settled',
      gross_amount: '90.00',
      debt_netted: '6.00',
      payout_amount: '84.00',
      currency: 'BOB',
    });
    expect(ok(await t.req(m.session, { method: 'GET', url: '/merchant/settlements?status=skipped' })).data).toEqual([]);
    const paid = ok(await t.req(m.session, { method: 'GET', url: '/merchant/wallet?type=settlement_debit' }));
    expect(paid.data.map((e: { amount: string }) => e.amount)).toEqual(['-90.00']);
    expect(ok(await t.req(other.session, { method: 'GET', url: '/merchant/settlements' })).data).toEqual([]);
  });

  it('refuses bad filters, other roles and a merchant user without a merchant', async () => {
    const m = await newMerchant(t, admin);
    for (const q of ['from=yesterday', 'type=driver_settlement', 'limit=0', 'other=1', 'to=2026-13-01T00:00:00Z']) {
      const r = await t.req(m.session, { method: 'GET', url: `/merchant/wallet?${q}` });
      expect(r.statusCode, q).toBe(400);
    }
    expect((await t.req(m.session, { method: 'GET', url: '/merchant/settlements?status=paid' })).statusCode).toBe(400);
    for (const role of ['customer', 'driver', 'admin'] as const) {
      const s = await t.as(role);
      expect((await t.req(s, { method: 'GET', url: '/merchant/wallet' })).statusCode, role).toBe(403);
      expect((await t.req(s, { method: 'GET', url: '/merchant/settlements' })).statusCode, role).toBe(403);
    }
    const bare = await newUser(t, 'comercio');
    const session = await t.login(bare.email);
    expect((await t.req(session, { method: 'GET', url: '/merchant/wallet' })).statusCode).toBe(404);
    expect((await t.req(session, { method: 'GET', url: '/merchant/settlements' })).statusCode).toBe(404);
  });
});
