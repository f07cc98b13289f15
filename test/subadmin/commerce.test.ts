import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type Session, type TestApp } from '../helpers.js';
import { newDriver, newUser, tripDb } from '../logistics/fixtures.js';
import { newSubadmin, newTerritory, pt, type TestSubadmin } from './fixtures.js';

let t: TestApp;
let admin: Session;
let A: string;
let B: string;
let sub: TestSubadmin;
const shops: Record<'A' | 'B', { merchantId: string; session: Session; orders: string[] }> = {} as never;

const db = async (sql: string, params: unknown[] = []) => (await t.db.withSystem((tx) => tx.query(sql, params))).rows;
async function ok(p: Promise<{ statusCode: number; body: string; json: () => any }>, status = 200) {
  const r = await p;
  expect(r.statusCode, r.body).toBe(status);
  return r.json();
}

/** An approved merchant located in the zone, with a branch and two items, and `n` orders of a customer there. */
async function shopWithOrders(lon: number, lat: number, n: number) {
  const u = await newUser(t, 'comercio');
  const m = await ok(
    t.req(admin, { method: 'POST', url: '/merchants', payload: { owner_user_id: u.userId, name: `Shop ${lon}`, location: pt(lon, lat) } }),
    201,
  );
  await ok(t.req(admin, { method: 'POST', url: `/merchants/${m.id}/approve`, payload: {} }));
  const session = await t.login(u.email);
  const branch = await ok(
    t.req(session, { method: 'POST', url: '/merchant/branches', payload: { name: 'B', address: 'Calle 1', location: pt(lon, lat) } }),
    201,
  );
  const items = [];
  for (const price of ['12.50', '7.25'])
    items.push((await ok(t.req(session, { method: 'POST', url: '/merchant/catalog', payload: { name: `Item ${price}`, price } }), 201)).id);
  const c = await newUser(t, 'delivery');
  const cs = await t.login(c.email);
  const address = await ok(
    t.req(cs, { method: 'POST', url: '/customer/addresses', payload: { address: 'Av. 1', location: pt(lon + 0.004, lat) } }),
    201,
  );
  const orders = [];
  for (let i = 0; i < n; i++) {
    const o = await ok(
      t.req(cs, {
        method: 'POST',
        url: '/customer/orders',
        payload: {
          branch_id: branch.id,
          address_id: address.id,
          items: items.map((id, k) => ({ catalog_item_id: id, quantity: i + k + 1 })),
          payment_destination: 'cash',
        },
      }),
      201,
    );
    orders.push(o.id as string);
  }
  return { merchantId: m.id as string, session, orders };
}

beforeAll(async () => {
  t = await createTestApp();
  admin = await t.as('admin');
  A = await newTerritory(t, admin, 'Zone A', -67, -16);
  B = await newTerritory(t, admin, 'Zone B', -66, -16);
  shops.A = await shopWithOrders(-67, -16, 3);
  shops.B = await shopWithOrders(-66, -16, 2);
  await ok(
    t.req(shops.A.session, { method: 'PATCH', url: `/merchant/orders/${shops.A.orders[0]}/status`, payload: { status: 'cancelled' } }),
  );
  sub = await newSubadmin(t, admin, { territory_ids: [A] });
}, 90_000);
afterAll(async () => t?.close());

describe('orders status', () => {
  it('counts and lists the orders of his territories by state', async () => {
    const res = await ok(t.req(sub.session, { method: 'GET', url: '/subadmin/orders/status' }));
    const rows = await db('SELECT status, count(*)::int AS n FROM merchant_order WHERE territory_id = $1 GROUP BY status', [A]);
    expect(res.counts).toEqual(Object.fromEntries(rows.map((r: { status: string; n: number }) => [r.status, r.n])));
    expect(res.total).toBe(3);
    expect(res.data.map((o: { id: string }) => o.id).sort()).toEqual([...shops.A.orders].sort());
    const cancelled = await ok(t.req(sub.session, { method: 'GET', url: '/subadmin/orders/status?status=cancelled' }));
    expect(cancelled.data.map((o: { id: string }) => o.id)).toEqual([shops.A.orders[0]]);
    const all = await ok(t.req(admin, { method: 'GET', url: '/subadmin/orders/status' }));
    expect(all.total).toBe((await db('SELECT count(*)::int AS n FROM merchant_order'))[0].n);
  });
});

