import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type Session, type TestApp } from '../helpers.js';
import { newDriver, tripDb, type TestDriver } from '../logistics/fixtures.js';
import { newMerchant, ok, orderKit, orderRow, type MoneyShop, type OrderKit } from '../money/fixtures.js';

/**
 * What the merchant's counter needs from the API: the preparation time given when accepting (kept, moving the promise the trip
 * inherits), the branch's default preparation time, the promise on the order, the cash the platform's drivers hold for him, and
 * the period's wallet entries as a workbook, each confined to the calling merchant.
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
const patchStatus = (shop: MoneyShop, id: string, payload: Record<string, unknown>) =>
  t.req(shop.session, { method: 'PATCH', url: `/merchant/orders/${id}/status`, payload });
const MIN = 60_000;

describe('preparation time at acceptance', () => {
  it('is kept on the order and moves its promise (now + preparation + travel + buffer); the trip inherits the new promise', async () => {
    const shop = await newMerchant(t, admin);
    const o = await kit.place(shop, { destination: 'platform', subtotal: '20.00', fee: '5.00' });
    const placed = await orderRow(t, o.id);
    // The checkout promise counted the branch's default (15 min); the list shows it.
    const listed = ok(await t.req(shop.session, { method: 'GET', url: '/merchant/orders?limit=5' })).data.find(
      (x: { id: string }) => x.id === o.id,
    );
    expect(listed).toMatchObject({ promised_at: placed.promised_at.toISOString(), preparation_min: null });
    const before = Date.now();
    const accepted = ok(await patchStatus(shop, o.id, { status: 'confirmed', preparation_min: 75 }));
    expect(accepted).toMatchObject({ status: 'confirmed', preparation_min: 75 });
    const row = await orderRow(t, o.id);
    expect(row.preparation_min).toBe(75);
    expect(accepted.promised_at).toBe(row.promised_at.toISOString());
    // 75 minutes instead of 15: an hour later than at checkout (give or take the seconds between), and at least 75 + the 10-minute buffer from now.
    const moved = row.promised_at.getTime() - placed.promised_at.getTime();
    expect(moved).toBeGreaterThan(59 * MIN);
    expect(moved).toBeLessThan(61 * MIN);
    expect(row.promised_at.getTime()).toBeGreaterThanOrEqual(before + 85 * MIN);
    for (const status of ['preparing', 'ready']) ok(await patchStatus(shop, o.id, { status }));
    const trip = await tripDb(t, (await orderRow(t, o.id)).trip_id);
    expect(new Date(trip.promised_at).toISOString()).toBe(row.promised_at.toISOString());
  });

  it('a scheduled window keeps its promise; the preparation time is still kept', async () => {
    const shop = await newMerchant(t, admin);
    const item = ok(
      await t.req(shop.session, { method: 'POST', url: '/merchant/catalog', payload: { name: 'Torta', price: '30.00' } }),
      201,
    );
    const after = new Date(Date.now() + 3 * 3600_000).toISOString();
    const end = new Date(Date.now() + 4 * 3600_000).toISOString();
    const o = ok(
      await t.req(kit.customer.session, {
        method: 'POST',
        url: '/customer/checkout/preflight',
        payload: {
          branch_id: shop.branchId,
          address_id: kit.customer.addressId,
          items: [{ catalog_item_id: item.id, quantity: 1 }],
          deliver_after: after,
          deliver_before: end,
        },
      }),
      201,
    );
    const order = ok(await t.req(kit.customer.session, { method: 'POST', url: '/customer/orders', payload: { quote_id: o.id } }), 201);
    expect(order.promised_at).toBe(end);
    const accepted = ok(await patchStatus(shop, order.id, { status: 'confirmed', preparation_min: 30 }));
    expect(accepted).toMatchObject({ promised_at: end, deliver_before: end, preparation_min: 30 });
  });

  it('a preparation time out of 1–240, not an integer, or with another status is 400 and changes nothing', async () => {
    const shop = await newMerchant(t, admin);
    const o = await kit.place(shop, { destination: 'platform', subtotal: '12.00', fee: '5.00' });
    const before = await orderRow(t, o.id);
    for (const payload of [
      { status: 'confirmed', preparation_min: 0 },
      { status: 'confirmed', preparation_min: 241 },
      { status: 'confirmed', preparation_min: 12.5 },
      { status: 'confirmed', preparation_min: '20' },
      { status: 'cancelled', reason: 'closed', preparation_min: 20 },
    ]) {
      const res = await patchStatus(shop, o.id, payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.headers['content-type']).toContain('application/problem+json');
    }
    const after = await orderRow(t, o.id);
    expect(after).toMatchObject({ status: 'pending_confirmation', preparation_min: null });
    expect(after.promised_at.getTime()).toBe(before.promised_at.getTime());
    // Another merchant's order: 404, whatever the body.
    const other = await newMerchant(t, admin);
    expect((await patchStatus(other, o.id, { status: 'confirmed', preparation_min: 20 })).statusCode).toBe(404);
    expect((await orderRow(t, o.id)).status).toBe('pending_confirmation');
  });
});

describe("the branch's default preparation time", () => {
  it('the merchant sets it on his branch (audited); the next checkout promise counts it', async () => {
    const shop = await newMerchant(t, admin);
    const branches = ok(await t.req(shop.session, { method: 'GET', url: '/merchant/branches' })).data;
    expect(branches[0].preparation_min).toBe(15);
    const item = ok(
      await t.req(shop.session, { method: 'POST', url: '/merchant/catalog', payload: { name: 'Pizza', price: '40.00' } }),
      201,
    );
    const preflight = async () =>
      new Date(
        ok(
          await t.req(kit.customer.session, {
            method: 'POST',
            url: '/customer/checkout/preflight',
            payload: { branch_id: shop.branchId, address_id: kit.customer.addressId, items: [{ catalog_item_id: item.id, quantity: 1 }] },
          }),
          201,
        ).promised_at,
      ).getTime();
    const p15 = await preflight();
    const b = ok(
      await t.req(shop.session, { method: 'PATCH', url: `/merchant/branches/${shop.branchId}`, payload: { preparation_min: 55 } }),
    );
    expect(b.preparation_min).toBe(55);
    const p55 = await preflight();
    expect(p55 - p15).toBeGreaterThan(39 * MIN);
    const [audit] = await q(
      `SELECT action, before, after, actor_user_id FROM audit_log WHERE entity_id = $1 AND action = 'branch.preparation_changed'`,
      [shop.branchId],
    );
    expect(audit).toMatchObject({ before: { preparation_min: 15 }, after: { preparation_min: 55 } });
  });

  it("out of 1–240 is 400, another merchant's branch is 404, and nothing changes", async () => {
    const shop = await newMerchant(t, admin);
    for (const v of [0, 241, 1.5, null]) {
      const res = await t.req(shop.session, {
        method: 'PATCH',
        url: `/merchant/branches/${shop.branchId}`,
        payload: { preparation_min: v },
      });
      expect(res.statusCode, String(v)).toBe(400);
    }
    const other = await newMerchant(t, admin);
    expect(
      (await t.req(other.session, { method: 'PATCH', url: `/merchant/branches/${shop.branchId}`, payload: { preparation_min: 30 } }))
        .statusCode,
    ).toBe(404);
    expect((await q('SELECT preparation_min FROM merchant_branch WHERE id = $1', [shop.branchId]))[0].preparation_min).toBe(15);
    expect(await q(`SELECT 1 FROM audit_log WHERE entity_id = $1 AND action = 'branch.preparation_changed'`, [shop.branchId])).toHaveLength(
      0,
    );
  });
});

describe('cash the drivers hold for the merchant', () => {
  const freshDriver = (): Promise<TestDriver> =>
    newDriver(t, { lon: -68.135, lat: -16.5 }, { capacity: 20, admin, territory_ids: [territoryId] });

  it("lists his driver-collected cash orders until the driver remits the cash; never another merchant's", async () => {
    const shop = await newMerchant(t, admin);
    const other = await newMerchant(t, admin);
    const d = await freshDriver();
    const a = await kit.place(shop, { destination: 'cash', collectedBy: 'driver', subtotal: '20.00', fee: '5.00' });
    await kit.deliver(shop, a.id, d);
    const b = await kit.place(shop, { destination: 'cash', collectedBy: 'driver', subtotal: '30.00', fee: '5.00' });
    await kit.deliver(shop, b.id, d);
    const x = await kit.place(other, { destination: 'cash', collectedBy: 'driver', subtotal: '99.00', fee: '5.00' });
    await kit.deliver(other, x.id, d);
    // A merchant-collected cash order is not held by anyone.
    const own = await kit.place(shop, { destination: 'cash', collectedBy: 'merchant', subtotal: '7.00', fee: '5.00' });
    await kit.deliver(shop, own.id, d);

    const held = ok(await t.req(shop.session, { method: 'GET', url: '/merchant/cash?limit=1' }));
    expect(held).toMatchObject({ total: '60.00', count: 2, currency: 'BOB' });
    expect(held.data).toHaveLength(1);
    expect(held.data[0]).toMatchObject({ order_id: b.id, amount: '35.00', driver_id: d.id });
    const rest = ok(await t.req(shop.session, { method: 'GET', url: `/merchant/cash?limit=1&cursor=${held.next_cursor}` }));
    expect(rest.data.map((r: { order_id: string }) => r.order_id)).toEqual([a.id]);
    expect(rest.next_cursor).toBeNull();

    // The driver hands in 25.00: his oldest collection (order a) is covered, and leaves the merchant's list.
    ok(await t.req(admin, { method: 'POST', url: `/drivers/${d.id}/cash-remittances`, payload: { amount: '25.00', method: 'cash' } }), 201);
    const after = ok(await t.req(shop.session, { method: 'GET', url: '/merchant/cash' }));
    expect(after).toMatchObject({ total: '35.00', count: 1 });
    expect(after.data.map((r: { order_id: string }) => r.order_id)).toEqual([b.id]);
    expect(
      ok(await t.req(other.session, { method: 'GET', url: '/merchant/cash' })).data.map((r: { order_id: string }) => r.order_id),
    ).toEqual([x.id]);
  });

  it('is for merchants only', async () => {
    expect((await t.req(kit.customer.session, { method: 'GET', url: '/merchant/cash' })).statusCode).toBe(403);
    expect((await t.req(admin, { method: 'GET', url: '/merchant/cash' })).statusCode).toBe(403);
  });
});

describe('the period workbook', () => {
  it("holds the merchant's entries of the period (oldest first, totals), in the page's language; another merchant's orders never appear", async () => {
    const shop = await newMerchant(t, admin);
    const other = await newMerchant(t, admin);
    const from = new Date(Date.now() - MIN).toISOString();
    const mine = [
      await kit.delivered(shop, { destination: 'platform', subtotal: '20.00', fee: '5.00' }),
      await kit.delivered(shop, { destination: 'platform', subtotal: '40.00', fee: '5.00' }),
    ];
    const theirs = await kit.delivered(other, { destination: 'platform', subtotal: '50.00', fee: '5.00' });
    const to = new Date(Date.now() + MIN).toISOString();
    const res = await t.req(shop.session, {
      method: 'GET',
      url: `/merchant/wallet.xlsx?from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}`,
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toBe('application/vnd.openxmlformats-officedocument.spreadsheetml.sheet');
    expect(res.headers['content-disposition']).toBe(`attachment; filename="wallet_${from.slice(0, 10)}_${to.slice(0, 10)}.xlsx"`);
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.load(res.rawPayload as unknown as ArrayBuffer);
    const ws = wb.getWorksheet('Movimientos')!;
    expect(ws).toBeDefined();
    expect(ws.getRow(2).getCell(1).value).toBe('Periodo');
    const header = ws.getRow(5).values as unknown[];
    const col = (name: string) => header.indexOf(name);
    const expected = await q(
      'SELECT id, order_id, entry_type, amount::text AS amount, created_at FROM merchant_wallet_entry WHERE merchant_id = $1 ORDER BY id',
      [shop.id],
    );
    expect(expected.length).toBeGreaterThanOrEqual(4);
    const names: Record<string, string> = { sale_credit: 'Venta', platform_commission: 'Comisión', delivery_fee_debit: 'Costo de envío' };
    for (const [i, e] of expected.entries()) {
      const row = ws.getRow(6 + i);
      expect(row.getCell(col('Pedido')).value).toBe(e.order_id);
      expect(row.getCell(col('Tipo')).value).toBe(names[e.entry_type]);
      expect(row.getCell(col('Importe')).value).toBe(Number(e.amount));
      expect((row.getCell(col('Fecha')).value as Date).getTime()).toBe(e.created_at.getTime());
    }
    const totals = ws.getRow(6 + expected.length);
    expect(totals.getCell(1).value).toBe('TOTAL');
    const sum = expected.reduce((s, e) => s + Math.round(Number(e.amount) * 100), 0) / 100;
    expect((totals.getCell(col('Importe')).value as { result: number }).result).toBe(sum);
    const orders = new Set<unknown>();
    ws.eachRow((r) => orders.add(r.getCell(col('Pedido')).value));
    expect(orders).toContain(mine[0]);
    expect(orders).toContain(mine[1]);
    expect(orders).not.toContain(theirs);

    // English headers when the page is in English; an empty period is a workbook with only its totals row.
    const en = await t.req(shop.session, {
      method: 'GET',
      url: `/merchant/wallet.xlsx?from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}&lang=en`,
    });
    const wbEn = new ExcelJS.Workbook();
    await wbEn.xlsx.load(en.rawPayload as unknown as ArrayBuffer);
    expect(wbEn.getWorksheet('Entries')!.getRow(5).values).toContain('Amount');
    const empty = await t.req(shop.session, {
      method: 'GET',
      url: `/merchant/wallet.xlsx?from=2020-01-01T00:00:00Z&to=2020-02-01T00:00:00Z`,
    });
    const wbEmpty = new ExcelJS.Workbook();
    await wbEmpty.xlsx.load(empty.rawPayload as unknown as ArrayBuffer);
    expect(wbEmpty.getWorksheet('Movimientos')!.getRow(6).getCell(1).value).toBe('TOTAL');
  });

  it('a period that ends before it starts or without dates is 400; other roles are 403', async () => {
    const shop = await newMerchant(t, admin);
    const bad = await t.req(shop.session, {
      method: 'GET',
      url: '/merchant/wallet.xlsx?from=2026-02-01T00:00:00Z&to=2026-01-01T00:00:00Z',
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.headers['content-type']).toContain('application/problem+json');
    expect((await t.req(shop.session, { method: 'GET', url: '/merchant/wallet.xlsx' })).statusCode).toBe(400);
    expect(
      (await t.req(shop.session, { method: 'GET', url: '/merchant/wallet.xlsx?from=2026-01-01T00:00:00Z&to=2026-02-01T00:00:00Z&lang=fr' }))
        .statusCode,
    ).toBe(400);
    expect(
      (await t.req(admin, { method: 'GET', url: '/merchant/wallet.xlsx?from=2026-01-01T00:00:00Z&to=2026-02-01T00:00:00Z' })).statusCode,
    ).toBe(403);
  });
});
