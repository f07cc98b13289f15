/** Ids a tenant submits are checked to be his and to fit the action; else 404/422 and nothing written. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type Session, type TestApp } from '../helpers.js';
import { newCustomer, newShop, ok, orderDb, orderIn, rows, setStatus, type Shop } from '../commerce/fixtures.js';
import { newUser, pt } from '../logistics/fixtures.js';
import { DEMO_PASSWORD } from '../../src/seed.js';

let t: TestApp;
let admin: Session;
let shopA: Shop;
let shopB: Shop;
let customer: Awaited<ReturnType<typeof newCustomer>>;

beforeAll(async () => {
  t = await createTestApp();
  admin = await t.as('admin');
  [shopA, shopB] = [await newShop(t), await newShop(t)];
  customer = await newCustomer(t);
});
afterAll(() => t?.close());

const trips = async () => (await rows<{ n: number }>(t, 'SELECT count(*)::int AS n FROM trip'))[0].n;
const tripBody = (over: Record<string, unknown>) => ({
  pickup_location: pt(-68.135, -16.5),
  pickup_address: 'Pickup 1',
  dropoff_location: pt(-68.125, -16.51),
  dropoff_address: 'Dropoff 2',
  ...over,
});
const createTrip = (s: Session, over: Record<string, unknown>) => t.req(s, { method: 'POST', url: '/trips', payload: tripBody(over) });

describe('a merchant creating a trip', () => {
  it("cannot name another merchant's order; that order is not blocked and gets its own trip later", async () => {
    const orderB = await orderIn(t, shopB, customer, 'preparing');
    const before = await trips();
    const res = await createTrip(shopA.merchant, { order_id: orderB });
    expect(res.statusCode).toBe(422);
    expect(res.json().code).toBe('ORDER_NOT_FOUND');
    expect(await trips()).toBe(before);
    // B's order moves on normally and its trip is created.
    ok(await setStatus(t, shopB.merchant, orderB, 'ready'));
    const o = await orderDb(t, orderB);
    expect(o.status).toBe('ready');
    expect(o.trip_id).toBeTruthy();
    const trip = (await rows(t, 'SELECT merchant_id, customer_user_id FROM trip WHERE id = $1', [o.trip_id]))[0];
    expect(trip).toMatchObject({ merchant_id: shopB.merchantId, customer_user_id: customer.userId });
  });

  it('cannot name his own order when it is not ready or already has a trip, nor an unknown order', async () => {
    const preparing = await orderIn(t, shopA, customer, 'preparing');
    const ready = await orderIn(t, shopA, customer, 'ready');
    const before = await trips();
    const notReady = await createTrip(shopA.merchant, { order_id: preparing });
    expect(notReady.statusCode).toBe(409);
    expect(notReady.json().code).toBe('ORDER_NOT_READY_FOR_TRIP');
    const twice = await createTrip(shopA.merchant, { order_id: ready });
    expect(twice.statusCode).toBe(409);
    expect(twice.json().code).toBe('ORDER_HAS_TRIP');
    const unknown = await createTrip(shopA.merchant, { order_id: '01900000-0000-7000-8000-000000000000' });
    expect(unknown.statusCode).toBe(422);
    expect(await trips()).toBe(before);
    // Staff naming a merchant that is not the order's: also refused.
    const staff = await createTrip(admin, { order_id: preparing, merchant_id: shopB.merchantId });
    expect(staff.statusCode).toBe(422);
    expect(await trips()).toBe(before);
    // The preparing order still gets its trip when it becomes ready.
    ok(await setStatus(t, shopA.merchant, preparing, 'ready'));
    expect((await orderDb(t, preparing)).trip_id).toBeTruthy();
  });

  it("cannot name a customer of another organization, a non-customer, or another merchant's express request", async () => {
    const other = await t.newOrganization('Other org');
    const otherCustomer = await t.login(other.logins.customer, DEMO_PASSWORD, other.organizationId);
    const driverUser = await newUser(t, 'repartidor');
    const before = await trips();
    for (const id of [otherCustomer.userId, driverUser.userId]) {
      const res = await createTrip(shopA.merchant, { customer_user_id: id });
      expect(res.statusCode).toBe(422);
      expect(res.json().code).toBe('CUSTOMER_NOT_FOUND');
    }
    const express = ok(
      await t.req(shopB.merchant, {
        method: 'POST',
        url: '/merchant/delivery-express',
        payload: { customer_name: 'Ana', dropoff_location: pt(-68.12, -16.5), dropoff_address: 'Calle 9', branch_id: shopB.branchId },
      }),
      201,
    );
    const afterExpress = await trips();
    expect(afterExpress).toBe(before + 1);
    const hijack = await createTrip(shopA.merchant, { express_request_id: express.id });
    expect(hijack.statusCode).toBe(422);
    expect(hijack.json().code).toBe('EXPRESS_REQUEST_NOT_FOUND');
    const again = await createTrip(shopB.merchant, { express_request_id: express.id });
    expect(again.statusCode).toBe(409);
    expect(await trips()).toBe(afterExpress);
    // A customer of the organization is accepted.
    ok(await createTrip(shopA.merchant, { customer_user_id: customer.userId }), 201);
  });
});

describe('document subjects', () => {
  const submit = (s: Session, payload: Record<string, unknown>) =>
    t.req(s, { method: 'POST', url: '/documents', payload: { doc_type: 'license', title: 'Doc', ...payload } });
  const docs = async () => (await rows<{ n: number }>(t, 'SELECT count(*)::int AS n FROM document'))[0].n;

  it('must exist in the organization and be of the named kind; nothing is written otherwise', async () => {
    const other = await t.newOrganization('Docs org');
    const otherMerchant = await t.login(other.logins.merchant, DEMO_PASSWORD, other.organizationId);
    const before = await docs();
    // A user id named as a driver, a merchant named as a driver, a merchant of this org named by id as the wrong kind.
    for (const payload of [
      { subject_type: 'driver', subject_id: customer.userId },
      { subject_type: 'driver', subject_id: shopA.merchantId },
      { subject_type: 'merchant', subject_id: customer.userId },
      { subject_type: 'user', subject_id: shopA.merchantId },
      { subject_type: 'operator', subject_id: other.organizationId },
      { subject_type: 'user', subject_id: otherMerchant.userId },
    ]) {
      const res = await submit(admin, payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(422);
      expect(res.json().code).toBe('SUBJECT_NOT_FOUND');
    }
    // Non-administrators only about themselves.
    const notMine = await submit(shopA.merchant, { subject_type: 'merchant', subject_id: shopB.merchantId });
    expect(notMine.statusCode).toBe(403);
    expect((await submit(shopA.merchant, { subject_type: 'operator' })).statusCode).toBe(403);
    // A customer has no driver profile to document.
    expect((await submit(customer.session, { subject_type: 'driver' })).statusCode).toBe(422);
    expect(await docs()).toBe(before);

    // Valid subjects: defaults to the caller's own, administrators may name any subject of the organization.
    const own = ok(await submit(shopA.merchant, { subject_type: 'merchant' }), 201);
    expect(own.subject_id).toBe(shopA.merchantId);
    expect(ok(await submit(admin, { subject_type: 'merchant', subject_id: shopB.merchantId }), 201).subject_id).toBe(shopB.merchantId);
    expect(ok(await submit(admin, { subject_type: 'operator' }), 201).subject_id).toBe(t.demo.organizationId);
    expect(ok(await submit(customer.session, { subject_type: 'user' }), 201).subject_id).toBe(customer.userId);
  });
});
