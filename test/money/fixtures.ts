import { expect } from 'vitest';
import type { Actor } from '../../src/platform/auth.js';
import { newId } from '../../src/platform/ids.js';
import { formatMoney, money } from '../../src/platform/money.js';
import type { PaymentDestination } from '../../src/modules/commerce/index.js';
import type { Session, TestApp } from '../helpers.js';
import { newDriver, newUser, pt, tripDb, type TestDriver } from '../logistics/fixtures.js';

/**
 * Real orders for the money tests, made through the commerce and logistics routes: a customer places the order
 * (POST /customer/orders), the merchant moves it to ready (PATCH /merchant/orders/:id/status, which creates the trip),
 * dispatch assigns a driver who accepts and verifies the pickup and delivery PINs; commerce then marks the order
 * delivered and calls money.orderDelivered in that transaction.
 *
 * The figures are controlled through the real pricing: the subtotal is one catalog item at that price, the discount
 * a fixed-amount coupon, and the delivery fee the demo territory's marketplace tariff set to a flat base fee.
 */

type Res = { statusCode: number; body: string; json: () => any };
export function ok(res: Res, status = 200) {
  expect(res.statusCode, res.body).toBe(status);
  return res.json();
}

export interface MoneyShop {
  id: string;
  session: Session;
  branchId: string;
}

export interface MoneyCustomer {
  session: Session;
  userId: string;
  addressId: string;
}

/** A fresh approved merchant (own comercio user, so its wallet starts empty) with one branch in the demo territory. */
export async function newMerchant(t: TestApp, admin: Session, commission = '10.00', at = { lon: -68.135, lat: -16.5 }): Promise<MoneyShop> {
  const u = await newUser(t, 'comercio');
  const m = ok(
    await t.req(admin, {
      method: 'POST',
      url: '/merchants',
      payload: { owner_user_id: u.userId, name: `Shop ${newId().slice(-6)}`, commission_percent: commission },
    }),
    201,
  );
  ok(await t.req(admin, { method: 'POST', url: `/merchants/${m.id}/approve`, payload: {} }));
  const session = await t.login(u.email);
  const branch = ok(
    await t.req(session, {
      method: 'POST',
      url: '/merchant/branches',
      payload: { name: 'Centro', address: 'Calle 1', location: pt(at.lon, at.lat) },
    }),
    201,
  );
  return { id: m.id, session, branchId: branch.id };
}

/** The seeded demo merchant with its seeded branch (in the demo territory). */
export async function demoShop(t: TestApp): Promise<MoneyShop & { territoryId: string | null }> {
  const session = await t.as('merchant');
  const { rows } = await t.db.withSystem((tx) =>
    tx.query(
      'SELECT m.id, b.id AS branch_id, b.territory_id FROM merchant m JOIN merchant_branch b ON b.merchant_id = m.id WHERE m.owner_user_id = $1 ORDER BY b.id LIMIT 1',
      [t.demo.users.merchant],
    ),
  );
  return { id: rows[0].id, session, branchId: rows[0].branch_id, territoryId: rows[0].territory_id };
}

/** A branch of `shop` at a point (e.g. outside every territory). */
export async function newBranch(t: TestApp, shop: MoneyShop, at: { lon: number; lat: number }): Promise<MoneyShop> {
  const branch = ok(
    await t.req(shop.session, {
      method: 'POST',
      url: '/merchant/branches',
      payload: { name: `B ${newId().slice(-6)}`, address: 'Elsewhere 1', location: pt(at.lon, at.lat) },
    }),
    201,
  );
  return { ...shop, branchId: branch.id };
}

/** A new customer with one address near the demo branches. */
export async function newCustomer(t: TestApp, at = { lon: -68.125, lat: -16.51 }): Promise<MoneyCustomer> {
  const u = await newUser(t, 'delivery');
  const session = await t.login(u.email);
  const address = ok(
    await t.req(session, {
      method: 'POST',
      url: '/customer/addresses',
      payload: { address: 'Av. Arce 100', location: pt(at.lon, at.lat) },
    }),
    201,
  );
  return { session, userId: u.userId, addressId: address.id };
}

export interface OrderSpec {
  destination: PaymentDestination;
  subtotal: string;
  /** Fixed-amount coupon; omitted = no coupon. */
  discount?: string;
  /** Delivery fee: the demo territory's marketplace tariff becomes this flat fee before the order is placed; omitted = whatever the server prices (e.g. a branch outside every territory). */
  fee?: string;
  /** Cash orders: who collects the cash at the door (the merchant's payment profile `cash_collected_by`); omitted = `merchant` (his own staff, the model these tests were written for). */
  collectedBy?: 'driver' | 'merchant';
}

export interface PlacedOrder {
  id: string;
  total: string;
}

