import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type Session, type TestApp } from '../helpers.js';
import { newDriver, newUser, tripDb } from '../logistics/fixtures.js';
import { cart, newCustomer, newExpress, newShop, ok, orderDb, orderIn, pt, rows, type Shop } from './fixtures.js';

let t: TestApp;
let admin: Session;
let shop: Shop;
let customer: Awaited<ReturnType<typeof newCustomer>>;

beforeAll(async () => {
  t = await createTestApp();
  admin = await t.as('admin');
  shop = await newShop(t, ['10.00', '20.00']);
  customer = await newCustomer(t);
});
afterAll(() => t?.close());

describe('branches and catalog', () => {
  it('creates a branch in the covering territory, validates it, and moves it to no territory outside', async () => {
    const [{ id: territoryId }] = await rows(t, "SELECT id FROM territory WHERE name = 'La Paz Centro'");
    const b = ok(
      await t.req(shop.merchant, {
        method: 'POST',
        url: '/merchant/branches',
        payload: { name: 'B', address: 'A', location: pt(-68.12, -16.5), opening_hours: [{ day: 1, open: '09:00', close: '18:00' }] },
      }),
      201,
    );
    expect(b).toMatchObject({ territory_id: territoryId, active: true, merchant_id: shop.merchantId });
    const moved = ok(
      await t.req(shop.merchant, { method: 'PATCH', url: `/merchant/branches/${b.id}`, payload: { location: pt(-60, -10) } }),
    );
    expect(moved.territory_id).toBeNull();
    const [before] = await rows(t, 'SELECT count(*)::int AS n FROM merchant_branch');
    for (const payload of [
      { name: 'B', address: 'A', location: pt(-68.12, -95) },
      { name: 'B', address: 'A', location: pt(-68.12, -16.5), opening_hours: [{ day: 1, open: '25:00', close: '09:00' }] },
      { name: 'B', address: 'A', location: pt(-68.12, -16.5), opening_hours: [{ day: 7, open: '08:00', close: '09:00' }] },
      { name: 'B', address: 'A', location: pt(-68.12, -16.5), territory_id: territoryId },
    ]) {
      expect((await t.req(shop.merchant, { method: 'POST', url: '/merchant/branches', payload })).statusCode, JSON.stringify(payload)).toBe(
        400,
      );
    }
    expect((await rows(t, 'SELECT count(*)::int AS n FROM merchant_branch'))[0]).toEqual(before);
    const list = ok(await t.req(shop.merchant, { method: 'GET', url: '/merchant/branches' }));
    expect(list.data.map((x: { id: string }) => x.id)).toEqual(expect.arrayContaining([b.id, shop.branchId]));
    expect((await t.req(customer.session, { method: 'GET', url: '/merchant/branches' })).statusCode).toBe(403);
  });

  it('restricts catalog items to the merchant’s branches and validates prices', async () => {
    const other = await newShop(t, ['1.00']);
    const [before] = await rows(t, 'SELECT count(*)::int AS n FROM catalog_item');
    for (const [payload, status] of [
      [{ name: 'x', price: '-1.00' }, 400],
      [{ name: 'x', price: '1.001' }, 400],
      [{ name: 'x', price: 1 }, 400],
      [{ name: 'x', price: '1.00', merchant_id: other.merchantId }, 400],
      [{ name: 'x', price: '1.00', branch_ids: [other.branchId] }, 422],
    ] as const) {
      expect((await t.req(shop.merchant, { method: 'POST', url: '/merchant/catalog', payload })).statusCode, JSON.stringify(payload)).toBe(
        status,
      );
    }
    expect((await rows(t, 'SELECT count(*)::int AS n FROM catalog_item'))[0]).toEqual(before);
    const item = ok(
      await t.req(shop.merchant, {
        method: 'POST',
        url: '/merchant/catalog',
        payload: { name: 'Only here', price: '2.00', branch_ids: [shop.branchId] },
      }),
      201,
    );
    expect(item).toMatchObject({ currency: 'BOB', available: true, branch_ids: [shop.branchId] });
    const filtered = ok(await t.req(shop.merchant, { method: 'GET', url: `/merchant/catalog?branch_id=${shop.branchId}&available=true` }));
    expect(filtered.data.map((x: { id: string }) => x.id)).toContain(item.id);
    const upd = ok(
      await t.req(shop.merchant, {
        method: 'PATCH',
        url: `/merchant/catalog/${item.id}`,
        payload: { description: null, available: false },
      }),
    );
    expect(upd).toMatchObject({ available: false, description: null, price: '2.00' });
  });
});

