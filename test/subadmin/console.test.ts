import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type Session, type TestApp } from '../helpers.js';
import { newDriver, newUser, tripIn } from '../logistics/fixtures.js';
import { JPEG } from '../storage/fixtures.js';
import { XLSX_TYPE } from '../../src/platform/workbook.js';
import { newSubadmin, newTerritory, pt, type TestSubadmin } from './fixtures.js';

let t: TestApp;
let admin: Session;
let A: string;
let B: string;
let sub: TestSubadmin;
let merchantA: string;
let merchantB: string;

const db = async (sql: string, params: unknown[] = []) => (await t.db.withSystem((tx) => tx.query(sql, params))).rows;

async function merchantIn(lon: number, lat: number) {
  const u = await newUser(t, 'comercio');
  const res = await t.req(admin, {
    method: 'POST',
    url: '/merchants',
    payload: { owner_user_id: u.userId, name: `Shop ${lon}`, location: pt(lon, lat) },
  });
  expect(res.statusCode, res.body).toBe(201);
  return { id: res.json().id as string, email: u.email };
}

beforeAll(async () => {
  t = await createTestApp();
  admin = await t.as('admin');
  A = await newTerritory(t, admin, 'Zone A', -67, -16);
  B = await newTerritory(t, admin, 'Zone B', -66, -16);
  merchantA = (await merchantIn(-67, -16)).id;
  merchantB = (await merchantIn(-66, -16)).id;
  sub = await newSubadmin(t, admin, { territory_ids: [A], commission_min_percent: '5', commission_max_percent: '12.5' });
}, 60_000);
afterAll(async () => t?.close());

describe('PATCH /subadmin/merchants/:id/commission (the commission guardrail)', () => {
  const patch = (s: Session, id: string, commission_percent: string) =>
    t.req(s, { method: 'PATCH', url: `/subadmin/merchants/${id}/commission`, payload: { commission_percent } });
  const commission = async (id: string) => (await db('SELECT commission_percent FROM merchant WHERE id = $1', [id]))[0].commission_percent;

  it.each([
    ['5', 200],
    ['12.5', 200],
    ['8.25', 200],
    ['4.99', 422],
    ['12.51', 422],
    ['0', 422],
    ['100', 422],
  ])('%s%% gives %i (bounds 5..12.5), audited when accepted', async (value, status) => {
    const before = await commission(merchantA);
    const audits = (
      await db("SELECT count(*)::int AS n FROM audit_log WHERE entity_id = $1 AND action = 'merchant.commission_updated'", [merchantA])
    )[0].n;
    const res = await patch(sub.session, merchantA, value);
    expect(res.statusCode, res.body).toBe(status);
    const after = (
      await db("SELECT count(*)::int AS n FROM audit_log WHERE entity_id = $1 AND action = 'merchant.commission_updated'", [merchantA])
    )[0].n;
    if (status === 200) {
      expect(Number(await commission(merchantA))).toBe(Number(value));
      expect(res.json().commission_percent).toBe(Number(value).toFixed(2));
      expect(after).toBe(audits + 1);
      const row = (
        await db(
          "SELECT actor_user_id, after FROM audit_log WHERE entity_id = $1 AND action = 'merchant.commission_updated' ORDER BY created_at DESC LIMIT 1",
          [merchantA],
        )
      )[0];
      expect(row.actor_user_id).toBe(sub.userId);
    } else {
      expect(res.json().code).toBe('COMMISSION_OUT_OF_BOUNDS');
      expect(await commission(merchantA)).toBe(before);
      expect(after).toBe(audits);
    }
  });

  it('a merchant outside his territories is 404; without bounds every value is refused; administrators may set any 0..100', async () => {
    expect((await patch(sub.session, merchantB, '6')).statusCode).toBe(404);
    const unbounded = await newSubadmin(t, admin, { territory_ids: [A] });
    const res = await patch(unbounded.session, merchantA, '6');
    expect(res.statusCode).toBe(422);
    expect(res.json().code).toBe('COMMISSION_OUT_OF_BOUNDS');
    expect((await patch(admin, merchantB, '33.3')).statusCode).toBe(200);
    expect(await commission(merchantB)).toBe('33.30');
    expect((await patch(admin, merchantB, '100.01')).statusCode).toBe(400);
    expect((await patch(admin, merchantB, '12.345')).statusCode).toBe(400);
  });
});

