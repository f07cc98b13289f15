import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type Session, type TestApp } from '../helpers.js';
import { newDriver, type TestDriver } from './fixtures.js';

let t: TestApp;
let admin: Session;

beforeAll(async () => {
  // A small per-device allowance so the limit is reached quickly; the other cases stay below it.
  t = await createTestApp({ raw: { GPS_DEVICE_RATE_LIMIT_PER_MINUTE: '10' } });
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

  it('newer Traccar Client JSON bodies go into the same ingest: speed in m/s, a resend (in either format) is a duplicate, bad JSON writes nothing', async () => {
    const d = await newDriver(t, { lon: -68.13, lat: -16.5 });
    const dev = await bind(d, `json-${d.id.slice(-6)}`);
    const before = (await points(d.id)).length;
    const at = new Date(Math.floor(Date.now() / 1000) * 1000 - 5000);
    const json = (payload: unknown) => t.app.inject({ method: 'POST', url: dev.url_path, payload: payload as object });
    const body = {
      location: {
        timestamp: at.toISOString(),
        coords: { latitude: -16.505, longitude: -68.125, speed: 5, heading: 180, accuracy: 8, altitude: 3600 },
        is_moving: true,
        odometer: 1200,
        battery: { level: 0.8, is_charging: false },
        activity: { type: 'in_vehicle' },
      },
      device_id: dev.device_identifier,
    };
    const r = await json(body);
    expect(r.statusCode, r.body).toBe(200);
    expect(r.json()).toEqual({ accepted: 1, duplicates: 0 });
    expect((await json(body)).json()).toEqual({ accepted: 0, duplicates: 1 });
    // the same fix by the query-string protocol is the same point
    const q = await osmand(dev.url_path, { id: dev.device_identifier, lat: -16.505, lon: -68.125, timestamp: at.getTime() / 1000 });
    expect(q.json()).toEqual({ accepted: 0, duplicates: 1 });
    const stored = (await points(d.id)).filter((x) => x.client_point_id.startsWith('osmand:'));
    expect(stored).toHaveLength(1);
    expect(stored[0].recorded_at.getTime()).toBe(at.getTime());
    expect(stored[0].speed_mps).toBeCloseTo(5, 3);
    expect(stored[0].heading).toBe(180);
    expect(stored[0].accuracy_m).toBe(8);
    expect(await lastAt(d.id)).toBe(at.getTime());
    // a phone that does not know its speed, heading or battery says -1: the fix is kept without them
    const unknown = await json({
      ...body,
      location: {
        ...body.location,
        timestamp: new Date(at.getTime() + 1000).toISOString(),
        coords: { latitude: -16.5, longitude: -68.1, speed: -1, heading: -1 },
        battery: { level: -1 },
      },
    });
    expect(unknown.json()).toEqual({ accepted: 1, duplicates: 0 });
    const n = (await points(d.id)).length;
    expect(n).toBe(before + 2);
    const loc = (patch: object) => ({
      ...body,
      location: { ...body.location, timestamp: new Date(at.getTime() + 2000).toISOString(), ...patch },
    });
    const cases: [unknown, number, string | null][] = [
      [{ ...body, device_id: 'someone-else', location: loc({}).location }, 404, 'GPS_DEVICE_UNKNOWN'],
      [loc({ coords: { latitude: 91, longitude: -68.1 } }), 400, null],
      [loc({ coords: { latitude: 'north', longitude: -68.1 } }), 400, null],
      [loc({ coords: { longitude: -68.1 } }), 400, null],
      [loc({ timestamp: 'yesterday' }), 400, null],
      [loc({ timestamp: new Date(Date.now() + 3_600_000).toISOString() }), 400, null],
      [loc({ battery: { level: 7 } }), 400, null],
      [{ location: loc({}).location }, 400, null],
    ];
    for (const [payload, status, code] of cases) {
      const res = await json(payload);
      expect(res.statusCode, `${JSON.stringify(payload)} ${res.body}`).toBe(status);
      expect(res.headers['content-type']).toContain('application/problem+json');
      if (code) expect(res.json().code).toBe(code);
    }
    expect((await points(d.id)).length).toBe(n);
  });

  it('each device token has its own rate limit: beyond it 429 RATE_LIMITED with Retry-After, nothing stored; another device is unaffected', async () => {
    const d = await newDriver(t, { lon: -68.13, lat: -16.5 });
    const dev = await bind(d, `busy-${d.id.slice(-6)}`);
    const calm = await bind(d, `calm-${d.id.slice(-6)}`);
    const before = (await points(d.id)).length;
    const base = Math.floor(Date.now() / 1000) - 600;
    for (let i = 0; i < 10; i++) {
      const r = await osmand(dev.url_path, { id: dev.device_identifier, lat: -16.5, lon: -68.1, timestamp: base + i });
      expect(r.statusCode, r.body).toBe(200);
    }
    const limited = await osmand(dev.url_path, { id: dev.device_identifier, lat: -16.5, lon: -68.1, timestamp: base + 10 }, 'POST');
    expect(limited.statusCode).toBe(429);
    expect(limited.headers['content-type']).toContain('application/problem+json');
    expect(limited.json().code).toBe('RATE_LIMITED');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(limited.json().retry_after).toBe(Number(limited.headers['retry-after']));
    expect((await points(d.id)).length).toBe(before + 10);
    const other = await osmand(calm.url_path, { id: calm.device_identifier, lat: -16.5, lon: -68.1, timestamp: base + 10 });
    expect(other.statusCode, other.body).toBe(200);
    expect((await points(d.id)).length).toBe(before + 11);
  });
});
