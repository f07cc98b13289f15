import http from 'node:http';
import type net from 'node:net';
import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, secondInstance, waitFor, type Session, type TestApp } from '../helpers.js';
import type { EventInput } from '../../src/platform/events.js';
import { createPushWorker } from '../../src/modules/notifications/worker.js';
import { createWebhookGateway, type PushGateway } from '../../src/modules/notifications/service/gateway.js';

let t: TestApp;
let orgId: string;
let admin: Session, dispatch: Session, driver: Session, customer: Session, merchant: Session;

beforeAll(async () => {
  t = await createTestApp();
  orgId = t.demo.organizationId;
  [admin, dispatch, driver, customer, merchant] = await Promise.all([
    t.as('admin'),
    t.as('dispatch'),
    t.as('driver'),
    t.as('customer'),
    t.as('merchant'),
  ]);
});
afterAll(() => t?.close());

const sql = <R = any>(text: string, params: unknown[] = []) => t.db.withSystem(async (tx) => (await tx.query<R>(text, params)).rows);
const record = (input: EventInput, org = orgId) => t.db.withSystem((tx) => t.app.ctx.events.record(tx, org, input));
let tokenN = 0;
const registerDevice = (s: Session, token = `push-token-${++tokenN}-${Date.now()}`) =>
  t.req(s, {
    method: 'POST',
    url: '/mobile/devices',
    payload: { platform: 'android', push_token: token, app_version: '0.7.2', build_number: 702 },
  });

describe('inbox from events', () => {
  it('creates a notification per audience member (not the actor), a push per device, and a notification.created event, in the same transaction', async () => {
    const dev = (await registerDevice(driver)).json();
    const ev = await record({
      type: 'trip.assigned',
      entityType: 'trip',
      entityId: 'trip-n1',
      actorUserId: t.demo.users.dispatch,
      audienceUserIds: [t.demo.users.driver, t.demo.users.customer, t.demo.users.dispatch],
      payload: { code: 'T-1' },
    });
    const rows = await sql(
      'SELECT user_id, type, title, body, entity_id, event_seq FROM notification WHERE event_seq = $1 ORDER BY user_id',
      [ev.seq],
    );
    expect(rows.map((r) => r.user_id).sort()).toEqual([t.demo.users.driver, t.demo.users.customer].sort());
    expect(rows[0]).toMatchObject({ type: 'trip.assigned', title: 'Trip assigned', entity_id: 'trip-n1' });
    expect(rows[0].body).toContain('T-1');
    const push = await sql(
      'SELECT device_id, user_id, status, last_error, payload FROM push_outbox WHERE notification_id IN (SELECT id FROM notification WHERE event_seq = $1)',
      [ev.seq],
    );
    expect(push).toHaveLength(1); // only the driver has a device
    expect(push[0]).toMatchObject({ device_id: dev.id, status: 'pending', last_error: 'NO_GATEWAY' });
    expect(push[0].payload).toMatchObject({
      type: 'trip.assigned',
      title: 'Trip assigned',
      data: { entity_type: 'trip', entity_id: 'trip-n1' },
    });
    const created = await sql(
      `SELECT audience_user_ids, payload FROM event WHERE type = 'notification.created' AND seq > $1 ORDER BY seq`,
      [ev.seq],
    );
    expect(created.map((e) => e.audience_user_ids)).toEqual(expect.arrayContaining([[t.demo.users.driver], [t.demo.users.customer]]));
  });

  it('creates nothing for location updates, and nothing at all when the causing transaction rolls back', async () => {
    const before = (await sql('SELECT count(*)::int AS n FROM notification'))[0].n;
    await record({ type: 'trip.location_updated', entityType: 'trip', entityId: 'trip-n2', audienceUserIds: [t.demo.users.customer] });
    await expect(
      t.db.withSystem(async (tx) => {
        await t.app.ctx.events.record(tx, orgId, {
          type: 'trip.completed',
          entityType: 'trip',
          entityId: 'trip-n3',
          audienceUserIds: [t.demo.users.customer],
        });
        throw new Error('the trip change failed');
      }),
    ).rejects.toThrow('the trip change failed');
    expect((await sql('SELECT count(*)::int AS n FROM notification'))[0].n).toBe(before);
    expect(await sql(`SELECT 1 FROM event WHERE entity_id = 'trip-n3'`)).toHaveLength(0);
  });

  it('without a push gateway the event is kept and the transaction is unaffected; the worker claims nothing', async () => {
    expect(t.app.services.pushGateway).toBeNull();
    await registerDevice(customer);
    const ev = await record({ type: 'trip.cancelled', entityType: 'trip', entityId: 'trip-n4', audienceUserIds: [t.demo.users.customer] });
    const worker = t.app.ctx.workers.find((w) => w.name === 'push-outbox')!;
    expect(await worker.tick()).toBe(0);
    const rows = await sql(
      `SELECT p.status, p.last_error, p.attempts FROM push_outbox p JOIN notification n ON n.id = p.notification_id WHERE n.event_seq = $1`,
      [ev.seq],
    );
    expect(rows).toEqual([{ status: 'pending', last_error: 'NO_GATEWAY', attempts: 0 }]);
    const health = (await t.req(admin, { method: 'GET', url: '/admin/mobile-health' })).json();
    expect(health.push).toMatchObject({ gateway: 'not_configured' });
    expect(health.push.waiting_for_gateway).toBeGreaterThanOrEqual(1);
    expect(health.integrations.push_gateway).toEqual({ state: 'not_configured' });
  });
});

