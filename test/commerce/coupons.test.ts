import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers.js';
import { cart, newCustomer, newShop, ok, orderDb, placeOrder, rows, setStatus, type Shop } from './fixtures.js';

let t: TestApp;
let shop: Shop;
let customer: Awaited<ReturnType<typeof newCustomer>>;
let n = 0;

beforeAll(async () => {
  t = await createTestApp();
  shop = await newShop(t, ['10.00', '20.00', '5.50']); // subtotal 35.50
  customer = await newCustomer(t);
});
afterAll(() => t?.close());

async function coupon(over: Record<string, unknown> = {}, s: Shop = shop) {
  return ok(
    await t.req(s.merchant, {
      method: 'POST',
      url: '/merchant/coupons',
      payload: { code: `C${++n}X${Date.now() % 100000}`, name: 'c', discount_type: 'percent', discount_value: '10', ...over },
    }),
    201,
  );
}
const preflight = async (payload: Record<string, unknown>, c = customer) =>
  ok(await t.req(c.session, { method: 'POST', url: '/customer/checkout/preflight', payload }), 201);
const order = (payload: Record<string, unknown>, c = customer) => t.req(c.session, { method: 'POST', url: '/customer/orders', payload });

describe('coupon definition rules', () => {
  it('refuses every broken rule with 400/409/422 and writes nothing', async () => {
    const other = await newShop(t, ['1.00']);
    const taken = await coupon({ code: 'TAKEN1' });
    const [before] = await rows(t, 'SELECT count(*)::int AS n FROM merchant_coupon');
    const base = { code: 'NEWCODE', name: 'x', discount_type: 'percent', discount_value: '10' };
    const cases: [Record<string, unknown>, number, string][] = [
      [{ ...base, discount_value: '0' }, 400, 'VALIDATION_FAILED'],
      [{ ...base, discount_value: '-1' }, 400, 'VALIDATION_FAILED'],
      [{ ...base, discount_value: '100.01' }, 400, 'VALIDATION_FAILED'],
      [{ ...base, discount_value: '1.234' }, 400, 'VALIDATION_FAILED'],
      [{ ...base, max_discount: '-1.00' }, 400, 'VALIDATION_FAILED'],
      [{ ...base, minimum_order: '-1.00' }, 400, 'VALIDATION_FAILED'],
      [{ ...base, usage_limit: 0 }, 400, 'VALIDATION_FAILED'],
      [{ ...base, per_customer_limit: 0 }, 400, 'VALIDATION_FAILED'],
      [{ ...base, usage_count: 5 }, 400, 'VALIDATION_FAILED'],
      [{ ...base, discount_type: 'bogo' }, 400, 'VALIDATION_FAILED'],
      [{ ...base, code: 'a b' }, 400, 'VALIDATION_FAILED'],
      [{ ...base, valid_from: '2030-01-02T00:00:00Z', valid_until: '2030-01-01T00:00:00Z' }, 400, 'VALIDATION_FAILED'],
      [{ ...base, code: taken.code.toLowerCase() }, 409, 'COUPON_CODE_TAKEN'],
      [{ ...base, product_ids: [other.items[0].id] }, 422, 'CATALOG_ITEM_NOT_FOUND'],
      [{ ...base, branch_ids: [other.branchId] }, 422, 'BRANCH_NOT_FOUND'],
    ];
    for (const [payload, status, code] of cases) {
      const res = await t.req(shop.merchant, { method: 'POST', url: '/merchant/coupons', payload });
      expect(res.statusCode, JSON.stringify(payload)).toBe(status);
      expect(res.json().code).toBe(code);
    }
    expect((await rows(t, 'SELECT count(*)::int AS n FROM merchant_coupon'))[0]).toEqual(before);
    // Fixed amounts above 100 are fine; the same code at another merchant is fine.
    await coupon({ discount_type: 'fixed', discount_value: '150.00' });
    await coupon({ code: taken.code }, other);
  });

  it('updates a coupon under the same rules; usage_count is not writable; list filters by active', async () => {
    const c = await coupon({ code: 'PATCHME' });
    const bad = await t.req(shop.merchant, { method: 'PATCH', url: `/merchant/coupons/${c.id}`, payload: { discount_value: '120' } });
    expect(bad.statusCode).toBe(400);
    expect(
      (await t.req(shop.merchant, { method: 'PATCH', url: `/merchant/coupons/${c.id}`, payload: { usage_count: 0 } })).statusCode,
    ).toBe(400);
    const up = ok(
      await t.req(shop.merchant, {
        method: 'PATCH',
        url: `/merchant/coupons/${c.id}`,
        payload: { active: false, max_discount: '3.00', usage_limit: null },
      }),
    );
    expect(up).toMatchObject({ active: false, max_discount: '3.00', usage_limit: null, discount_value: '10.00' });
    const list = ok(await t.req(shop.merchant, { method: 'GET', url: '/merchant/coupons?active=false' }));
    expect(list.data.map((x: { id: string }) => x.id)).toContain(c.id);
    expect((await rows(t, "SELECT 1 FROM audit_log WHERE entity_id = $1 AND action = 'coupon.updated'", [c.id])).length).toBe(1);
  });
});

