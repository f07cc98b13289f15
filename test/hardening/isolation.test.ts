/**
 * Isolation probe, generated from the route table and the OpenAPI document: every route, called by every role of
 * organization A with organization B's record ids in path params, query params and body references, must leak
 * nothing of B (no B id in a response, never 2xx on a single-record route) and change nothing of B (dump of B's
 * rows in every tenant table before and after).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { createTestApp, type Session, type TestApp } from '../helpers.js';
import { newId } from '../../src/platform/ids.js';
import { png } from '../storage/fixtures.js';
import { minimalValue, operationsOf, type Operation } from './openapi.js';
import { ROLES, buildWorld, demoLogins, dumpOrganization, idsOf, sessionsOf, type Role, type World } from './world.js';

let t: TestApp;
let a: World;
let b: World;
let ops: Operation[];
let before: Record<string, unknown[]>;
let bIds: Set<string>;

beforeAll(async () => {
  t = await createTestApp({
    raw: { PARTNER_PAY_WEBHOOK_SECRET: 'probe-secret-0123456789abcdef', PARTNER_CHEF_PAY_WEBHOOK_SECRET: 'probe-secret-abcdef0123456789' },
  });
  const other = await t.newOrganization('Probe B');
  a = await buildWorld(t, await sessionsOf(t, demoLogins()), true);
  b = await buildWorld(t, await sessionsOf(t, other.logins as Record<Role, string>), false);
  const doc = (await t.req(null, { method: 'GET', url: '/api/v1/openapi.json' })).json();
  ops = operationsOf(doc);
  before = await dumpOrganization(t, b.organizationId);
  bIds = idsOf(before);
}, 180_000);
afterAll(() => t?.close());

/** The B record a path parameter points at, by the collection segment before it. */
function pathIdOf(w: World, url: string, param: string): string {
  const segs = url.split('/');
  const collection = segs[segs.indexOf(`:${param}`) - 1];
  const map: Record<string, string> = {
    operators: w.organizationId,
    organizations: w.organizationId,
    documents: w.documentId,
    merchants: w.merchantId,
    drivers: w.driverId,
    trips: w.tripId,
    branches: w.branchId,
    catalog: w.itemIds[0],
    coupons: w.couponId,
    orders: w.orderId,
    'territory-tariffs': w.tariffId,
    'payment-intents': w.orderId,
    'payment-reviews': w.orderId,
    settlements: w.orderId,
    notifications: w.notificationId,
    devices: w.deviceId,
    uploads: w.uploadId,
    objects: w.objectId,
    subscriptions: w.webhookSubscriptionId,
    deliveries: w.webhookDeliveryId,
    'gps-devices': w.gpsDeviceId,
    hubs: w.hubId,
    'api-keys': w.apiKeyId,
    connections: w.shopConnectionId,
    // A shop's webhook URL names the connection.
    woocommerce: w.shopConnectionId,
    shopify: w.shopConnectionId,
    imports: w.importId,
    // No B record of these kinds exists in the world; any B id must be 404 for A.
    subadmins: w.users.admin,
    'app-users': w.users.customer,
    optimize: w.tripId,
    'cash-entries': w.orderId,
    // Public recipient links: a B trip id is no token; the route must answer 404 like any unknown link.
    tracking: w.tripId,
    // A GPS app's URL token: a B device id is no token; refused like any unknown token.
    osmand: w.gpsDeviceId,
  };
  const id = param === 'shop_order_id' ? w.shopOrderId : map[collection];
  if (!id) throw new Error(`no B record for path parameter ${param} of ${url}`);
  return id;
}

/** The B record a body or query field named `*_id(s)` refers to (undefined: not a reference to a record). */
function refOf(w: World, field: string): string | undefined {
  const map: Record<string, string | null> = {
    territory_id: w.territoryId,
    territory_ids: w.territoryId,
    driver_id: w.driverId,
    hub_id: w.hubId,
    merchant_id: w.merchantId,
    branch_id: w.branchId,
    branch_ids: w.branchId,
    catalog_item_id: w.itemIds[0],
    product_ids: w.itemIds[0],
    coupon_id: w.couponId,
    address_id: w.addressId,
    order_id: w.orderId,
    trip_id: w.tripId,
    express_request_id: w.expressId ?? w.orderId,
    quote_id: w.orderId,
    user_id: w.users.driver,
    user_ids: w.users.customer,
    owner_user_id: w.users.merchant,
    customer_user_id: w.users.customer,
    actor_user_id: w.users.admin,
    subject_id: w.driverId,
    entity_id: w.tripId,
    owner_id: w.merchantId,
    device_id: w.deviceId,
    connection_id: w.shopConnectionId,
    organization_id: w.organizationId,
    storage_object_id: w.objectId,
    logo_object_id: w.objectId,
    image_object_id: w.objectId,
    qr_storage_object_id: w.objectId,
    proof_storage_object_id: w.objectId,
  };
  return map[field] ?? undefined;
}

/** Bodies whose fields exclude each other: keep the variant that carries the most references. */
const BODY_TWEAKS: Record<string, (body: Record<string, unknown>) => void> = {
  sendAdminNotification: (x) => {
    delete x.role;
    delete x.territory_id;
  },
  createCustomerOrder: (x) => {
    delete x.quote_id;
    x.items = [{ catalog_item_id: b.itemIds[0], quantity: 1 }];
  },
  createEvidenceUpload: (x) => (x.mime_type = 'image/jpeg'),
};

interface Call {
  op: Operation;
  role: Role;
  res: { statusCode: number; body: string };
  sent: string;
}

/**
 * A refusal's body, read whole. An open event stream (200) does not end, and inject hands over no frame before the
 * end: its body is not read here (what a stream carries, and to whom, is tested over real HTTP in test/realtime).
 */
