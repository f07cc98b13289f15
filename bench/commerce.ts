import { formatCpu, load, openLoop, withCpu, type BenchEnv } from './lib.js';

/**
 * POST /customer/orders (a 5-item cart with a coupon, server-priced, coupon redeemed in the order
 * transaction) against GET /api/v1/me in the same run. The coupon has a huge usage_limit, so every
 * order is accepted; its row lock still serializes the redemptions, which the no-coupon run shows.
 * Latency at an open-loop 50 orders/s (with the coupon).
 */
export default async function commerceBench(env: BenchEnv) {
  const customer = await env.login('customer@demo.test');
  const merchant = await env.login('merchant@demo.test');
  const api = async (token: string, method: string, path: string, body?: unknown) => {
    const r = await fetch(`${env.baseUrl}/api/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${await r.text()}`);
    return r.json() as Promise<any>;
  };

  const code = `BENCH${Date.now() % 1_000_000}`;
  await api(merchant, 'POST', '/merchant/coupons', {
    code,
    name: 'bench',
    discount_type: 'percent',
    discount_value: '5',
    usage_limit: 100_000_000,
    per_customer_limit: 100_000_000,
  });
  const market = await api(customer, 'GET', '/customer/marketplace?limit=200');
  const shop = market.data.find((m: { items: unknown[] }) => m.items.length >= 5);
  if (!shop) throw new Error('the demo merchant with 5 items is missing');
  const address = (await api(customer, 'GET', '/customer/addresses')).data[0];
  const cart = {
    branch_id: shop.branches[0].id,
    address_id: address.id,
    items: shop.items.slice(0, 5).map((i: { id: string }) => ({ catalog_item_id: i.id, quantity: 2 })),
  };
  const headers = { authorization: `Bearer ${customer}`, 'content-type': 'application/json' };

  const me = await load({ url: `${env.baseUrl}/api/v1/me`, headers: { authorization: `Bearer ${customer}` }, duration: env.duration });
  const withCoupon = await withCpu(env.serverPid, () =>
    load({
      url: `${env.baseUrl}/api/v1/customer/orders`,
      method: 'POST',
      headers,
      body: JSON.stringify({ ...cart, coupon_code: code }),
      duration: env.duration,
    }),
  );
  const plain = await withCpu(env.serverPid, () =>
    load({ url: `${env.baseUrl}/api/v1/customer/orders`, method: 'POST', headers, body: JSON.stringify(cart), duration: env.duration }),
  );
  const OPEN_RATE = 50;
  const open = await openLoop({
    url: `${env.baseUrl}/api/v1/customer/orders`,
    method: 'POST',
    headers,
    body: JSON.stringify({ ...cart, coupon_code: code }),
    rate: OPEN_RATE,
    seconds: env.duration,
  });

  env.report({ scenario: 'commerce', metric: 'GET /me rps (same run)', value: me.rps, note: `p99 ${me.p99} ms` });
  env.report({
    scenario: 'commerce',
    metric: 'POST /customer/orders +coupon rps',
    value: withCoupon.rps,
    note: `p99 ${withCoupon.p99} ms, non2xx ${withCoupon.non2xx}, errors ${withCoupon.errors}; ${formatCpu(withCoupon.cpu, 'order')}`,
  });
  env.report({
    scenario: 'commerce',
    metric: 'POST /customer/orders no coupon rps',
    value: plain.rps,
    note: `p99 ${plain.p99} ms, non2xx ${plain.non2xx}, errors ${plain.errors}; ${formatCpu(plain.cpu, 'order')}`,
  });
  env.report({ scenario: 'commerce', metric: 'orders+coupon ÷ /me', value: withCoupon.rps / me.rps, unit: 'ratio', note: 'target ≥ 0.16' });
  env.report({
    scenario: 'commerce',
    metric: `orders+coupon open loop ${OPEN_RATE}/s p99`,
    value: open.p99,
    unit: 'ms',
    note: `p50 ${open.p50.toFixed(1)}, achieved ${Math.round(open.achieved)}/s, non2xx ${open.non2xx}, errors ${open.errors}; target < 100`,
  });
  env.report({ scenario: 'commerce', metric: 'orders+coupon p99 ÷ /me p99', value: withCoupon.p99 / Math.max(me.p99, 1), unit: 'ratio' });
}