describe('coupon application', () => {
  const past = new Date(Date.now() - 86_400_000).toISOString();
  const future = new Date(Date.now() + 86_400_000).toISOString();

  it.each([
    ['COUPON_INACTIVE', { active: false }],
    ['COUPON_EXPIRED', { valid_from: new Date(Date.now() - 2 * 86_400_000).toISOString(), valid_until: past }],
    ['COUPON_NOT_YET_VALID', { valid_from: future }],
    ['COUPON_MINIMUM_NOT_MET', { minimum_order: '35.51' }],
    ['COUPON_NOT_APPLICABLE', { branch_ids: ['__other_branch__'] }],
    ['COUPON_NOT_APPLICABLE', { product_ids: ['__other_item__'] }],
  ])('%s: preflight explains, the order is refused with the code and writes nothing', async (code, over) => {
    const extra = { ...over } as Record<string, unknown>;
    if (Array.isArray(extra.branch_ids)) extra.branch_ids = [await otherBranch()];
    if (Array.isArray(extra.product_ids)) extra.product_ids = [await otherItem()];
    const c = await coupon(extra);
    const q = await preflight(cart(shop, customer.addressId, { coupon_code: c.code }));
    expect(q.coupon).toMatchObject({ code: c.code, applied: false, reason_code: code });
    expect(q).toMatchObject({ discount_total: '0.00', coupon_id: null });
    const res = await order(cart(shop, customer.addressId, { coupon_code: c.code }));
    expect(res.statusCode).toBe(422);
    expect(res.json().code).toBe(code);
    expect(await rows(t, 'SELECT 1 FROM merchant_order WHERE coupon_id = $1', [c.id])).toHaveLength(0);
    expect((await rows(t, 'SELECT usage_count FROM merchant_coupon WHERE id = $1', [c.id]))[0].usage_count).toBe(0);
  });

  it('COUPON_NOT_FOUND for an unknown code or another merchant’s code', async () => {
    const other = await newShop(t, ['1.00']);
    const theirs = await coupon({}, other);
    for (const code of ['NOSUCHCODE', theirs.code]) {
      const q = await preflight(cart(shop, customer.addressId, { coupon_code: code }));
      expect(q.coupon).toMatchObject({ applied: false, reason_code: 'COUPON_NOT_FOUND', coupon_id: null });
      const res = await order(cart(shop, customer.addressId, { coupon_code: code }));
      expect(res.json().code).toBe('COUPON_NOT_FOUND');
    }
  });

  it('COUPON_USAGE_LIMIT_REACHED and COUPON_CUSTOMER_LIMIT_REACHED; a cancelled order gives its use back', async () => {
    const c = await coupon({ usage_limit: 1 });
    const first = await placeOrder(t, customer.session, cart(shop, customer.addressId, { coupon_code: c.code.toLowerCase() }));
    expect(first).toMatchObject({ coupon_id: c.id, coupon_code: c.code, discount_total: '3.55' });
    const other = await newCustomer(t);
    expect((await preflight(cart(shop, other.addressId, { coupon_code: c.code }), other)).coupon.reason_code).toBe(
      'COUPON_USAGE_LIMIT_REACHED',
    );
    expect((await order(cart(shop, other.addressId, { coupon_code: c.code }), other)).json().code).toBe('COUPON_USAGE_LIMIT_REACHED');

    const perCustomer = await coupon({ per_customer_limit: 1 });
    await placeOrder(t, customer.session, cart(shop, customer.addressId, { coupon_code: perCustomer.code }));
    expect((await preflight(cart(shop, customer.addressId, { coupon_code: perCustomer.code }))).coupon.reason_code).toBe(
      'COUPON_CUSTOMER_LIMIT_REACHED',
    );
    expect((await order(cart(shop, customer.addressId, { coupon_code: perCustomer.code }))).json().code).toBe(
      'COUPON_CUSTOMER_LIMIT_REACHED',
    );
    await placeOrder(t, other.session, cart(shop, other.addressId, { coupon_code: perCustomer.code }));

    ok(await setStatus(t, shop.merchant, first.id, 'cancelled'));
    expect((await rows(t, 'SELECT usage_count FROM merchant_coupon WHERE id = $1', [c.id]))[0].usage_count).toBe(0);
    expect(
      (await rows(t, 'SELECT released_at FROM merchant_coupon_redemption WHERE order_id = $1', [first.id]))[0].released_at,
    ).not.toBeNull();
    const reuse = await placeOrder(t, other.session, cart(shop, other.addressId, { coupon_code: c.code }));
    expect(reuse.discount_total).toBe('3.55');
    expect(
      (await rows(t, 'SELECT count(*)::int AS n FROM merchant_coupon_redemption WHERE coupon_id = $1 AND released_at IS NULL', [c.id]))[0]
        .n,
    ).toBe(1);
  });

  it('computes discounts: percent capped by max_discount, fixed capped at the eligible subtotal, product restriction', async () => {
    const capped = await coupon({ discount_value: '50', max_discount: '4.00' });
    expect((await preflight(cart(shop, customer.addressId, { coupon_code: capped.code }))).discount_total).toBe('4.00');
    const big = await coupon({ discount_type: 'fixed', discount_value: '500.00' });
    const q = await preflight(cart(shop, customer.addressId, { coupon_code: big.code }));
    expect(q).toMatchObject({ subtotal: '35.50', discount_total: '35.50' });
    expect(q.total).toBe(q.delivery_fee);
    const product = await coupon({ discount_value: '50', product_ids: [shop.items[2].id] });
    expect((await preflight(cart(shop, customer.addressId, { coupon_code: product.code }))).discount_total).toBe('2.75');
    const branch = await coupon({ discount_type: 'fixed', discount_value: '1.25', branch_ids: [shop.branchId], minimum_order: '35.50' });
    const o = await placeOrder(t, customer.session, cart(shop, customer.addressId, { coupon_code: branch.code }));
    expect(o).toMatchObject({ discount_total: '1.25', subtotal: '35.50' });
    const red = await rows(t, 'SELECT discount_amount, customer_id FROM merchant_coupon_redemption WHERE order_id = $1', [o.id]);
    expect(red).toEqual([{ discount_amount: '1.25', customer_id: customer.userId }]);
    expect((await orderDb(t, o.id)).total).toBe(o.total);
  });
});

