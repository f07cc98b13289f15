import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type Session, type TestApp } from '../helpers.js';
import { newTrip, pt, tripDb } from '../logistics/fixtures.js';
import { png } from '../storage/fixtures.js';
import { newSubadmin } from '../subadmin/fixtures.js';
import { newId } from '../../src/platform/ids.js';
import {
  demoShop,
  enableDirectPayment,
  newCustomer,
  newMerchant as makeMerchant,
  ok,
  orderKit,
  orderRow,
  uploadObject,
  walletEntries,
  type MoneyShop,
  type OrderKit,
} from './fixtures.js';

/**
 * Money rules over HTTP: express deliveries post their fee, payment destinations per merchant, one currency per
 * organization, cancellations, refunds and adjustments, and who reads a payment proof. (Settlements only pay out money
 * received: settlements.test.ts; sub-administrator totals and commission bounds: test/subadmin.)
 */
let t: TestApp;
let admin: Session;
let kit: OrderKit;

beforeAll(async () => {
  t = await createTestApp();
  admin = await t.as('admin');
  kit = await orderKit(t);
});
afterAll(() => t?.close());

const newMerchant = (commission = '10.00') => makeMerchant(t, admin, commission);

/** An express request of `shop` driven through its trip to `completed` by the kit's driver; returns the request and its trip. */
async function expressDelivered(shop: MoneyShop, complete = true) {
  const r = ok(
    await t.req(shop.session, {
      method: 'POST',
      url: '/merchant/delivery-express',
      payload: { branch_id: shop.branchId, customer_name: 'Ana', dropoff_address: 'Calle 2', dropoff_location: pt(-68.12, -16.51) },
    }),
    201,
  );
  const trip = await tripDb(t, r.trip_id);
  if (!complete) return { request: r, trip };
  const d = kit.driver;
  ok(await t.req(admin, { method: 'POST', url: `/trips/${r.trip_id}/assign`, payload: { driver_id: d.id } }));
  ok(await t.req(d.session, { method: 'POST', url: `/driver/trips/${r.trip_id}/accept` }));
  ok(await t.req(d.session, { method: 'POST', url: `/trips/${r.trip_id}/verify-pickup`, payload: { pin: trip.pickup_pin } }));
  ok(await t.req(d.session, { method: 'POST', url: `/driver/trips/${r.trip_id}/start-delivery` }));
  ok(await t.req(d.session, { method: 'POST', url: `/trips/${r.trip_id}/verify-delivery`, payload: { pin: trip.delivery_pin } }));
  return { request: r, trip: await tripDb(t, r.trip_id) };
}

