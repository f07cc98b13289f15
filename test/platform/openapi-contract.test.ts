import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { createConfig, lintFromString } from '@redocly/openapi-core';
import { createTestApp, type TestApp } from '../helpers.js';
import { namedSchemas } from '../../src/modules/components.js';

/**
 * The served OpenAPI document is a contract client teams generate SDKs from: it must be valid OpenAPI 3.1 for real
 * tools, and the server must answer as it says (problem+json errors, 405, 400 instead of 500 for odd timestamps).
 */

type Json = Record<string, any>;
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;
let t: TestApp;
let doc: Json;
beforeAll(async () => {
  t = await createTestApp();
  doc = (await t.req(null, { method: 'GET', url: '/api/v1/openapi.json' })).json();
});
afterAll(() => t?.close());

const operations = () =>
  Object.entries<Json>(doc.paths).flatMap(([path, item]) =>
    Object.entries<Json>(item)
      .filter(([m]) => ['get', 'post', 'put', 'patch', 'delete'].includes(m))
      .map(([method, op]) => ({ path, method, op })),
  );

/** Every Schema Object of the document with a name saying where it is. */
function schemaSlots(): [string, Json][] {
  const out: [string, Json][] = Object.entries<Json>(doc.components.schemas).map(([n, s]) => [`components.schemas.${n}`, s]);
  const content = (where: string, c: Json | undefined) =>
    Object.entries<Json>(c ?? {}).forEach(([type, m]) => m.schema && out.push([`${where} ${type}`, m.schema]));
  for (const { path, method, op } of operations()) {
    const at = `${method.toUpperCase()} ${path}`;
    for (const p of op.parameters ?? []) out.push([`${at} ${p.in}.${p.name}`, p.schema]);
    content(`${at} body`, op.requestBody?.content);
    for (const [status, r] of Object.entries<Json>(op.responses)) content(`${at} ${status}`, r.content);
  }
  return out;
}

