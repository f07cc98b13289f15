import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type Session, type TestApp } from '../helpers.js';
import { newDriver, type TestDriver } from './fixtures.js';

let t: TestApp;
let admin: Session;

beforeAll(async () => {
  t = await createTestApp();
  admin = await t.as('admin');
});
afterAll(async () => t?.close());

const points = (driverId: string) =>
  t.db.withSystem(
    async (tx) =>
      (
        await tx.query<{
          client_point_id: string;
          recorded_at: Date;
          speed_mps: number | null;
          heading: number | null;
          accuracy_m: number | null;
        }>(
          'SELECT client_point_id, recorded_at, speed_mps, heading, accuracy_m FROM driver_location WHERE driver_id = $1 ORDER BY recorded_at',
          [driverId],
        )
      ).rows,
  );

async function bind(d: TestDriver, identifier: string) {
  const r = await t.req(admin, { method: 'POST', url: `/drivers/${d.id}/gps-devices`, payload: { device_identifier: identifier } });
  expect(r.statusCode, r.body).toBe(201);
  return r.json() as { id: string; token: string; url_path: string; device_identifier: string };
}

const osmand = (path: string, query: Record<string, string | number>, method: 'GET' | 'POST' = 'GET', form = false) => {
  const qs = new URLSearchParams(Object.entries(query).map(([k, v]) => [k, String(v)])).toString();
  return form
    ? t.app.inject({ method: 'POST', url: path, payload: qs, headers: { 'content-type': 'application/x-www-form-urlencoded' } })
    : t.app.inject({ method, url: `${path}?${qs}` });
};

/** The device time of the driver's last position (only a newer fix moves it). */
const lastAt = (id: string) =>
  t.db.withSystem(
    async (tx) =>
      (await tx.query<{ at: Date | null }>('SELECT last_location_at AS at FROM driver WHERE id = $1', [id])).rows[0].at?.getTime() ?? null,
  );

