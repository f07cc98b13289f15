import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type Session, type TestApp } from '../../../test/helpers.js';
import { AppError } from '../../platform/errors.js';
import { newId } from '../../platform/ids.js';
import { paymentConnectorReadyFrom, refusePaymentIntent } from './service/payments.js';
import { signPayload, verifySignature } from '../../platform/signature.js';
import { readSettings } from '../../config.js';

const PAY_SECRET = 'whsec_partner_pay_0123456789abcdef';
const CHEF_SECRET = 'whsec_partner_chef_pay_fedcba9876543210';

let t: TestApp;
let admin: Session;
let merchant: Session;

beforeAll(async () => {
  t = await createTestApp({ raw: { PARTNER_PAY_WEBHOOK_SECRET: PAY_SECRET, PARTNER_CHEF_PAY_WEBHOOK_SECRET: CHEF_SECRET } });
  admin = await t.as('admin');
  merchant = await t.as('merchant');
});
afterAll(() => t?.close());

const now = () => Math.floor(Date.now() / 1000);

function hook(connector: 'partner-pay' | 'partner-chef-pay', body: string, signature?: string) {
  return t.req(null, {
    method: 'POST',
    url: `/integrations/${connector}/webhook`,
    headers: { 'content-type': 'application/json', ...(signature ? { 'x-signature': signature } : {}) },
    payload: body,
  });
}

async function stored(eventId: string) {
  return t.db.withSystem(async (tx) => (await tx.query('SELECT * FROM integration_webhook_event WHERE event_id = $1', [eventId])).rows);
}

const eventBody = (eventId: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    event_id: eventId,
    organization_id: t.demo.organizationId,
    type: 'payment_intent.succeeded',
    data: { amount: '12.50' },
    ...extra,
  });

describe('GET /integrations/roadmap', () => {
  it('lists the planned connectors and their states to administrators', async () => {
    const res = await t.req(admin, { method: 'GET', url: '/integrations/roadmap' });
    expect(res.statusCode).toBe(200);
    const byKey = Object.fromEntries(res.json().data.map((e: { key: string }) => [e.key, e]));
    expect(byKey['partner-pay']).toMatchObject({
      state: 'future',
      active: false,
      webhook_path: '/api/v1/integrations/partner-pay/webhook',
      webhook_configured: true,
    });
    expect(byKey['partner-chef-pay']).toMatchObject({ state: 'future', active: false, webhook_configured: true });
    expect(byKey['platform-payment-settings'].state).toBe('planned');
    expect(JSON.stringify(res.json())).not.toContain(PAY_SECRET);
  });

  it('is refused to merchants (403) and to anonymous callers (401)', async () => {
    expect((await t.req(merchant, { method: 'GET', url: '/integrations/roadmap' })).statusCode).toBe(403);
    expect((await t.req(null, { method: 'GET', url: '/integrations/roadmap' })).statusCode).toBe(401);
  });
});