describe('express deliveries post their fee', () => {
  it('a completed express trip writes one delivery_fee_debit of the whole fee (the same meaning as for an order: no platform_commission without a sale); a cancelled one writes nothing; the charge is merchant debt', async () => {
    const m = await newMerchant();
    const { request, trip } = await expressDelivered(m);
    expect(trip.status).toBe('completed');
    expect(Number(request.delivery_fee)).toBeGreaterThan(0);
    expect(Number(trip.driver_earning)).toBeGreaterThan(0);
    const { rows } = await t.db.withSystem((tx) =>
      tx.query(
        'SELECT entry_type, amount::text, trip_id, driver_id, order_id FROM merchant_wallet_entry WHERE merchant_id = $1 ORDER BY entry_type',
        [m.id],
      ),
    );
    expect(rows).toEqual([
      { entry_type: 'delivery_fee_debit', amount: `-${request.delivery_fee}`, trip_id: trip.id, driver_id: kit.driver.id, order_id: null },
    ]);
    // The merchant had nothing available: the fee is his debt, and a debt payment covers it.
    const wallet = (await t.req(m.session, { method: 'GET', url: '/merchant/settlement-rule' })).json().wallet;
    expect(wallet).toMatchObject({ balance: `-${request.delivery_fee}`, available: '0.00', pending: '0.00', debt: request.delivery_fee });
    const pay = await t.req(admin, {
      method: 'POST',
      url: `/admin/merchants/${m.id}/debt-payments`,
      payload: { amount: request.delivery_fee },
    });
    expect(pay.statusCode, pay.body).toBe(201);
    expect(pay.json().wallet).toMatchObject({ balance: '0.00', debt: '0.00', credit: '0.00' });
    // The finance view lists both among the platform's charges.
    const charges = ok(await t.req(admin, { method: 'GET', url: `/finance/charges?merchant_id=${m.id}` }));
    expect(charges.totals.total).toBe(request.delivery_fee);

    // A repeat of the completion hook writes nothing (one delivery_fee_debit per trip).
    await t.db.withTenant({ organizationId: t.demo.organizationId, userId: t.demo.users.admin }, (tx) =>
      t.app.services.money!.expressDelivered(
        tx,
        {
          userId: t.demo.users.admin,
          organizationId: t.demo.organizationId,
          role: 'administrator',
          kind: 'administrator',
          sessionId: 's',
          requestId: 'r',
          subadmin: null,
        },
        {
          expressRequestId: request.id,
          merchantId: m.id,
          tripId: trip.id,
          driverId: kit.driver.id,
          territoryId: null,
          deliveryFee: request.delivery_fee,
          driverEarning: trip.driver_earning,
          currency: 'BOB',
        },
      ),
    );
    expect(await walletEntries(t, { merchantId: m.id })).toHaveLength(2); // the fee and the debt payment

    const cancelled = await expressDelivered(m, false);
    ok(await t.req(admin, { method: 'POST', url: `/trips/${cancelled.trip.id}/status`, payload: { status: 'cancelled', reason: 'test' } }));
    expect(await walletEntries(t, { merchantId: m.id })).toHaveLength(2); // a cancelled trip writes nothing
  });
});

describe('payment destinations offered and accepted per merchant', () => {
  it('merchant_direct is refused (422, nothing written) without direct payment enabled; the preflight lists what the merchant accepts', async () => {
    const m = await newMerchant();
    const c = await newCustomer(t);
    const item = ok(await t.req(m.session, { method: 'POST', url: '/merchant/catalog', payload: { name: 'Tea', price: '10.00' } }), 201);
    const cart = (payment_destination?: string) => ({
      branch_id: m.branchId,
      address_id: c.addressId,
      items: [{ catalog_item_id: item.id, quantity: 1 }],
      ...(payment_destination ? { payment_destination } : {}),
    });
    const q = ok(await t.req(c.session, { method: 'POST', url: '/customer/checkout/preflight', payload: cart() }), 201);
    expect(q.payment_destinations).toEqual(['platform', 'cash']);
    for (const url of ['/customer/checkout/preflight', '/customer/orders']) {
      const r = await t.req(c.session, { method: 'POST', url, payload: cart('merchant_direct') });
      expect(r.statusCode, r.body).toBe(422);
      expect(r.json()).toMatchObject({ code: 'PAYMENT_DESTINATION_UNAVAILABLE', errors: [{ field: 'payment_destination' }] });
    }
    const written = await t.db.withSystem((tx) => tx.query('SELECT 1 FROM merchant_order WHERE customer_user_id = $1', [c.userId]));
    expect(written.rowCount).toBe(0);
    // A quote taken while enabled is refused once the merchant disables direct payment.
    await enableDirectPayment(t, m);
    const q2 = ok(await t.req(c.session, { method: 'POST', url: '/customer/checkout/preflight', payload: cart('merchant_direct') }), 201);
    expect(q2.payment_destinations).toEqual(['platform', 'merchant_direct', 'cash']);
    ok(await t.req(m.session, { method: 'PATCH', url: '/merchant/payment-profile', payload: { direct_payment_enabled: false } }));
    const late = await t.req(c.session, { method: 'POST', url: '/customer/orders', payload: { quote_id: q2.id } });
    expect(late.statusCode).toBe(422);
    expect(late.json().code).toBe('PAYMENT_DESTINATION_UNAVAILABLE');
    expect((await t.req(c.session, { method: 'POST', url: '/customer/orders', payload: cart('cash') })).statusCode).toBe(201);
  });
});