describe('marketplace', () => {
  it('lists approved merchants with active branches and available items, filtered by location, radius and territory', async () => {
    const near = await newShop(t, ['3.00', '4.00'], { lon: -68.1, lat: -16.48 });
    ok(await t.req(near.merchant, { method: 'PATCH', url: `/merchant/catalog/${near.items[1].id}`, payload: { available: false } }));
    const far = await newShop(t, ['3.00'], { lon: -68.16, lat: -16.535 });
    const closed = await newShop(t, ['3.00'], { lon: -68.1, lat: -16.48 });
    ok(await t.req(closed.merchant, { method: 'PATCH', url: `/merchant/branches/${closed.branchId}`, payload: { active: false } }));
    // An unapproved merchant with a branch and items never shows.
    const u = await newUser(t, 'comercio');
    const pending = ok(
      await t.req(admin, { method: 'POST', url: '/merchants', payload: { owner_user_id: u.userId, name: 'Pending' } }),
      201,
    );
    const ps = await t.login(u.email);
    ok(
      await t.req(ps, { method: 'POST', url: '/merchant/branches', payload: { name: 'P', address: 'P', location: pt(-68.1, -16.48) } }),
      201,
    );
    ok(await t.req(ps, { method: 'POST', url: '/merchant/catalog', payload: { name: 'P', price: '1.00' } }), 201);

    const around = ok(await t.req(customer.session, { method: 'GET', url: '/customer/marketplace?lon=-68.1&lat=-16.48&radius_m=1000' }));
    expect(around.banners).toEqual([]);
    const ids = around.data.map((m: { id: string }) => m.id);
    expect(ids).toContain(near.merchantId);
    for (const hidden of [far.merchantId, closed.merchantId, pending.id, shop.merchantId]) expect(ids).not.toContain(hidden);
    const n = around.data.find((m: { id: string }) => m.id === near.merchantId);
    expect(n.items.map((i: { id: string }) => i.id)).toEqual([near.items[0].id]);
    expect(n.branches[0].distance_m).toBe(0);

    const [{ id: territoryId }] = await rows(t, "SELECT id FROM territory WHERE name = 'La Paz Centro'");
    const inTerritory = ok(
      await t.req(customer.session, { method: 'GET', url: `/customer/marketplace?territory_id=${territoryId}&limit=200` }),
    );
    expect(inTerritory.data.map((m: { id: string }) => m.id)).toEqual(
      expect.arrayContaining([near.merchantId, far.merchantId, shop.merchantId]),
    );
    const paged = ok(await t.req(customer.session, { method: 'GET', url: '/customer/marketplace?limit=1' }));
    expect(paged.next_cursor).toBeTruthy();
    expect((await t.req(customer.session, { method: 'GET', url: '/customer/marketplace?lon=-68.1' })).statusCode).toBe(400);
  });
});

describe('customer trips', () => {
  it('shows the caller’s trips with the delivery PIN and the driver position; 404 to anyone else', async () => {
    const driver = await newDriver(t, { lon: -68.135, lat: -16.5 });
    const id = await orderIn(t, shop, customer, 'ready');
    const tripId = (await orderDb(t, id)).trip_id;
    ok(await t.req(admin, { method: 'POST', url: `/trips/${tripId}/assign`, payload: { driver_id: driver.id } }));
    const mine = ok(await t.req(customer.session, { method: 'GET', url: `/customer/trips/${tripId}` }));
    const db = await tripDb(t, tripId);
    expect(mine).toMatchObject({ id: tripId, status: 'assigned', order_id: id, delivery_pin: db.delivery_pin });
    expect(mine.driver).toMatchObject({ id: driver.id, location: pt(-68.135, -16.5) });
    expect(mine.pickup_pin).toBeUndefined();
    const list = ok(await t.req(customer.session, { method: 'GET', url: '/customer/trips' }));
    expect(list.data.map((x: { id: string }) => x.id)).toContain(tripId);
    const stranger = await newCustomer(t);
    expect((await t.req(stranger.session, { method: 'GET', url: `/customer/trips/${tripId}` })).statusCode).toBe(404);
    expect(ok(await t.req(stranger.session, { method: 'GET', url: '/customer/trips' })).data).toEqual([]);
    expect((await t.req(shop.merchant, { method: 'GET', url: `/customer/trips/${tripId}` })).statusCode).toBe(403);
  });
});