describe('inbox routes', () => {
  it("lists my notifications newest first with an unread filter, count and cursor; never another user's", async () => {
    for (let i = 0; i < 3; i++) await t.req(merchant, { method: 'POST', url: '/notifications/test', payload: { title: `hello ${i}` } });
    const page1 = (await t.req(merchant, { method: 'GET', url: '/notifications?limit=2' })).json();
    expect(page1.data.map((n: any) => n.title)).toEqual(['hello 2', 'hello 1']);
    expect(page1.unread_count).toBe(3);
    expect(page1.next_cursor).toBeTruthy();
    const page2 = (await t.req(merchant, { method: 'GET', url: `/notifications?limit=2&cursor=${page1.next_cursor}` })).json();
    expect(page2.data.map((n: any) => n.title)).toEqual(['hello 0']);
    const theirs = (await t.req(admin, { method: 'GET', url: '/notifications' })).json();
    expect(theirs.data.some((n: any) => n.user_id !== t.demo.users.admin)).toBe(false);
    expect((await t.req(merchant, { method: 'GET', url: '/notifications?limit=500' })).statusCode).toBe(400);
    expect((await t.req(merchant, { method: 'GET', url: '/notifications?cursor=%%%' })).statusCode).toBe(400);
  });

  it('marks read once (a repeat keeps read_at); another user or organization gets 404', async () => {
    const n = (await t.req(merchant, { method: 'POST', url: '/notifications/test' })).json();
    expect(n).toMatchObject({ type: 'test', read: false, read_at: null, user_id: t.demo.users.merchant });
    expect((await t.req(customer, { method: 'POST', url: `/notifications/${n.id}/read` })).statusCode).toBe(404);
    const other = await t.newOrganization('Inbox Other');
    const foreign = await t.login(other.logins.admin);
    expect((await t.req(foreign, { method: 'POST', url: `/notifications/${n.id}/read` })).statusCode).toBe(404);
    expect((await sql('SELECT read_at FROM notification WHERE id = $1', [n.id]))[0].read_at).toBeNull();
    const r1 = (await t.req(merchant, { method: 'POST', url: `/notifications/${n.id}/read` })).json();
    expect(r1.read).toBe(true);
    const r2 = (await t.req(merchant, { method: 'POST', url: `/notifications/${n.id}/read` })).json();
    expect(r2.read_at).toBe(r1.read_at);
    const unread = (await t.req(merchant, { method: 'GET', url: '/notifications?unread=true' })).json();
    expect(unread.data.map((x: any) => x.id)).not.toContain(n.id);
  });

  it('rejects unknown body fields on the test route', async () => {
    expect((await t.req(merchant, { method: 'POST', url: '/notifications/test', payload: { title: 'x', to: 'someone' } })).statusCode).toBe(
      400,
    );
  });
});

