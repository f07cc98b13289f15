import { createHmac } from 'node:crypto';
import { expect } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { pt, type Session, type TestApp } from '../helpers.js';
import { DEMO_LOGINS } from '../../src/seed.js';
import { png } from '../storage/fixtures.js';

export const ROLES = ['admin', 'dispatch', 'merchant', 'customer', 'driver'] as const;
export type Role = (typeof ROLES)[number];

/** The records of one organization that the probes point at (ids are real: created through the HTTP API). */
export interface World {
  organizationId: string;
  sessions: Record<Role, Session>;
  users: Record<Role, string>;
  territoryId: string;
  driverId: string;
  merchantId: string;
  branchId: string;
  itemIds: string[];
  couponId: string;
  tariffId: string;
  addressId: string;
  orderId: string;
  tripId: string;
  objectId: string;
  /** An upload slot that was opened and never used. */
  uploadId: string;
  documentId: string;
  notificationId: string;
  deviceId: string;
  expressId: string | null;
  /** The merchant's outbound webhook subscription and one queued (test) delivery of it. */
  webhookSubscriptionId: string;
  webhookDeliveryId: string;
  gpsDeviceId: string;
  hubId: string;
  apiKeyId: string;
  /** The merchant's Shopify connection and the shop order one signed webhook of it made. */
  shopConnectionId: string;
  shopOrderId: string;
  /** A dry-run trip import (nothing created). */
  importId: string;
}

const POLYGON = {
  type: 'Polygon' as const,
  coordinates: [
    [
      [-68.17, -16.54],
      [-68.09, -16.54],
      [-68.09, -16.47],
      [-68.17, -16.47],
      [-68.17, -16.54],
    ],
  ],
};

function ok(res: LightMyRequestResponse, status: number | number[] = [200, 201]) {
  expect([status].flat(), `${res.statusCode} ${res.body}`).toContain(res.statusCode);
  return res.json();
}

async function one(t: TestApp, sql: string, params: unknown[]): Promise<string> {
  const { rows } = await t.db.withSystem((tx) => tx.query(sql, params));
  expect(rows.length, sql).toBeGreaterThan(0);
  return (rows[0] as { id: string }).id;
}

/** Fresh sessions (not the cached ones of t.as: the probe logs them out at the end). */
export async function sessionsOf(t: TestApp, logins: Record<Role, string>, organizationId?: string): Promise<Record<Role, Session>> {
  const out = {} as Record<Role, Session>;
  for (const r of ROLES) out[r] = await t.login(logins[r], undefined, organizationId);
  return out;
}

export const demoLogins = (): Record<Role, string> => ({
  admin: DEMO_LOGINS.admin,
  dispatch: DEMO_LOGINS.dispatch,
  merchant: DEMO_LOGINS.merchant,
  customer: DEMO_LOGINS.customer,
  driver: DEMO_LOGINS.driver,
});

/**
 * Gives an organization the same shape of data through its own HTTP API. `seeded`: the demo organization already
 * has a territory, approved driver and merchant, branch, catalog, coupon and tariffs (found, not created twice).
 */
