import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type Session, type TestApp } from '../helpers.js';
import { newSubadmin, newTerritory } from '../subadmin/fixtures.js';
import { cart, newCustomer, newShop, ok, rows } from '../commerce/fixtures.js';
import { newTrip, pt, tripDb } from './fixtures.js';

// Santa Cruz: far from the demo territory (La Paz), covered by nothing until the test creates a territory.
const SCZ = { lon: -63.18, lat: -17.78 };

let t: TestApp;
let admin: Session;
beforeAll(async () => {
  t = await createTestApp();
  admin = await t.as('admin');
});
afterAll(() => t?.close());

const seesTrip = async (s: Session, id: string) =>
  ((await t.req(s, { method: 'GET', url: '/trips?limit=100' })).json().data as { id: string }[]).some((x) => x.id === id);

describe('territory derivation', () => {
  it('a territory created later is applied to existing trips, branches and orders; its sub-administrator sees them', async () => {
    const shop = await newShop(t, ['10.00'], SCZ);
    const customer = await newCustomer(t, t.demo.organizationId, { lon: SCZ.lon + 0.01, lat: SCZ.lat + 0.01 });
    const order = ok(
      await t.req(customer.session, { method: 'POST', url: '/customer/orders', payload: cart(shop, customer.addressId) }),
      201,
    );
    const trip = await newTrip(t, admin, {}, SCZ);
    expect(trip.territory_id).toBeNull();
    const [before] = await rows(
      t,
      'SELECT (SELECT territory_id FROM merchant_branch WHERE id = $1) AS b, (SELECT territory_id FROM merchant_order WHERE id = $2) AS o',
      [shop.branchId, order.id],
    );
    expect(before).toEqual({ b: null, o: null });

    const territory = await newTerritory(t, admin, 'Santa Cruz', SCZ.lon, SCZ.lat, 0.2);
    const sub = await newSubadmin(t, admin, { territory_ids: [territory] });
    expect((await tripDb(t, trip.id)).territory_id).toBe(territory);
    const [after] = await rows(
      t,
      'SELECT (SELECT territory_id FROM merchant_branch WHERE id = $1) AS b, (SELECT territory_id FROM merchant_order WHERE id = $2) AS o',
      [shop.branchId, order.id],
    );
    expect(after).toEqual({ b: territory, o: territory });
    expect(await seesTrip(sub.session, trip.id)).toBe(true);
  });

  it('moving a pickup re-derives the territory, and none when no territory covers the new pickup', async () => {
    const scz = (await rows(t, "SELECT id FROM territory WHERE name = 'Santa Cruz'"))[0].id;
    const laPaz = (await rows(t, "SELECT id FROM territory WHERE name = 'La Paz Centro'"))[0].id;
    const sub = await newSubadmin(t, admin, { territory_ids: [scz] });
    const trip = await newTrip(t, admin, {}, { lon: -68.13, lat: -16.5 });
    expect(trip.territory_id).toBe(laPaz);
    expect(await seesTrip(sub.session, trip.id)).toBe(false);

    const moved = ok(
      await t.req(admin, { method: 'PATCH', url: `/trips/${trip.id}/coordinates`, payload: { pickup_location: pt(SCZ.lon, SCZ.lat) } }),
    );
    expect(moved.territory_id).toBe(scz);
    expect(await seesTrip(sub.session, trip.id)).toBe(true);

    ok(await t.req(admin, { method: 'PATCH', url: `/trips/${trip.id}/coordinates`, payload: { pickup_location: pt(-60, -10) } }));
    expect((await tripDb(t, trip.id)).territory_id).toBeNull();
    expect(await seesTrip(sub.session, trip.id)).toBe(false);
  });
});
