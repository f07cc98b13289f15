import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers.js';
import { cart, newCustomer, newShop, ok, rows } from './fixtures.js';

/**
 * SPEC: "when require_platform_payment_before_order is true and the payment connector is ready, an order
 * with payment_destination = platform requires a payment intent in state authorized or paid". Intents are
 * not released, so when the rule applies a platform order is refused (422 PAYMENT_REQUIRED).
 */
let plain: TestApp;
let ready: TestApp;

beforeAll(async () => {
  [plain, ready] = await Promise.all([createTestApp(), createTestApp({ raw: { ...process.env, PAYMENT_CONNECTOR_READY: 'true' } })]);
});
afterAll(async () => {
  await plain?.close();
  await ready?.close();
});

async function setRequire(t: TestApp, on: boolean) {
  ok(await t.req(await t.as('admin'), { method: 'PATCH', url: '/settings', payload: { require_platform_payment_before_order: on } }));
}

async function attempt(t: TestApp, destination: 'platform' | 'merchant_direct' | 'cash') {
  const shop = await newShop(t, ['10.00']);
  if (destination === 'merchant_direct')
    ok(
      await t.req(shop.merchant, {
        method: 'PATCH',
        url: '/merchant/payment-profile',
        payload: { direct_payment_enabled: true, instructions: 'Transfer' },
      }),
    );
  const c = await newCustomer(t);
  const payload = cart(shop, c.addressId, { payment_destination: destination });
  const quote = ok(await t.req(c.session, { method: 'POST', url: '/customer/checkout/preflight', payload }), 201);
  const res = await t.req(c.session, { method: 'POST', url: '/customer/orders', payload });
  const written = await rows(t, 'SELECT payment_destination, payment_status FROM merchant_order WHERE customer_user_id = $1', [c.userId]);
  return { quote, res, written };
}

describe('require_platform_payment_before_order', () => {
  it('connector ready + setting on: a platform order is refused with 422 PAYMENT_REQUIRED and nothing is written', async () => {
    await setRequire(ready, true);
    const { quote, res, written } = await attempt(ready, 'platform');
    expect(quote.payment_required).toBe(true);
    expect(res.statusCode).toBe(422);
    expect(res.json().code).toBe('PAYMENT_REQUIRED');
    expect(written).toEqual([]);
  });

  it('connector ready + setting on: merchant_direct and cash orders are accepted with payment_status pending', async () => {
    await setRequire(ready, true);
    for (const d of ['merchant_direct', 'cash'] as const) {
      const { quote, res, written } = await attempt(ready, d);
      expect(quote.payment_required).toBe(false);
      expect(res.statusCode, res.body).toBe(201);
      expect(written).toEqual([{ payment_destination: d, payment_status: 'pending' }]);
    }
  });

  it('connector ready + setting off: platform orders are accepted', async () => {
    await setRequire(ready, false);
    const { res, written } = await attempt(ready, 'platform');
    expect(res.statusCode, res.body).toBe(201);
    expect(written).toHaveLength(1);
  });

  it('connector not ready (the default) + setting on: the rule does not block', async () => {
    await setRequire(plain, true);
    const { quote, res, written } = await attempt(plain, 'platform');
    expect(quote.payment_required).toBe(false);
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toMatchObject({ payment_destination: 'platform', payment_status: 'pending', order_source: 'core' });
    expect(written).toHaveLength(1);
  });
});