const collectors = new Map<string, 'driver' | 'merchant'>();
/** Cash orders of `shop` are collected by `who` from now on (PATCH /merchant/payment-profile cash_collected_by; the server's default is driver). */
export async function setCashCollector(t: TestApp, shop: Pick<MoneyShop, 'id' | 'session'>, who: 'driver' | 'merchant') {
  if (collectors.get(shop.id) === who) return;
  ok(await t.req(shop.session, { method: 'PATCH', url: '/merchant/payment-profile', payload: { cash_collected_by: who } }));
  collectors.set(shop.id, who);
}

const directEnabled = new Set<string>();
/** Merchant_direct orders need the merchant's direct payment enabled (PATCH /merchant/payment-profile); once per merchant. */
export async function enableDirectPayment(t: TestApp, shop: Pick<MoneyShop, 'id' | 'session'>) {
  if (directEnabled.has(shop.id)) return;
  ok(
    await t.req(shop.session, {
      method: 'PATCH',
      url: '/merchant/payment-profile',
      payload: { direct_payment_enabled: true, instructions: 'Transfer to account 1234' },
    }),
  );
  directEnabled.add(shop.id);
}

/** Order helpers bound to one test app: the admin session, one customer and one driver of large capacity. */
export async function orderKit(t: TestApp) {
  const admin = await t.as('admin');
  const customer = await newCustomer(t);
  const driver: TestDriver = await newDriver(t, { lon: -68.135, lat: -16.5 }, { capacity: 50, admin });
  const tariffs = ok(await t.req(admin, { method: 'GET', url: '/admin/territory-tariffs?service_mode=marketplace' })).data as {
    id: string;
  }[];
  expect(tariffs).toHaveLength(1);
  const tariffId = tariffs[0].id;
  let currentFee: string | null = null;

  async function setFee(fee: string) {
    if (currentFee === fee) return;
    ok(
      await t.req(admin, {
        method: 'PATCH',
        url: `/admin/territory-tariffs/${tariffId}`,
        payload: { base_fee: fee, per_km_fee: '0.00', minimum_fee: '0.00', driver_share_type: 'percent', driver_share_value: '70' },
      }),
    );
    currentFee = fee;
  }

  /** Places an order at `shop` (through POST /customer/orders) priced exactly as `spec`; asserts the server's figures. */
  async function place(shop: MoneyShop, spec: OrderSpec, who: MoneyCustomer = customer): Promise<PlacedOrder> {
    const item = ok(
      await t.req(shop.session, {
        method: 'POST',
        url: '/merchant/catalog',
        payload: { name: `Item ${newId().slice(-6)}`, price: spec.subtotal },
      }),
      201,
    );
    let couponCode: string | undefined;
    if (spec.discount && !money(spec.discount).isZero()) {
      couponCode = `M${newId().slice(-10).toUpperCase()}`;
      ok(
        await t.req(shop.session, {
          method: 'POST',
          url: '/merchant/coupons',
          payload: { code: couponCode, name: 'fixed', discount_type: 'fixed', discount_value: spec.discount },
        }),
        201,
      );
    }
    if (spec.fee !== undefined) await setFee(spec.fee);
    if (spec.destination === 'merchant_direct') await enableDirectPayment(t, shop);
    if (spec.destination === 'cash') await setCashCollector(t, shop, spec.collectedBy ?? 'merchant');
    const payload = {
      branch_id: shop.branchId,
      address_id: who.addressId,
      items: [{ catalog_item_id: item.id, quantity: 1 }],
      payment_destination: spec.destination,
      ...(couponCode ? { coupon_code: couponCode } : {}),
    };
    const o = ok(await t.req(who.session, { method: 'POST', url: '/customer/orders', payload }), 201);
    const row = await orderRow(t, o.id);
    const total = formatMoney(
      money(spec.subtotal)
        .minus(spec.discount ?? '0')
        .plus(spec.fee ?? row.delivery_fee),
    );
    expect(row).toMatchObject({
      subtotal: formatMoney(spec.subtotal),
      discount_total: formatMoney(spec.discount ?? '0'),
      total,
      payment_destination: spec.destination,
      collected_by: spec.destination === 'cash' ? (spec.collectedBy ?? 'merchant') : null,
    });
    return { id: o.id, total: row.total };
  }

  /** Merchant: confirmed → preparing → ready (commerce creates the trip). Returns the trip id. */
  async function ready(shop: MoneyShop, orderId: string): Promise<string> {
    for (const status of ['confirmed', 'preparing', 'ready'])
      ok(await t.req(shop.session, { method: 'PATCH', url: `/merchant/orders/${orderId}/status`, payload: { status } }));
    return (await orderRow(t, orderId)).trip_id;
  }

  /**
   * Ready, then the trip through logistics: assign, accept, pickup PIN, start delivery, delivery PIN → the order is delivered.
   * A trip with cash to collect records it at the door (`cash` overrides the amount, with its discrepancy reason).
   */
  async function deliver(
    shop: MoneyShop,
    orderId: string,
    by: TestDriver = driver,
    cash?: { collected: string; reason?: string },
  ): Promise<string> {
    const tripId = await ready(shop, orderId);
    ok(await t.req(admin, { method: 'POST', url: `/trips/${tripId}/assign`, payload: { driver_id: by.id } }));
    ok(await t.req(by.session, { method: 'POST', url: `/driver/trips/${tripId}/accept` }));
    const trip = await tripDb(t, tripId);
    ok(await t.req(by.session, { method: 'POST', url: `/trips/${tripId}/verify-pickup`, payload: { pin: trip.pickup_pin } }));
    ok(await t.req(by.session, { method: 'POST', url: `/driver/trips/${tripId}/start-delivery` }));
    const collects = money(trip.cash_to_collect).gt(0);
    const cashStep = collects
      ? { cash_collected: cash?.collected ?? trip.cash_to_collect, ...(cash?.reason ? { cash_discrepancy_reason: cash.reason } : {}) }
      : {};
    ok(
      await t.req(by.session, {
        method: 'POST',
        url: `/trips/${tripId}/verify-delivery`,
        payload: { pin: trip.delivery_pin, ...cashStep },
      }),
    );
    expect((await orderRow(t, orderId)).status).toBe('delivered');
    return tripId;
  }

  /** Places and delivers an order; returns its id. */
  async function delivered(shop: MoneyShop, spec: OrderSpec): Promise<string> {
    const o = await place(shop, spec);
    await deliver(shop, o.id);
    return o.id;
  }

  /** The administrator records that the platform received a platform order's payment (POST /admin/orders/:id/payment-received). */
  async function receive(orderId: string, method = 'driver_cash') {
    return ok(await t.req(admin, { method: 'POST', url: `/admin/orders/${orderId}/payment-received`, payload: { method } }), 201);
  }

  return { admin, customer, driver, setFee, place, ready, deliver, delivered, receive };
}