describe('zone banners', () => {
  async function upload(s: Session, purpose: string) {
    const slot = await t.req(s, {
      method: 'POST',
      url: '/storage/generic/uploads',
      payload: { purpose, mime_type: 'image/jpeg', size_bytes: JPEG.length, filename: 'b.jpg' },
    });
    expect(slot.statusCode, slot.body).toBe(201);
    const put = await t.req(s, {
      method: 'PUT',
      url: `/storage/uploads/${slot.json().upload_id}`,
      payload: JPEG,
      headers: { 'content-type': 'image/jpeg', 'x-upload-token': slot.json().upload_token },
    });
    expect(put.statusCode, put.body).toBe(201);
    return put.json().id as string;
  }

  it('a sub-administrator creates a banner in his territories with an image; duplicate links and anything else are refused', async () => {
    const image = await upload(sub.session, 'coupon_asset');
    const res = await t.req(sub.session, {
      method: 'POST',
      url: '/subadmin/banners',
      payload: {
        title: 'Promo A',
        body: '2x1',
        image_storage_object_id: image,
        link_url: 'https://example.com/a',
        territory_ids: [A],
        valid_until: new Date(Date.now() + 86_400_000).toISOString(),
      },
    });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toMatchObject({
      title: 'Promo A',
      state: 'live',
      territory_ids: [A],
      image_storage_object_id: image,
      created_by_user_id: sub.userId,
    });
    // Customers see banners in the marketplace, so they may download the image of an active banner.
    expect((await t.req(await t.as('customer'), { method: 'GET', url: `/storage/objects/${image}` })).statusCode).toBe(200);
    expect(await db('SELECT territory_id FROM banner_territory WHERE banner_id = $1', [res.json().id])).toEqual([{ territory_id: A }]);
    expect(
      (await db("SELECT count(*)::int AS n FROM audit_log WHERE entity_id = $1 AND action = 'banner.created'", [res.json().id]))[0].n,
    ).toBe(1);

    const count = async () => (await db('SELECT count(*)::int AS n FROM zone_banner'))[0].n;
    const before = await count();
    for (const [payload, status, code] of [
      [{ title: 'x', territory_ids: [B] }, 422, 'TERRITORY_NOT_FOUND'],
      [{ title: 'x', territory_ids: [A, B] }, 422, 'TERRITORY_NOT_FOUND'],
      [
        { title: 'x', territory_ids: [A], image_storage_object_id: await upload(sub.session, 'avatar') },
        422,
        'STORAGE_OBJECT_WRONG_PURPOSE',
      ],
      [{ title: 'x', territory_ids: [A], image_storage_object_id: await upload(admin, 'other') }, 422, 'STORAGE_OBJECT_NOT_OWNED'],
      [
        { title: 'x', territory_ids: [A], valid_from: '2030-01-02T00:00:00Z', valid_until: '2030-01-01T00:00:00Z' },
        422,
        'INVALID_VALIDITY',
      ],
      [{ title: 'x', territory_ids: [] }, 400, 'VALIDATION_FAILED'],
      [{ title: 'x', territory_ids: [A, A] }, 400, 'VALIDATION_FAILED'],
      [{ title: 'x', territory_ids: [A], link_url: 'javascript:alert(1)' }, 400, 'VALIDATION_FAILED'],
    ] as const) {
      const r = await t.req(sub.session, { method: 'POST', url: '/subadmin/banners', payload });
      expect(r.statusCode, JSON.stringify(payload)).toBe(status);
      expect(r.json().code).toBe(code);
    }
    expect(await count()).toBe(before);
  });

  it('lists by state; the marketplace shows live banners of its territories only; a banner in A and B shows the sub-administrator only A', async () => {
    const mk = async (payload: Record<string, unknown>) => {
      const r = await t.req(admin, { method: 'POST', url: '/subadmin/banners', payload: { title: 'b', ...payload } });
      expect(r.statusCode, r.body).toBe(201);
      return r.json().id as string;
    };
    const both = await mk({ title: 'both', territory_ids: [A, B] });
    const scheduled = await mk({ territory_ids: [A], valid_from: new Date(Date.now() + 86_400_000).toISOString() });
    const inactive = await mk({ territory_ids: [A], active: false });
    const onlyB = await mk({ territory_ids: [B] });
    const list = (await t.req(sub.session, { method: 'GET', url: '/subadmin/banners' })).json().data as {
      id: string;
      territory_ids: string[];
      state: string;
    }[];
    expect(list.find((b) => b.id === both)!.territory_ids).toEqual([A]);
    expect(list.map((b) => b.id)).not.toContain(onlyB);
    expect(list.find((b) => b.id === scheduled)!.state).toBe('scheduled');
    const live = (await t.req(sub.session, { method: 'GET', url: '/subadmin/banners?state=live' })).json().data as { id: string }[];
    expect(live.map((b) => b.id)).toContain(both);
    expect(live.map((b) => b.id)).not.toContain(scheduled);
    expect(live.map((b) => b.id)).not.toContain(inactive);

    const customer = await t.as('customer');
    const market = (await t.req(customer, { method: 'GET', url: `/customer/marketplace?territory_id=${B}` })).json();
    const ids = market.banners.map((b: { id: string }) => b.id);
    expect(ids).toEqual(expect.arrayContaining([both, onlyB]));
    for (const hidden of [scheduled, inactive]) expect(ids).not.toContain(hidden);
    expect(market.banners.find((b: { id: string }) => b.id === both).territory_ids).toEqual([A, B].sort());
  });
});