describe('one currency per organization', () => {
  it('refuses items in another currency, validates the currency and time zone settings, and uses default_currency for items, orders and trips', async () => {
    const m = await newMerchant();
    const usd = await t.req(m.session, {
      method: 'POST',
      url: '/merchant/catalog',
      payload: { name: 'Import', price: '5.00', currency: 'USD' },
    });
    expect(usd.statusCode, usd.body).toBe(422);
    expect(usd.json().code).toBe('CURRENCY_MISMATCH');
    const item = ok(await t.req(m.session, { method: 'POST', url: '/merchant/catalog', payload: { name: 'Local', price: '5.00' } }), 201);
    expect(item.currency).toBe('BOB');
    expect(
      (await t.req(m.session, { method: 'PATCH', url: `/merchant/catalog/${item.id}`, payload: { currency: 'USD' } })).json().code,
    ).toBe('CURRENCY_MISMATCH');
    // An item stored in another currency before the rule is refused at checkout, never mixed with the BOB delivery fee.
    await t.db.withSystem((tx) => tx.query("UPDATE catalog_item SET currency = 'USD' WHERE id = $1", [item.id]));
    const c = await newCustomer(t);
    const mixed = await t.req(c.session, {
      method: 'POST',
      url: '/customer/orders',
      payload: { branch_id: m.branchId, address_id: c.addressId, items: [{ catalog_item_id: item.id, quantity: 1 }] },
    });
    expect(mixed.statusCode, mixed.body).toBe(422);
    expect(mixed.json().code).toBe('CURRENCY_MISMATCH');

    for (const payload of [
      { default_currency: 'XYZ' },
      { default_currency: 'usd' },
      { timezone: 'Mars/Olympus_Mons' },
      { timezone: 'America/Nowhere' },
    ]) {
      const r = await t.req(admin, { method: 'PATCH', url: '/settings', payload });
      expect(r.statusCode, JSON.stringify(payload)).toBe(400);
    }
    expect(ok(await t.req(admin, { method: 'PATCH', url: '/settings', payload: { timezone: 'America/La_Paz' } })).timezone).toBe(
      'America/La_Paz',
    );
    const inUse = await t.req(admin, { method: 'PATCH', url: '/settings', payload: { default_currency: 'USD' } });
    expect(inUse.statusCode).toBe(409);
    expect(inUse.json().code).toBe('CURRENCY_IN_USE');

    // A fresh organization working in USD: items, trips (fees) and orders carry USD.
    const other = await t.newOrganization('Dollar Org');
    const oAdmin = await t.login(other.logins.admin);
    expect(ok(await t.req(oAdmin, { method: 'PATCH', url: '/settings', payload: { default_currency: 'USD' } })).default_currency).toBe(
      'USD',
    );
    const trip = await newTrip(t, oAdmin);
    expect((await tripDb(t, trip.id)).currency).toBe('USD');
    const logistics = ok(await t.req(oAdmin, { method: 'GET', url: '/logistics/settings' }));
    expect(logistics.currency).toBe('USD');
  });
});