describe('POST /admin/notifications', () => {
  it('sends to a role (audited) and to listed users', async () => {
    const res = await t.req(admin, {
      method: 'POST',
      url: '/admin/notifications',
      payload: { title: 'Drivers', body: 'Rain expected', role: 'repartidor' },
    });
    expect(res.statusCode).toBe(201);
    expect(res.json().recipients).toBe(1);
    const rows = await sql(`SELECT user_id, type FROM notification WHERE id = ANY($1::text[])`, [res.json().notification_ids]);
    expect(rows).toEqual([{ user_id: t.demo.users.driver, type: 'admin.message' }]);
    expect(await sql(`SELECT after FROM audit_log WHERE action = 'notification.broadcast'`)).toHaveLength(1);
    const listed = await t.req(admin, {
      method: 'POST',
      url: '/admin/notifications',
      payload: { title: 'Hi', body: 'b', user_ids: [t.demo.users.customer, t.demo.users.merchant] },
    });
    expect(listed.json().recipients).toBe(2);
  });

  it('refuses bad targets and non-administrators, writing nothing', async () => {
    const before = (await sql('SELECT count(*)::int AS n FROM notification'))[0].n;
    const cases = [
      [admin, { title: 't', body: 'b' }, 400],
      [admin, { title: 't', body: 'b', role: 'repartidor', user_ids: [t.demo.users.driver] }, 400],
      [admin, { title: 't', body: 'b', role: 'nobody' }, 400],
      [admin, { title: 't', body: 'b', user_ids: [t.demo.users.driver, 'no-such-user'] }, 404],
      [admin, { title: 't', body: 'b', territory_id: 'terr-1' }, 422],
      [dispatch, { title: 't', body: 'b', role: 'repartidor' }, 403],
      [driver, { title: 't', body: 'b', role: 'repartidor' }, 403],
    ] as const;
    for (const [s, payload, status] of cases) {
      const res = await t.req(s, { method: 'POST', url: '/admin/notifications', payload });
      expect(res.statusCode, JSON.stringify(payload)).toBe(status);
      expect(res.headers['content-type']).toContain('application/problem+json');
    }
    expect((await sql('SELECT count(*)::int AS n FROM notification'))[0].n).toBe(before);
  });
});

