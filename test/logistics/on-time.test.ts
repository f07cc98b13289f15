import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type Session, type TestApp } from '../helpers.js';
import { newDriver, tripIn } from './fixtures.js';
import { newSubadmin, newTerritory } from '../subadmin/fixtures.js';

/** The on-time report: on-time %, mean and p90 lateness per territory, merchant, driver and hour; JSON and spreadsheet; confined. */
let t: TestApp;
let admin: Session;

beforeAll(async () => {
  t = await createTestApp();
  admin = await t.as('admin');
}, 60_000);
afterAll(() => t?.close());

describe('GET /dashboard/on-time', () => {
  it('counts on-time and late deliveries per driver, and serves the spreadsheet; a sub-administrator elsewhere sees none', async () => {
    const d = await newDriver(t, { lon: -68.13, lat: -16.5 });
    const early = await tripIn(t, admin, d, 'completed');
    const late = await tripIn(t, admin, d, 'completed');
    await t.db.withSystem(async (tx) => {
      await tx.query("UPDATE trip SET promised_at = completed_at + interval '5 minutes' WHERE id = $1", [early]);
      await tx.query("UPDATE trip SET promised_at = completed_at - interval '20 minutes' WHERE id = $1", [late]);
    });
    const res = await t.req(admin, { method: 'GET', url: '/dashboard/on-time' });
    expect(res.statusCode, res.body).toBe(200);
    const line = res.json().driver.find((l: { key: string }) => l.key === d.id);
    expect(line).toMatchObject({ deliveries: 2, on_time: 1, on_time_pct: 50, mean_late_min: 10 });
    expect(line.p90_late_min).toBeGreaterThan(10);
    expect(res.json().territory.length).toBeGreaterThanOrEqual(1);
    expect(res.json().hour.length).toBeGreaterThanOrEqual(1);
    const xlsx = await t.req(admin, { method: 'GET', url: '/dashboard/on-time.xlsx' });
    expect(xlsx.statusCode).toBe(200);
    expect(xlsx.headers['content-type']).toContain('spreadsheetml');
    expect(xlsx.rawPayload.subarray(0, 2).toString()).toBe('PK');
    const far = await newTerritory(t, admin, 'Elsewhere', -60, -20);
    const sub = await newSubadmin(t, admin, { territory_ids: [far] });
    const mine = await t.req(sub.session, { method: 'GET', url: '/dashboard/on-time' });
    expect(mine.statusCode, mine.body).toBe(200);
    expect(mine.json().driver).toEqual([]);
    expect((await t.req(await t.as('customer'), { method: 'GET', url: '/dashboard/on-time' })).statusCode).toBe(403);
  });
});