describe('cancellations, refunds and adjustments', () => {
  it('cancelling a pending_review order cancels the review and fails the payment; an admin cancel is audited with its reason; a received platform payment becomes refunded', async () => {
    const shop = await demoShop(t);
    const o = await kit.place(shop, { destination: 'merchant_direct', subtotal: '20.00', fee: '5.00' });
    const review = ok(
      await t.req(kit.customer.session, {
        method: 'POST',
        url: `/customer/orders/${o.id}/payment-proof`,
        payload: { amount: o.total, customer_reference: 'T-1' },
      }),
      201,
    );
    expect((await orderRow(t, o.id)).payment_status).toBe('pending_review');
    const cancelled = ok(
      await t.req(shop.session, {
        method: 'PATCH',
        url: `/merchant/orders/${o.id}/status`,
        payload: { status: 'cancelled', reason: 'out of stock' },
      }),
    );
    expect(cancelled).toMatchObject({ status: 'cancelled', payment_status: 'failed' });
    const r = (await t.db.withSystem((tx) => tx.query('SELECT status FROM merchant_payment_review WHERE id = $1', [review.id]))).rows[0];
    expect(r.status).toBe('cancelled');

    // Admin cancel of a platform order whose payment was received before delivery.
    const p = await kit.place(shop, { destination: 'platform', subtotal: '30.00', fee: '5.00' });
    await kit.receive(p.id);
    expect((await t.req(admin, { method: 'POST', url: `/admin/orders/${p.id}/cancel`, payload: {} })).statusCode).toBe(400); // reason required
    expect((await t.req(shop.session, { method: 'POST', url: `/admin/orders/${p.id}/cancel`, payload: { reason: 'x' } })).statusCode).toBe(
      403,
    );
    const c = ok(await t.req(admin, { method: 'POST', url: `/admin/orders/${p.id}/cancel`, payload: { reason: 'customer unreachable' } }));
    expect(c).toMatchObject({ status: 'cancelled', payment_status: 'refunded' });
    expect(await walletEntries(t, { orderId: p.id })).toEqual([]); // never delivered: nothing reached the wallet
    const audit = await t.db.withSystem((tx) =>
      tx.query("SELECT after->>'reason' AS reason FROM audit_log WHERE action = 'order.cancelled' AND entity_id = $1", [p.id]),
    );
    expect(audit.rows).toEqual([{ reason: 'customer unreachable' }]);
    const again = await t.req(admin, { method: 'POST', url: `/admin/orders/${p.id}/cancel`, payload: { reason: 'again' } });
    expect(again.statusCode).toBe(409);
  });

  it('adjustments: signed, with a reason, audited; zero and unknown merchants refused', async () => {
    const m = await newMerchant();
    const adj = (payload: Record<string, unknown>, id = m.id) =>
      t.req(admin, { method: 'POST', url: `/admin/merchants/${id}/adjustments`, payload });
    expect((await adj({ amount: '0.00', reason: 'x' })).statusCode).toBe(400);
    expect((await adj({ amount: '5.00' })).statusCode).toBe(400);
    expect((await adj({ amount: '5.00', reason: 'x' }, newId())).statusCode).toBe(404);
    expect(await walletEntries(t, { merchantId: m.id })).toEqual([]);
    const plus = await adj({ amount: '12.00', reason: 'goodwill' });
    expect(plus.statusCode, plus.body).toBe(201);
    expect(plus.json()).toMatchObject({
      entry: { entry_type: 'adjustment', amount: '12.00', note: 'goodwill' },
      wallet: { available: '12.00' },
    });
    const minus = ok(await adj({ amount: '-20.00', reason: 'chargeback' }), 201);
    expect(minus.wallet).toMatchObject({ balance: '-8.00', available: '0.00', debt: '8.00' });
    const audit = await t.db.withSystem((tx) =>
      tx.query("SELECT count(*)::int AS n FROM audit_log WHERE action = 'wallet.adjustment' AND after->>'merchant_id' = $1", [m.id]),
    );
    expect(audit.rows[0].n).toBe(2);
  });
});