describe('OpenAPI 3.1 document', () => {
  it('is valid for a real OpenAPI 3.1 validator (@seriousme/openapi-schema-validator)', async () => {
    const validator = new Validator();
    const result = await validator.validate(doc);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it('passes Redocly lint with its recommended rules: no error, no warning', async () => {
    const config = await createConfig({ extends: ['recommended'] });
    const problems = await lintFromString({ source: JSON.stringify(doc), absoluteRef: '/openapi.json', config });
    expect(problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location?.[0]?.pointer}`)).toEqual([]);
  });

  it('every schema is a valid JSON Schema 2020-12 schema (no draft-07 tuple `items: [..]`)', () => {
    const ajv = new Ajv2020({ strict: false, validateFormats: false });
    const bad: string[] = [];
    for (const [where, schema] of schemaSlots()) {
      if (!ajv.validateSchema(schema)) bad.push(`${where}: ${ajv.errorsText(ajv.errors)}`);
    }
    expect(bad).toEqual([]);
    expect(JSON.stringify(doc)).not.toMatch(/"items":\[/);
    expect(JSON.stringify(doc)).not.toMatch(/"additionalItems"/);
    expect(doc.components.schemas.Position).toMatchObject({
      anyOf: [
        { type: 'array', minItems: 2, maxItems: 2, prefixItems: [{ type: 'number' }, { type: 'number' }] },
        { type: 'array', minItems: 3, maxItems: 3, prefixItems: [{ type: 'number' }, { type: 'number' }, { type: 'number' }] },
      ],
    });
  });

  it('errors are application/problem+json with the one shared Problem schema', () => {
    expect(doc.components.schemas.Problem).toMatchObject({
      type: 'object',
      required: expect.arrayContaining(['type', 'title', 'status', 'detail', 'code', 'request_id']),
    });
    const wrong: string[] = [];
    let refs = 0;
    for (const { path, method, op } of operations()) {
      for (const [status, r0] of Object.entries<Json>(op.responses)) {
        if (!/^[45]/.test(status)) continue;
        const r = r0.$ref ? doc.components.responses[r0.$ref.split('/').pop()] : r0;
        const types = Object.keys(r.content ?? {});
        if (
          types.join() !== 'application/problem+json' ||
          r.content['application/problem+json'].schema.$ref !== '#/components/schemas/Problem'
        )
          wrong.push(`${method} ${path} ${status}`);
        else refs++;
      }
      for (const s of ['400', '500'])
        if (!op.responses[s] && !(s === '400' && !op.parameters && !op.requestBody)) wrong.push(`${method} ${path}: no ${s}`);
      if (op.security?.length && !op.responses['401']) wrong.push(`${method} ${path}: no 401`);
    }
    expect(wrong).toEqual([]);
    expect(refs).toBeGreaterThan(300);
    // The problem shape is defined once: no inline copies left.
    const copies = schemaSlots().filter(
      ([where, s]) => where !== 'components.schemas.Problem' && s.properties?.request_id && s.properties?.code,
    );
    expect(copies.map(([w]) => w)).toEqual([]);
  });

  it('every operation documents the answers the edge gives before any route runs: 414, 431, and 413 where it takes a body', async () => {
    const missing: string[] = [];
    for (const { path, method, op } of operations()) {
      for (const s of ['414', '431', ...(op.requestBody ? ['413'] : [])]) if (!op.responses[s]) missing.push(`${method} ${path}: no ${s}`);
    }
    expect(missing).toEqual([]);
    // And they are what the server answers: a problem with its code.
    const big = await t.req(null, {
      method: 'POST',
      url: '/api/v1/auth/login',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ email: 'a@b.c', password: 'x'.repeat(2 * 1024 * 1024) }),
    });
    expect(big.statusCode).toBe(413);
    expect(big.json()).toMatchObject({ status: 413, code: 'PAYLOAD_TOO_LARGE' });
  });

  it('resources and request bodies are named components, referenced where they occur', () => {
    const text = JSON.stringify(doc.paths);
    for (const name of ['Trip', 'Order', 'Driver', 'Merchant', 'User', 'GeoPoint', 'Quote', 'Wallet']) {
      expect(doc.components.schemas[name], name).toBeDefined();
      expect(
        text.includes(`"#/components/schemas/${name}"`) || JSON.stringify(doc.components).includes(`"#/components/schemas/${name}"`),
        name,
      ).toBe(true);
    }
    const registered = Object.keys(namedSchemas).filter((n) => doc.components.schemas[n]);
    expect(registered.length).toBeGreaterThan(20);
    const inlineBodies = operations()
      .filter(({ op }) => op.requestBody?.content?.['application/json'] && !op.requestBody.content['application/json'].schema.$ref)
      .map(({ method, path }) => `${method} ${path}`);
    expect(inlineBodies).toEqual([]);
    expect(doc.paths['/api/v1/trips'].post.requestBody.content['application/json'].schema.$ref).toBe(
      '#/components/schemas/CreateTripRequest',
    );
    expect(doc.paths['/api/v1/trips'].post.responses['201'].content['application/json'].schema.$ref).toBe('#/components/schemas/Trip');
  });

  it('every operation has an operationId, a summary and tags; public ones say security: []; reserved ones are deprecated', () => {
    const missing: string[] = [];
    for (const { path, method, op } of operations()) {
      if (!op.operationId || !op.summary || !op.tags?.length || !Array.isArray(op.security)) missing.push(`${method} ${path}`);
    }
    expect(missing).toEqual([]);
    expect(doc.paths['/api/v1/auth/login'].post.security).toEqual([]);
    expect(doc.paths['/api/v1/health'].get.security).toEqual([]);
    expect(doc.paths['/api/v1/trips'].get.security).toEqual([{ bearerAuth: [] }, { apiKey: ['trips:read'] }]);
    expect(doc.paths['/api/v1/audit'].get.security).toEqual([{ bearerAuth: [] }]);
    const reserved = operations().filter(({ op }) => op.responses['501']);
    expect(reserved.length).toBeGreaterThan(0);
    for (const { op } of reserved) expect(op.deprecated, op.operationId).toBe(true);
    const tagNames = new Set(doc.tags.map((x: Json) => x.name));
    for (const { op } of operations()) for (const tag of op.tags) expect(tagNames.has(tag), tag).toBe(true);
    expect(doc.info.license).toEqual({ name: 'Apache-2.0', identifier: 'Apache-2.0' });
  });

  it('links the main flows: a created trip to its tracking and assignment, a created order to its trip', () => {
    const tripLinks = doc.paths['/api/v1/trips'].post.responses['201'].links;
    expect(tripLinks.GetTripTracking).toMatchObject({ operationId: 'getTripTracking', parameters: { id: '$response.body#/id' } });
    expect(tripLinks.AssignTrip.operationId).toBe('assignTrip');
    expect(tripLinks.GetTrip.operationId).toBe('getTrip');
    const orderLinks = doc.paths['/api/v1/customer/orders'].post.responses['201'].links;
    expect(orderLinks.GetCustomerTrip.operationId).toBe('getCustomerTrip');
    expect(orderLinks.CancelOrderAsAdmin.operationId).toBe('cancelOrderAsAdmin');
  });

  it('list routes document the cursor as the opaque token the server accepts', () => {
    const loose: string[] = [];
    for (const { path, method, op } of operations()) {
      const cursor = (op.parameters ?? []).find((p: Json) => p.in === 'query' && p.name === 'cursor');
      if (cursor && !cursor.schema.pattern) loose.push(`${method} ${path}`);
    }
    expect(loose).toEqual([]);
  });

  it('request timestamps carry the pattern the server enforces', () => {
    const to = doc.paths['/api/v1/trips'].get.parameters.find((p: Json) => p.name === 'to');
    expect(to.schema.format).toBe('date-time');
    const re = new RegExp(to.schema.pattern);
    expect(re.test('2026-01-01T10:00:00Z')).toBe(true);
    expect(re.test('2026-01-01T10:00:00.123-04:00')).toBe(true);
    expect(re.test('2691-12-29T02:43:44-17:39')).toBe(false);
  });
});

describe('the server keeps the contract', () => {
  // An offset PostgreSQL cannot represent reached it as error 22009 (500).
  it('out-of-range timestamp offsets are 400 VALIDATION_FAILED, not 500 (/trips, /audit and every date-time field)', async () => {
    const admin = await t.as('admin');
    for (const url of [
      '/trips?to=2691-12-29T02:43:44-17:39',
      '/trips?from=2026-01-01T00:00:00%2B16:00',
      '/audit?to=2691-12-29T02:43:44-17:39',
      '/trips?to=2026-02-30T00:00:00Z',
    ]) {
      const res = await t.req(admin, { method: 'GET', url });
      expect(res.statusCode, url).toBe(400);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.json().code).toBe('VALIDATION_FAILED');
    }
    const ok = await t.req(admin, { method: 'GET', url: '/trips?to=2691-12-29T02:43:44-14:00' });
    expect(ok.statusCode).toBe(200);
    const audit = await t.req(admin, { method: 'GET', url: '/audit?from=2026-01-01T00:00:00%2B05:30' });
    expect(audit.statusCode).toBe(200);
  });

  it('positions are validated member by member as documented (prefixItems): [lon, lat] in range, an optional altitude, no fourth member', async () => {
    const customer = await t.as('customer');
    for (const coordinates of [[-68.1, 100], [-200, -16.5], [-68.1, -16.5, 3, 4], [-68.1], [-68.1, -16.5, 'high']]) {
      const res = await t.req(customer, {
        method: 'POST',
        url: '/customer/addresses',
        payload: { address: 'Av. Arce 100', location: { type: 'Point', coordinates } },
      });
      expect(res.statusCode, JSON.stringify(coordinates)).toBe(400);
      expect(res.json().code).toBe('VALIDATION_FAILED');
      expect(res.json().errors[0].field).toMatch(/^location\.coordinates/);
    }
    const ok = await t.req(customer, {
      method: 'POST',
      url: '/customer/addresses',
      payload: { address: 'Av. Arce 100', location: { type: 'Point', coordinates: [-68.1, -16.5] } },
    });
    expect(ok.statusCode).toBe(201);
    const withAltitude = await t.req(customer, {
      method: 'POST',
      url: '/customer/addresses',
      payload: { address: 'Av. Arce 100', location: { type: 'Point', coordinates: [-68.1, -16.5, 3600] } },
    });
    expect(withAltitude.statusCode).toBe(201);
    expect(withAltitude.json().location.coordinates).toEqual([-68.1, -16.5]);
  });

  it('an undeclared method on an existing path is 405 with Allow, an unknown path stays 404', async () => {
    const admin = await t.as('admin');
    const res = await t.req(admin, { method: 'DELETE', url: '/trips' });
    expect(res.statusCode).toBe(405);
    expect(res.headers.allow).toBe('GET, HEAD, POST');
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.json()).toMatchObject({ status: 405, code: 'METHOD_NOT_ALLOWED' });
    const withParam = await t.req(null, { method: 'PUT', url: '/trips/0190aaaa-0000-7000-8000-000000000000/assign' });
    expect(withParam.statusCode).toBe(405);
    expect(withParam.headers.allow).toBe('POST');
    const unknown = await t.req(admin, { method: 'GET', url: '/no-such-thing' });
    expect(unknown.statusCode).toBe(404);
  });

  it('a method that may carry a body (QUERY) on a path without it is 405 or 404, not a 400 for its missing Content-Type', async () => {
    const admin = await t.as('admin');
    const res = await t.req(admin, { method: 'QUERY' as 'GET', url: '/trips' });
    expect(res.statusCode).toBe(405);
    expect(res.headers.allow).toBe('GET, HEAD, POST');
    expect(res.headers['x-request-id']).toBeTruthy();
    expect(res.json()).toMatchObject({ status: 405, code: 'METHOD_NOT_ALLOWED' });
    const unknown = await t.req(admin, { method: 'QUERY' as 'GET', url: '/no-such-thing' });
    expect(unknown.statusCode).toBe(404);
  });

  it('a leap second (hh:mm:60) is a 400 wherever a timestamp is read, not a 500 when it is turned into a date', async () => {
    const driver = await t.as('driver');
    for (const since of ['0551-10-27t21:44:60.302+11:56', '2026-06-30T23:59:60Z']) {
      const res = await t.req(driver, { method: 'GET', url: `/mobile/sync/pull?since=${encodeURIComponent(since)}` });
      expect(res.statusCode, since).toBe(400);
      expect(res.json().code).toBe('VALIDATION_FAILED');
    }
    const ok = await t.req(driver, {
      method: 'GET',
      url: `/mobile/sync/pull?since=${encodeURIComponent('0551-10-27t21:44:59.302+11:56')}`,
    });
    expect(ok.statusCode).toBe(200);
  });

  it('a JSON null body is 400 where the operation takes a body, also on routes whose body fields are all optional', async () => {
    const admin = await t.as('admin');
    const cases: [typeof admin, string][] = [
      [admin, '/notifications/test'],
      [admin, '/admin/drivers/0190aaaa-0000-7000-8000-000000000000/settlements'],
      [admin, '/trips'],
    ];
    for (const [session, url] of cases) {
      const res = await t.req(session, { method: 'POST', url, headers: { 'content-type': 'application/json' }, payload: 'null' });
      expect(res.statusCode, url).toBe(400);
      expect(res.json().code).toBe('VALIDATION_FAILED');
    }
    // A missing body on an all-optional action is still `{}` (documented as an optional request body).
    const op = operations().find(({ op }) => op.operationId === 'sendTestNotification')!;
    expect(op.op.requestBody.required).toBe(false);
  });
});

describe('request schemas are as strict as the server', () => {
  /** A validator of a named request component, from the served document alone (what a client or a fuzzer sees). */
  const docValidator = () => {
    const ajv = addFormats(new Ajv2020({ strict: false, allErrors: true }));
    ajv.addSchema({ ...doc, $id: 'https://contract.test/openapi.json' });
    return (name: string) => ajv.getSchema(`https://contract.test/openapi.json#/components/schemas/${name}`)!;
  };

  it('every body the document refuses, the server refuses with 400; what it accepts gets past validation', async () => {
    const admin = await t.as('admin');
    const customer = await t.as('customer');
    const schema = docValidator();
    const trip = '0190aaaa-0000-7000-8000-000000000000';
    const cases: { component: string; session: typeof admin | null; url: string; body: Json; valid: boolean }[] = [
      { component: 'LoginRequest', session: null, url: '/auth/login', body: { password: 'Whatever-2026' }, valid: false },
      {
        component: 'LoginRequest',
        session: null,
        url: '/auth/login',
        body: { email: 'admin@demo.test', phone: '+59170000000', password: 'Whatever-2026' },
        valid: false,
      },
      {
        component: 'LoginRequest',
        session: null,
        url: '/auth/login',
        body: { phone: '+59170000000', password: 'Whatever-2026' },
        valid: true,
      },
      {
        component: 'CreateAppUserRequest',
        session: admin,
        url: '/app-users',
        body: { email: 'n@x.test', password: 'short1', display_name: 'N', role: 'delivery' },
        valid: false,
      },
      {
        component: 'CreateAppUserRequest',
        session: admin,
        url: '/app-users',
        body: { password: 'Long-enough-2026', display_name: 'N', role: 'delivery' },
        valid: false,
      },
      {
        component: 'CreateCustomerOrderRequest',
        session: customer,
        url: '/customer/orders',
        body: { quote_id: trip, branch_id: trip },
        valid: false,
      },
      {
        component: 'CreateCustomerOrderRequest',
        session: customer,
        url: '/customer/orders',
        body: { branch_id: trip, address_id: trip },
        valid: false,
      },
      { component: 'CreateCustomerOrderRequest', session: customer, url: '/customer/orders', body: {}, valid: false },
      { component: 'CreateCustomerOrderRequest', session: customer, url: '/customer/orders', body: { quote_id: trip }, valid: true },
      {
        component: 'SendAdminNotificationRequest',
        session: admin,
        url: '/admin/notifications',
        body: { title: 'T', body: 'B' },
        valid: false,
      },
      {
        component: 'SendAdminNotificationRequest',
        session: admin,
        url: '/admin/notifications',
        body: { title: 'T', body: 'B', role: 'delivery', user_ids: [trip] },
        valid: false,
      },
      {
        component: 'SendAdminNotificationRequest',
        session: admin,
        url: '/admin/notifications',
        body: { title: 'T', body: 'B', role: 'delivery' },
        valid: true,
      },
      { component: 'ChangeTripStatusRequest', session: admin, url: `/trips/${trip}/status`, body: { reason: 'r' }, valid: false },
      {
        component: 'ChangeTripStatusRequest',
        session: admin,
        url: `/trips/${trip}/status`,
        body: { status: 'cancelled', reason: 'r' },
        valid: true,
      },
      {
        component: 'ChangeTripStatusRequest',
        session: admin,
        url: `/trips/${trip}/status`,
        body: { reset_pin_lock: 'both', reason: 'r' },
        valid: true,
      },
    ];
    const disagreements: string[] = [];
    for (const c of cases) {
      const documented = schema(c.component)(c.body) as boolean;
      const res = await t.req(c.session, { method: 'POST', url: c.url, payload: c.body });
      const serverRefused = res.statusCode === 400 && ['VALIDATION_FAILED'].includes(res.json().code);
      if (documented !== c.valid || serverRefused === c.valid)
        disagreements.push(
          `${c.component} ${JSON.stringify(c.body)}: document ${documented}, server ${res.statusCode} ${res.body.slice(0, 120)}`,
        );
    }
    expect(disagreements).toEqual([]);
  });

  it('the trip status body is a oneOf of two named, typed shapes; the order body a oneOf of quote and cart', () => {
    const status = doc.components.schemas.ChangeTripStatusRequest;
    expect(status.oneOf.map((x: Json) => x.$ref)).toEqual([
      '#/components/schemas/TripStatusChange',
      '#/components/schemas/TripPinLockReset',
    ]);
    expect(doc.components.schemas.TripStatusChange.required).toEqual(expect.arrayContaining(['status', 'reason']));
    expect(doc.components.schemas.TripPinLockReset.required).toEqual(expect.arrayContaining(['reset_pin_lock', 'reason']));
    const order = doc.components.schemas.CreateCustomerOrderRequest;
    expect(order.oneOf.map((x: Json) => x.$ref)).toEqual(['#/components/schemas/OrderFromQuote', '#/components/schemas/OrderFromCart']);
    expect(doc.components.schemas.OrderFromCart.required).toEqual(expect.arrayContaining(['branch_id', 'address_id', 'items']));
    const users = doc.components.schemas.CreateAppUserRequest;
    for (const alt of users.anyOf) expect(doc.components.schemas[alt.$ref.split('/').pop()].properties.password.minLength).toBe(10);
  });
});