describe('delivery express', () => {
  it('creates the request and its express trip priced by the express tariff, then follows the trip', async () => {
    const driver = await newDriver(t, { lon: -68.135, lat: -16.5 });
    const r = await newExpress(t, shop, { customer_phone: '+59170000000', declared_value: '50.00' });
    expect(r).toMatchObject({ status: 'created', branch_id: shop.branchId, declared_value: '50.00', pickup_address: 'Calle 1' });
    const trip = await tripDb(t, r.trip_id);
    expect(trip).toMatchObject({
      service_mode: 'delivery_express',
      express_request_id: r.id,
      merchant_id: shop.merchantId,
      delivery_fee: r.delivery_fee,
      status: 'pending',
    });
    const [tariff] = await rows(t, "SELECT minimum_fee FROM territory_tariff WHERE service_mode = 'delivery_express'");
    expect(Number(r.delivery_fee)).toBeGreaterThanOrEqual(Number(tariff.minimum_fee));
    ok(await t.req(admin, { method: 'POST', url: `/trips/${r.trip_id}/assign`, payload: { driver_id: driver.id } }));
    ok(await t.req(driver.session, { method: 'POST', url: `/driver/trips/${r.trip_id}/accept` }));
    ok(await t.req(driver.session, { method: 'POST', url: `/trips/${r.trip_id}/verify-pickup`, payload: { pin: trip.pickup_pin } }));
    ok(await t.req(driver.session, { method: 'POST', url: `/driver/trips/${r.trip_id}/start-delivery` }));
    ok(await t.req(driver.session, { method: 'POST', url: `/trips/${r.trip_id}/verify-delivery`, payload: { pin: trip.delivery_pin } }));
    const done = ok(await t.req(shop.merchant, { method: 'GET', url: '/merchant/delivery-express?status=completed' }));
    expect(done.data.map((x: { id: string }) => x.id)).toEqual([r.id]);

    const c = ok(
      await t.req(shop.merchant, {
        method: 'POST',
        url: '/merchant/delivery-express',
        payload: {
          pickup_location: pt(-68.13, -16.5),
          pickup_address: 'Here',
          customer_name: 'B',
          dropoff_address: 'There',
          dropoff_location: pt(-68.13, -16.49),
        },
      }),
      201,
    );
    ok(await t.req(admin, { method: 'POST', url: `/trips/${c.trip_id}/status`, payload: { status: 'cancelled', reason: 'test' } }));
    expect((await rows(t, 'SELECT status FROM delivery_express_request WHERE id = $1', [c.id]))[0].status).toBe('cancelled');
  });

  it('refuses bad requests and client-set fees, writing nothing', async () => {
    const other = await newShop(t, ['1.00']);
    const [before] = await rows(
      t,
      'SELECT (SELECT count(*)::int FROM delivery_express_request) AS r, (SELECT count(*)::int FROM trip) AS t',
    );
    const base = { customer_name: 'A', dropoff_address: 'D', dropoff_location: pt(-68.12, -16.51), branch_id: shop.branchId };
    for (const [payload, status] of [
      [{ ...base, delivery_fee: '0.00' }, 400],
      [{ ...base, dropoff_location: pt(0, 100) }, 400],
      [{ ...base, customer_name: undefined }, 400],
      [{ ...base, branch_id: undefined, pickup_location: pt(-68.1, -16.5) }, 400],
      [{ ...base, branch_id: other.branchId }, 404],
    ] as const) {
      const res = await t.req(shop.merchant, {
        method: 'POST',
        url: '/merchant/delivery-express',
        payload: JSON.parse(JSON.stringify(payload)),
      });
      expect(res.statusCode, JSON.stringify(payload)).toBe(status);
    }
    expect(
      (await rows(t, 'SELECT (SELECT count(*)::int FROM delivery_express_request) AS r, (SELECT count(*)::int FROM trip) AS t'))[0],
    ).toEqual(before);
  });
});

