import { expect } from 'vitest';
import type { Session, TestApp } from '../helpers.js';
import { newUser, pt } from '../logistics/fixtures.js';
import { newId } from '../../src/platform/ids.js';

export { pt };

export interface Shop {
  merchant: Session;
  merchantId: string;
  branchId: string;
  items: { id: string; price: string }[];
}

type Res = { statusCode: number; body: string; json: () => any };

export function ok(res: Res, status = 200) {
  expect(res.statusCode, res.body).toBe(status);
  return res.json();
}

export async function rows<T = any>(t: TestApp, sql: string, params: unknown[] = []): Promise<T[]> {
  return (await t.db.withSystem((tx) => tx.query(sql, params))).rows as T[];
}

/** A fresh approved merchant (own comercio user) with one branch in the La Paz demo territory and priced items. */
export async function newShop(
  t: TestApp,
  prices = ['10.00', '20.00', '5.50'],
  at = { lon: -68.135, lat: -16.5 },
  admin?: Session,
): Promise<Shop> {
  admin ??= await t.as('admin');
  const u = await newUser(t, 'comercio', admin.organizationId);
  const m = ok(
    await t.req(admin, { method: 'POST', url: '/merchants', payload: { owner_user_id: u.userId, name: `Shop ${newId().slice(-6)}` } }),
    201,
  );
  ok(await t.req(admin, { method: 'POST', url: `/merchants/${m.id}/approve`, payload: {} }));
  const merchant = await t.login(u.email);
  const branch = ok(
    await t.req(merchant, {
      method: 'POST',
      url: '/merchant/branches',
      payload: { name: 'Centro', address: 'Calle 1', location: pt(at.lon, at.lat) },
    }),
    201,
  );
  const items = [];
  for (const [i, price] of prices.entries()) {
    const it = ok(await t.req(merchant, { method: 'POST', url: '/merchant/catalog', payload: { name: `Item ${i}`, price } }), 201);
    items.push({ id: it.id as string, price });
  }
  return { merchant, merchantId: m.id, branchId: branch.id, items };
}

/** A new customer with one address near the demo branch. */
export async function newCustomer(t: TestApp, organizationId = t.demo.organizationId, at = { lon: -68.125, lat: -16.51 }) {
  const u = await newUser(t, 'delivery', organizationId);
  const session = await t.login(u.email);
  const address = ok(
    await t.req(session, {
      method: 'POST',
      url: '/customer/addresses',
      payload: { address: 'Av. Arce 100', location: pt(at.lon, at.lat) },
    }),
    201,
  );
  return { session, userId: u.userId, addressId: address.id as string };
}

export function cart(shop: Shop, addressId: string, over: Record<string, unknown> = {}) {
  return {
    branch_id: shop.branchId,
    address_id: addressId,
    items: shop.items.map((i) => ({ catalog_item_id: i.id, quantity: 1 })),
    ...over,
  };
}

export async function placeOrder(t: TestApp, customer: Session, payload: Record<string, unknown>) {
  return ok(await t.req(customer, { method: 'POST', url: '/customer/orders', payload }), 201);
}

export const setStatus = (t: TestApp, merchant: Session, id: string, status: string) =>
  t.req(merchant, { method: 'PATCH', url: `/merchant/orders/${id}/status`, payload: { status } });

/** Walks an order through the merchant states up to `target` (pending_confirmation .. ready, or cancelled). */
export async function orderIn(
  t: TestApp,
  shop: Shop,
  customer: { session: Session; addressId: string },
  target: string,
  over: Record<string, unknown> = {},
) {
  const o = await placeOrder(t, customer.session, cart(shop, customer.addressId, over));
  const path = ['pending_confirmation', 'confirmed', 'preparing', 'ready'];
  if (target === 'cancelled') {
    ok(await setStatus(t, shop.merchant, o.id, 'cancelled'));
    return o.id as string;
  }
  for (const s of path.slice(1, path.indexOf(target) + 1)) ok(await setStatus(t, shop.merchant, o.id, s));
  return o.id as string;
}

export async function orderDb(t: TestApp, id: string) {
  return (await rows(t, 'SELECT * FROM merchant_order WHERE id = $1', [id]))[0];
}

/** A merchant's express delivery (POST /merchant/delivery-express) to a recipient without an account; 201 expected. */
export async function newExpress(t: TestApp, shop: Pick<Shop, 'merchant' | 'branchId'>, over: Record<string, unknown> = {}) {
  return ok(
    await t.req(shop.merchant, {
      method: 'POST',
      url: '/merchant/delivery-express',
      payload: {
        branch_id: shop.branchId,
        customer_name: 'Ana',
        customer_phone: '+59170000001',
        dropoff_address: 'Calle 2',
        dropoff_location: pt(-68.12, -16.51),
        ...over,
      },
    }),
    201,
  );
}