describe('tracking, deliveries status and the deliveries report', () => {
  it('tracking shows the drivers and active trips of his territories, with counts', async () => {
    const dA = await newDriver(t, { lon: -67, lat: -16 }, { territory_ids: [A] });
    const dB = await newDriver(t, { lon: -66, lat: -16 }, { territory_ids: [B] });
    const tA = await tripIn(t, admin, dA, 'accepted', { lon: -67, lat: -16 });
    const tB = await tripIn(t, admin, dB, 'accepted', { lon: -66, lat: -16 });
    const res = await t.req(sub.session, { method: 'GET', url: '/subadmin/tracking' });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.scope).toBe('territories');
    const ids = body.features.map((f: { id: string }) => f.id);
    expect(ids).toEqual(expect.arrayContaining([dA.id, tA]));
    expect(ids).not.toContain(dB.id);
    expect(ids).not.toContain(tB);
    const driverIdsInA = (
      await db(
        "SELECT count(*)::int AS n FROM driver d JOIN driver_territory dt ON dt.driver_id = d.id WHERE dt.territory_id = $1 AND d.status = 'approved' AND d.last_location IS NOT NULL",
        [A],
      )
    )[0].n;
    expect(body.counts.drivers).toBe(driverIdsInA);
    const whole = (await t.req(admin, { method: 'GET', url: '/subadmin/tracking' })).json();
    expect(whole.scope).toBe('organization');
    expect(whole.features.map((f: { id: string }) => f.id)).toEqual(expect.arrayContaining([dB.id, tB]));
  });

  it('deliveries status counts by state in his territories and filters the list by status', async () => {
    const res = (await t.req(sub.session, { method: 'GET', url: '/subadmin/deliveries/status' })).json();
    const rows = await db('SELECT status, count(*)::int AS n FROM trip WHERE territory_id = $1 GROUP BY status', [A]);
    expect(res.counts).toEqual(Object.fromEntries(rows.map((r: { status: string; n: number }) => [r.status, r.n])));
    const accepted = (await t.req(sub.session, { method: 'GET', url: '/subadmin/deliveries/status?status=accepted' })).json();
    expect(accepted.data.length).toBe(res.counts.accepted);
    for (const trip of accepted.data) expect(trip).toMatchObject({ status: 'accepted', territory_id: A });
    expect(
      (await t.req(sub.session, { method: 'GET', url: '/subadmin/deliveries/status?from=2030-01-02T00:00:00Z&to=2030-01-01T00:00:00Z' }))
        .statusCode,
    ).toBe(400);
  });

  it('the deliveries workbook has one row per trip of his territories in the period, typed cells and a totals row that matches the database', async () => {
    const dA = await newDriver(t, { lon: -67, lat: -16 }, { territory_ids: [A] });
    await tripIn(t, admin, dA, 'completed', { lon: -67, lat: -16 });
    const from = new Date(Date.now() - 3_600_000).toISOString();
    const to = new Date(Date.now() + 3_600_000).toISOString();
    const res = await t.req(sub.session, {
      method: 'GET',
      url: `/subadmin/reports/deliveries.xls?from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}`,
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toBe(XLSX_TYPE);
    expect(res.headers['content-disposition']).toBe(`attachment; filename="deliveries_${from.slice(0, 10)}_${to.slice(0, 10)}.xlsx"`);
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.load(res.rawPayload as unknown as ArrayBuffer);
    const ws = wb.getWorksheet('Deliveries')!;
    const header = ws.getRow(5).values as unknown[];
    expect(header).toContain('Delivery fee');
    const expected = await db(
      "SELECT id, created_at, delivery_fee, driver_earning FROM trip WHERE territory_id = $1 AND created_at >= $2 AND created_at < $3 AND status = 'completed' ORDER BY created_at, id",
      [A, from, to],
    );
    expect(expected.length).toBeGreaterThanOrEqual(1);
    // Only completed trips count; the others are listed apart, by name, not id.
    expect(ws.getRow(3).getCell(2).value).toBe('Zone A');
    const apart = (
      await db(
        "SELECT count(*)::int AS n FROM trip WHERE territory_id = $1 AND created_at >= $2 AND created_at < $3 AND status <> 'completed'",
        [A, from, to],
      )
    )[0].n;
    expect(wb.getWorksheet('Cancelled')!.rowCount - 6 + wb.getWorksheet('Open')!.rowCount - 6).toBe(apart);
    const dataRows = [];
    for (let i = 6; i < 6 + expected.length; i++) dataRows.push(ws.getRow(i));
    expect(dataRows.map((r) => r.getCell(1).value)).toEqual(expected.map((r: { id: string }) => r.id));
    const feeCol = header.indexOf('Delivery fee');
    const earnCol = header.indexOf('Driver earning');
    for (const [i, r] of dataRows.entries()) {
      expect(r.getCell(2).value).toBeInstanceOf(Date);
      expect((r.getCell(2).value as Date).getTime()).toBe(expected[i].created_at.getTime());
      expect(typeof r.getCell(feeCol).value).toBe('number');
      expect(r.getCell(feeCol).value).toBe(Number(expected[i].delivery_fee));
    }
    const totals = ws.getRow(6 + expected.length);
    expect(totals.getCell(1).value).toBe('TOTAL');
    expect(totals.getCell(3).value).toBe(expected.length);
    const sum = (
      await db(
        "SELECT sum(delivery_fee)::text AS fee, sum(driver_earning)::text AS earn FROM trip WHERE territory_id = $1 AND created_at >= $2 AND created_at < $3 AND status = 'completed'",
        [A, from, to],
      )
    )[0];
    const feeTotal = totals.getCell(feeCol).value as { formula: string; result: number };
    expect(feeTotal.formula).toMatch(/^SUM\(/);
    expect(feeTotal.result).toBe(Number(sum.fee));
    expect((totals.getCell(earnCol).value as { result: number }).result).toBe(Number(sum.earn));

    // An empty period: the header and a zero totals row.
    const empty = await t.req(sub.session, {
      method: 'GET',
      url: '/subadmin/reports/deliveries.xls?from=2001-01-01T00:00:00Z&to=2001-02-01T00:00:00Z',
    });
    const wb2 = new ExcelJS.Workbook();
    await wb2.xlsx.load(empty.rawPayload as unknown as ArrayBuffer);
    expect(wb2.getWorksheet('Deliveries')!.getRow(6).getCell(1).value).toBe('TOTAL');
  });
});

describe('notifications to a territory', () => {
  it('POST /admin/notifications with territory_id reaches its sub-administrators and linked drivers only', async () => {
    const dA = await newDriver(t, { lon: -67, lat: -16 }, { territory_ids: [A] });
    const dB = await newDriver(t, { lon: -66, lat: -16 }, { territory_ids: [B] });
    const subB = await newSubadmin(t, admin, { territory_ids: [B] });
    const res = await t.req(admin, {
      method: 'POST',
      url: '/admin/notifications',
      payload: { title: 'Zone A', body: 'rain', territory_id: A },
    });
    expect(res.statusCode, res.body).toBeLessThan(300);
    const users = (await db("SELECT user_id FROM notification WHERE title = 'Zone A'")).map((r: { user_id: string }) => r.user_id);
    expect(users).toEqual(expect.arrayContaining([sub.userId, dA.userId]));
    expect(users).not.toContain(dB.userId);
    expect(users).not.toContain(subB.userId);
  });
});