describe('tenant isolation', () => {
  it("another organization's ids are 404 on every route that takes one; lists never show them", async () => {
    const org = await t.newOrganization();
    const oa = await t.login(org.logins.admin, undefined, org.organizationId);
    const foreign = await newShop(t, ['9.00'], { lon: -68.13, lat: -16.5 }, oa);
    const fc = await newCustomer(t, org.organizationId);
    const coupon = ok(
      await t.req(foreign.merchant, {
        method: 'POST',
        url: '/merchant/coupons',
        payload: { code: 'FOREIGN', name: 'f', discount_type: 'fixed', discount_value: '1.00' },
      }),
      201,
    );
    const territory = ok(
      await t.req(oa, {
        method: 'POST',
        url: '/territories',
        payload: {
          name: 'T',
          geometry: {
            type: 'Polygon',
            coordinates: [
              [
                [-70, -20],
                [-60, -20],
                [-60, -10],
                [-70, -20],
              ],
            ],
          },
        },
      }),
      201,
    );
    const tariff = ok(
      await t.req(oa, {
        method: 'POST',
        url: '/admin/territory-tariffs',
        payload: {
          territory_id: territory.id,
          service_mode: 'marketplace',
          base_fee: '1.00',
          per_km_fee: '1.00',
          driver_share_value: '50',
        },
      }),
      201,
    );
    const fo = ok(await t.req(fc.session, { method: 'POST', url: '/customer/orders', payload: cart(foreign, fc.addressId) }), 201);
    for (const s of ['confirmed', 'preparing', 'ready'])
      ok(await t.req(foreign.merchant, { method: 'PATCH', url: `/merchant/orders/${fo.id}/status`, payload: { status: s } }));
    const foreignTrip = (await orderDb(t, fo.id)).trip_id;

    const checks: [Session, string, string, unknown][] = [
      [shop.merchant, 'PATCH', `/merchant/branches/${foreign.branchId}`, { name: 'x' }],
      [shop.merchant, 'PATCH', `/merchant/catalog/${foreign.items[0].id}`, { price: '1.00' }],
      [shop.merchant, 'PATCH', `/merchant/coupons/${coupon.id}`, { active: false }],
      [shop.merchant, 'PATCH', `/merchant/orders/${fo.id}/status`, { status: 'cancelled' }],
      [
        shop.merchant,
        'POST',
        '/merchant/delivery-express',
        { branch_id: foreign.branchId, customer_name: 'a', dropoff_address: 'b', dropoff_location: pt(-68.1, -16.5) },
      ],
      [admin, 'PATCH', `/admin/territory-tariffs/${tariff.id}`, { active: false }],
      [
        admin,
        'POST',
        '/admin/territory-tariffs',
        { territory_id: territory.id, service_mode: 'delivery_express', base_fee: '1.00', per_km_fee: '1.00', driver_share_value: '5' },
      ],
      [customer.session, 'GET', `/customer/trips/${foreignTrip}`, undefined],
      [customer.session, 'POST', '/customer/orders', cart(foreign, customer.addressId)],
      [customer.session, 'POST', '/customer/checkout/preflight', cart(foreign, customer.addressId)],
      [customer.session, 'POST', '/customer/orders', cart(shop, fc.addressId)],
    ];
    for (const [who, method, url, payload] of checks) {
      const res = await t.req(who, { method: method as 'GET', url, ...(payload ? { payload: payload as object } : {}) });
      expect(res.statusCode, `${method} ${url} ${res.body}`).toBe(404);
    }
    // The coupon code of another organization's merchant is unknown here, and nothing foreign changed.
    expect((await rows(t, 'SELECT status FROM merchant_order WHERE id = $1', [fo.id]))[0].status).toBe('ready');
    expect((await rows(t, 'SELECT active FROM merchant_coupon WHERE id = $1', [coupon.id]))[0].active).toBe(true);
    expect((await rows(t, 'SELECT active FROM territory_tariff WHERE id = $1', [tariff.id]))[0].active).toBe(true);
    const lists: [Session, string, string][] = [
      [shop.merchant, '/merchant/branches', foreign.branchId],
      [shop.merchant, '/merchant/catalog', foreign.items[0].id],
      [shop.merchant, '/merchant/coupons', coupon.id],
      [shop.merchant, '/merchant/orders', fo.id],
      [admin, '/admin/territory-tariffs', tariff.id],
      [customer.session, '/customer/marketplace?limit=200', foreign.merchantId],
      [customer.session, '/customer/addresses', fc.addressId],
    ];
    for (const [who, url, id] of lists) {
      const body = ok(await t.req(who, { method: 'GET', url }));
      expect(JSON.stringify(body), url).not.toContain(id);
    }
  });
});