async function readStream(res: LightMyRequestResponse): Promise<string> {
  const stream = res.stream();
  if (res.statusCode === 200) {
    stream.destroy();
    return '';
  }
  let body = '';
  for await (const chunk of stream) body += (chunk as Buffer).toString('utf8');
  return body;
}

async function call(op: Operation, role: Role, session: Session): Promise<Call> {
  const params = Object.fromEntries(op.pathParams.map((p) => [p, pathIdOf(b, op.url, p)]));
  const url = op.url.replace(/:([A-Za-z_]+)/g, (_, p) => params[p]);
  const query: Record<string, string> = {};
  for (const q of op.query) {
    if (q.name === 'stream_token' || q.name === 'cursor') continue;
    const ref = /_ids?$/.test(q.name) ? refOf(b, q.name) : undefined;
    if (ref !== undefined) query[q.name] = ref;
    else if (q.required) query[q.name] = String(minimalValue(q.schema, undefined, q.name));
  }
  const headers: Record<string, string> = { authorization: `Bearer ${session.token}`, 'idempotency-key': `probe-${newId()}` };
  let payload: InjectOptions['payload'];
  if (op.body && op.bodyType && !op.bodyType.includes('json')) {
    payload = png(1);
    headers['content-type'] = op.bodyType.includes('*') ? 'image/png' : op.bodyType;
    headers['x-upload-token'] = 'probe-upload-token-0000000000';
  } else if (op.body) {
    const body = (minimalValue(op.body, (f) => refOf(b, f)) ?? {}) as Record<string, unknown>;
    BODY_TWEAKS[op.operationId]?.(body);
    payload = JSON.stringify(body);
    headers['content-type'] = 'application/json';
  } else if (['POST', 'PUT', 'PATCH'].includes(op.method)) {
    payload = '{}';
    headers['content-type'] = 'application/json';
  }
  const qs = new URLSearchParams(query).toString();
  const full = qs ? `${url}?${qs}` : url;
  const isStream = op.url.includes('/realtime/') && op.url.endsWith('/stream');
  const res = await t.app.inject({
    method: op.method as 'GET',
    url: full,
    headers,
    payload,
    ...(isStream ? { payloadAsStream: true } : {}),
  });
  const body = isStream ? await readStream(res) : res.body;
  return { op, role, res: { statusCode: res.statusCode, body }, sent: `${full} ${typeof payload === 'string' ? payload : ''}` };
}

/** Ends the caller's own session: run after everything else. */
const selfEnding = (op: Operation) => /\/auth\/(logout|mobile\/revoke)$/.test(op.url);

describe('isolation probe: organization A against organization B', () => {
  it('the two organizations share no record id', async () => {
    const aIds = idsOf(await dumpOrganization(t, a.organizationId));
    expect([...bIds].filter((id) => aIds.has(id))).toEqual([]);
    expect(bIds.size).toBeGreaterThan(20);
  });

  it('every route, every role of A, with B ids: no leak, no 2xx on B records, nothing of B changed', async () => {
    const calls: Call[] = [];
    const ordered = [...ops.filter((o) => !selfEnding(o)), ...ops.filter(selfEnding)];
    for (const role of ROLES) for (const op of ordered) calls.push(await call(op, role, a.sessions[role]));

    if (process.env.PROBE_REPORT) {
      const { writeFileSync } = await import('node:fs');
      writeFileSync(
        process.env.PROBE_REPORT,
        calls.map((c) => `${c.role} ${c.op.method} ${c.op.url} ${c.res.statusCode} ${c.res.body.slice(0, 160)}`).join('\n'),
      );
    }
    const failures: string[] = [];
    for (const c of calls) {
      const where = `${c.role} ${c.op.method} ${c.op.url} → ${c.res.statusCode}`;
      const s = c.res.statusCode;
      if (s >= 500 && !(s === 501 && c.res.body.includes('FUTURE_INTEGRATION_NOT_RELEASED')))
        failures.push(`${where}: server error ${c.res.body.slice(0, 200)}`);
      const leaked = [...bIds].filter((id) => c.res.body.includes(id) && (s < 300 || !c.sent.includes(id)));
      if (leaked.length) failures.push(`${where}: response carries B ids ${leaked.join(',')}: ${c.res.body.slice(0, 300)}`);
      if (c.op.pathParams.length && s >= 200 && s < 300) failures.push(`${where}: 2xx on B's record`);
      if (c.op.pathParams.length && ![400, 401, 403, 404, 422, 501].includes(s))
        failures.push(`${where}: unexpected status for B's record: ${c.res.body.slice(0, 200)}`);
    }
    // Every operation was exercised by every role.
    const seen = new Set(calls.map((c) => `${c.role} ${c.op.operationId}`));
    const missing = ROLES.flatMap((r) => ops.map((o) => `${r} ${o.operationId}`)).filter((k) => !seen.has(k));
    expect(missing).toEqual([]);
    expect(ops.length).toBeGreaterThan(100);
    expect(failures).toEqual([]);

    const after = await dumpOrganization(t, b.organizationId);
    for (const table of Object.keys(before)) expect(after[table], `table ${table} of B changed`).toEqual(before[table]);
    expect(Object.keys(after).sort()).toEqual(Object.keys(before).sort());
  }, 150_000);

  it('B still works after the probe (its sessions and records are intact)', async () => {
    const res = await t.req(b.sessions.admin, { method: 'GET', url: `/trips?limit=5` });
    expect(res.statusCode).toBe(200);
    expect(res.json().data.map((x: { id: string }) => x.id)).toContain(b.tripId);
  });
});