describe('coupons', () => {
  it('creates a coupon of a merchant of his territory on its behalf (commerce rules, audited), lists it, refuses merchants elsewhere', async () => {
    const body = { code: 'ZONA5', name: 'Zona 5', discount_type: 'fixed', discount_value: '5.00', minimum_order: '20.00' };
    const created = await ok(
      t.req(sub.session, { method: 'POST', url: `/subadmin/merchants/${shops.A.merchantId}/coupons`, payload: body }),
      201,
    );
    expect(created).toMatchObject({ merchant_id: shops.A.merchantId, code: 'ZONA5', created_by_user_id: sub.userId, usage_count: 0 });
    expect(
      (
        await db("SELECT count(*)::int AS n FROM audit_log WHERE entity_id = $1 AND action = 'coupon.created' AND actor_user_id = $2", [
          created.id,
          sub.userId,
        ])
      )[0].n,
    ).toBe(1);
    expect(
      (
        await t.req(sub.session, {
          method: 'POST',
          url: `/subadmin/merchants/${shops.A.merchantId}/coupons`,
          payload: { ...body, code: 'zona5' },
        })
      ).statusCode,
    ).toBe(409);
    expect(
      (
        await t.req(sub.session, {
          method: 'POST',
          url: `/subadmin/merchants/${shops.A.merchantId}/coupons`,
          payload: { ...body, code: 'ZERO', discount_value: '0' },
        })
      ).statusCode,
    ).toBe(400);
    const elsewhere = await t.req(sub.session, {
      method: 'POST',
      url: `/subadmin/merchants/${shops.B.merchantId}/coupons`,
      payload: { ...body, code: 'ZONAB' },
    });
    expect(elsewhere.statusCode).toBe(404);
    expect((await db('SELECT count(*)::int AS n FROM merchant_coupon WHERE merchant_id = $1', [shops.B.merchantId]))[0].n).toBe(0);
    // The merchant sees the coupon as his own.
    const own = await ok(t.req(shops.A.session, { method: 'GET', url: '/merchant/coupons' }));
    expect(own.data.map((c: { id: string }) => c.id)).toContain(created.id);

    await ok(t.req(shops.B.session, { method: 'POST', url: '/merchant/coupons', payload: { ...body, code: 'BONLY' } }), 201);
    const list = await ok(t.req(sub.session, { method: 'GET', url: '/subadmin/coupons' }));
    expect(list.data.map((c: { merchant_id: string }) => c.merchant_id)).toEqual([shops.A.merchantId]);
    const all = await ok(t.req(admin, { method: 'GET', url: '/subadmin/coupons' }));
    expect(all.data.length).toBe((await db('SELECT count(*)::int AS n FROM merchant_coupon'))[0].n);
  });
});

describe('territory tariffs', () => {
  it('lists the tariffs of his territories only', async () => {
    const mk = (territory_id: string, service_mode: string) =>
      ok(
        t.req(admin, {
          method: 'POST',
          url: '/admin/territory-tariffs',
          payload: { territory_id, service_mode, base_fee: '5.00', per_km_fee: '1.50', driver_share_value: '70' },
        }),
        201,
      );
    const a1 = await mk(A, 'marketplace');
    const a2 = await mk(A, 'delivery_express');
    const b1 = await mk(B, 'marketplace');
    const list = await ok(t.req(sub.session, { method: 'GET', url: '/subadmin/territory-tariffs' }));
    expect(list.data.map((x: { id: string }) => x.id).sort()).toEqual([a1.id, a2.id].sort());
    const express = await ok(t.req(sub.session, { method: 'GET', url: '/subadmin/territory-tariffs?service_mode=delivery_express' }));
    expect(express.data.map((x: { id: string }) => x.id)).toEqual([a2.id]);
    expect((await ok(t.req(sub.session, { method: 'GET', url: `/subadmin/territory-tariffs?territory_id=${B}` }))).data).toEqual([]);
    expect((await ok(t.req(admin, { method: 'GET', url: '/subadmin/territory-tariffs' }))).data.map((x: { id: string }) => x.id)).toContain(
      b1.id,
    );
  });
});