async function otherBranch() {
  return ok(
    await t.req(shop.merchant, {
      method: 'POST',
      url: '/merchant/branches',
      payload: { name: 'Other', address: 'x', location: { type: 'Point', coordinates: [-68.12, -16.49] } },
    }),
    201,
  ).id as string;
}
async function otherItem() {
  return ok(await t.req(shop.merchant, { method: 'POST', url: '/merchant/catalog', payload: { name: 'Not in cart', price: '1.00' } }), 201)
    .id as string;
}

describe('concurrent redemptions', () => {
  it('50 concurrent orders against usage_limit 10 give exactly 10 redemptions', async () => {
    const c = await coupon({ usage_limit: 10 });
    const customers = [];
    for (let i = 0; i < 5; i++) customers.push(...(await Promise.all(Array.from({ length: 10 }, () => newCustomer(t)))));
    const results = await Promise.all(customers.map((cu) => order(cart(shop, cu.addressId, { coupon_code: c.code }), cu)));
    const created = results.filter((r) => r.statusCode === 201);
    expect(created).toHaveLength(10);
    for (const r of results.filter((x) => x.statusCode !== 201)) {
      expect(r.statusCode, r.body).toBe(422);
      expect(r.json().code).toBe('COUPON_USAGE_LIMIT_REACHED');
    }
    expect((await rows(t, 'SELECT usage_count FROM merchant_coupon WHERE id = $1', [c.id]))[0].usage_count).toBe(10);
    expect((await rows(t, 'SELECT count(*)::int AS n FROM merchant_coupon_redemption WHERE coupon_id = $1', [c.id]))[0].n).toBe(10);
    expect((await rows(t, 'SELECT count(*)::int AS n FROM merchant_order WHERE coupon_id = $1', [c.id]))[0].n).toBe(10);
  });

  it('20 concurrent orders of one customer against per_customer_limit 2 give exactly 2', async () => {
    const c = await coupon({ per_customer_limit: 2 });
    const cu = await newCustomer(t);
    const results = await Promise.all(Array.from({ length: 20 }, () => order(cart(shop, cu.addressId, { coupon_code: c.code }), cu)));
    expect(results.filter((r) => r.statusCode === 201)).toHaveLength(2);
    expect(new Set(results.filter((r) => r.statusCode !== 201).map((r) => r.json().code))).toEqual(
      new Set(['COUPON_CUSTOMER_LIMIT_REACHED']),
    );
    expect((await rows(t, 'SELECT usage_count FROM merchant_coupon WHERE id = $1', [c.id]))[0].usage_count).toBe(2);
  });
});
