import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type Session, type TestApp } from '../helpers.js';
import { newTrip, newUser, pt } from './fixtures.js';

let t: TestApp;
let admin: Session;

beforeAll(async () => {
  t = await createTestApp();
  admin = await t.as('admin');
});
afterAll(() => t?.close());

const inH = (h: number) => new Date(Date.now() + h * 3600_000).toISOString();
const body = (over: Record<string, unknown>) => ({
  pickup_location: pt(-68.13, -16.5),
  pickup_address: 'Pickup street 1',
  dropoff_location: pt(-68.12, -16.49),
  dropoff_address: 'Dropoff street 2',
  ...over,
});

describe('trip windows and loads', () => {
  it('stores the pickup window, load and service time and returns them on every trip (defaults: 1 unit, nulls)', async () => {
    const plain = await newTrip(t, admin);
    expect(plain).toMatchObject({ units: 1, weight_kg: null, volume_l: null, service_min: null, pickup_after: null, pickup_before: null });
    const trip = await newTrip(t, admin, {
      pickup_after: inH(1),
      pickup_before: inH(2),
      deliver_after: inH(2),
      deliver_before: inH(3),
      units: 3,
      weight_kg: 12.5,
      volume_l: 40,
      service_min: 5,
    });
    expect(trip).toMatchObject({ units: 3, weight_kg: 12.5, volume_l: 40, service_min: 5 });
    expect(new Date(trip.pickup_before as string).getTime()).toBeGreaterThan(new Date(trip.pickup_after as string).getTime());
    const got = await t.req(admin, { method: 'GET', url: `/trips/${trip.id}` });
    expect(got.json()).toMatchObject({ units: 3, weight_kg: 12.5, volume_l: 40, service_min: 5, pickup_after: trip.pickup_after });
  });

  it('refuses a window that ends before it starts and out-of-range loads with 422 and the field, writing nothing', async () => {
    const count = async () => Number((await t.db.withSystem((tx) => tx.query<{ n: string }>('SELECT count(*) AS n FROM trip'))).rows[0]!.n);
    const before = await count();
    const cases: [Record<string, unknown>, string, string][] = [
      [{ pickup_after: inH(2), pickup_before: inH(1) }, 'WINDOW_INVALID', 'pickup_before'],
      [{ pickup_before: inH(-1) }, 'WINDOW_INVALID', 'pickup_before'],
      [{ pickup_before: inH(4), deliver_before: inH(3) }, 'WINDOW_INVALID', 'pickup_before'],
      [{ deliver_after: inH(3), deliver_before: inH(2) }, 'WINDOW_INVALID', 'deliver_before'],
      [{ units: 0 }, 'LOAD_INVALID', 'units'],
      [{ units: 100_000 }, 'LOAD_INVALID', 'units'],
      [{ weight_kg: -1 }, 'LOAD_INVALID', 'weight_kg'],
      [{ weight_kg: 1e9 }, 'LOAD_INVALID', 'weight_kg'],
      [{ volume_l: 0 }, 'LOAD_INVALID', 'volume_l'],
      [{ service_min: -5 }, 'LOAD_INVALID', 'service_min'],
    ];
    for (const [over, code, field] of cases) {
      const res = await t.req(admin, { method: 'POST', url: '/trips', payload: body(over) });
      expect(res.statusCode, JSON.stringify(over)).toBe(422);
      expect(res.json().code).toBe(code);
      expect(res.json().errors[0].field).toBe(field);
    }
    expect(await count()).toBe(before);
  });
});

describe('vehicle types', () => {
  it("gives a driver his vehicle type's capacities and speed unless overridden; overrides are validated and audited", async () => {
    const u = await newUser(t, 'repartidor', admin.organizationId);
    const created = await t.req(admin, { method: 'POST', url: '/drivers', payload: { user_id: u.userId, vehicle_type: 'bicycle' } });
    expect(created.statusCode, created.body).toBe(201);
    expect(created.json()).toMatchObject({
      vehicle_type: 'bicycle',
      capacity_weight_kg: 15,
      capacity_volume_l: 40,
      speed_factor: 0.6,
      overrides: { capacity_weight_kg: null, capacity_volume_l: null, speed_factor: null },
    });
    const id = created.json().id as string;
    for (const [payload, field] of [
      [{ capacity_weight_kg: 0 }, 'capacity_weight_kg'],
      [{ capacity_volume_l: 1e9 }, 'capacity_volume_l'],
      [{ speed_factor: 50 }, 'speed_factor'],
    ] as const) {
      const res = await t.req(admin, { method: 'PATCH', url: `/drivers/${id}`, payload });
      expect(res.statusCode, JSON.stringify(payload)).toBe(422);
      expect(res.json()).toMatchObject({ code: 'CAPACITY_INVALID', errors: [{ field }] });
    }
    const res = await t.req(admin, { method: 'PATCH', url: `/drivers/${id}`, payload: { vehicle_type: 'van', capacity_weight_kg: 500 } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ capacity_weight_kg: 500, capacity_volume_l: 3000, speed_factor: 0.9 });
    const cleared = await t.req(admin, { method: 'PATCH', url: `/drivers/${id}`, payload: { capacity_weight_kg: null } });
    expect(cleared.json()).toMatchObject({ capacity_weight_kg: 1000, overrides: { capacity_weight_kg: null } });
    const audit = await t.db.withSystem((tx) =>
      tx.query<{ before: { capacity_weight_kg: number }; after: { capacity_weight_kg: number } }>(
        "SELECT before, after FROM audit_log WHERE action = 'driver.updated' AND entity_id = $1 ORDER BY created_at",
        [id],
      ),
    );
    expect(audit.rows.map((r) => r.after.capacity_weight_kg)).toEqual([500, 1000]);
  });
});