describe('devices and heartbeat', () => {
  it('re-registering a push token updates the one row, never duplicates; the token is not returned', async () => {
    const token = `dup-token-${Date.now()}`;
    const a = await registerDevice(customer, token);
    expect(a.statusCode).toBe(201);
    const b = await t.req(customer, {
      method: 'POST',
      url: '/mobile/devices',
      payload: { platform: 'android', push_token: token, app_version: '0.7.3' },
    });
    expect(b.statusCode).toBe(200);
    expect(b.json()).toMatchObject({
      id: a.json().id,
      app_version: '0.7.3',
      build_number: 702,
      app_role: 'delivery',
      push_token_suffix: token.slice(-4),
    });
    expect(JSON.stringify(b.json())).not.toContain(token);
    expect(await sql('SELECT id FROM device WHERE push_token = $1', [token])).toHaveLength(1);
    const list = (await t.req(customer, { method: 'GET', url: '/mobile/devices' })).json();
    expect(list.data.map((d: any) => d.id)).toContain(a.json().id);
    expect(
      (await t.req(customer, { method: 'POST', url: '/mobile/devices', payload: { platform: 'symbian', push_token: 'abcdefghij' } }))
        .statusCode,
    ).toBe(400);
  });

  it('deletes my device (tombstone, pending pushes cancelled); others get 404; an administrator may remove any; re-registering revives it', async () => {
    const token = `del-token-${Date.now()}`;
    const dev = (await registerDevice(merchant, token)).json();
    await t.req(merchant, { method: 'POST', url: '/notifications/test' });
    expect((await t.req(customer, { method: 'DELETE', url: `/mobile/devices/${dev.id}` })).statusCode).toBe(404);
    expect((await t.req(merchant, { method: 'DELETE', url: `/mobile/devices/${dev.id}` })).statusCode).toBe(204);
    expect((await t.req(merchant, { method: 'DELETE', url: `/mobile/devices/${dev.id}` })).statusCode).toBe(404);
    const row = (await sql('SELECT deleted_at FROM device WHERE id = $1', [dev.id]))[0];
    expect(row.deleted_at).not.toBeNull();
    expect(await sql(`SELECT status, last_error FROM push_outbox WHERE device_id = $1`, [dev.id])).toEqual([
      { status: 'failed', last_error: 'DEVICE_REMOVED' },
    ]);
    const again = await registerDevice(merchant, token);
    expect([again.statusCode, again.json().id]).toEqual([200, dev.id]);
    expect((await t.req(admin, { method: 'DELETE', url: `/mobile/devices/${dev.id}` })).statusCode).toBe(204);
    expect((await t.req(merchant, { method: 'GET', url: `/mobile/devices?user_id=${t.demo.users.customer}` })).statusCode).toBe(403);
  });

  it("heartbeat records last seen, version, battery and network; stale readings are 409; other users' devices 404", async () => {
    const dev = (await registerDevice(driver)).json();
    const now = new Date();
    const hb = await t.req(driver, {
      method: 'POST',
      url: '/mobile/heartbeat',
      payload: { device_id: dev.id, app_version: '0.7.2', battery_level: 41, network: 'cellular', charging: false },
    });
    expect(hb.statusCode).toBe(200);
    expect(hb.json()).toMatchObject({ battery_level: 41, network: 'cellular', charging: false });
    expect(new Date(hb.json().last_seen_at).getTime()).toBeGreaterThanOrEqual(now.getTime() - 1000);
    const stale = await t.req(driver, {
      method: 'POST',
      url: '/mobile/heartbeat',
      payload: { device_id: dev.id, battery_level: 90, recorded_at: new Date(Date.now() - 3_600_000).toISOString() },
    });
    expect(stale.statusCode).toBe(409);
    expect(stale.json().code).toBe('STALE_HEARTBEAT');
    expect((await sql('SELECT battery_level, heartbeat_count FROM device WHERE id = $1', [dev.id]))[0]).toEqual({
      battery_level: 41,
      heartbeat_count: 1,
    });
    expect((await t.req(customer, { method: 'POST', url: '/mobile/heartbeat', payload: { device_id: dev.id } })).statusCode).toBe(404);
    expect(
      (await t.req(driver, { method: 'POST', url: '/mobile/heartbeat', payload: { device_id: dev.id, battery_level: 101 } })).statusCode,
    ).toBe(400);
    const health = (await t.req(admin, { method: 'GET', url: '/admin/mobile-health' })).json();
    expect(health.devices.seen_last_hour).toEqual(
      expect.arrayContaining([expect.objectContaining({ app_role: 'repartidor', app_version: '0.7.2' })]),
    );
  });

  it('a reading taken in the same millisecond as the last one is not stale (clients send milliseconds, the server keeps microseconds)', async () => {
    const dev = (await registerDevice(driver)).json();
    // The registration's now() carries microseconds; a phone's clock reading of that moment carries only the millisecond.
    await sql(`UPDATE device SET last_seen_at = '2026-11-27T04:22:35.736500Z' WHERE id = $1`, [dev.id]);
    const hb = await t.req(driver, {
      method: 'POST',
      url: '/mobile/heartbeat',
      payload: { device_id: dev.id, battery_level: 55, recorded_at: '2026-11-27T04:22:35.736Z' },
    });
    expect([hb.statusCode, hb.json().battery_level]).toEqual([200, 55]);
    const older = await t.req(driver, {
      method: 'POST',
      url: '/mobile/heartbeat',
      payload: { device_id: dev.id, battery_level: 60, recorded_at: '2026-11-27T04:22:35.735Z' },
    });
    expect([older.statusCode, older.json().code]).toEqual([409, 'STALE_HEARTBEAT']);
  });
});

