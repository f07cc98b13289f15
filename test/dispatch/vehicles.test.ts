import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type Session, type TestApp } from '../helpers.js';
import { driverDb, newDriver, newTrip, pt } from '../logistics/fixtures.js';

let t: TestApp;
let admin: Session;

const OPTIMIZE = '/admin/dispatch-batches/optimize';

beforeAll(async () => {
  t = await createTestApp();
  admin = await t.as('admin');
});
afterAll(() => t?.close());

interface Plan {
  routes: { driver_id: string; stops: { trip_id: string; kind: string; arrival_offset_s: number; load_after: number }[] }[];
  unassigned: { trip_id: string; reason: string }[];
}

const optimize = async (payload: Record<string, unknown>): Promise<Plan> => {
  const res = await t.req(admin, { method: 'POST', url: OPTIMIZE, payload });
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as Plan;
};
const inS = (s: number) => new Date(Date.now() + s * 1000).toISOString();
const home = { lon: -68.15, lat: -16.51 };

async function vehicle(type: string, over: Record<string, unknown> = {}, capacity = 3) {
  const d = await newDriver(t, home, { capacity });
  const res = await t.req(admin, { method: 'PATCH', url: `/drivers/${d.id}`, payload: { vehicle_type: type, ...over } });
  expect(res.statusCode, res.body).toBe(200);
  return { ...d, out: res.json() as Record<string, unknown> };
}

describe('vehicle speed in plans', () => {
  it("a car makes a delivery window a bicycle cannot (each driver's travel times scaled by his vehicle's speed factor)", async () => {
    const car = await vehicle('car');
    const bike = await vehicle('bicycle');
    expect(car.out.speed_factor).toBe(1);
    expect(bike.out.speed_factor).toBe(0.6);
    // how long the drop-off takes at the organization's speed (a car): the window is that and a third more
    const far = pt(home.lon + 0.05, home.lat);
    const probe = await newTrip(t, admin, { dropoff_location: far }, home);
    const free = await optimize({ trip_ids: [probe.id], driver_ids: [car.id] });
    const carS = free.routes[0]!.stops.find((s) => s.kind === 'dropoff')!.arrival_offset_s;
    expect(carS).toBeGreaterThan(600);
    const due = await newTrip(t, admin, { dropoff_location: far, deliver_before: inS(carS * 1.35) }, home);

    const byBike = await optimize({ trip_ids: [due.id], driver_ids: [bike.id] });
    expect(byBike.unassigned).toEqual([{ trip_id: due.id, reason: 'TIME_WINDOW' }]);
    const both = await optimize({ trip_ids: [due.id], driver_ids: [bike.id, car.id] });
    expect(both.unassigned).toEqual([]);
    expect(both.routes.map((r) => r.driver_id)).toEqual([car.id]);

    // without a window the bicycle takes the trip, 1 / 0.6 as long on the road
    const slow = await optimize({ trip_ids: [probe.id], driver_ids: [bike.id] });
    const bikeS = slow.routes[0]!.stops.find((s) => s.kind === 'dropoff')!.arrival_offset_s;
    expect(bikeS).toBeGreaterThan(carS * 1.5);
  });

  it('a driver override of the speed factor counts instead of his vehicle type', async () => {
    const fastBike = await vehicle('bicycle', { speed_factor: 1 });
    expect(fastBike.out.speed_factor).toBe(1);
    const far = pt(home.lon + 0.05, home.lat);
    const car = await vehicle('car');
    const probe = await newTrip(t, admin, { dropoff_location: far }, home);
    const carS = (await optimize({ trip_ids: [probe.id], driver_ids: [car.id] })).routes[0]!.stops[1]!.arrival_offset_s;
    const due = await newTrip(t, admin, { dropoff_location: far, deliver_before: inS(carS * 1.35) }, home);
    expect((await optimize({ trip_ids: [due.id], driver_ids: [fastBike.id] })).unassigned).toEqual([]);
  });
});

describe('vehicle units in plans', () => {
  it("bounds the units on board by the vehicle type's units (bicycle 2): a 3-unit parcel is CAPACITY for a bicycle, fits a motorcycle or an override", async () => {
    const bike = await vehicle('bicycle');
    expect(bike.out).toMatchObject({ capacity: 3, capacity_units: 2, overrides: { capacity_units: null } });
    const moto = await vehicle('motorcycle');
    expect(moto.out.capacity_units).toBe(3);
    const parcel = await newTrip(t, admin, { units: 3 }, home);
    expect((await optimize({ trip_ids: [parcel.id], driver_ids: [bike.id] })).unassigned).toEqual([
      { trip_id: parcel.id, reason: 'CAPACITY' },
    ]);
    const byMoto = await optimize({ trip_ids: [parcel.id], driver_ids: [moto.id] });
    expect(byMoto.unassigned).toEqual([]);
    expect(byMoto.routes[0]!.stops[0]!.load_after).toBe(3);

    // two 1-unit parcels ride together on the bicycle; a third waits for a drop-off (the basket holds 2)
    const small = [await newTrip(t, admin, {}, home), await newTrip(t, admin, {}, home), await newTrip(t, admin, {}, home)];
    const three = await optimize({ trip_ids: small.map((s) => s.id), driver_ids: [bike.id], objective: 'distance' });
    expect(three.unassigned).toEqual([]);
    expect(Math.max(...three.routes[0]!.stops.map((s) => s.load_after))).toBe(2);

    const big = await t.req(admin, { method: 'PATCH', url: `/drivers/${bike.id}`, payload: { capacity_units: 3 } });
    expect(big.statusCode, big.body).toBe(200);
    expect(big.json()).toMatchObject({ capacity_units: 3, overrides: { capacity_units: 3 } });
    expect((await optimize({ trip_ids: [parcel.id], driver_ids: [bike.id] })).unassigned).toEqual([]);
  });

  it('refuses a units override out of range with 422 CAPACITY_INVALID naming the field, and changes nothing', async () => {
    const bike = await vehicle('bicycle');
    for (const bad of [0, 1001]) {
      const res = await t.req(admin, { method: 'PATCH', url: `/drivers/${bike.id}`, payload: { capacity_units: bad, capacity: 2 } });
      expect(res.statusCode, res.body).toBe(422);
      expect(res.json()).toMatchObject({ code: 'CAPACITY_INVALID', errors: [{ field: 'capacity_units' }] });
    }
    const row = await driverDb(t, bike.id);
    expect(row).toMatchObject({ capacity: 3, capacity_units: null });
  });
});