export async function buildWorld(t: TestApp, sessions: Record<Role, Session>, seeded: boolean): Promise<World> {
  const { admin, merchant, customer, driver } = sessions;
  const org = admin.organizationId;
  const req = (s: Session, method: string, url: string, payload?: unknown) =>
    t.req(s, { method: method as 'POST', url, payload: payload as object });
  const users = Object.fromEntries(ROLES.map((r) => [r, sessions[r].userId])) as Record<Role, string>;
  let territoryId: string, driverId: string, merchantId: string, branchId: string, itemIds: string[], couponId: string, tariffId: string;
  if (seeded) {
    territoryId = await one(t, 'SELECT id FROM territory WHERE organization_id = $1 ORDER BY id LIMIT 1', [org]);
    driverId = await one(t, 'SELECT id FROM driver WHERE organization_id = $1 AND user_id = $2', [org, driver.userId]);
    merchantId = await one(t, 'SELECT id FROM merchant WHERE organization_id = $1 AND owner_user_id = $2', [org, merchant.userId]);
    branchId = await one(t, 'SELECT id FROM merchant_branch WHERE organization_id = $1 ORDER BY id LIMIT 1', [org]);
    const { rows } = await t.db.withSystem((tx) =>
      tx.query('SELECT id FROM catalog_item WHERE organization_id = $1 ORDER BY id LIMIT 2', [org]),
    );
    itemIds = rows.map((r: { id: string }) => r.id);
    couponId = await one(t, 'SELECT id FROM merchant_coupon WHERE organization_id = $1 ORDER BY id LIMIT 1', [org]);
    tariffId = await one(t, "SELECT id FROM territory_tariff WHERE organization_id = $1 AND service_mode = 'marketplace'", [org]);
  } else {
    territoryId = ok(await req(admin, 'POST', '/territories', { name: 'Probe territory', geometry: POLYGON }), 201).id;
    driverId = ok(await req(admin, 'POST', '/drivers', { user_id: driver.userId, capacity: 2, territory_ids: [territoryId] }), 201).id;
    ok(await req(admin, 'POST', `/drivers/${driverId}/approve`, {}));
    ok(await req(admin, 'POST', `/drivers/${driverId}/availability`, { available: true }));
    ok(await req(admin, 'POST', `/drivers/${driverId}/location`, { location: pt(-68.13, -16.5) }));
    merchantId = ok(
      await req(admin, 'POST', '/merchants', {
        owner_user_id: merchant.userId,
        name: 'Probe store',
        address: 'Calle 1',
        location: pt(-68.1335, -16.499),
      }),
      201,
    ).id;
    ok(await req(admin, 'POST', `/merchants/${merchantId}/approve`, {}));
    branchId = ok(
      await req(merchant, 'POST', '/merchant/branches', { name: 'Centro', address: 'Calle 1', location: pt(-68.1335, -16.499) }),
      201,
    ).id;
    itemIds = [];
    for (const price of ['10.00', '20.00'])
      itemIds.push(ok(await req(merchant, 'POST', '/merchant/catalog', { name: `Item ${price}`, price }), 201).id);
    couponId = ok(
      await req(merchant, 'POST', '/merchant/coupons', { code: 'PROBE10', name: 'Probe', discount_type: 'percent', discount_value: '10' }),
      201,
    ).id;
    tariffId = ok(
      await req(admin, 'POST', '/admin/territory-tariffs', {
        territory_id: territoryId,
        service_mode: 'marketplace',
        base_fee: '8.00',
        per_km_fee: '2.00',
        driver_share_value: '70',
      }),
      201,
    ).id;
  }
  const addressId = ok(
    await req(customer, 'POST', '/customer/addresses', { address: 'Av. Arce 100', location: pt(-68.125, -16.51) }),
    201,
  ).id;
  const orderId = ok(
    await req(customer, 'POST', '/customer/orders', {
      branch_id: branchId,
      address_id: addressId,
      items: itemIds.map((id) => ({ catalog_item_id: id, quantity: 1 })),
    }),
    201,
  ).id;
  const tripId = ok(
    await req(admin, 'POST', '/trips', {
      pickup_location: pt(-68.13, -16.5),
      pickup_address: 'Pickup 1',
      dropoff_location: pt(-68.12, -16.49),
      dropoff_address: 'Dropoff 2',
      merchant_id: merchantId,
    }),
    201,
  ).id;
  ok(await req(admin, 'POST', `/trips/${tripId}/assign`, { driver_id: driverId }));
  const bytes = png(2);
  const slot = ok(
    await req(admin, 'POST', '/storage/generic/uploads', {
      purpose: 'document',
      mime_type: 'image/png',
      size_bytes: bytes.length,
      filename: 'probe.png',
    }),
    201,
  );
  ok(
    await t.req(admin, {
      method: 'PUT',
      url: `/storage/uploads/${slot.upload_id}`,
      payload: bytes,
      headers: { 'content-type': 'image/png', 'x-upload-token': slot.upload_token },
    }),
  );
  const objectId = slot.object_id as string;
  const open = ok(
    await req(customer, 'POST', '/storage/generic/uploads', {
      purpose: 'avatar',
      mime_type: 'image/png',
      size_bytes: 10,
      filename: 'open.png',
    }),
    201,
  );
  const documentId = ok(
    await req(admin, 'POST', '/documents', {
      subject_type: 'driver',
      subject_id: driverId,
      doc_type: 'license',
      title: 'Licence',
      storage_object_id: objectId,
    }),
    201,
  ).id;
  ok(await req(admin, 'POST', '/admin/notifications', { title: 'Hello', body: 'Probe notification', user_ids: [customer.userId] }));
  const notificationId = await one(t, 'SELECT id FROM notification WHERE organization_id = $1 AND user_id = $2 ORDER BY id DESC LIMIT 1', [
    org,
    customer.userId,
  ]);
  const deviceId = ok(
    await req(driver, 'POST', '/mobile/devices', { platform: 'android', push_token: `probe-token-${org}` }),
    [200, 201],
  ).id;
  const webhookSubscriptionId = ok(
    await req(merchant, 'POST', '/webhooks/subscriptions', { url: 'https://hooks.example.com/probe', event_types: ['*'] }),
    201,
  ).id as string;
  const webhookDeliveryId = ok(await req(merchant, 'POST', `/webhooks/subscriptions/${webhookSubscriptionId}/test`), 202).id as string;
  const gpsDeviceId = ok(await req(admin, 'POST', `/drivers/${driverId}/gps-devices`, { device_identifier: `probe-${org}` }), 201)
    .id as string;
  const hubId = ok(await req(admin, 'POST', '/hubs', { name: 'Probe hub', address: 'Calle 2', location: pt(-68.13, -16.5) }), 201)
    .id as string;
  const apiKeyId = ok(await req(merchant, 'POST', '/api-keys', { name: 'Probe key', scopes: ['trips:read'] }), 201).id as string;
  const shopSecret = `probe-shop-secret-${org}`;
  const shopConnectionId = ok(
    await req(merchant, 'POST', '/shops/connections', {
      platform: 'shopify',
      shop_url: 'probe.myshopify.com',
      secret: shopSecret,
      branch_id: branchId,
    }),
    201,
  ).id as string;
  const shopBody = JSON.stringify({
    id: 4242,
    name: '#4242',
    updated_at: new Date().toISOString(),
    line_items: [{ title: 'Probe item', quantity: 1 }],
    shipping_address: { name: 'Shop customer', address1: 'Dropoff 4', city: 'La Paz', latitude: -16.5, longitude: -68.12 },
  });
  const shopOrderId = ok(
    await t.req(null, {
      method: 'POST',
      url: `/shops/shopify/${shopConnectionId}`,
      payload: shopBody,
      headers: {
        'content-type': 'application/json',
        'x-shopify-topic': 'orders/create',
        'x-shopify-hmac-sha256': createHmac('sha256', shopSecret).update(shopBody).digest('base64'),
      },
    }),
    200,
  ).shop_order_id as string;
  const importId = ok(
    await t.app.inject({
      method: 'POST',
      url: '/api/v1/imports/trips',
      headers: { authorization: `Bearer ${admin.token}`, 'content-type': 'text/csv' },
      payload:
        'external_ref,pickup_address,pickup_lat,pickup_lon,dropoff_address,dropoff_lat,dropoff_lon\r\n' +
        `probe-${org},Pickup 1,-16.5,-68.13,Dropoff 1,-16.49,-68.12\r\n`,
    }),
    201,
  ).id as string;
  const express = await req(merchant, 'POST', '/merchant/delivery-express', {
    branch_id: branchId,
    customer_name: 'Express customer',
    dropoff_address: 'Dropoff 3',
    dropoff_location: pt(-68.12, -16.5),
  });
  const expressId = express.statusCode === 201 ? (express.json().id as string) : null;
  return {
    organizationId: org,
    sessions,
    users,
    territoryId,
    driverId,
    merchantId,
    branchId,
    itemIds,
    couponId,
    tariffId,
    addressId,
    orderId,
    tripId,
    objectId,
    uploadId: open.upload_id,
    documentId,
    notificationId,
    deviceId,
    expressId,
    webhookSubscriptionId,
    webhookDeliveryId,
    gpsDeviceId,
    hubId,
    apiKeyId,
    shopConnectionId,
    shopOrderId,
    importId,
  };
}

