import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, TEST_SECRETS_KEY, type Session, type TestApp } from '../helpers.js';
import { newShop, ok, pt, rows } from '../commerce/fixtures.js';
import { DEMO_PASSWORD } from '../../src/seed.js';
import { newId } from '../../src/platform/ids.js';
import { decryptSecret, keyring } from '../../src/platform/secrets.js';
import { readShopifyOrder, readWooOrder } from '../../src/modules/shops/service/payloads.js';

// The shops' published sample orders (Shopify's order webhook example, WooCommerce's REST order JSON).
const fixture = (name: string) => JSON.parse(readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8')) as Record<string, any>;
const SHOPIFY = readFileSync(new URL('./fixtures/shopify-order.json', import.meta.url), 'utf8');
const WOO = fixture('woocommerce-order.json');

/** The demo merchant is in central La Paz; dropoffs there. */
const LA_PAZ = { lat: -16.5105, lon: -68.1265 };

let t: TestApp;
let merchant: Session;
let admin: Session;

const sign = (secret: string, body: string) => createHmac('sha256', secret).update(body).digest('base64');

/** A Shopify order with its own id, now, at a La Paz point unless told otherwise (the sample's id is kept in the raw text otherwise). */
function shopifyOrder(id: string, over: Record<string, unknown> = {}, ship: Record<string, unknown> = {}) {
  const o = JSON.parse(SHOPIFY);
  return JSON.stringify({
    ...o,
    id: Number(id),
    admin_graphql_api_id: `gid://shopify/Order/${id}`,
    updated_at: new Date().toISOString(),
    ...over,
    shipping_address: { ...o.shipping_address, latitude: LA_PAZ.lat, longitude: LA_PAZ.lon, ...ship },
  });
}

function wooOrder(id: number, over: Record<string, unknown> = {}) {
  return JSON.stringify({ ...WOO, id, number: String(id), date_modified_gmt: new Date().toISOString().slice(0, 19), ...over });
}

async function connect(s: Session, platform: 'shopify' | 'woocommerce', secret: string, extra: Record<string, unknown> = {}) {
  return ok(
    await t.req(s, {
      method: 'POST',
      url: '/shops/connections',
      payload: { platform, shop_url: 'mi-tienda.myshopify.com', secret, ...extra },
    }),
    201,
  );
}

function shopify(connectionId: string, secret: string, body: string, headers: Record<string, string> = {}) {
  return t.req(null, {
    method: 'POST',
    url: `/shops/shopify/${connectionId}`,
    payload: body,
    headers: {
      'content-type': 'application/json',
      'x-shopify-topic': 'orders/create',
      'x-shopify-hmac-sha256': sign(secret, body),
      'x-shopify-webhook-id': newId(),
      'x-shopify-triggered-at': new Date().toISOString(),
      'x-shopify-shop-domain': 'mi-tienda.myshopify.com',
      ...headers,
    },
  });
}

function woo(connectionId: string, secret: string, body: string, headers: Record<string, string> = {}) {
  return t.req(null, {
    method: 'POST',
    url: `/shops/woocommerce/${connectionId}`,
    payload: body,
    headers: {
      'content-type': 'application/json',
      'x-wc-webhook-topic': 'order.created',
      'x-wc-webhook-signature': sign(secret, body),
      'x-wc-webhook-delivery-id': String(Math.floor(Math.random() * 1e9)),
      'x-wc-webhook-source': 'https://tienda.example.com/',
      ...headers,
    },
  });
}

const count = async (table: string, where = 'true', params: unknown[] = []) =>
  Number((await rows<{ n: number }>(t, `SELECT count(*)::int AS n FROM ${table} WHERE ${where}`, params))[0].n);

const expressOf = async (id: string) =>
  (
    await rows(
      t,
      'SELECT e.*, tr.status AS trip_status, tr.source_channel AS trip_source, tr.dropoff_address AS trip_dropoff FROM delivery_express_request e LEFT JOIN trip tr ON tr.organization_id = e.organization_id AND tr.id = e.trip_id WHERE e.id = $1',
      [id],
    )
  )[0];

beforeAll(async () => {
  t = await createTestApp();
  merchant = await t.as('merchant');
  admin = await t.as('admin');
});
afterAll(() => t?.close());

describe('shop payloads (pure)', () => {
  it("reads Shopify's sample order: the exact id (beyond 2^53) from its GraphQL id, the shipping address, the items", () => {
    const f = readShopifyOrder(JSON.parse(SHOPIFY))!;
    expect(f.shopOrderId).toBe('820982911946154508');
    expect(f.number).toBe('#9999');
    expect(f.cancelled).toBe(false);
    expect(f.delivery).toEqual({
      customerName: 'Steve Shipper',
      customerPhone: '555-555-SHIP',
      address: '123 Shipping Street, Shippington, Kentucky, 40003, United States',
      location: null,
    });
    expect(f.packageDescription).toBe('Pedido #9999 · 1 × IPod Nano - 8GB, 1 × IPod Nano - 8GB · total 403.00 USD');
    expect(f.modifiedAt?.toISOString()).toBe('2022-01-01T00:00:00.000Z');
  });

  it("reads WooCommerce's sample order: shipping name and address, the billing phone, date_modified_gmt as UTC, ended statuses", () => {
    const f = readWooOrder(WOO)!;
    expect(f.shopOrderId).toBe('727');
    expect(f.delivery?.customerName).toBe('John Doe');
    expect(f.delivery?.customerPhone).toBe('(555) 555-5555');
    expect(f.delivery?.address).toBe('969 Market, San Francisco, CA, 94103, US');
    expect(f.modifiedAt?.toISOString()).toBe('2017-03-22T19:28:08.000Z');
    expect(readWooOrder({ ...WOO, status: 'cancelled' })!.cancelled).toBe(true);
    expect(readWooOrder({ id: 727 })!.delivery).toBeNull();
    expect(readWooOrder({ status: 'processing' })).toBeNull();
  });
});

describe('shop connections', () => {
  it('stores the secret encrypted and never returns it; lists and gets; administrators name the merchant', async () => {
    const secret = `shpss_${newId()}`;
    const c = await connect(merchant, 'shopify', secret);
    expect(c.secret_set).toBe(true);
    expect(JSON.stringify(c)).not.toContain(secret);
    expect(c.webhook_url).toBe(`/api/v1/shops/shopify/${c.id}`);
    expect(c.topics).toEqual(['orders/create', 'orders/updated', 'orders/cancelled', 'orders/delete']);
    expect(c.shop_url).toBe('https://mi-tienda.myshopify.com');
    const [stored] = await rows<{ secret: string; organization_id: string }>(
      t,
      'SELECT secret, organization_id FROM shop_connection WHERE id = $1',
      [c.id],
    );
    expect(stored.secret.startsWith('enc:v1:')).toBe(true);
    expect(stored.secret).not.toContain(secret);
    expect(
      decryptSecret(keyring(Buffer.from(TEST_SECRETS_KEY, 'hex')), stored.secret, `shop_connection:${stored.organization_id}:${c.id}`),
    ).toBe(secret);

    const got = ok(await t.req(merchant, { method: 'GET', url: `/shops/connections/${c.id}` }));
    expect(got).toEqual(c);
    const list = ok(await t.req(merchant, { method: 'GET', url: '/shops/connections?limit=1' }));
    expect(list.data).toHaveLength(1);
    expect(JSON.stringify(list)).not.toContain(secret);

    const audit = await rows(t, "SELECT after FROM audit_log WHERE entity_type = 'shop_connection' AND entity_id = $1", [c.id]);
    expect(audit).toHaveLength(1);
    expect(JSON.stringify(audit)).not.toContain(secret);

    const r = await t.req(admin, {
      method: 'POST',
      url: '/shops/connections',
      payload: { platform: 'woocommerce', shop_url: 'https://tienda.example.com', secret },
    });
    expect(r.statusCode, r.body).toBe(422);
    expect(r.json().code).toBe('MERCHANT_REQUIRED');
    const merchantId = (await rows(t, 'SELECT id FROM merchant WHERE owner_user_id = $1', [merchant.userId]))[0].id;
    const byAdmin = await connect(admin, 'woocommerce', secret, { merchant_id: merchantId, shop_url: 'https://tienda.example.com/' });
    expect(byAdmin.merchant_id).toBe(merchantId);
    expect(byAdmin.shop_url).toBe('https://tienda.example.com');
  });

  it("another merchant's or organization's connection is 404, and not listed", async () => {
    const c = await connect(merchant, 'woocommerce', 'woo-secret-123');
    const other = await newShop(t);
    for (const [method, url] of [
      ['GET', `/shops/connections/${c.id}`],
      ['DELETE', `/shops/connections/${c.id}`],
    ] as const) {
      expect((await t.req(other.merchant, { method, url })).statusCode).toBe(404);
    }
    expect(ok(await t.req(other.merchant, { method: 'GET', url: '/shops/connections' })).data).toEqual([]);
    const org = await t.newOrganization();
    const otherAdmin = await t.login(org.logins.admin, DEMO_PASSWORD, org.organizationId);
    expect((await t.req(otherAdmin, { method: 'GET', url: `/shops/connections/${c.id}` })).statusCode).toBe(404);
    expect((await t.req(otherAdmin, { method: 'DELETE', url: `/shops/connections/${c.id}` })).statusCode).toBe(404);
    // A branch of another merchant is no pickup for this one.
    const r = await t.req(merchant, {
      method: 'POST',
      url: '/shops/connections',
      payload: { platform: 'shopify', shop_url: 'x.myshopify.com', secret: 'abcdefgh', branch_id: other.branchId },
    });
    expect(r.statusCode, r.body).toBe(404);
  });
});

describe('Shopify order webhooks', () => {
  it('an order with coordinates becomes one express request (source api) with its trip; a repeated delivery id writes nothing', async () => {
    const secret = `shpss_${newId()}`;
    const c = await connect(merchant, 'shopify', secret);
    const body = shopifyOrder('820982911946154508');
    const deliveryId = newId();
    const first = ok(await shopify(c.id, secret, body, { 'x-shopify-webhook-id': deliveryId }));
    expect(first).toMatchObject({ received: true, duplicate: false, outcome: 'created' });
    const e = await expressOf(first.express_request_id);
    expect(e).toMatchObject({
      status: 'created',
      source_channel: 'api',
      customer_name: 'Steve Shipper',
      trip_status: 'pending',
      trip_source: 'api',
    });
    expect(e.dropoff_address).toBe('123 Shipping Street, Shippington, Kentucky, 40003, United States');
    expect(e.package_description).toContain('IPod Nano - 8GB');
    // The merchant sees it with his own express requests.
    const mine = ok(await t.req(merchant, { method: 'GET', url: '/merchant/delivery-express' }));
    expect(mine.data.map((x: { id: string }) => x.id)).toContain(first.express_request_id);

    const again = ok(await shopify(c.id, secret, body, { 'x-shopify-webhook-id': deliveryId }));
    expect(again).toMatchObject({ duplicate: true, outcome: 'created', express_request_id: first.express_request_id });
    // Another delivery of the same order (a retry with a new id) changes nothing either.
    expect(ok(await shopify(c.id, secret, body))).toMatchObject({ duplicate: false, outcome: 'unchanged' });
    expect(
      await count('delivery_express_request', 'merchant_id = (SELECT merchant_id FROM shop_connection WHERE id = $1)', [c.id]),
    ).toBeGreaterThan(0);
    expect(await count('shop_order', 'connection_id = $1', [c.id])).toBe(1);
    expect(await count('delivery_express_request', "source_channel = 'api' AND id = $1", [first.express_request_id])).toBe(1);
  });

  it('a bad or missing signature is 401, a replayed timestamp 401, an unknown connection 404: nothing written', async () => {
    const secret = `shpss_${newId()}`;
    const c = await connect(merchant, 'shopify', secret);
    const body = shopifyOrder('1001');
    const before = {
      orders: await count('shop_order'),
      deliveries: await count('shop_delivery'),
      express: await count('delivery_express_request'),
    };
    const bad = await shopify(c.id, secret, body, { 'x-shopify-hmac-sha256': sign('another-secret', body) });
    expect(bad.statusCode).toBe(401);
    expect(bad.headers['content-type']).toContain('application/problem+json');
    expect(bad.json().code).toBe('SHOP_SIGNATURE_INVALID');
    // Signed, then one byte changed.
    const tampered = await shopify(c.id, secret, body.replace('Steve Shipper', 'Steve Shippex'), {
      'x-shopify-hmac-sha256': sign(secret, body),
    });
    expect(tampered.json().code).toBe('SHOP_SIGNATURE_INVALID');
    expect((await shopify(c.id, secret, body, { 'x-shopify-hmac-sha256': '' })).json().code).toBe('SHOP_SIGNATURE_MISSING');
    const stale = await shopify(c.id, secret, body, { 'x-shopify-triggered-at': new Date(Date.now() - 7 * 3600_000).toISOString() });
    expect(stale.statusCode).toBe(401);
    expect(stale.json().code).toBe('SHOP_WEBHOOK_STALE');
    const unknown = await shopify(newId(), secret, body);
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().code).toBe('SHOP_CONNECTION_NOT_FOUND');
    // A Shopify connection does not take WooCommerce's route.
    expect((await woo(c.id, secret, wooOrder(5))).statusCode).toBe(404);
    const notJson = await shopify(c.id, secret, '{"id": ');
    expect(notJson.statusCode).toBe(400);
    expect(notJson.json().code).toBe('MALFORMED_JSON');
    expect({
      orders: await count('shop_order'),
      deliveries: await count('shop_delivery'),
      express: await count('delivery_express_request'),
    }).toEqual(before);
  });

  it('two deliveries of one new order at once create one express request', async () => {
    const secret = `shpss_${newId()}`;
    const c = await connect(merchant, 'shopify', secret);
    const body = shopifyOrder('2002');
    const [a, b] = await Promise.all([shopify(c.id, secret, body), shopify(c.id, secret, body, { 'x-shopify-topic': 'orders/updated' })]);
    expect([a.statusCode, b.statusCode], a.body + b.body).toEqual([200, 200]);
    expect([a.json().outcome, b.json().outcome].sort()).toEqual(['created', 'unchanged']);
    expect(await count('shop_order', 'connection_id = $1', [c.id])).toBe(1);
    const [o] = await rows(t, 'SELECT express_request_id FROM shop_order WHERE connection_id = $1', [c.id]);
    expect(a.json().express_request_id ?? b.json().express_request_id).toBe(o.express_request_id);
    // The same delivery id twice at once: one is the duplicate.
    const body2 = shopifyOrder('2003');
    const id = newId();
    const [x, y] = await Promise.all([
      shopify(c.id, secret, body2, { 'x-shopify-webhook-id': id }),
      shopify(c.id, secret, body2, { 'x-shopify-webhook-id': id }),
    ]);
    expect([x.json().duplicate, y.json().duplicate].sort()).toEqual([false, true]);
    expect(await count('shop_order', 'connection_id = $1', [c.id])).toBe(2);
  });

  it('an update moves the request and its trip before pickup; a cancellation cancels the trip; after pickup nothing changes', async () => {
    const secret = `shpss_${newId()}`;
    const c = await connect(merchant, 'shopify', secret);
    const created = ok(await shopify(c.id, secret, shopifyOrder('3003')));
    const later = (s: number) => new Date(Date.now() + s * 1000).toISOString();
    const moved = shopifyOrder(
      '3003',
      { updated_at: later(1) },
      { address1: 'Calle Belisario Salinas 520', latitude: -16.512, longitude: -68.127, name: 'Ana Pérez' },
    );
    const upd = ok(await shopify(c.id, secret, moved, { 'x-shopify-topic': 'orders/updated' }));
    expect(upd).toMatchObject({ outcome: 'updated', express_request_id: created.express_request_id });
    const e = await expressOf(created.express_request_id);
    expect(e.customer_name).toBe('Ana Pérez');
    expect(e.dropoff_address).toMatch(/^Calle Belisario Salinas 520/);
    expect(e.trip_dropoff).toBe(e.dropoff_address);
    // An older version (a replay of the first) changes nothing.
    const old = ok(await shopify(c.id, secret, shopifyOrder('3003', { updated_at: later(-60) }), { 'x-shopify-topic': 'orders/updated' }));
    expect(old.outcome).toBe('stale');
    expect((await expressOf(created.express_request_id)).customer_name).toBe('Ana Pérez');

    const cancelled = ok(
      await shopify(c.id, secret, shopifyOrder('3003', { updated_at: later(2), cancelled_at: later(2) }), {
        'x-shopify-topic': 'orders/cancelled',
      }),
    );
    expect(cancelled.outcome).toBe('cancelled');
    expect(await expressOf(created.express_request_id)).toMatchObject({ status: 'cancelled', trip_status: 'cancelled' });

    // Picked up: a change and a cancellation from the shop are acknowledged, noted, and change nothing.
    const other = ok(await shopify(c.id, secret, shopifyOrder('3004')));
    const { trip_id: tripId } = await expressOf(other.express_request_id);
    await t.db.withSystem((tx) => tx.query("UPDATE trip SET status = 'picked_up' WHERE id = $1", [tripId]));
    const refused = ok(
      await shopify(c.id, secret, shopifyOrder('3004', { updated_at: later(3), cancelled_at: later(3) }), {
        'x-shopify-topic': 'orders/cancelled',
      }),
    );
    expect(refused.outcome).toBe('refused');
    expect(await expressOf(other.express_request_id)).toMatchObject({ status: 'created', trip_status: 'picked_up' });
    const [note] = await rows(t, 'SELECT status, note FROM shop_order WHERE id = $1', [refused.shop_order_id]);
    expect(note.status).toBe('placed');
    expect(note.note).toMatch(/picked it up/);
  });
});