export type OrderKit = Awaited<ReturnType<typeof orderKit>>;

export async function orderRow(t: TestApp, id: string) {
  return (await t.db.withSystem((tx) => tx.query('SELECT * FROM merchant_order WHERE id = $1', [id]))).rows[0];
}

export const adminActor = (t: TestApp, organizationId = t.demo.organizationId, userId = t.demo.users.admin): Actor => ({
  userId,
  organizationId,
  role: 'administrator',
  kind: 'administrator',
  sessionId: 'test',
  requestId: 'test',
  subadmin: null,
});

/** Uploads `bytes` as a private object of a generic purpose through the storage routes (slot, then PUT); returns the object id. */
export async function uploadObject(t: TestApp, s: Session, purpose: string, bytes: Buffer, mime = 'image/png'): Promise<string> {
  const slot = ok(
    await t.req(s, {
      method: 'POST',
      url: '/storage/generic/uploads',
      payload: { purpose, mime_type: mime, size_bytes: bytes.length, filename: 'proof.png' },
    }),
    201,
  );
  const put = await t.req(s, {
    method: 'PUT',
    url: `/storage/uploads/${slot.upload_id}`,
    payload: bytes,
    headers: { 'content-type': mime, 'x-upload-token': slot.upload_token },
  });
  return ok(put, 201).id;
}

/** Calls money.orderDelivered again with the order's real facts (what commerce does at delivery), optionally overriding some. */
export async function orderDeliveredAgain(t: TestApp, orderId: string, over: Partial<{ tripId: string | null }> = {}) {
  const actor = adminActor(t);
  await t.db.withTenant({ organizationId: actor.organizationId, userId: actor.userId }, async (tx) => {
    const facts = (await t.app.services.orders!.getOrderFacts(tx, orderId))!;
    await t.app.services.money!.orderDelivered(tx, actor, { ...facts, ...over });
  });
}

export async function walletEntries(t: TestApp, where: { orderId?: string; merchantId?: string }) {
  const { rows } = await t.db.withSystem((tx) =>
    tx.query(
      'SELECT entry_type, amount::text AS amount FROM merchant_wallet_entry WHERE ($1::text IS NULL OR order_id = $1) AND ($2::text IS NULL OR merchant_id = $2) ORDER BY created_at, id',
      [where.orderId ?? null, where.merchantId ?? null],
    ),
  );
  return rows as { entry_type: string; amount: string }[];
}

export async function dbBalance(t: TestApp, merchantId: string): Promise<string> {
  const { rows } = await t.db.withSystem((tx) =>
    tx.query('SELECT COALESCE(sum(amount), 0)::numeric(14,2)::text AS b FROM merchant_wallet_entry WHERE merchant_id = $1', [merchantId]),
  );
  return rows[0].b;
}