describe('OsmAnd GPS (Traccar Client)', () => {
  it("a bound device feeds the driver's location ingest: GET, POST query and POST form, once per fix, late fixes to history only", async () => {
    const d = await newDriver(t, { lon: -68.13, lat: -16.5 });
    const dev = await bind(d, `phone-${d.id.slice(-6)}`);
    expect(dev.url_path).toBe(`/api/v1/gps/osmand/${dev.token}`);
    const before = (await points(d.id)).length;
    const now = Math.floor(Date.now() / 1000);
    const fix = { id: dev.device_identifier, lat: -16.51, lon: -68.12, timestamp: now, speed: 10, bearing: 90, accuracy: 5, batt: 80 };
    const r = await osmand(dev.url_path, fix);
    expect(r.statusCode, r.body).toBe(200);
    expect(r.json()).toEqual({ accepted: 1, duplicates: 0 });
    // a retry of the same fix (Traccar Client resends until it gets a 200) is a duplicate
    expect((await osmand(dev.url_path, fix, 'POST')).json()).toEqual({ accepted: 0, duplicates: 1 });
    const stored = await points(d.id);
    expect(stored.length).toBe(before + 1);
    const p = stored.find((x) => x.client_point_id.startsWith('osmand:'))!;
    expect(p.recorded_at.getTime()).toBe(now * 1000);
    expect(p.speed_mps).toBeCloseTo(5.144, 2);
    expect(p.heading).toBe(90);
    expect(p.accuracy_m).toBe(5);
    expect(await lastAt(d.id)).toBe(now * 1000);
    // a newer fix by form POST with an ISO time moves the position
    const later = new Date((now + 30) * 1000).toISOString();
    expect(
      (await osmand(dev.url_path, { id: dev.device_identifier, lat: -16.52, lon: -68.11, timestamp: later }, 'POST', true)).statusCode,
    ).toBe(200);
    expect(await lastAt(d.id)).toBe((now + 30) * 1000);
    // a late fix (older than the position he has) is stored for history, the position stays
    expect((await osmand(dev.url_path, { id: dev.device_identifier, lat: -16.6, lon: -68.2, timestamp: now - 120 })).json().accepted).toBe(
      1,
    );
    expect(await lastAt(d.id)).toBe((now + 30) * 1000);
    expect((await points(d.id)).length).toBe(before + 3);
    // staff see the device (no token), with its last contact
    const list = (await t.req(admin, { method: 'GET', url: `/drivers/${d.id}/gps-devices` })).json().data;
    expect(list).toHaveLength(1);
    expect(list[0].last_seen_at).not.toBeNull();
    expect(JSON.stringify(list)).not.toContain(dev.token.slice(-20));
  });

  it('an unknown device, a wrong or revoked token, or a bad field is refused with a problem and writes nothing', async () => {
    const d = await newDriver(t, { lon: -68.13, lat: -16.5 });
    const dev = await bind(d, `tracker-${d.id.slice(-6)}`);
    const before = (await points(d.id)).length;
    const now = Math.floor(Date.now() / 1000);
    const ok = { id: dev.device_identifier, lat: -16.51, lon: -68.12, timestamp: now };
    const cases: [string, Record<string, string | number>, number, string | null][] = [
      [dev.url_path, { ...ok, id: 'someone-else' }, 404, 'GPS_DEVICE_UNKNOWN'],
      [`/api/v1/gps/osmand/${dev.token.slice(0, -3)}AAA`, ok, 401, 'INVALID_GPS_TOKEN'],
      ['/api/v1/gps/osmand/not-a-token', ok, 401, 'INVALID_GPS_TOKEN'],
      [dev.url_path, { ...ok, lat: 91 }, 400, null],
      [dev.url_path, { ...ok, lon: 'east' }, 400, null],
      [dev.url_path, { id: dev.device_identifier, lon: -68.12 }, 400, null],
      [dev.url_path, { ...ok, timestamp: now + 3600 }, 400, null],
      [dev.url_path, { ...ok, timestamp: 'yesterday' }, 400, null],
      [dev.url_path, { ...ok, speed: -1 }, 400, null],
      [dev.url_path, { ...ok, batt: 140 }, 400, null],
      [dev.url_path, { lat: -16.51, lon: -68.12 }, 400, null],
    ];
    for (const [path, q, status, code] of cases) {
      const r = await osmand(path, q);
      expect(r.statusCode, `${path} ${JSON.stringify(q)} ${r.body}`).toBe(status);
      expect(r.headers['content-type']).toContain('application/problem+json');
      if (code) expect(r.json().code).toBe(code);
    }
    // revoked: the token is refused from then on
    expect((await t.req(admin, { method: 'DELETE', url: `/drivers/${d.id}/gps-devices/${dev.id}` })).statusCode).toBe(204);
    const revoked = await osmand(dev.url_path, ok);
    expect(revoked.statusCode).toBe(401);
    expect(revoked.json().code).toBe('INVALID_GPS_TOKEN');
    expect((await points(d.id)).length).toBe(before);
    const audit = await t.db.withSystem(
      async (tx) => (await tx.query<{ action: string }>('SELECT action FROM audit_log WHERE entity_id = $1 ORDER BY id', [dev.id])).rows,
    );
    expect(audit.map((a) => a.action)).toEqual(['gps_device.bound', 'gps_device.revoked']);
  });

  it("binding is for staff of the driver's organization; an identifier is bound once; bad input writes nothing", async () => {
    const d = await newDriver(t, { lon: -68.13, lat: -16.5 });
    const other = await t.newOrganization('GPS Org B');
    const otherAdmin = await t.login(other.logins.admin);
    const count = () =>
      t.db.withSystem(async (tx) => (await tx.query<{ n: number }>('SELECT count(*)::int AS n FROM gps_device')).rows[0].n);
    const n = await count();
    expect(
      (await t.req(otherAdmin, { method: 'POST', url: `/drivers/${d.id}/gps-devices`, payload: { device_identifier: 'x1' } })).statusCode,
    ).toBe(404);
    expect(
      (await t.req(d.session, { method: 'POST', url: `/drivers/${d.id}/gps-devices`, payload: { device_identifier: 'x1' } })).statusCode,
    ).toBe(403);
    expect((await t.req(await t.as('merchant'), { method: 'GET', url: `/drivers/${d.id}/gps-devices` })).statusCode).toBe(403);
    for (const payload of [{}, { device_identifier: '' }, { device_identifier: 'has space' }, { device_identifier: 'x', token: 'mine' }]) {
      const r = await t.req(admin, { method: 'POST', url: `/drivers/${d.id}/gps-devices`, payload });
      expect(r.statusCode, JSON.stringify(payload)).toBe(400);
      expect(r.headers['content-type']).toContain('application/problem+json');
    }
    expect(await count()).toBe(n);
    const dev = await bind(d, `dup-${d.id.slice(-6)}`);
    const again = await t.req(admin, {
      method: 'POST',
      url: `/drivers/${d.id}/gps-devices`,
      payload: { device_identifier: dev.device_identifier },
    });
    expect(again.statusCode).toBe(409);
    expect(await count()).toBe(n + 1);
    // another organization's device cannot be revoked from here, nor ours from there
    expect((await t.req(otherAdmin, { method: 'DELETE', url: `/drivers/${d.id}/gps-devices/${dev.id}` })).statusCode).toBe(404);
  });
});