describe('WooCommerce order webhooks', () => {
  it('answers the ping; an order without coordinates awaits its location, the merchant places it, an update and a deletion follow', async () => {
    const secret = `wc_${newId()}`;
    const c = await connect(merchant, 'woocommerce', secret, { shop_url: 'https://tienda.example.com' });
    const ping = await t.req(null, {
      method: 'POST',
      url: `/shops/woocommerce/${c.id}`,
      payload: 'webhook_id=42',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(ok(ping).outcome).toBe('ping');

    const first = ok(await woo(c.id, secret, wooOrder(727)));
    expect(first).toMatchObject({ outcome: 'awaiting_location', express_request_id: null });
    const waiting = ok(await t.req(merchant, { method: 'GET', url: `/shops/orders?status=awaiting_location&connection_id=${c.id}` }));
    expect(waiting.data).toHaveLength(1);
    expect(waiting.data[0]).toMatchObject({
      shop_order_id: '727',
      shop_order_number: '#727',
      customer_name: 'John Doe',
      total: '29.35',
      currency: 'USD',
    });
    expect(waiting.data[0].customer_phone).toBeNull(); // (555) 555-5555 is no Bolivian number

    // An update before it is placed: the record follows.
    const later = new Date(Date.now() + 1000).toISOString().slice(0, 19);
    const upd = ok(
      await woo(
        c.id,
        secret,
        wooOrder(727, {
          date_modified_gmt: later,
          shipping: { ...WOO.shipping, address_1: 'Av. Arce 2500', city: 'La Paz', country: 'BO' },
        }),
        {
          'x-wc-webhook-topic': 'order.updated',
        },
      ),
    );
    expect(upd.outcome).toBe('updated');

    // Another merchant cannot place it.
    const other = await newShop(t);
    const place = (s: Session) =>
      t.req(s, {
        method: 'POST',
        url: `/shops/orders/${first.shop_order_id}/place`,
        payload: { dropoff_location: pt(LA_PAZ.lon, LA_PAZ.lat) },
      });
    expect((await place(other.merchant)).statusCode).toBe(404);
    const placed = ok(await place(merchant));
    expect(placed.status).toBe('placed');
    const e = await expressOf(placed.express_request_id);
    expect(e).toMatchObject({ status: 'created', source_channel: 'api', customer_name: 'John Doe', trip_status: 'pending' });
    expect(e.dropoff_address).toBe('Av. Arce 2500, La Paz, CA, 94103, BO');

    // Deleted in the shop: the trip is cancelled and the request follows.
    const gone = ok(await woo(c.id, secret, JSON.stringify({ id: 727 }), { 'x-wc-webhook-topic': 'order.deleted' }));
    expect(gone.outcome).toBe('cancelled');
    expect(await expressOf(placed.express_request_id)).toMatchObject({ status: 'cancelled', trip_status: 'cancelled' });
  });

  it('a bad signature is 401, an old date_modified_gmt 401 (replay), a repeated delivery id is acknowledged once', async () => {
    const secret = `wc_${newId()}`;
    const c = await connect(merchant, 'woocommerce', secret);
    const before = await count('shop_order', 'connection_id = $1', [c.id]);
    const bad = await woo(c.id, secret, wooOrder(800), { 'x-wc-webhook-signature': sign('nope-nope', wooOrder(800)) });
    expect(bad.statusCode).toBe(401);
    // The sample as published: modified in 2017.
    const replay = await woo(c.id, secret, JSON.stringify(WOO));
    expect(replay.statusCode).toBe(401);
    expect(replay.json().code).toBe('SHOP_WEBHOOK_STALE');
    expect(await count('shop_order', 'connection_id = $1', [c.id])).toBe(before);
    const body = wooOrder(801);
    const a = ok(await woo(c.id, secret, body, { 'x-wc-webhook-delivery-id': '9001' }));
    const b = ok(await woo(c.id, secret, body, { 'x-wc-webhook-delivery-id': '9001' }));
    expect(a).toMatchObject({ duplicate: false, outcome: 'awaiting_location' });
    expect(b).toMatchObject({ duplicate: true, outcome: 'awaiting_location', shop_order_id: a.shop_order_id });
    expect(await count('shop_delivery', 'connection_id = $1', [c.id])).toBe(1);
  });

  it('a deleted connection refuses its webhooks (404) and keeps no secret', async () => {
    const secret = `wc_${newId()}`;
    const c = await connect(merchant, 'woocommerce', secret);
    expect((await t.req(merchant, { method: 'DELETE', url: `/shops/connections/${c.id}` })).statusCode).toBe(204);
    expect((await woo(c.id, secret, wooOrder(900))).statusCode).toBe(404);
    expect((await t.req(merchant, { method: 'GET', url: `/shops/connections/${c.id}` })).statusCode).toBe(404);
    const [row] = await rows(t, 'SELECT secret, deleted_at FROM shop_connection WHERE id = $1', [c.id]);
    expect(row.secret).toBeNull();
    expect(row.deleted_at).not.toBeNull();
  });
});