describe('whoever may decide a review reads its proof', () => {
  it('a sub-administrator with payments_review_decide in the territory downloads the proof; without the permission or outside, 404', async () => {
    const shop = await demoShop(t);
    const o = await kit.place(shop, { destination: 'merchant_direct', subtotal: '15.00', fee: '5.00' });
    const proof = await uploadObject(t, kit.customer.session, 'payment_proof', png(6));
    const review = ok(
      await t.req(kit.customer.session, {
        method: 'POST',
        url: `/customer/orders/${o.id}/payment-proof`,
        payload: { amount: o.total, proof_storage_object_id: proof },
      }),
      201,
    );
    const deciding = await newSubadmin(t, admin, { territory_ids: [shop.territoryId], permissions: { payments_review_decide: true } });
    const viewing = await newSubadmin(t, admin, { territory_ids: [shop.territoryId], permissions: { payments_review_decide: false } });
    const other = await t.req(admin, {
      method: 'POST',
      url: '/territories',
      payload: {
        name: `Far ${newId().slice(-4)}`,
        geometry: {
          type: 'Polygon',
          coordinates: [
            [
              [10, 10],
              [10.1, 10],
              [10.1, 10.1],
              [10, 10.1],
              [10, 10],
            ],
          ],
        },
      },
    });
    const elsewhere = await newSubadmin(t, admin, { territory_ids: [ok(other, 201).id], permissions: { payments_review_decide: true } });
    const get = (s: Session) => t.req(s, { method: 'GET', url: `/storage/objects/${proof}` });
    expect((await get(deciding.session)).statusCode).toBe(200);
    expect((await get(viewing.session)).statusCode).toBe(404);
    expect((await get(elsewhere.session)).statusCode).toBe(404);
    expect(
      (await t.req(deciding.session, { method: 'POST', url: `/merchant/payment-reviews/${review.id}/approve`, payload: {} })).statusCode,
    ).toBe(200);
  });
});

describe('one read rule for money attachments, per purpose and role', () => {
  it('payment_proof: the uploader, staff, the merchant and the deciding sub-administrator; merchant_payment_qr: anyone of the organization while direct payment is enabled', async () => {
    const shop = await demoShop(t);
    const o = await kit.place(shop, { destination: 'merchant_direct', subtotal: '11.00', fee: '5.00' });
    const proof = await uploadObject(t, kit.customer.session, 'payment_proof', png(7));
    ok(
      await t.req(kit.customer.session, {
        method: 'POST',
        url: `/customer/orders/${o.id}/payment-proof`,
        payload: { amount: o.total, proof_storage_object_id: proof },
      }),
      201,
    );
    const otherMerchant = await newMerchant();
    const otherCustomer = await newCustomer(t);
    const deciding = await newSubadmin(t, admin, { territory_ids: [shop.territoryId], permissions: { payments_review_decide: true } });
    const viewOnly = await newSubadmin(t, admin, { territory_ids: [shop.territoryId] });
    const other = await t.newOrganization('Proof Org');
    const foreignAdmin = await t.login(other.logins.admin);
    const status = async (s: Session, id: string) => (await t.req(s, { method: 'GET', url: `/storage/objects/${id}` })).statusCode;
    const proofCases: [string, Session, number][] = [
      ['uploading customer', kit.customer.session, 200],
      ['administrator', admin, 200],
      ['merchant of the review', shop.session, 200],
      ['sub-administrator who may decide', deciding.session, 200],
      ['sub-administrator who may only view', viewOnly.session, 404],
      ['another merchant', otherMerchant.session, 404],
      ['another customer', otherCustomer.session, 404],
      ['administrator of another organization', foreignAdmin, 404],
    ];
    for (const [who, s, expected] of proofCases) expect(await status(s, proof), `payment_proof, ${who}`).toBe(expected);

    const m = await newMerchant();
    const qr = await uploadObject(t, m.session, 'merchant_payment_qr', png(8));
    ok(
      await t.req(m.session, {
        method: 'PATCH',
        url: '/merchant/payment-profile',
        payload: { direct_payment_enabled: true, qr_storage_object_id: qr },
      }),
    );
    const qrCases: [string, Session, number][] = [
      ['owner', m.session, 200],
      ['a customer', otherCustomer.session, 200],
      ['another merchant', otherMerchant.session, 200],
      ['administrator of another organization', foreignAdmin, 404],
    ];
    for (const [who, s, expected] of qrCases) expect(await status(s, qr), `merchant_payment_qr enabled, ${who}`).toBe(expected);
    ok(await t.req(m.session, { method: 'PATCH', url: '/merchant/payment-profile', payload: { direct_payment_enabled: false } }));
    expect(await status(otherCustomer.session, qr), 'merchant_payment_qr disabled, a customer').toBe(404);
    expect(await status(m.session, qr), 'merchant_payment_qr disabled, owner').toBe(200);
  });
});
