import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, pt, type Session, type TestApp } from '../helpers.js';
import { newDriver, newTrip } from '../logistics/fixtures.js';
import { newSubadmin, newTerritory } from '../subadmin/fixtures.js';

let t: TestApp;
let admin: Session;

const OPTIMIZE = '/admin/dispatch-batches/optimize';
const home = { lon: -68.15, lat: -16.51 };

/** The organization's zone: the one whose clock is nearest noon now, so hours a few minutes or hours away stay on today. */
let zone = 'UTC';
const local = (at: Date) => {
  const p = Object.fromEntries(
    new Intl.DateTimeFormat('en-US', { timeZone: zone, hourCycle: 'h23', weekday: 'short', hour: '2-digit', minute: '2-digit' })
      .formatToParts(at)
      .map((x) => [x.type, x.value]),
  );
  return { day: ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'].indexOf(p.weekday!), minutes: Number(p.hour) * 60 + Number(p.minute) };
};
const hhmm = (m: number) => `${String(Math.floor(m / 60)).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}`;

beforeAll(async () => {
  t = await createTestApp();
  admin = await t.as('admin');
  const now = new Date();
  const offNoon = (z: string) => {
    zone = z;
    return Math.abs(local(now).minutes - 720);
  };
  zone = Intl.supportedValuesOf('timeZone').reduce((best, z) => (offNoon(z) < offNoon(best) ? z : best), 'UTC');
  const res = await t.req(admin, { method: 'PATCH', url: '/settings', payload: { timezone: zone } });
  expect(res.statusCode, res.body).toBe(200);
});
afterAll(() => t?.close());

interface Route {
  driver_id: string;
  stops: { trip_id: string; kind: string; arrival_offset_s: number; departure_offset_s: number }[];
  start_hub: { hub_id: string; departure_offset_s: number; etd: string } | null;
  end_hub: { hub_id: string; arrival_offset_s: number; eta: string; position: unknown } | null;
  distance_m: number;
  duration_s: number;
}
interface Plan {
  routes: Route[];
  unassigned: { trip_id: string; reason: string }[];
  planned_at: string;
}

const optimize = (payload: Record<string, unknown>, as = admin) => t.req(as, { method: 'POST', url: OPTIMIZE, payload });

/** A hub open today from `open` to `close` minutes of the local day. */
async function hubToday(at: { lon: number; lat: number }, open: number, close: number, over: Record<string, unknown> = {}) {
  const res = await t.req(admin, {
    method: 'POST',
    url: '/hubs',
    payload: {
      name: 'Depósito',
      address: 'Calle 3',
      location: pt(at.lon, at.lat),
      opening_hours: [{ day: local(new Date()).day, open: hhmm(open), close: hhmm(close) }],
      ...over,
    },
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as { id: string };
}

const plans = async () =>
  (await t.db.withSystem((tx) => tx.query<{ n: number }>('SELECT count(*)::int AS n FROM dispatch_plan'))).rows[0].n;

describe('plans from and to hubs', () => {
  it("ends every route back at the hub within today's hours; a trip that cannot be brought back by closing is unassigned TIME_WINDOW", async () => {
    const nowMin = local(new Date()).minutes;
    const closesBy = Date.now() + 60 * 60_000;
    const hub = await hubToday({ lon: home.lon + 0.005, lat: home.lat }, Math.max(0, nowMin - 60), nowMin + 60);
    const d = await newDriver(t, home, { capacity: 3 });
    const near = await newTrip(t, admin, {}, home);
    // 15 km away: at the default 25 km/h its drop-off is served within the hour, the way back is not
    const far = await newTrip(t, admin, { dropoff_location: pt(home.lon + 0.14, home.lat) }, home);
    const base = { trip_ids: [near.id, far.id], driver_ids: [d.id], max_route_duration_s: 86_400, seed: 3, iterations: 300 };

    const res = await optimize({ ...base, end: { hub_id: hub.id } });
    expect(res.statusCode, res.body).toBe(201);
    const plan = res.json() as Plan;
    expect(plan.unassigned).toEqual([{ trip_id: far.id, reason: 'TIME_WINDOW' }]);
    const [route] = plan.routes;
    expect(route.stops.map((s) => `${s.trip_id}:${s.kind}`)).toEqual([`${near.id}:pickup`, `${near.id}:dropoff`]);
    expect(route.end_hub).toMatchObject({ hub_id: hub.id, position: pt(home.lon + 0.005, home.lat) });
    // the hub comes after the last stop, and the driver is back before it closes
    expect(route.end_hub!.arrival_offset_s).toBeGreaterThan(route.stops[1].departure_offset_s);
    expect(route.duration_s).toBe(route.end_hub!.arrival_offset_s);
    expect(new Date(route.end_hub!.eta).getTime()).toBeLessThanOrEqual(closesBy);
    expect(route.start_hub).toBeNull();

    // the same seed and iterations give the same plan
    const again = (await optimize({ ...base, end: { hub_id: hub.id } })).json() as Plan;
    const shape = (p: Plan) =>
      p.routes.map((r) => [r.stops.map((x) => [x.trip_id, x.kind, x.arrival_offset_s]), r.end_hub!.arrival_offset_s]);
    expect(shape(again)).toEqual(shape(plan));

    // open routes (the default): the far trip fits, and no route returns
    const open = (await optimize(base)).json() as Plan;
    expect(open.unassigned).toEqual([]);
    expect(open.routes[0].end_hub).toBeNull();
  });

  it("starts routes at the hub, not before it opens, or at the driver's position", async () => {
    const nowMin = local(new Date()).minutes;
    const hubAt = { lon: -68.16, lat: -16.53 };
    const hub = await hubToday(hubAt, nowMin + 30, Math.min(nowMin + 300, 23 * 60 + 59));
    const d = await newDriver(t, { lon: -68.1, lat: -16.48 }, { capacity: 2 });
    const trip = await newTrip(t, admin, {}, { lon: hubAt.lon + 0.002, lat: hubAt.lat });
    const base = { trip_ids: [trip.id], driver_ids: [d.id], seed: 1, iterations: 200, max_route_duration_s: 86_400 };

    const fromDriver = (await optimize({ ...base, start: 'driver' })).json() as Plan;
    expect(fromDriver.routes[0].start_hub).toBeNull();
    const fromHub = (await optimize({ ...base, start: { hub_id: hub.id }, end: { hub_id: hub.id } })).json() as Plan;
    const route = fromHub.routes[0];
    expect(route.start_hub).toMatchObject({ hub_id: hub.id });
    // it opens in 30 minutes (to the minute): the route leaves then
    expect(route.start_hub!.departure_offset_s).toBeGreaterThan(28 * 60);
    expect(route.start_hub!.departure_offset_s).toBeLessThanOrEqual(30 * 60);
    const pickup = route.stops[0];
    expect(pickup.arrival_offset_s).toBeGreaterThanOrEqual(route.start_hub!.departure_offset_s);
    // the pickup is 200 m from the hub, about 8 km from the driver
    expect(pickup.arrival_offset_s - route.start_hub!.departure_offset_s).toBeLessThan(120);
    expect(fromDriver.routes[0].stops[0].arrival_offset_s).toBeGreaterThan(600);
    expect(route.end_hub).toMatchObject({ hub_id: hub.id });
  });

  it('refuses an unknown, foreign, inactive or closed-today hub with a problem and stores no plan', async () => {
    const d = await newDriver(t, home, { capacity: 1 });
    const trip = await newTrip(t, admin, {}, home);
    const base = { trip_ids: [trip.id], driver_ids: [d.id] };
    const inactive = await hubToday(home, 0, 23 * 60, { active: false });
    const today = local(new Date()).day;
    const closed = await hubToday(home, 0, 23 * 60, { opening_hours: [{ day: (today + 1) % 7, open: '08:00', close: '18:00' }] });
    const other = await t.newOrganization('Hub plans other');
    const otherAdmin = await t.login(other.logins.admin, undefined, other.organizationId);
    const ring = [
      [-68.2, -16.6],
      [-68.0, -16.6],
      [-68.0, -16.4],
      [-68.2, -16.4],
      [-68.2, -16.6],
    ];
    expect(
      (
        await t.req(otherAdmin, {
          method: 'POST',
          url: '/territories',
          payload: { name: 'T', geometry: { type: 'Polygon', coordinates: [ring] } },
        })
      ).statusCode,
    ).toBe(201);
    const foreign = (
      await t.req(otherAdmin, { method: 'POST', url: '/hubs', payload: { name: 'F', address: 'f', location: pt(home.lon, home.lat) } })
    ).json();
    expect(foreign.id).toBeTruthy();

    const before = await plans();
    for (const [payload, status, code] of [
      [{ end: { hub_id: 'no-such-hub' } }, 404, 'NOT_FOUND'],
      [{ start: { hub_id: foreign.id } }, 404, 'NOT_FOUND'],
      [{ end: { hub_id: inactive.id } }, 422, 'HUB_INACTIVE'],
      [{ start: { hub_id: closed.id } }, 422, 'HUB_CLOSED'],
      [{ start: 'hub' }, 400, 'VALIDATION_FAILED'],
      [{ end: { hub_id: inactive.id, extra: 1 } }, 400, 'VALIDATION_FAILED'],
    ] as const) {
      const res = await optimize({ ...base, ...payload });
      expect(res.statusCode, `${JSON.stringify(payload)}: ${res.body}`).toBe(status);
      expect(res.headers['content-type']).toContain('application/problem+json');
      expect(res.json().code).toBe(code);
    }
    expect(await plans()).toBe(before);
  });

  it("a sub-administrator's routes start and end only at hubs of his territories", async () => {
    const inDemo = await hubToday(home, 0, 23 * 60 + 59);
    const far = await newTerritory(t, admin, 'Hub plans far', -65, -14);
    const inFar = await hubToday({ lon: -65, lat: -14 }, 0, 23 * 60 + 59);
    const sub = await newSubadmin(t, admin, { territory_ids: [far], permissions: { trips_reassign: true } });
    const url = '/subadmin/dispatch-batches/optimize';
    const before = await plans();
    const refused = await t.req(sub.session, { method: 'POST', url, payload: { territory_id: far, end: { hub_id: inDemo.id } } });
    expect(refused.statusCode, refused.body).toBe(404);
    expect(await plans()).toBe(before);
    const own = await t.req(sub.session, {
      method: 'POST',
      url,
      payload: { territory_id: far, start: { hub_id: inFar.id }, end: { hub_id: inFar.id } },
    });
    expect(own.statusCode, own.body).toBe(201);
  });
});