describe('sales report', () => {
  /** Drives an order of shop A to delivered through the real flow (merchant → trip → driver with the PINs). */
  async function deliverA(orderId: string) {
    for (const status of ['confirmed', 'preparing', 'ready'])
      await ok(t.req(shops.A.session, { method: 'PATCH', url: `/merchant/orders/${orderId}/status`, payload: { status } }));
    const tripId = (await db('SELECT trip_id FROM merchant_order WHERE id = $1', [orderId]))[0].trip_id;
    const d = await newDriver(t, { lon: -67, lat: -16 }, { territory_ids: [A] });
    await ok(t.req(admin, { method: 'POST', url: `/trips/${tripId}/assign`, payload: { driver_id: d.id } }));
    await ok(t.req(d.session, { method: 'POST', url: `/driver/trips/${tripId}/accept` }));
    const trip = await tripDb(t, tripId);
    await ok(t.req(d.session, { method: 'POST', url: `/trips/${tripId}/verify-pickup`, payload: { pin: trip.pickup_pin } }));
    await ok(t.req(d.session, { method: 'POST', url: `/driver/trips/${tripId}/start-delivery` }));
    const cash = Number(trip.cash_to_collect) > 0 ? { cash_collected: trip.cash_to_collect } : {};
    await ok(t.req(d.session, { method: 'POST', url: `/trips/${tripId}/verify-delivery`, payload: { pin: trip.delivery_pin, ...cash } }));
    expect((await db('SELECT status FROM merchant_order WHERE id = $1', [orderId]))[0].status).toBe('delivered');
  }

  it('totals count delivered orders only; cancelled and open orders are listed apart; the scope names the territory', async () => {
    await deliverA(shops.A.orders[1]);
    const res = await t.req(sub.session, { method: 'GET', url: '/subadmin/reports/sales.xls' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-disposition']).toBe('attachment; filename="sales_start_now.xlsx"');
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.load(res.rawPayload as unknown as ArrayBuffer);
    const groups: [string, string][] = [
      ['Sales', "status = 'delivered'"],
      ['Cancelled', "status = 'cancelled'"],
      ['Open', "status NOT IN ('delivered', 'cancelled')"],
    ];
    for (const [sheet, where] of groups) {
      const ws = wb.getWorksheet(sheet)!;
      expect(ws, sheet).toBeDefined();
      expect(ws.getRow(3).getCell(2).value).toBe('Zone A'); // a name, not the territory id
      const header = ws.getRow(5).values as unknown[];
      const col = (name: string) => header.indexOf(name);
      const expected = await db(
        `SELECT id, status, created_at, subtotal, total FROM merchant_order WHERE territory_id = $1 AND ${where} ORDER BY created_at, id`,
        [A],
      );
      expect(expected.length, sheet).toBe(1);
      for (const [i, o] of expected.entries()) {
        const row = ws.getRow(6 + i);
        expect(row.getCell(col('Order')).value).toBe(o.id);
        expect(row.getCell(col('Status')).value).toBe(o.status);
        expect((row.getCell(col('Created at')).value as Date).getTime()).toBe(o.created_at.getTime());
        expect(row.getCell(col('Total')).value).toBe(Number(o.total));
        expect(row.getCell(col('Total')).numFmt).toBe('#,##0.00');
      }
      const totals = ws.getRow(6 + expected.length);
      expect(totals.getCell(1).value).toBe('TOTAL');
      expect(totals.getCell(col('Status')).value).toBe(expected.length);
      const sum = (
        await db(`SELECT sum(subtotal)::text AS s, sum(total)::text AS t FROM merchant_order WHERE territory_id = $1 AND ${where}`, [A])
      )[0];
      expect((totals.getCell(col('Total')).value as { result: number }).result).toBe(Number(sum.t));
      expect((totals.getCell(col('Subtotal')).value as { result: number }).result).toBe(Number(sum.s));
      const ids: unknown[] = [];
      ws.eachRow((r) => ids.push(r.getCell(col('Order')).value));
      for (const id of shops.B.orders) expect(ids).not.toContain(id);
    }
    // The administrator's scope is the organization.
    const all = await t.req(admin, { method: 'GET', url: '/subadmin/reports/sales.xls' });
    const wbAll = new ExcelJS.Workbook();
    await wbAll.xlsx.load(all.rawPayload as unknown as ArrayBuffer);
    expect(wbAll.getWorksheet('Sales')!.getRow(3).getCell(2).value).toBe('organization');
  });
});