describe('push worker', () => {
  let server: http.Server;
  let url: string;
  const received: { headers: http.IncomingHttpHeaders; body: string }[] = [];
  let respond = 200;
  const SECRET = 'webhook-secret-0123456789';

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        received.push({ headers: req.headers, body });
        res.statusCode = respond;
        res.end('{}');
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}/push`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  async function queuedPushFor(s: Session) {
    await sql('UPDATE device SET deleted_at = now() WHERE user_id = $1', [s.userId]); // one device: one push
    await registerDevice(s);
    await sql(`UPDATE push_outbox SET status = 'sent' WHERE status IN ('pending', 'sending')`); // start from an empty queue
    const n = (await t.req(s, { method: 'POST', url: '/notifications/test', payload: { title: 'push me' } })).json();
    return sql('SELECT id, status, attempts FROM push_outbox WHERE notification_id = $1', [n.id]);
  }

  it('delivers through the webhook gateway with an HMAC-SHA256 signature', async () => {
    const [row] = await queuedPushFor(customer);
    respond = 200;
    received.length = 0;
    const worker = createPushWorker(t.db, { gateway: createWebhookGateway({ url, secret: SECRET }) });
    expect(await worker.tick()).toBe(1);
    expect(received).toHaveLength(1);
    const { headers, body } = received[0];
    const ts = headers['x-push-timestamp'] as string;
    expect(headers['x-push-signature']).toBe(`sha256=${createHmac('sha256', SECRET).update(`${ts}.${body}`).digest('hex')}`);
    expect(headers['x-push-id']).toBe(row.id);
    expect(headers['content-type']).toBe('application/json');
    const msg = JSON.parse(body);
    expect(msg).toMatchObject({
      id: row.id,
      organization_id: orgId,
      attempt: 1,
      to: { platform: 'android' },
      notification: { title: 'push me', type: 'test' },
    });
    expect(msg.to.token).toMatch(/^push-token-/);
    expect((await sql('SELECT status, attempts, sent_at, last_error FROM push_outbox WHERE id = $1', [row.id]))[0]).toMatchObject({
      status: 'sent',
      attempts: 1,
      last_error: null,
    });
    expect(await worker.tick()).toBe(0);
  });

  it('retries a failing gateway with exponential backoff, then gives up into failed', async () => {
    const [row] = await queuedPushFor(customer);
    respond = 503;
    const worker = createPushWorker(t.db, { gateway: createWebhookGateway({ url, secret: SECRET }), maxAttempts: 3, backoffMs: 60_000 });
    expect(await worker.tick()).toBe(1);
    const r1 = (await sql(`SELECT status, attempts, last_error, available_at - now() AS wait FROM push_outbox WHERE id = $1`, [row.id]))[0];
    expect(r1).toMatchObject({ status: 'pending', attempts: 1, last_error: 'HTTP_503' });
    expect(await worker.tick()).toBe(0); // not due yet
    await sql(`UPDATE push_outbox SET available_at = now() WHERE id = $1`, [row.id]);
    expect(await worker.tick()).toBe(1);
    const r2 = (
      await sql(`SELECT attempts, extract(epoch FROM available_at - updated_at)::int AS delay FROM push_outbox WHERE id = $1`, [row.id])
    )[0];
    expect(r2).toEqual({ attempts: 2, delay: 120 }); // 60 s, then 120 s
    await sql(`UPDATE push_outbox SET available_at = now() WHERE id = $1`, [row.id]);
    await worker.tick();
    expect((await sql('SELECT status, attempts FROM push_outbox WHERE id = $1', [row.id]))[0]).toEqual({ status: 'failed', attempts: 3 });
    const health = (await t.req(admin, { method: 'GET', url: '/admin/mobile-health' })).json();
    expect(health.push.failed_last_24h).toBeGreaterThanOrEqual(1);
  });

  it('gives up at once on a permanent refusal (4xx)', async () => {
    const [row] = await queuedPushFor(customer);
    respond = 400;
    const worker = createPushWorker(t.db, { gateway: createWebhookGateway({ url, secret: SECRET }) });
    await worker.tick();
    expect((await sql('SELECT status, attempts, last_error FROM push_outbox WHERE id = $1', [row.id]))[0]).toEqual({
      status: 'failed',
      attempts: 1,
      last_error: 'HTTP_400',
    });
  });

  it('re-claims a row whose worker died after the claim timeout; the late worker cannot overwrite the outcome', async () => {
    const [row] = await queuedPushFor(customer);
    let finishHung!: (v: { ok: false; permanent: false; error: string }) => void;
    const hanging: PushGateway = { name: 'hangs', send: () => new Promise((r) => (finishHung = r)) };
    const dead = createPushWorker(t.db, { gateway: hanging, claimTimeoutMs: 200 });
    const deadTick = dead.tick();
    // The dead worker's claim, once its send hangs.
    await waitFor(() => finishHung, { message: 'the hanging send' });
    expect((await sql('SELECT status, attempts FROM push_outbox WHERE id = $1', [row.id]))[0]).toEqual({ status: 'sending', attempts: 1 });
    respond = 200;
    const healthy = createPushWorker(t.db, { gateway: createWebhookGateway({ url, secret: SECRET }), claimTimeoutMs: 200 });
    expect(await healthy.tick()).toBe(0); // still within the claim
    // Once the claim has expired, a tick takes the row over (each tick before that finds nothing to claim).
    expect(await waitFor(() => healthy.tick(), { message: 'the expired claim re-claimed' })).toBe(1);
    expect((await sql('SELECT status, attempts FROM push_outbox WHERE id = $1', [row.id]))[0]).toEqual({ status: 'sent', attempts: 2 });
    finishHung({ ok: false, permanent: false, error: 'late' });
    await deadTick;
    expect((await sql('SELECT status, last_error FROM push_outbox WHERE id = $1', [row.id]))[0]).toEqual({
      status: 'sent',
      last_error: null,
    });
  });
});

describe('push targets follow device changes at once', () => {
  let other: { organizationId: string; logins: Record<string, string> };
  beforeAll(async () => {
    other = await t.newOrganization('Devices Org');
  });
  /** A test notification to oneself, and the devices its pushes were queued for. */
  const pushedTo = async (s: Session, req = t.req) => {
    const res = await req(s, { method: 'POST', url: '/notifications/test' });
    expect(res.statusCode).toBe(201);
    const rows = await sql<{ device_id: string }>('SELECT device_id FROM push_outbox WHERE notification_id = $1 ORDER BY device_id', [
      res.json().id,
    ]);
    return rows.map((r) => r.device_id);
  };

  it('a registered, moved or removed device is targeted (or not) by the very next notification', async () => {
    const a = await t.login(other.logins.customer);
    const b = await t.login(other.logins.driver);
    expect(await pushedTo(a)).toEqual([]); // no device yet (remembered as none)
    const tokenOne = `moving-token-${Date.now()}`;
    const one = (await registerDevice(a, tokenOne)).json();
    expect(await pushedTo(a)).toEqual([one.id]);
    const two = (await registerDevice(a)).json();
    expect(await pushedTo(a)).toEqual([one.id, two.id].sort());
    expect(await pushedTo(b)).toEqual([]);
    // The same token registered by another user: the device moves to him.
    expect((await registerDevice(b, tokenOne)).statusCode).toBe(200);
    expect(await pushedTo(a)).toEqual([two.id]);
    expect(await pushedTo(b)).toEqual([one.id]);
    // Removed (by its user, then an administrator's removal of another's device).
    expect((await t.req(a, { method: 'DELETE', url: `/mobile/devices/${two.id}` })).statusCode).toBe(204);
    expect(await pushedTo(a)).toEqual([]);
    const admin = await t.login(other.logins.admin);
    expect((await t.req(admin, { method: 'DELETE', url: `/mobile/devices/${one.id}` })).statusCode).toBe(204);
    expect(await pushedTo(b)).toEqual([]);
    // One notification to several users: each user's own devices.
    const three = (await registerDevice(a)).json();
    const res = await t.req(admin, {
      method: 'POST',
      url: '/admin/notifications',
      payload: { title: 'To both', body: 'Hello', user_ids: [a.userId, b.userId] },
    });
    expect(res.statusCode).toBeLessThan(300);
    const pushes = await sql<{ device_id: string; user_id: string }>(
      "SELECT device_id, user_id FROM push_outbox WHERE organization_id = $1 AND payload->>'title' = 'To both'",
      [other.organizationId],
    );
    expect(pushes).toEqual([{ device_id: three.id, user_id: a.userId }]);
  });

  it('a device registered through one instance is targeted by the next notification through another', async () => {
    const b = await secondInstance(t);
    try {
      const user = await t.login(other.logins.merchant);
      const other2 = await t.login(other.logins.dispatch);
      // The second instance's listener is in place once a change through the first reaches it.
      await waitFor(
        async () => {
          await pushedTo(other2, b.req);
          const dev = (await registerDevice(other2)).json();
          return waitFor(async () => (await pushedTo(other2, b.req)).includes(dev.id), { timeout: 1_000 }).catch(() => false);
        },
        { message: "the second instance's listener" },
      );
      expect(await pushedTo(user, b.req)).toEqual([]); // the second instance remembers: no device
      const dev = (await registerDevice(user)).json(); // through the first instance
      await waitFor(async () => (await pushedTo(user, b.req)).includes(dev.id), { message: 'the push on the second instance' });
      expect((await t.req(user, { method: 'DELETE', url: `/mobile/devices/${dev.id}` })).statusCode).toBe(204);
      await waitFor(async () => (await pushedTo(user, b.req)).length === 0, { message: 'no push on the second instance' });
    } finally {
      await b.close();
    }
  });
});

describe('the events of a notification', () => {
  it('records the notification.created events of the recipients in one statement, in order, each for its recipient', async () => {
    const inserts: string[] = [];
    const ev = await t.db.withSystem((tx) =>
      t.app.ctx.events.record(
        {
          ...tx,
          query(text, params) {
            const sqlText = typeof text === 'string' ? text : text.text;
            if (/INSERT INTO event/.test(sqlText)) inserts.push(sqlText);
            return tx.query(text, params);
          },
        },
        orgId,
        {
          type: 'trip.assigned',
          entityType: 'trip',
          entityId: 'trip-n3',
          actorUserId: t.demo.users.dispatch,
          audienceUserIds: [t.demo.users.driver, t.demo.users.customer, t.demo.users.merchant],
          payload: { code: `T-"3"\\ ñ` },
        },
      ),
    );
    // The trip's event, then one statement for the three notifications' events.
    expect(inserts).toHaveLength(2);
    const notes = await sql<{ id: string; user_id: string; body: string }>(
      'SELECT id, user_id, body FROM notification WHERE event_seq = $1',
      [ev.seq],
    );
    expect(notes).toHaveLength(3);
    const created = await sql<{
      seq: number;
      entity_id: string;
      audience_user_ids: string[];
      payload: { notification: { id: string; body: string } };
    }>(`SELECT seq, entity_id, audience_user_ids, payload FROM event WHERE type = 'notification.created' AND seq > $1 ORDER BY seq`, [
      ev.seq,
    ]);
    expect(created).toHaveLength(3);
    for (const c of created) {
      const n = notes.find((x) => x.id === c.entity_id)!;
      expect(c.audience_user_ids).toEqual([n.user_id]);
      expect(c.payload.notification).toMatchObject({ id: n.id, body: n.body });
      expect(c.payload.notification.body).toContain(`T-"3"\\ ñ`);
    }
  });
});
