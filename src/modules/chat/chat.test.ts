import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, secondInstance, waitFor, type Session, type TestApp } from '../../../test/helpers.js';
import { newId } from '../../platform/ids.js';
import { DEMO_PASSWORD } from '../../seed.js';
import { tenantOf, type Actor } from '../../platform/auth.js';
import type { Tx } from '../../platform/db/index.js';
import type { ChatService, OrderMessageInput } from './service/chat.js';
import { retryDelayMs, type ChatOutboxWorker } from './worker.js';
import { maskSecretRef, provisionedSecretRef } from './service/settings.js';

// ---- A local chat cloud API: records every request, answers as `reply` says.
interface Received {
  url: string;
  authorization: string | undefined;
  body: { to: string; type: string; text: { body: string } };
}
const received: Received[] = [];
let reply: { status: number; body: unknown } = { status: 200, body: {} };
let server: http.Server;
let seq = 0;

const TOKEN = 'tok-shop-secret-value-123';
let t: TestApp;
let chat: ChatService;
let worker: ChatOutboxWorker;
let merchant: Session;
let org: string;

/** The session of each merchant created by useNewMerchant (logistics owns merchants; chat asks it whose a user is). */
const sessionOf = new Map<string, Session>();

beforeAll(async () => {
  server = http.createServer((req, res) => {
    let data = '';
    req.on('data', (c) => (data += c));
    req.on('end', () => {
      received.push({ url: req.url ?? '', authorization: req.headers.authorization, body: JSON.parse(data) });
      const body = reply.status < 300 ? { messages: [{ id: `wamid.${++seq}` }] } : reply.body;
      res.writeHead(reply.status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  t = await createTestApp({
    raw: {
      CHAT_CLOUD_API_URL: `http://127.0.0.1:${port}/v19.0/`,
      CHAT_TOKEN_SHOP: TOKEN,
      CHAT_OUTBOX_CLAIM_TIMEOUT_MS: '1500',
      CHAT_SEND_TIMEOUT_MS: '1000',
      CHAT_OUTBOX_MAX_ATTEMPTS: '3',
      CHAT_OUTBOX_RETRY_BASE_MS: '60000',
    },
  });
  chat = t.app.services.chat;
  worker = t.app.ctx.workers.find((w) => w.name === 'chat-outbox') as ChatOutboxWorker;
  merchant = await t.as('merchant');
  org = t.demo.organizationId;
});
afterAll(async () => {
  await t?.close();
  await new Promise((r) => server?.close(r));
});
beforeEach(() => {
  reply = { status: 200, body: {} };
});

/** A fresh merchant (a new comercio user and his merchant profile), so each test starts from default settings; `merchant` becomes his session. */
async function useNewMerchant(): Promise<string> {
  const email = `shop-${newId().slice(-8)}@demo.test`;
  const admin: Actor = {
    userId: t.demo.users.admin,
    organizationId: org,
    role: 'administrator',
    kind: 'administrator',
    sessionId: 'test',
    requestId: 'test',
    subadmin: null,
  };
  const id = await t.db.withTenant(tenantOf(admin), async (tx) => {
    const user = await t.app.services.identity.insertUser(tx, org, {
      email,
      password: DEMO_PASSWORD,
      display_name: 'Shop',
      role: 'comercio',
    });
    const m = await t.app.services.logistics.merchants.create(tx, admin, {
      owner_user_id: user.id,
      name: `Shop ${email}`,
      address: 'Calle 1',
      location: { type: 'Point', coordinates: [-68.13, -16.5] },
    });
    return m.id;
  });
  merchant = await t.login(email);
  sessionOf.set(id, merchant);
  return id;
}
/** Provisions the merchant's own chat secret on the server, as an operator would, and returns its reference. */
function provision(merchantId: string, value = TOKEN): string {
  const ref = provisionedSecretRef(org, merchantId);
  process.env[ref.slice(4)] = value;
  return ref;
}
const patch = (payload: Record<string, unknown>, s: Session = merchant) =>
  t.req(s, { method: 'PATCH', url: '/merchant/channels', payload });
const sys = <R>(text: string, params: unknown[] = []) => t.db.withSystem(async (tx) => (await tx.query<R>(text, params)).rows);
const outboxRow = async (id: string) => (await sys<Record<string, any>>('SELECT * FROM chat_order_outbox WHERE id = $1', [id]))[0];
const inTenant = <T>(fn: (tx: Tx) => Promise<T>) => t.db.withTenant({ organizationId: org, userId: null }, fn);
const orderInput = (merchantId: string, extra: Partial<OrderMessageInput> = {}): OrderMessageInput => {
  const orderId = `ord_${newId()}`;
  return { organizationId: org, merchantId, orderId, summary: `New order ${orderId}: 2 x Salteña, total BOB 24.00`, ...extra };
};
async function drain() {
  while ((await worker.tick()) > 0);
}
const requestsFor = (orderId: string) => received.filter((r) => r.body.text.body.includes(orderId));

describe('GET/PATCH /merchant/channels', () => {
  it('returns the defaults before anything is set, writing nothing', async () => {
    const merchantId = await useNewMerchant();
    const res = await t.req(merchant, { method: 'GET', url: '/merchant/channels' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      merchant_id: merchantId,
      chat_enabled: false,
      chat_mode: 'link',
      chat_phone: null,
      chat_secret_ref: null,
      chat_secret_configured: false,
      order_notifications: true,
      status_notifications: false,
      created_at: null,
    });
    expect(await sys('SELECT 1 FROM merchant_channel_settings WHERE merchant_id = $1', [merchantId])).toHaveLength(0);
  });

  it('is for merchant users: 401 anonymous, 403 administrators, 422 MERCHANT_PROFILE_REQUIRED without a merchant', async () => {
    expect((await t.req(null, { method: 'GET', url: '/merchant/channels' })).statusCode).toBe(401);
    expect((await t.req(await t.as('admin'), { method: 'GET', url: '/merchant/chat/outbox' })).statusCode).toBe(403);
    const email = `shop-${newId().slice(-8)}@demo.test`;
    await t.db.withSystem((tx) =>
      t.app.services.identity.insertUser(tx, org, { email, password: DEMO_PASSWORD, display_name: 'No shop', role: 'comercio' }),
    );
    const noShop = await t.login(email);
    for (const [method, url] of [
      ['GET', '/merchant/channels'],
      ['PATCH', '/merchant/channels'],
      ['GET', '/merchant/chat/outbox'],
    ] as const) {
      const res = await t.req(noShop, { method, url, ...(method === 'PATCH' ? { payload: { chat_enabled: false } } : {}) });
      expect(res.statusCode).toBe(422);
      expect(res.json().code).toBe('MERCHANT_PROFILE_REQUIRED');
    }
  });

  it('stores a secret reference, never returns it in full, and audits the change', async () => {
    const merchantId = await useNewMerchant();
    const ref = provision(merchantId);
    const res = await patch({
      chat_enabled: true,
      chat_phone: '+59170000001',
      chat_mode: 'cloud_api',
      chat_phone_number_id: '1055',
      chat_secret_ref: ref,
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      chat_enabled: true,
      chat_mode: 'cloud_api',
      chat_secret_ref: maskSecretRef(ref),
      chat_secret_configured: true,
      delivery_ready: true,
    });
    expect(res.body).not.toContain(ref.slice(4));
    expect(res.body).not.toContain(TOKEN);
    const get = await t.req(merchant, { method: 'GET', url: '/merchant/channels' });
    expect(get.json().chat_secret_ref).toBe(maskSecretRef(ref));
    const [row] = await sys<Record<string, unknown>>('SELECT * FROM merchant_channel_settings WHERE merchant_id = $1', [merchantId]);
    expect(row).toMatchObject({ organization_id: org, chat_secret_ref: ref, chat_phone: '+59170000001' });
    const audit = await sys<{ after: Record<string, unknown> }>(
      "SELECT after FROM audit_log WHERE entity_id = $1 AND action = 'merchant_channels.updated'",
      [merchantId],
    );
    expect(audit).toHaveLength(1);
    expect(JSON.stringify(audit[0].after)).not.toContain(ref.slice(4));
  });

  it('changes only the fields sent; null clears an optional field', async () => {
    await useNewMerchant();
    await patch({ chat_phone: '+59170000002', chat_account_id: 'acc_1', status_notifications: true });
    const res = await patch({ chat_account_id: null });
    expect(res.json()).toMatchObject({
      chat_phone: '+59170000002',
      chat_account_id: null,
      status_notifications: true,
      order_notifications: true,
    });
  });

  it('reports what keeps cloud_api delivery from working', async () => {
    const merchantId = await useNewMerchant();
    const res = await patch({ chat_mode: 'cloud_api', chat_phone: '59170000003', chat_secret_ref: provisionedSecretRef(org, merchantId) });
    expect(res.json().delivery_ready).toBe(false);
    expect(res.json().configuration_issues.join(' ')).toMatch(/chat_phone_number_id is not set.*not set on the server/);
  });

  it.each([
    ['enabling without a phone', {}, { chat_enabled: true }, 422, 'CHAT_PHONE_REQUIRED'],
    [
      'clearing the phone of an enabled channel',
      { chat_enabled: true, chat_phone: '59170000004' },
      { chat_phone: null },
      422,
      'CHAT_PHONE_REQUIRED',
    ],
    ['an unknown field', {}, { chat_api_key: 'abc' }, 400, 'VALIDATION_FAILED'],
    ['a secret instead of a reference', {}, { chat_secret_ref: 'EAAG-real-token-value' }, 400, 'VALIDATION_FAILED'],
    ['a reference to a non-chat server secret', {}, { chat_secret_ref: 'env:JWT_SECRET' }, 400, 'VALIDATION_FAILED'],
    ['a vault path (never provisioned here)', {}, { chat_secret_ref: 'vault:chat/other-shop' }, 400, 'VALIDATION_FAILED'],
    ['a chat secret not provisioned for this merchant', {}, { chat_secret_ref: 'env:CHAT_TOKEN_SHOP' }, 422, 'SECRET_REF_NOT_PROVISIONED'],
    [
      "another merchant's provisioned secret",
      {},
      { chat_secret_ref: 'env:CHAT_SECRET_X_ANOTHER_MERCHANT' },
      422,
      'SECRET_REF_NOT_PROVISIONED',
    ],
    ['an unknown mode', {}, { chat_mode: 'sms' }, 400, 'VALIDATION_FAILED'],
    ['a malformed phone', {}, { chat_phone: 'call me' }, 400, 'VALIDATION_FAILED'],
  ])('refuses %s and writes nothing', async (_name, setup, body, status, code) => {
    const merchantId = await useNewMerchant();
    if (Object.keys(setup).length) expect((await patch(setup)).statusCode).toBe(200);
    const before = await sys('SELECT * FROM merchant_channel_settings WHERE merchant_id = $1', [merchantId]);
    const res = await patch(body);
    expect(res.statusCode).toBe(status);
    expect(res.json().code).toBe(code);
    expect(await sys('SELECT * FROM merchant_channel_settings WHERE merchant_id = $1', [merchantId])).toEqual(before);
  });
});

describe('enqueueing in the caller transaction', () => {
  it('queues nothing while the channel is off or order notifications are off', async () => {
    const merchantId = await useNewMerchant();
    expect(await inTenant((tx) => chat.enqueueOrderCreated(tx, orderInput(merchantId)))).toBeNull();
    await patch({ chat_enabled: true, chat_phone: '59170000010', order_notifications: false });
    expect(await inTenant((tx) => chat.enqueueOrderCreated(tx, orderInput(merchantId)))).toBeNull();
    expect(await sys('SELECT 1 FROM chat_order_outbox WHERE merchant_id = $1', [merchantId])).toHaveLength(0);
  });

  it('reads the settings of a merchant who has none once', async () => {
    const merchantId = await useNewMerchant();
    const reads: string[] = [];
    const noting = (tx: Tx): Tx => ({
      kind: tx.kind,
      organizationId: tx.organizationId,
      orm: tx.orm,
      exec: (text) => tx.exec(text),
      queryAndCommit: (text, params, then) => tx.queryAndCommit(text, params, then),
      queue: (text, params) => tx.queue(text, params),
      query(text, params) {
        const sql = typeof text === 'string' ? text : text.text;
        if (/FROM merchant_channel_settings/.test(sql)) reads.push(sql);
        return tx.query(text, params);
      },
    });
    for (let i = 0; i < 3; i++) expect(await inTenant((tx) => chat.enqueueOrderCreated(noting(tx), orderInput(merchantId)))).toBeNull();
    expect(reads).toHaveLength(1);
    // His first settings are announced: the next message follows them.
    await patch({ chat_enabled: true, chat_phone: '+59170000012' });
    expect(await inTenant((tx) => chat.enqueueOrderCreated(noting(tx), orderInput(merchantId)))).toBeTruthy();
  });

  it('queues one pending order_created row per order with a click-to-chat link in link mode', async () => {
    const merchantId = await useNewMerchant();
    await patch({ chat_enabled: true, chat_phone: '+59170000011' });
    const input = orderInput(merchantId, { territoryId: 'ter_1', data: { total: '24.00' } });
    const id = await inTenant((tx) => chat.enqueueOrderCreated(tx, input));
    expect(id).toBeTruthy();
    expect(await inTenant((tx) => chat.enqueueOrderCreated(tx, input))).toBeNull();
    const rows = await sys<Record<string, any>>('SELECT * FROM chat_order_outbox WHERE order_id = $1', [input.orderId]);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      status: 'pending',
      message_type: 'order_created',
      attempts: 0,
      destination_phone: '+59170000011',
      territory_id: 'ter_1',
      organization_id: org,
    });
    expect(rows[0].payload).toEqual({
      summary: input.summary,
      data: { total: '24.00' },
      link: `https://wa.me/59170000011?text=${encodeURIComponent(input.summary)}`,
    });
  });

  it('rolls back with the caller: no order, no message', async () => {
    const merchantId = await useNewMerchant();
    await patch({ chat_enabled: true, chat_phone: '59170000012' });
    const input = orderInput(merchantId);
    await expect(
      inTenant(async (tx) => {
        await chat.enqueueOrderCreated(tx, input);
        throw new Error('order creation failed later in the transaction');
      }),
    ).rejects.toThrow();
    expect(await sys('SELECT 1 FROM chat_order_outbox WHERE order_id = $1', [input.orderId])).toHaveLength(0);
  });

  it('queues order_status_changed only with status_notifications; express requests too', async () => {
    const merchantId = await useNewMerchant();
    await patch({ chat_enabled: true, chat_phone: '59170000013' });
    const input = orderInput(merchantId);
    expect(await inTenant((tx) => chat.enqueueStatusChanged(tx, { ...input, status: 'confirmed' }))).toBeNull();
    await patch({ status_notifications: true });
    const id = await inTenant((tx) => chat.enqueueStatusChanged(tx, { ...input, summary: undefined, status: 'confirmed' }));
    const row = await outboxRow(id!);
    expect(row).toMatchObject({ message_type: 'order_status_changed', status: 'pending' });
    expect(row.payload).toMatchObject({ status: 'confirmed', summary: `Order ${input.orderId}: confirmed` });

    const expressRequestId = `exp_${newId()}`;
    const e = await inTenant((tx) =>
      chat.enqueueOrderCreated(tx, { organizationId: org, merchantId, expressRequestId, summary: 'Express pickup' }),
    );
    expect(await outboxRow(e!)).toMatchObject({ express_request_id: expressRequestId, order_id: null, message_type: 'order_created' });
  });
});

describe('chat outbox worker', () => {
  it('link mode: the row is sent at once with its link, nothing is transmitted', async () => {
    await drain();
    const merchantId = await useNewMerchant();
    await patch({ chat_enabled: true, chat_phone: '59170000020' });
    const input = orderInput(merchantId);
    const id = (await inTenant((tx) => chat.enqueueOrderCreated(tx, input)))!;
    const before = received.length;
    expect(await worker.tick()).toBe(1);
    const row = await outboxRow(id);
    expect(row).toMatchObject({ status: 'sent', attempts: 1, last_error: null, claim_token: null });
    expect(row.sent_at).toBeInstanceOf(Date);
    expect(row.payload.link).toBe(`https://wa.me/59170000020?text=${encodeURIComponent(input.summary)}`);
    expect(received.length).toBe(before);
    expect(await worker.tick()).toBe(0);
  });

  it('cloud_api: sends through the HTTP sender with the referenced bearer token', async () => {
    const merchantId = await useNewMerchant();
    await patch({
      chat_enabled: true,
      chat_phone: '+59170000021',
      chat_mode: 'cloud_api',
      chat_phone_number_id: '1055',
      chat_secret_ref: provision(merchantId),
    });
    const input = orderInput(merchantId);
    const id = (await inTenant((tx) => chat.enqueueOrderCreated(tx, input)))!;
    expect((await outboxRow(id)).payload.link).toBeUndefined();
    await worker.tick();
    const reqs = requestsFor(input.orderId!);
    expect(reqs).toHaveLength(1);
    expect(reqs[0].url).toBe('/v19.0/1055/messages');
    expect(reqs[0].authorization).toBe(`Bearer ${TOKEN}`);
    expect(reqs[0].body).toMatchObject({ to: '59170000021', type: 'text', text: { body: input.summary } });
    const row = await outboxRow(id);
    expect(row).toMatchObject({ status: 'sent', attempts: 1, last_error: null });
    expect(row.payload.provider_message_id).toMatch(/^wamid\.\d+$/);
  });

  it("cloud_api: a stored reference that is not the merchant's provisioned one is never resolved, so no token leaves the server", async () => {
    await drain();
    const merchantId = await useNewMerchant();
    const other = await useNewMerchant();
    merchant = sessionOf.get(merchantId)!;
    await patch({
      chat_enabled: true,
      chat_phone: '59170000029',
      chat_mode: 'cloud_api',
      chat_phone_number_id: '1059',
      chat_secret_ref: provision(merchantId),
    });
    // Rows written before the rule, or by hand: a shared CHAT_ setting and another merchant's provisioned secret.
    for (const ref of ['env:CHAT_TOKEN_SHOP', provision(other, 'tok-of-another-merchant')]) {
      await sys('UPDATE merchant_channel_settings SET chat_secret_ref = $2 WHERE merchant_id = $1', [merchantId, ref]);
      const input = orderInput(merchantId);
      const id = (await inTenant((tx) => chat.enqueueOrderCreated(tx, input)))!;
      await worker.tick();
      expect(requestsFor(input.orderId!)).toHaveLength(0);
      const row = await outboxRow(id);
      expect(row.status).toBe('pending');
      expect(row.last_error).toMatch(/not the one provisioned for this merchant/);
      expect((await t.req(merchant, { method: 'GET', url: '/merchant/channels' })).json().delivery_ready).toBe(false);
    }
    expect(received.some((r) => r.authorization === 'Bearer tok-of-another-merchant' || r.url.includes('1059'))).toBe(false);
  });

  it('cloud_api: a retryable failure goes back to pending with backoff; a permanent one fails; attempts are capped', async () => {
    await drain();
    const merchantId = await useNewMerchant();
    await patch({
      chat_enabled: true,
      chat_phone: '59170000022',
      chat_mode: 'cloud_api',
      chat_phone_number_id: '1056',
      chat_secret_ref: provision(merchantId),
    });
    const input = orderInput(merchantId);
    const id = (await inTenant((tx) => chat.enqueueOrderCreated(tx, input)))!;

    reply = { status: 503, body: { error: 'busy' } };
    const t0 = Date.now();
    await worker.tick();
    let row = await outboxRow(id);
    expect(row).toMatchObject({ status: 'pending', attempts: 1, claim_token: null });
    expect(row.last_error).toContain('503');
    expect(row.available_at.getTime()).toBeGreaterThanOrEqual(t0 + 59_000);
    expect(await worker.tick()).toBe(0); // not due yet
    expect(requestsFor(input.orderId!)).toHaveLength(1);

    // The backoff elapses (clock moved forward for the row), then it succeeds.
    reply = { status: 200, body: {} };
    await sys('UPDATE chat_order_outbox SET available_at = now() WHERE id = $1', [id]);
    await worker.tick();
    row = await outboxRow(id);
    expect(row).toMatchObject({ status: 'sent', attempts: 2, last_error: null });
    expect(requestsFor(input.orderId!)).toHaveLength(2);

    // A permanent error (4xx) fails at once.
    const perm = orderInput(merchantId);
    const permId = (await inTenant((tx) => chat.enqueueOrderCreated(tx, perm)))!;
    reply = { status: 400, body: { error: 'invalid recipient' } };
    await worker.tick();
    expect(await outboxRow(permId)).toMatchObject({ status: 'failed', attempts: 1 });
    expect((await outboxRow(permId)).last_error).toContain('invalid recipient');

    // Retryable errors stop after CHAT_OUTBOX_MAX_ATTEMPTS (3).
    const capped = orderInput(merchantId);
    const cappedId = (await inTenant((tx) => chat.enqueueOrderCreated(tx, capped)))!;
    reply = { status: 500, body: { error: 'down' } };
    for (let i = 0; i < 3; i++) {
      await sys('UPDATE chat_order_outbox SET available_at = now() WHERE id = $1', [cappedId]);
      await worker.tick();
    }
    expect(await outboxRow(cappedId)).toMatchObject({ status: 'failed', attempts: 3 });
    expect(requestsFor(capped.orderId!)).toHaveLength(3);
  });

  it('a worker killed between claim and finish: the row is reclaimed after the claim timeout and sent once', async () => {
    await drain();
    const merchantId = await useNewMerchant();
    await patch({
      chat_enabled: true,
      chat_phone: '59170000023',
      chat_mode: 'cloud_api',
      chat_phone_number_id: '1057',
      chat_secret_ref: provision(merchantId),
    });
    const input = orderInput(merchantId);
    const id = (await inTenant((tx) => chat.enqueueOrderCreated(tx, input)))!;

    const claimed = await worker.claim(); // ...and the worker dies here.
    expect(claimed.map((c) => c.id)).toEqual([id]);
    expect(await outboxRow(id)).toMatchObject({ status: 'sending', attempts: 1 });
    expect(await worker.tick()).toBe(0); // the claim still holds: nobody else takes it
    expect(requestsFor(input.orderId!)).toHaveLength(0);

    // Once the claim has expired a tick takes the row over; until then each finds nothing to claim.
    expect(await waitFor(() => worker.tick(), { timeout: 10_000, interval: 100, message: 'the expired claim re-claimed' })).toBe(1);
    expect(await worker.tick()).toBe(0);
    expect(requestsFor(input.orderId!)).toHaveLength(1);
    expect(await outboxRow(id)).toMatchObject({ status: 'sent', attempts: 2, claim_token: null });
  });

  it('a late finish by a worker whose claim was taken over changes nothing', async () => {
    await drain();
    const merchantId = await useNewMerchant();
    await patch({ chat_enabled: true, chat_phone: '59170000024' });
    const id = (await inTenant((tx) => chat.enqueueOrderCreated(tx, orderInput(merchantId))))!;
    const [zombie] = await worker.claim();
    await sys('UPDATE chat_order_outbox SET available_at = now(), claim_expires_at = now() WHERE id = $1', [id]); // its claim runs out
    const [fresh] = await worker.claim();
    expect(fresh.id).toBe(id);
    await worker.deliver(zombie);
    expect(await outboxRow(id)).toMatchObject({ status: 'sending', claim_token: fresh.claim_token });
    await worker.deliver(fresh);
    expect(await outboxRow(id)).toMatchObject({ status: 'sent', attempts: 2 });
  });

  it('cancels messages of an order cancelled before sending; sent ones stay sent', async () => {
    await drain();
    const merchantId = await useNewMerchant();
    await patch({ chat_enabled: true, chat_phone: '59170000025', status_notifications: true });
    const input = orderInput(merchantId);
    const created = (await inTenant((tx) => chat.enqueueOrderCreated(tx, input)))!;
    await worker.tick();
    const confirmed = (await inTenant((tx) => chat.enqueueStatusChanged(tx, { ...input, status: 'confirmed' })))!;
    const other = orderInput(merchantId);
    const otherId = (await inTenant((tx) => chat.enqueueOrderCreated(tx, other)))!;

    expect(await inTenant((tx) => chat.cancelPendingForOrder(tx, input.orderId!))).toBe(1);
    expect(await outboxRow(created)).toMatchObject({ status: 'sent' });
    expect(await outboxRow(confirmed)).toMatchObject({ status: 'cancelled' });
    expect((await outboxRow(confirmed)).last_error).toContain('cancelled');
    expect(await outboxRow(otherId)).toMatchObject({ status: 'pending' });
    await worker.tick();
    expect(await outboxRow(confirmed)).toMatchObject({ status: 'cancelled', attempts: 0 });
    expect(await outboxRow(otherId)).toMatchObject({ status: 'sent' });
    // Another organization cannot cancel them (RLS).
    const foreign = await t.newOrganization();
    const third = orderInput(merchantId);
    const thirdId = (await inTenant((tx) => chat.enqueueOrderCreated(tx, third)))!;
    expect(
      await t.db.withTenant({ organizationId: foreign.organizationId, userId: null }, (tx) =>
        chat.cancelPendingForOrder(tx, third.orderId!),
      ),
    ).toBe(0);
    expect(await outboxRow(thirdId)).toMatchObject({ status: 'pending' });
  });

  it('cancels a queued message when the merchant disabled the channel before it was sent', async () => {
    await drain();
    const merchantId = await useNewMerchant();
    await patch({ chat_enabled: true, chat_phone: '59170000026' });
    const id = (await inTenant((tx) => chat.enqueueOrderCreated(tx, orderInput(merchantId))))!;
    await patch({ chat_enabled: false });
    await worker.tick();
    expect(await outboxRow(id)).toMatchObject({ status: 'cancelled' });
  });

  it('without configuration cloud_api rows stay pending with last_error, and the order transaction is unaffected', async () => {
    await drain();
    const merchantId = await useNewMerchant();
    await patch({
      chat_enabled: true,
      chat_phone: '59170000027',
      chat_mode: 'cloud_api',
      chat_phone_number_id: '1058',
      chat_secret_ref: provisionedSecretRef(org, merchantId),
    });
    const input = orderInput(merchantId);
    // The caller's own work in the same transaction commits as usual.
    const id = (await inTenant(async (tx) => {
      const out = await chat.enqueueOrderCreated(tx, input);
      await t.app.ctx.events.record(tx, org, { type: 'order.created', entityType: 'order', entityId: input.orderId! });
      return out;
    }))!;
    expect(await sys("SELECT 1 FROM event WHERE entity_id = $1 AND type = 'order.created'", [input.orderId])).toHaveLength(1);

    const t0 = Date.now();
    await worker.tick();
    let row = await outboxRow(id);
    expect(row).toMatchObject({ status: 'pending', attempts: 0, claim_token: null });
    expect(row.last_error).toMatch(/not configured.*not set on the server/);
    expect(row.available_at.getTime()).toBeGreaterThan(t0 + 60_000);
    expect(requestsFor(input.orderId!)).toHaveLength(0);

    // No chat API on the server at all (CHAT_CLOUD_API_URL unset).
    const saved = t.config.settings.CHAT_CLOUD_API_URL;
    delete t.config.settings.CHAT_CLOUD_API_URL;
    try {
      await patch({ chat_secret_ref: provision(merchantId) });
      await sys('UPDATE chat_order_outbox SET available_at = now() WHERE id = $1', [id]);
      await worker.tick();
      row = await outboxRow(id);
      expect(row).toMatchObject({ status: 'pending', attempts: 0 });
      expect(row.last_error).toContain('CHAT_CLOUD_API_URL');
      expect(requestsFor(input.orderId!)).toHaveLength(0);
    } finally {
      t.config.settings.CHAT_CLOUD_API_URL = saved;
    }
    // Once configured, the waiting row goes out.
    await sys('UPDATE chat_order_outbox SET available_at = now() WHERE id = $1', [id]);
    await worker.tick();
    expect(await outboxRow(id)).toMatchObject({ status: 'sent', attempts: 1 });
    expect(requestsFor(input.orderId!)).toHaveLength(1);
  });

  it('backoff doubles per attempt up to the cap', () => {
    const d = [1, 2, 3, 10].map((n) => retryDelayMs(n, 1000, 5000));
    expect(d[0]).toBeGreaterThanOrEqual(1000);
    expect(d[0]).toBeLessThanOrEqual(1100);
    expect(d[1]).toBeGreaterThanOrEqual(2000);
    expect(d[2]).toBeGreaterThanOrEqual(4000);
    expect(d[3]).toBeLessThanOrEqual(5500);
  });
});

describe('dashboard', () => {
  it('shows the chat outbox backlog per status to administrators', async () => {
    const merchantId = await useNewMerchant();
    await patch({ chat_enabled: true, chat_phone: '59170000040' });
    await inTenant((tx) => chat.enqueueOrderCreated(tx, orderInput(merchantId)));
    const counts = await sys<{ status: string; n: number }>(
      'SELECT status, count(*)::int AS n FROM chat_order_outbox WHERE organization_id = $1 GROUP BY status',
      [org],
    );
    const res = await t.req(await t.as('admin'), { method: 'GET', url: '/dashboard' });
    expect(res.statusCode).toBe(200);
    const section = res.json().sections.chat_outbox;
    expect(section.by_status).toEqual(Object.fromEntries(counts.map((c) => [c.status, c.n])));
    expect(section.by_status.pending).toBeGreaterThanOrEqual(1);
    expect(section.oldest_undelivered_at).not.toBeNull();
  });
});

describe('GET /merchant/chat/outbox', () => {
  it("lists the merchant's messages, newest first, filtered and paginated, without claim internals", async () => {
    const merchantId = await useNewMerchant();
    await patch({ chat_enabled: true, chat_phone: '59170000030' });
    const a = orderInput(merchantId);
    const b = orderInput(merchantId);
    const idA = (await inTenant((tx) => chat.enqueueOrderCreated(tx, a)))!;
    const idB = (await inTenant((tx) => chat.enqueueOrderCreated(tx, b)))!;
    await inTenant((tx) => chat.cancelPendingForOrder(tx, a.orderId!));

    const all = await t.req(merchant, { method: 'GET', url: '/merchant/chat/outbox' });
    expect(all.statusCode).toBe(200);
    expect(all.json().data.map((r: { id: string }) => r.id)).toEqual([idB, idA]);
    expect(all.json().data[0]).not.toHaveProperty('claim_token');

    const page1 = await t.req(merchant, { method: 'GET', url: '/merchant/chat/outbox?limit=1' });
    expect(page1.json().data.map((r: { id: string }) => r.id)).toEqual([idB]);
    const page2 = await t.req(merchant, { method: 'GET', url: `/merchant/chat/outbox?limit=1&cursor=${page1.json().next_cursor}` });
    expect(page2.json()).toMatchObject({ data: [{ id: idA }], next_cursor: null });

    const cancelled = await t.req(merchant, { method: 'GET', url: '/merchant/chat/outbox?status=cancelled' });
    expect(cancelled.json().data.map((r: { id: string }) => r.id)).toEqual([idA]);
    const byOrder = await t.req(merchant, { method: 'GET', url: `/merchant/chat/outbox?order_id=${b.orderId}` });
    expect(byOrder.json().data.map((r: { id: string }) => r.id)).toEqual([idB]);
    expect((await t.req(merchant, { method: 'GET', url: '/merchant/chat/outbox?status=lost' })).statusCode).toBe(400);
  });

  it("another organization's merchant sees none of it, even under the same merchant id", async () => {
    const merchantId = await useNewMerchant();
    await patch({ chat_enabled: true, chat_phone: '59170000031' });
    await inTenant((tx) => chat.enqueueOrderCreated(tx, orderInput(merchantId)));
    const other = await t.newOrganization();
    const otherMerchant = await t.login(other.logins.merchant);
    // The other organization's merchant profile gets the very same id (ids are unique per organization only).
    const otherAdmin: Actor = {
      userId: otherMerchant.userId,
      organizationId: other.organizationId,
      role: 'administrator',
      kind: 'administrator',
      sessionId: 'test',
      requestId: 'test',
      subadmin: null,
    };
    await t.db.withTenant(tenantOf(otherAdmin), async (tx) => {
      const m = await t.app.services.logistics.merchants.create(tx, otherAdmin, {
        owner_user_id: otherMerchant.userId,
        name: 'Other shop',
        address: 'Calle 2',
        location: { type: 'Point', coordinates: [-68.13, -16.5] },
      });
      await tx.query('UPDATE merchant SET id = $2 WHERE id = $1', [m.id, merchantId]);
    });
    const list = await t.req(otherMerchant, { method: 'GET', url: '/merchant/chat/outbox' });
    expect(list.statusCode).toBe(200);
    expect(list.json().data).toEqual([]);
    const settings = await t.req(otherMerchant, { method: 'GET', url: '/merchant/channels' });
    expect(settings.json()).toMatchObject({ chat_enabled: false, chat_phone: null, created_at: null });
  });
});

describe('the channel token stored encrypted (write-only)', () => {
  const STORED = 'EAAG-stored-channel-token-0123456789';
  const settingsRow = async (merchantId: string) =>
    (await sys<Record<string, any>>('SELECT * FROM merchant_channel_settings WHERE merchant_id = $1', [merchantId]))[0];
  const adminPatch = async (merchantId: string, payload: Record<string, unknown>, s?: Session) =>
    t.req(s ?? (await t.as('admin')), { method: 'PATCH', url: `/admin/merchants/${merchantId}/channels`, payload });

  it('the merchant sets his token: stored encrypted, never returned, audited without it, and sent as the bearer token', async () => {
    await drain();
    const merchantId = await useNewMerchant();
    const res = await patch({
      chat_enabled: true,
      chat_phone: '59170000031',
      chat_mode: 'cloud_api',
      chat_phone_number_id: '1061',
      chat_token: STORED,
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({
      chat_token_set: true,
      chat_token_set_at: expect.any(String),
      chat_secret_configured: true,
      delivery_ready: true,
    });
    expect(res.body).not.toContain(STORED);
    expect(res.json()).not.toHaveProperty('chat_token');
    const row = await settingsRow(merchantId);
    expect(row.chat_token).toMatch(new RegExp(`^enc:v1:${t.config.secrets!.current.id}:`));
    expect(row.chat_token).not.toContain(STORED);
    const got = await t.req(merchant, { method: 'GET', url: '/merchant/channels' });
    expect(got.body).not.toContain(STORED);
    expect(got.body).not.toContain(row.chat_token);
    const audit = await sys<{ after: Record<string, unknown> }>(
      `SELECT before, after FROM audit_log WHERE entity_id = $1 AND action = 'merchant_channels.updated' ORDER BY id`,
      [merchantId],
    );
    expect(audit.at(-1)!.after).toMatchObject({ credential: 'replaced' });
    expect(JSON.stringify(audit)).not.toContain(STORED);
    expect(JSON.stringify(audit)).not.toContain(row.chat_token);

    const input = orderInput(merchantId);
    const id = (await inTenant((tx) => chat.enqueueOrderCreated(tx, input)))!;
    await worker.tick();
    const reqs = requestsFor(input.orderId!);
    expect(reqs).toHaveLength(1);
    expect(reqs[0].authorization).toBe(`Bearer ${STORED}`);
    expect((await outboxRow(id)).status).toBe('sent');
    const outbox = await t.req(merchant, { method: 'GET', url: '/merchant/chat/outbox' });
    expect(outbox.body).not.toContain(STORED);
  });

  it('the stored token takes precedence over the legacy reference; null clears it and the reference works again', async () => {
    await drain();
    const merchantId = await useNewMerchant();
    await patch({
      chat_enabled: true,
      chat_phone: '59170000032',
      chat_mode: 'cloud_api',
      chat_phone_number_id: '1062',
      chat_secret_ref: provision(merchantId),
      chat_token: STORED,
    });
    const first = orderInput(merchantId);
    await inTenant((tx) => chat.enqueueOrderCreated(tx, first));
    await worker.tick();
    expect(requestsFor(first.orderId!)[0].authorization).toBe(`Bearer ${STORED}`);
    const cleared = await patch({ chat_token: null });
    expect(cleared.json()).toMatchObject({ chat_token_set: false, chat_token_set_at: null, chat_secret_configured: true });
    expect((await settingsRow(merchantId)).chat_token).toBeNull();
    const second = orderInput(merchantId);
    await inTenant((tx) => chat.enqueueOrderCreated(tx, second));
    await worker.tick();
    expect(requestsFor(second.orderId!)[0].authorization).toBe(`Bearer ${TOKEN}`);
  });

  it("an administrator sets a merchant's token; merchants, other organizations and unknown merchants cannot", async () => {
    const merchantId = await useNewMerchant();
    const admin = await t.as('admin');
    const res = await adminPatch(merchantId, { chat_token: STORED });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ merchant_id: merchantId, chat_token_set: true });
    expect(res.body).not.toContain(STORED);
    const got = await t.req(admin, { method: 'GET', url: `/admin/merchants/${merchantId}/channels` });
    expect(got.statusCode).toBe(200);
    expect(got.json()).toMatchObject({ merchant_id: merchantId, chat_token_set: true });
    expect(got.body).not.toContain(STORED);
    // The merchant sees it set (not the value).
    expect((await t.req(merchant, { method: 'GET', url: '/merchant/channels' })).json().chat_token_set).toBe(true);
    const audit = await sys<{ actor_user_id: string; after: unknown }>(
      `SELECT actor_user_id, after FROM audit_log WHERE entity_id = $1 AND action = 'merchant_channels.updated' ORDER BY id`,
      [merchantId],
    );
    expect(audit.at(-1)!.actor_user_id).toBe(admin.userId);
    expect(JSON.stringify(audit)).not.toContain(STORED);

    const before = await settingsRow(merchantId);
    expect((await adminPatch(merchantId, { chat_token: 'other-token' }, merchant)).statusCode).toBe(403);
    expect(
      (
        await t.req(await t.as('dispatch'), {
          method: 'PATCH',
          url: `/admin/merchants/${merchantId}/channels`,
          payload: { chat_token: 'x' },
        })
      ).statusCode,
    ).toBe(403);
    const other = await t.newOrganization();
    const otherAdmin = await t.login(other.logins.admin);
    expect((await adminPatch(merchantId, { chat_token: 'other-token' }, otherAdmin)).statusCode).toBe(404);
    expect((await t.req(otherAdmin, { method: 'GET', url: `/admin/merchants/${merchantId}/channels` })).statusCode).toBe(404);
    expect((await adminPatch(`m_${newId()}`, { chat_token: 'other-token' })).statusCode).toBe(404);
    expect(await settingsRow(merchantId)).toEqual(before);
  });

  it.each([
    ['an empty token', ''],
    ['a too long token', 'x'.repeat(4097)],
    ['a token with spaces', 'two words'],
  ])('refuses %s with 400 and writes nothing (merchant and administrator)', async (_name, token) => {
    const merchantId = await useNewMerchant();
    expect((await patch({ chat_token: STORED })).statusCode).toBe(200);
    const before = await settingsRow(merchantId);
    const res = await patch({ chat_token: token });
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe('VALIDATION_FAILED');
    expect((await adminPatch(merchantId, { chat_token: token })).statusCode).toBe(400);
    expect(await settingsRow(merchantId)).toEqual(before);
  });
});

describe('a settings change is followed by the very next message', () => {
  it('switching the channel off and on, its mode and its phone', async () => {
    const merchantId = await useNewMerchant();
    expect(await inTenant((tx) => chat.enqueueOrderCreated(tx, orderInput(merchantId)))).toBeNull(); // defaults: off
    await patch({ chat_enabled: true, chat_phone: '+59170000021' });
    const on = await inTenant((tx) => chat.enqueueOrderCreated(tx, orderInput(merchantId)));
    expect(await outboxRow(on!)).toMatchObject({ destination_phone: '+59170000021' });
    expect((await outboxRow(on!)).payload.link).toBeDefined();
    await patch({ chat_enabled: false });
    expect(await inTenant((tx) => chat.enqueueOrderCreated(tx, orderInput(merchantId)))).toBeNull();
    await patch({ chat_enabled: true, chat_mode: 'cloud_api', chat_phone: '+59170000022' });
    const cloud = await inTenant((tx) => chat.enqueueOrderCreated(tx, orderInput(merchantId)));
    expect(await outboxRow(cloud!)).toMatchObject({ destination_phone: '+59170000022' });
    expect((await outboxRow(cloud!)).payload.link).toBeUndefined();
    await patch({ order_notifications: false, status_notifications: true });
    const input = orderInput(merchantId);
    expect(await inTenant((tx) => chat.enqueueOrderCreated(tx, input))).toBeNull();
    expect(await inTenant((tx) => chat.enqueueStatusChanged(tx, { ...input, status: 'confirmed' }))).toBeTruthy();
  });

  it('an administrator switching a channel on through one instance is followed by the next message queued by another', async () => {
    const b = await secondInstance(t);
    try {
      const onB = <T>(fn: (tx: Tx) => Promise<T>) => b.app.ctx.db.withTenant({ organizationId: org, userId: null }, fn);
      const admin = await t.as('admin');
      const patchOf = (merchantId: string, payload: Record<string, unknown>) =>
        t.req(admin, { method: 'PATCH', url: `/admin/merchants/${merchantId}/channels`, payload });
      // The second instance's listener is in place once a change through the first reaches it.
      const warm = await useNewMerchant();
      let phone = 30;
      await waitFor(
        async () => {
          await onB((tx) => b.app.services.chat.enqueueOrderCreated(tx, orderInput(warm)));
          const to = `+591700000${phone++}`;
          expect((await patchOf(warm, { chat_enabled: true, chat_phone: to })).statusCode).toBe(200);
          return waitFor(
            async () => {
              const id = await onB((tx) => b.app.services.chat.enqueueOrderCreated(tx, orderInput(warm)));
              return id !== null && (await outboxRow(id)).destination_phone === to;
            },
            { timeout: 1_000 },
          ).catch(() => false);
        },
        { message: "the second instance's listener" },
      );
      const merchantId = await useNewMerchant();
      expect(await onB((tx) => b.app.services.chat.enqueueOrderCreated(tx, orderInput(merchantId)))).toBeNull(); // off, remembered
      expect((await patchOf(merchantId, { chat_enabled: true, chat_phone: '+59170000029' })).statusCode).toBe(200);
      const id = await waitFor(() => onB((tx) => b.app.services.chat.enqueueOrderCreated(tx, orderInput(merchantId))), {
        message: 'the message queued through the second instance',
      });
      expect(await outboxRow(id)).toMatchObject({ destination_phone: '+59170000029', status: 'pending' });
    } finally {
      await b.close();
    }
  });
});