/** Every row of every tenant table of one organization (and its organization row), as JSON, in a stable order. */
export async function dumpOrganization(t: TestApp, organizationId: string): Promise<Record<string, unknown[]>> {
  return t.db.withSystem(async (tx) => {
    const { rows: tables } = await tx.query<{ table_name: string }>(
      `SELECT c.table_name FROM information_schema.columns c JOIN information_schema.tables tb ON tb.table_schema = c.table_schema AND tb.table_name = c.table_name
        WHERE c.table_schema = 'public' AND c.column_name = 'organization_id' AND tb.table_type = 'BASE TABLE' ORDER BY c.table_name`,
    );
    const out: Record<string, unknown[]> = {};
    for (const { table_name } of tables) {
      const { rows } = await tx.query<{ j: string }>(
        `SELECT to_jsonb(x)::text AS j FROM "${table_name}" x WHERE organization_id = $1 ORDER BY 1`,
        [organizationId],
      );
      out[table_name] = rows.map((r) => JSON.parse(r.j));
    }
    const { rows } = await tx.query<{ j: string }>(`SELECT to_jsonb(x)::text AS j FROM organization x WHERE id = $1`, [organizationId]);
    out.organization = rows.map((r) => JSON.parse(r.j));
    return out;
  });
}

/** Every id-like value (UUIDs) found in a dump: what must never appear in another organization's responses. */
export function idsOf(dump: Record<string, unknown[]>): Set<string> {
  const ids = new Set<string>();
  const re = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;
  for (const m of JSON.stringify(dump).matchAll(re)) ids.add(m[0]);
  return ids;
}