describe('/integrations/payments', () => {
  it('GET returns state future (read compatibility) to any signed-in user', async () => {
    for (const s of [admin, merchant, await t.as('customer')]) {
      const res = await t.req(s, { method: 'GET', url: '/integrations/payments' });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({ state: 'future', active: false });
      expect(res.json().connectors.map((c: { key: string }) => c.key)).toEqual(['partner-pay', 'partner-chef-pay']);
    }
    expect((await t.req(null, { method: 'GET', url: '/integrations/payments' })).statusCode).toBe(401);
  });

  it('PATCH is refused with 501 FUTURE_INTEGRATION_NOT_RELEASED', async () => {
    const res = await t.req(admin, { method: 'PATCH', url: '/integrations/payments', payload: { connector: 'partner-pay', active: true } });
    expect(res.statusCode).toBe(501);
    expect(res.headers['content-type']).toContain('application/problem+json');
    expect(res.json().code).toBe('FUTURE_INTEGRATION_NOT_RELEASED');
    // Still future afterwards.
    expect((await t.req(admin, { method: 'GET', url: '/integrations/payments' })).json().state).toBe('future');
  });

  it('PATCH: unknown fields 400, merchants 403', async () => {
    const bad = await t.req(admin, { method: 'PATCH', url: '/integrations/payments', payload: { secret: 'x' } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().code).toBe('VALIDATION_FAILED');
    expect((await t.req(merchant, { method: 'PATCH', url: '/integrations/payments', payload: {} })).statusCode).toBe(403);
  });

  it('documents the webhooks as public and the PATCH refusal in OpenAPI', async () => {
    const doc = (await t.req(null, { method: 'GET', url: '/openapi.json' })).json();
    const webhook = doc.paths['/api/v1/integrations/partner-pay/webhook'].post;
    expect(webhook.security).toEqual([]); // public: no bearer token
    expect(webhook.description).toContain('X-Signature');
    expect(doc.paths['/api/v1/integrations/payments'].patch.summary).toContain('501 FUTURE_INTEGRATION_NOT_RELEASED');
  });
});

describe('reserved payment contract helpers (for commerce)', () => {
  it('refusePaymentIntent throws the 501 FUTURE_INTEGRATION_NOT_RELEASED AppError', () => {
    let err: unknown;
    try {
      refusePaymentIntent();
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(AppError);
    expect(err).toMatchObject({ status: 501, code: 'FUTURE_INTEGRATION_NOT_RELEASED' });
  });

  it('paymentConnectorReady is false unless PAYMENT_CONNECTOR_READY forces it', () => {
    expect(t.app.services.integrations.paymentConnectorReady()).toBe(false);
    expect(paymentConnectorReadyFrom({ settings: readSettings({}) })).toBe(false);
    expect(paymentConnectorReadyFrom({ settings: readSettings({ PAYMENT_CONNECTOR_READY: 'false' }) })).toBe(false);
    expect(paymentConnectorReadyFrom({ settings: readSettings({ PAYMENT_CONNECTOR_READY: 'true' }) })).toBe(true);
  });
});

describe('verifySignature', () => {
  const body = Buffer.from('{"a":1}');
  const t0 = 1_700_000_000;
  it.each([
    ['valid', signPayload('s', body, t0), t0, null],
    ['valid at the edge of the window', signPayload('s', body, t0), t0 + 300, null],
    ['rotated secrets: any v1 matches', `t=${t0},v1=${'0'.repeat(64)},${signPayload('s', body, t0).split(',')[1]}`, t0, null],
    ['stale', signPayload('s', body, t0), t0 + 301, 'WEBHOOK_TIMESTAMP_STALE'],
    ['from the future', signPayload('s', body, t0 + 301), t0, 'WEBHOOK_TIMESTAMP_STALE'],
    ['other secret', signPayload('other', body, t0), t0, 'WEBHOOK_SIGNATURE_INVALID'],
    ['timestamp changed', signPayload('s', body, t0).replace(`t=${t0}`, `t=${t0 + 1}`), t0, 'WEBHOOK_SIGNATURE_INVALID'],
    ['malformed', 'v1=abc', t0, 'WEBHOOK_SIGNATURE_INVALID'],
    ['missing', undefined, t0, 'WEBHOOK_SIGNATURE_MISSING'],
  ])('%s', (_name, header, nowSeconds, code) => {
    if (code === null) expect(verifySignature('s', body, header, nowSeconds).getTime()).toBe(Number(/t=(\d+)/.exec(header!)![1]) * 1000);
    else expect(() => verifySignature('s', body, header, nowSeconds)).toThrow(expect.objectContaining({ status: 401, code }));
  });
});

describe('POST /integrations/:connector/webhook', () => {
  it('stores a verified callback once and acknowledges it; a replay of the event id is a duplicate', async () => {
    const eventId = `evt_${newId()}`;
    const body = eventBody(eventId);
    const sig = signPayload(PAY_SECRET, body, now());
    const first = await hook('partner-pay', body, sig);
    expect(first.statusCode).toBe(200);
    expect(first.json()).toMatchObject({
      received: true,
      duplicate: false,
      connector: 'partner-pay',
      event_id: eventId,
      status: 'ignored',
    });

    const replay = await hook('partner-pay', body, sig);
    expect(replay.statusCode).toBe(200);
    expect(replay.json()).toMatchObject({ duplicate: true, id: first.json().id });
    // Re-signed later by the connector (a retry): still the same event.
    const retried = await hook('partner-pay', body, signPayload(PAY_SECRET, body, now() + 5));
    expect(retried.json()).toMatchObject({ duplicate: true, id: first.json().id });

    const rows = await stored(eventId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      organization_id: t.demo.organizationId,
      connector: 'partner-pay',
      event_type: 'payment_intent.succeeded',
      status: 'ignored',
    });
    expect(rows[0].payload).toMatchObject({ data: { amount: '12.50' } });
  });

  it('dedupes per connector: the same event id of the other connector is another event', async () => {
    const eventId = `evt_${newId()}`;
    const body = eventBody(eventId);
    expect((await hook('partner-pay', body, signPayload(PAY_SECRET, body, now()))).json().duplicate).toBe(false);
    const chef = await hook('partner-chef-pay', body, signPayload(CHEF_SECRET, body, now()));
    expect(chef.statusCode).toBe(200);
    expect(chef.json()).toMatchObject({ duplicate: false, connector: 'partner-chef-pay' });
    expect((await stored(eventId)).map((r) => r.connector).sort()).toEqual(['partner-chef-pay', 'partner-pay']);
  });

  it('two simultaneous deliveries of one event store it once', async () => {
    const eventId = `evt_${newId()}`;
    const body = eventBody(eventId);
    const sig = signPayload(PAY_SECRET, body, now());
    const res = await Promise.all([hook('partner-pay', body, sig), hook('partner-pay', body, sig), hook('partner-pay', body, sig)]);
    expect(res.map((r) => r.statusCode)).toEqual([200, 200, 200]);
    expect(res.filter((r) => r.json().duplicate === false)).toHaveLength(1);
    expect(await stored(eventId)).toHaveLength(1);
  });

  it('verifies the raw bytes, not a re-serialization', async () => {
    const eventId = `evt_${newId()}`;
    const body = `{ "type":"x",   "event_id": "${eventId}",\n "organization_id": "${t.demo.organizationId}" }`;
    const res = await hook('partner-pay', body, signPayload(PAY_SECRET, body, now()));
    expect(res.statusCode).toBe(200);
    expect(await stored(eventId)).toHaveLength(1);
  });

  it.each([
    ['unsigned', () => undefined, 'WEBHOOK_SIGNATURE_MISSING'],
    ['signed with a wrong secret', (b: string) => signPayload('not-the-secret', b, now()), 'WEBHOOK_SIGNATURE_INVALID'],
    ["signed with the other connector's secret", (b: string) => signPayload(CHEF_SECRET, b, now()), 'WEBHOOK_SIGNATURE_INVALID'],
    ['signed over another body', (b: string) => signPayload(PAY_SECRET, b.replace('12.50', '99.00'), now()), 'WEBHOOK_SIGNATURE_INVALID'],
    [
      'a stale timestamp (a replay captured 6 minutes ago)',
      (b: string) => signPayload(PAY_SECRET, b, now() - 360),
      'WEBHOOK_TIMESTAMP_STALE',
    ],
    ['a garbage header', () => 'sha256=deadbeef', 'WEBHOOK_SIGNATURE_INVALID'],
  ])('refuses a callback %s with 401 and stores nothing', async (_name, sign, code) => {
    const eventId = `evt_${newId()}`;
    const body = eventBody(eventId);
    const res = await hook('partner-pay', body, sign(body));
    expect(res.statusCode).toBe(401);
    expect(res.headers['content-type']).toContain('application/problem+json');
    expect(res.json().code).toBe(code);
    expect(await stored(eventId)).toHaveLength(0);
  });

  it('a stale replay of an event never stored is refused and stays unstored; a stale replay of a stored one changes nothing', async () => {
    const eventId = `evt_${newId()}`;
    const body = eventBody(eventId);
    expect((await hook('partner-pay', body, signPayload(PAY_SECRET, body, now()))).statusCode).toBe(200);
    const before = await stored(eventId);
    const stale = await hook('partner-pay', body, signPayload(PAY_SECRET, body, now() - 301));
    expect(stale.statusCode).toBe(401);
    expect(await stored(eventId)).toEqual(before);
  });

  it('checks the body after the signature: invalid JSON or fields 400, unknown organization 422, nothing stored', async () => {
    const notJson = '{"event_id": "evt_broken"';
    const r1 = await hook('partner-pay', notJson, signPayload(PAY_SECRET, notJson, now()));
    expect(r1.statusCode).toBe(400);
    expect(r1.json().code).toBe('MALFORMED_JSON');

    const noEvent = JSON.stringify({ organization_id: t.demo.organizationId });
    const r2 = await hook('partner-pay', noEvent, signPayload(PAY_SECRET, noEvent, now()));
    expect(r2.statusCode).toBe(400);
    expect(r2.json().code).toBe('VALIDATION_FAILED');

    const eventId = `evt_${newId()}`;
    const ghost = JSON.stringify({ event_id: eventId, organization_id: 'no-such-org' });
    const r3 = await hook('partner-pay', ghost, signPayload(PAY_SECRET, ghost, now()));
    expect(r3.statusCode).toBe(422);
    expect(r3.json().code).toBe('UNKNOWN_ORGANIZATION');
    expect(await stored(eventId)).toHaveLength(0);
  });

  it('refuses every call with 503 WEBHOOK_NOT_CONFIGURED while the connector has no secret', async () => {
    const saved = t.config.settings.PARTNER_CHEF_PAY_WEBHOOK_SECRET;
    delete t.config.settings.PARTNER_CHEF_PAY_WEBHOOK_SECRET;
    try {
      const eventId = `evt_${newId()}`;
      const body = eventBody(eventId);
      for (const sig of [undefined, signPayload(CHEF_SECRET, body, now()), signPayload('', body, now())]) {
        const res = await hook('partner-chef-pay', body, sig);
        expect(res.statusCode).toBe(503);
        expect(res.json().code).toBe('WEBHOOK_NOT_CONFIGURED');
      }
      expect(await stored(eventId)).toHaveLength(0);
      const roadmap = (await t.req(admin, { method: 'GET', url: '/integrations/roadmap' })).json();
      expect(roadmap.data.find((e: { key: string }) => e.key === 'partner-chef-pay').webhook_configured).toBe(false);
    } finally {
      t.config.settings.PARTNER_CHEF_PAY_WEBHOOK_SECRET = saved;
    }
  });

  it('stores the callback in the organization named by the signed payload, invisible to other tenants', async () => {
    const other = await t.newOrganization();
    const eventId = `evt_${newId()}`;
    const body = JSON.stringify({ event_id: eventId, organization_id: other.organizationId });
    expect((await hook('partner-pay', body, signPayload(PAY_SECRET, body, now()))).statusCode).toBe(200);
    const seenByDemo = await t.db.withTenant({ organizationId: t.demo.organizationId, userId: null }, (tx) =>
      tx.query('SELECT 1 FROM integration_webhook_event WHERE event_id = $1', [eventId]),
    );
    const seenByOther = await t.db.withTenant({ organizationId: other.organizationId, userId: null }, (tx) =>
      tx.query('SELECT 1 FROM integration_webhook_event WHERE event_id = $1', [eventId]),
    );
    expect(seenByDemo.rowCount).toBe(0);
    expect(seenByOther.rowCount).toBe(1);
  });

  it('accepts only JSON (415 otherwise) and leaves JSON parsing of other routes untouched', async () => {
    const res = await t.req(null, {
      method: 'POST',
      url: '/integrations/partner-pay/webhook',
      headers: { 'content-type': 'text/plain' },
      payload: 'hello',
    });
    expect(res.statusCode).toBe(415);
    const login = await t.req(null, {
      method: 'POST',
      url: '/auth/login',
      payload: { email: 'admin@demo.test', password: t.demo.password },
    });
    expect(login.statusCode).toBe(200);
  });
});
