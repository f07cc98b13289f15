import http from 'node:http';
import { lookup } from 'node:dns/promises';
import { hostname } from 'node:os';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type Session, type TestApp } from '../../../test/helpers.js';
import type { Database } from '../../platform/db/index.js';
import { verifySignature } from '../../platform/signature.js';
import { backoffMs, classify, retryAfterMs, type WebhookWorker } from './worker.js';
import { checkTargetUrl, httpSender, isNonPublicAddress } from './service/sender.js';
import { claimDue } from './repo.js';

// ---- A real receiving server: records every request (raw body and headers), answers as `plan` says.
interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  raw: Buffer;
  body: {
    id: string;
    type: string;
    occurred_at: string;
    organization_id: string;
    resource_type: string;
    resource_id: string;
    resource: Record<string, unknown> | null;
    data: Record<string, unknown>;
  };
}
let received: Received[] = [];
type Answer = { status: number; headers?: Record<string, string>; delayMs?: number };
/** Per path: answers used in turn (the last one repeats); default 200. */
let plan = new Map<string, Answer[]>();
/** Per path: requests being answered now, and the most at once. */
const open = new Map<string, number>();
let mostOpen = new Map<string, number>();
let server: http.Server;
let base: string;

let t: TestApp;
let admin: Session;
let merchant: Session;
let org: string;
/** The worker's clock: tests move it forward instead of waiting. */
let clock: number;
let worker: WebhookWorker;
/** The attempts' outcomes written on their own (`tenantWrite`), by delivery id. */
const writtenAlone: string[] = [];
const notingWritesAlone = (db: Database): Database => ({
  ...db,
  tenantWrite: (ctx, text, params) => {
    if (/UPDATE webhook_delivery/.test(typeof text === 'string' ? text : text.text)) writtenAlone.push(String(params?.[1]));
    return db.tenantWrite(ctx, text, params);
  },
});
/** A worker on the test clock; its send timeout is long (a loaded machine answers late) except where a test times a receiver out. */
const newWorker = (timeoutMs = 10_000) =>
  t.app.services.webhooks.newWorker({ now: () => new Date(clock), random: () => 0.5, timeoutMs, claimTimeoutMs: 15_000 });

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const path = req.url ?? '';
      received.push({ path, headers: req.headers, raw, body: JSON.parse(raw.toString('utf8')) });
      open.set(path, (open.get(path) ?? 0) + 1);
      mostOpen.set(path, Math.max(mostOpen.get(path) ?? 0, open.get(path)!));
      const answers = plan.get(path) ?? [];
      const a = (answers.length > 1 ? answers.shift() : answers[0]) ?? { status: 200 };
      const send = () => {
        open.set(path, open.get(path)! - 1);
        if (!res.destroyed) res.writeHead(a.status, { 'content-type': 'text/plain', ...(a.headers ?? {}) }).end(`answer ${a.status}`);
      };
      if (a.delayMs) setTimeout(send, a.delayMs);
      else send();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  t = await createTestApp(
    { raw: { WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_TEST_PER_MINUTE: '1000' } },
    { wrapDb: notingWritesAlone },
  );
  admin = await t.as('admin');
  merchant = await t.as('merchant');
  org = t.demo.organizationId;
});
afterAll(async () => {
  await t?.close();
  await new Promise((r) => server?.close(r));
});
beforeEach(async () => {
  received = [];
  plan = new Map();
  mostOpen = new Map();
  // Ahead of the database's clock, so that what a test writes now is due for the worker.
  clock = Date.now() + 60_000;
  worker = newWorker();
  // Every test starts with no subscription (and so no delivery) left by another.
  await t.db.withSystem((tx) => tx.query('DELETE FROM webhook_subscription'));
});

const sys = <R = Record<string, any>>(text: string, params: unknown[] = []) =>
  t.db.withSystem(async (tx) => (await tx.query<R>(text, params)).rows);
let pathSeq = 0;
async function subscribe(s: Session, eventTypes: string[] = ['*'], path = `/hook-${++pathSeq}`) {
  const res = await t.req(s, {
    method: 'POST',
    url: '/webhooks/subscriptions',
    payload: { url: `${base}${path}`, event_types: eventTypes },
  });
  expect(res.statusCode, res.body).toBe(201);
  return { ...(res.json() as { id: string; secret: string; scope: string }), path };
}
async function newTrip(s: Session = admin, extra: Record<string, unknown> = {}) {
  const res = await t.req(s, {
    method: 'POST',
    url: '/trips',
    payload: {
      pickup_location: { type: 'Point', coordinates: [-68.13, -16.5] },
      pickup_address: 'Pickup 1',
      dropoff_location: { type: 'Point', coordinates: [-68.12, -16.49] },
      dropoff_address: 'Dropoff 2',
      ...extra,
    },
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as { id: string; merchant_id: string | null };
}
const cancelTrip = async (id: string) => {
  const res = await t.req(admin, { method: 'POST', url: `/trips/${id}/status`, payload: { status: 'cancelled', reason: 'test' } });
  expect(res.statusCode, res.body).toBe(200);
};
const deliveriesOf = (subscriptionId: string) =>
  sys('SELECT * FROM webhook_delivery WHERE subscription_id = $1 ORDER BY event_seq NULLS LAST, created_at', [subscriptionId]);
const at = (path: string) => received.filter((r) => r.path === path);
const MIN = 60_000;

describe('delivery', () => {
  it('records a delivered attempt in one statement of its own, a failed one in a transaction (it may disable the subscription)', async () => {
    const fine = await subscribe(admin, ['trip.created']);
    const failing = await subscribe(admin, ['trip.created']);
    plan.set(failing.path, [{ status: 500 }]);
    writtenAlone.length = 0;
    await newTrip();
    expect(await worker.runOnce()).toBe(2);
    const [delivered] = await deliveriesOf(fine.id);
    const [retried] = await deliveriesOf(failing.id);
    expect(delivered).toMatchObject({ status: 'delivered', last_status_code: 200, claim_token: null });
    expect(retried).toMatchObject({ status: 'pending', last_status_code: 500, claim_token: null });
    expect(writtenAlone).toEqual([delivered.id]);
    const logged = await sys('SELECT delivery_id, outcome FROM webhook_attempt WHERE delivery_id IN ($1, $2) ORDER BY outcome', [
      delivered.id,
      retried.id,
    ]);
    expect(logged).toEqual([
      { delivery_id: delivered.id, outcome: 'delivered' },
      { delivery_id: retried.id, outcome: 'retry' },
    ]);
    expect((await sys('SELECT failing_since FROM webhook_subscription WHERE id = $1', [failing.id]))[0].failing_since).not.toBeNull();
  });

  it('POSTs each event with the trip as the API returns it, signed over timestamp.body, and logs the attempt', async () => {
    const sub = await subscribe(admin, ['trip.created']);
    const trip = await newTrip();
    // The outbox row committed with the event.
    const [row] = await deliveriesOf(sub.id);
    expect(row).toMatchObject({ status: 'pending', event_type: 'trip.created', resource_key: `trip:${trip.id}` });

    expect(await worker.runOnce()).toBe(1);
    const [got] = at(sub.path);
    expect(got.body).toMatchObject({ type: 'trip.created', organization_id: org, resource_type: 'trip', resource_id: trip.id });
    const api = (await t.req(admin, { method: 'GET', url: `/trips/${trip.id}` })).json();
    expect(got.body.resource).toEqual(api);
    const event = (await sys('SELECT id, created_at FROM event WHERE entity_id = $1 AND type = $2', [trip.id, 'trip.created']))[0];
    expect(got.body.id).toBe(event.id);
    expect(got.headers['x-webhook-event-id']).toBe(event.id);
    expect(new Date(got.body.occurred_at).getTime()).toBe(new Date(event.created_at).getTime());
    // The receiver verifies with the inbound scheme: HMAC-SHA256(secret, "<t>.<raw body>").
    const ts = Number(got.headers['x-webhook-timestamp']);
    expect(got.headers['x-signature']).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(verifySignature(sub.secret, got.raw, got.headers['x-signature'], ts).getTime()).toBe(ts * 1000);
    expect(() => verifySignature('whsec_wrong', got.raw, got.headers['x-signature'], ts)).toThrow(/does not match/);

    const list = await t.req(admin, { method: 'GET', url: `/webhooks/subscriptions/${sub.id}/deliveries` });
    expect(list.statusCode).toBe(200);
    expect(list.json().data).toHaveLength(1);
    expect(list.json().data[0]).toMatchObject({ status: 'delivered', attempts: 1, last_status_code: 200 });
    const detail = (await t.req(admin, { method: 'GET', url: `/webhooks/deliveries/${row.id}` })).json();
    expect(detail.attempts_log).toEqual([
      expect.objectContaining({ attempt: 1, status_code: 200, outcome: 'delivered', response_excerpt: 'answer 200', error: null }),
    ]);
    expect(detail.attempts_log[0].duration_ms).toBeGreaterThanOrEqual(0);
    expect(detail.body.id).toBe(event.id);
    // Nothing is sent twice.
    expect(await worker.runOnce()).toBe(0);
    expect(at(sub.path)).toHaveLength(1);
  });

  it('never sends an event whose transaction rolled back; the committed one goes out', async () => {
    const sub = await subscribe(admin, ['trip.updated']);
    const trip = await newTrip();
    const record = (marker: string) => (tx: Parameters<Parameters<typeof t.db.withSystem>[0]>[0]) =>
      t.app.ctx.events.record(tx, org, { type: 'trip.updated', entityType: 'trip', entityId: trip.id, payload: { marker } });
    await expect(
      t.db.withTenant({ organizationId: org, userId: null }, async (tx) => {
        await record('rolled-back')(tx);
        throw new Error('the change fails after its event');
      }),
    ).rejects.toThrow(/fails/);
    await t.db.withTenant({ organizationId: org, userId: null }, record('committed'));
    await worker.runOnce();
    expect(at(sub.path).map((r) => r.body.data.marker)).toEqual(['committed']);
    expect(await deliveriesOf(sub.id)).toHaveLength(1);
  });

  it('sends only the event types asked for; `*` leaves out the opt-in location updates', async () => {
    const all = await subscribe(admin, ['*']);
    const cancelled = await subscribe(admin, ['trip.cancelled']);
    const trip = await newTrip();
    await cancelTrip(trip.id);
    await t.db.withTenant({ organizationId: org, userId: null }, (tx) =>
      t.app.ctx.events.record(tx, org, { type: 'trip.location_updated', entityType: 'trip', entityId: trip.id, payload: {} }),
    );
    while ((await worker.runOnce()) > 0);
    expect(at(all.path).map((r) => r.body.type)).toEqual(['trip.created', 'trip.cancelled']);
    expect(at(cancelled.path).map((r) => r.body.type)).toEqual(['trip.cancelled']);
  });

  it('throttles trip.location_updated per trip and subscription', async () => {
    const sub = await subscribe(admin, ['trip.location_updated']);
    const trip = await newTrip();
    for (let i = 0; i < 3; i++) {
      await t.db.withTenant({ organizationId: org, userId: null }, (tx) =>
        t.app.ctx.events.record(tx, org, { type: 'trip.location_updated', entityType: 'trip', entityId: trip.id, payload: { i } }),
      );
    }
    expect(await deliveriesOf(sub.id)).toHaveLength(1);
  });
});

describe('retries', () => {
  it('retries 5xx with exponential back-off and jitter, then delivers', async () => {
    const sub = await subscribe(admin, ['trip.created']);
    plan.set(sub.path, [{ status: 500 }, { status: 502 }, { status: 200 }]);
    await newTrip();
    const t0 = clock;
    await worker.runOnce();
    let [d] = await deliveriesOf(sub.id);
    // base 30 s, random 0.5 -> 75% of the step
    expect(d).toMatchObject({ status: 'pending', attempts: 1, last_status_code: 500 });
    expect(new Date(d.next_attempt_at).getTime() - t0).toBe(backoffMs(1, 30_000, 6 * 3_600_000, () => 0.5));
    expect(await worker.runOnce()).toBe(0); // not due yet
    clock += 30_000;
    await worker.runOnce();
    [d] = await deliveriesOf(sub.id);
    expect(d).toMatchObject({ status: 'pending', attempts: 2, last_status_code: 502 });
    expect(new Date(d.next_attempt_at).getTime() - clock).toBe(45_000); // the step doubled
    clock += 45_000;
    await worker.runOnce();
    [d] = await deliveriesOf(sub.id);
    expect(d).toMatchObject({ status: 'delivered', attempts: 3, last_status_code: 200 });
    expect(at(sub.path)).toHaveLength(3);
    // Each attempt carries the same event id, a fresh timestamp and a valid signature.
    expect(new Set(at(sub.path).map((r) => r.body.id)).size).toBe(1);
    for (const r of at(sub.path)) verifySignature(sub.secret, r.raw, r.headers['x-signature'], Number(r.headers['x-webhook-timestamp']));
    const log = (
      await sys('SELECT attempt, status_code, outcome FROM webhook_attempt WHERE delivery_id = $1 ORDER BY attempt', [d.id])
    ).map((a) => [a.attempt, a.status_code, a.outcome]);
    expect(log).toEqual([
      [1, 500, 'retry'],
      [2, 502, 'retry'],
      [3, 200, 'delivered'],
    ]);
  });

  it('honours Retry-After on 429, retries 408 and timeouts, and gives up at once on other 4xx', async () => {
    const limited = await subscribe(admin, ['trip.created']);
    const gone = await subscribe(admin, ['trip.created']);
    const slow = await subscribe(admin, ['trip.created']);
    plan.set(limited.path, [{ status: 429, headers: { 'retry-after': '120' } }, { status: 408 }, { status: 200 }]);
    plan.set(gone.path, [{ status: 410 }]);
    plan.set(slow.path, [{ status: 200, delayMs: 1_500 }]);
    await newTrip();
    // The slow receiver answers after 1.5 s; this worker gives up after 0.4 s.
    const impatient = newWorker(400);
    await impatient.runOnce();
    const [l] = await deliveriesOf(limited.id);
    expect(l.status).toBe('pending');
    expect(new Date(l.next_attempt_at).getTime() - clock).toBe(120_000);
    const [g] = await deliveriesOf(gone.id);
    expect(g).toMatchObject({ status: 'failed', attempts: 1, last_status_code: 410 });
    const [s] = await deliveriesOf(slow.id);
    expect(s).toMatchObject({ status: 'pending', attempts: 1, last_status_code: null });
    expect(s.last_error).toMatch(/timed out/);
    clock += 120_000;
    await impatient.runOnce();
    expect((await deliveriesOf(limited.id))[0]).toMatchObject({ status: 'pending', attempts: 2, last_status_code: 408 });
    expect((await deliveriesOf(gone.id))[0].attempts).toBe(1); // final: never tried again
  });

  it('disables a subscription that fails for a day, cancels its backlog and notifies its owner', async () => {
    const sub = await subscribe(admin, ['trip.created', 'trip.cancelled']);
    plan.set(sub.path, [{ status: 503 }]);
    const trip = await newTrip();
    const start = clock;
    await worker.runOnce();
    expect((await sys('SELECT failing_since FROM webhook_subscription WHERE id = $1', [sub.id]))[0].failing_since.getTime()).toBe(start);
    await cancelTrip(trip.id); // a second event waits behind the first (same trip)
    // Retry whatever is due, moving the clock to it, until the subscription is disabled.
    for (let i = 0; i < 60; i++) {
      const [sub1] = await sys('SELECT active FROM webhook_subscription WHERE id = $1', [sub.id]);
      if (!sub1.active) break;
      // The earliest event first: the later one waits behind it.
      const due = await sys(
        "SELECT next_attempt_at AS at FROM webhook_delivery WHERE subscription_id = $1 AND status = 'pending' ORDER BY event_seq LIMIT 1",
        [sub.id],
      );
      expect(due[0].at).not.toBeNull();
      clock = Math.max(clock, new Date(due[0].at).getTime());
      await worker.runOnce();
    }
    const [s] = await sys('SELECT * FROM webhook_subscription WHERE id = $1', [sub.id]);
    expect(s).toMatchObject({ active: false, disabled_reason: 'failing' });
    // The first delivery (written a minute before the test clock's start) failed for its whole day.
    expect(s.disabled_at.getTime() - start).toBeGreaterThanOrEqual(24 * 3_600_000 - 2 * MIN);
    expect(s.disabled_at.getTime() - start).toBeLessThanOrEqual(24 * 3_600_000);
    // Nothing is left to send: the first delivery gave up after about a day, the rest was cancelled.
    const rows = await deliveriesOf(sub.id);
    expect(rows[0].status).toBe('failed');
    expect(rows.every((d) => d.status === 'failed' || d.status === 'cancelled')).toBe(true);
    expect(at(sub.path).length).toBeGreaterThan(5);
    const notes = await sys("SELECT user_id FROM notification WHERE type = 'webhook.subscription_disabled' AND entity_id = $1", [sub.id]);
    expect(notes.map((n) => n.user_id)).toEqual([admin.userId]);
    const audit = await sys("SELECT action FROM audit_log WHERE entity_id = $1 AND action = 'webhook_subscription.disabled'", [sub.id]);
    expect(audit).toHaveLength(1);
    // New events are not queued for a disabled subscription; enabling it again starts over.
    await newTrip();
    expect(await deliveriesOf(sub.id)).toHaveLength(2);
    const on = await t.req(admin, { method: 'PATCH', url: `/webhooks/subscriptions/${sub.id}`, payload: { active: true } });
    expect(on.json()).toMatchObject({ active: true, failing_since: null, disabled_reason: null });
  });
});

describe('ordering and concurrency', () => {
  it('sends the events of one trip in order: a later one waits while an earlier one is retried; other trips go on', async () => {
    const sub = await subscribe(admin, ['trip.created', 'trip.cancelled']);
    const first = await newTrip();
    plan.set(sub.path, [{ status: 503 }, { status: 200 }]);
    await worker.runOnce(); // first trip.created: 503
    await cancelTrip(first.id);
    const other = await newTrip();
    await worker.runOnce();
    // The cancellation of the first trip waits; the other trip's creation is not held up.
    expect(at(sub.path).map((r) => [r.body.type, r.body.resource_id])).toEqual([
      ['trip.created', first.id],
      ['trip.created', other.id],
    ]);
    clock += 60_000;
    await worker.runOnce(); // the first trip.created now succeeds; its cancellation is next
    await worker.runOnce();
    expect(at(sub.path).map((r) => [r.body.type, r.body.resource_id])).toEqual([
      ['trip.created', first.id],
      ['trip.created', other.id],
      ['trip.created', first.id],
      ['trip.cancelled', first.id],
    ]);
  });

  it('two workers (two instances) never send or count the same attempt twice', async () => {
    const sub = await subscribe(admin, ['trip.created']);
    for (let i = 0; i < 8; i++) await newTrip();
    const a = newWorker();
    const b = newWorker();
    while ((await Promise.all([a.runOnce(), b.runOnce()])).some((n) => n > 0));
    const got = at(sub.path);
    expect(got).toHaveLength(8);
    expect(new Set(got.map((r) => r.body.id)).size).toBe(8);
    const rows = await deliveriesOf(sub.id);
    expect(rows.every((d) => d.status === 'delivered' && d.attempts === 1)).toBe(true);
    expect((await sys('SELECT count(*)::int AS n FROM webhook_attempt WHERE subscription_id = $1', [sub.id]))[0].n).toBe(8);
  });

  it('a worker whose claim expired writes nothing: the attempt is owned by the instance that claimed it again', async () => {
    const sub = await subscribe(admin, ['trip.created']);
    plan.set(sub.path, [{ status: 200, delayMs: 300 }]);
    await newTrip();
    const slowInstance = t.app.services.webhooks.newWorker({ now: () => new Date(clock), timeoutMs: 2_000, claimTimeoutMs: 3_000 });
    expect(await slowInstance.tick()).toBe(1); // claimed, sending
    clock += 10_000; // its claim runs out while the receiver is still answering
    expect(await worker.runOnce()).toBe(1);
    await slowInstance.idle();
    const [d] = await deliveriesOf(sub.id);
    expect(d).toMatchObject({ status: 'delivered', attempts: 2 });
    const log = await sys('SELECT attempt FROM webhook_attempt WHERE delivery_id = $1', [d.id]);
    expect(log.map((r) => r.attempt)).toEqual([2]);
  });

  it('keeps at most WEBHOOK_PER_SUBSCRIPTION_CONCURRENCY sends in flight to one receiver', async () => {
    const slowSub = await subscribe(admin, ['trip.created']);
    const fastSub = await subscribe(admin, ['trip.created']);
    plan.set(slowSub.path, [{ status: 200, delayMs: 300 }]);
    plan.set(fastSub.path, [{ status: 200, delayMs: 300 }]);
    for (let i = 0; i < 6; i++) await newTrip();
    const w = t.app.services.webhooks.newWorker({ now: () => new Date(clock), perSubscription: 2, concurrency: 16 });
    expect(await w.tick()).toBe(4); // 2 + 2, not 6 + 6
    await w.idle();
    while ((await w.runOnce()) > 0);
    expect(at(slowSub.path)).toHaveLength(6);
    expect(at(fastSub.path)).toHaveLength(6);
    expect(mostOpen.get(slowSub.path)).toBe(2);
    expect(mostOpen.get(fastSub.path)).toBe(2);
  });

  it('a subscription at its limit is claimed again as soon as its sends finish, never above the limit', async () => {
    const sub = await subscribe(admin, ['trip.created']);
    plan.set(sub.path, [{ status: 200, delayMs: 50 }]);
    for (let i = 0; i < 12; i++) await newTrip();
    // An interval of an hour: a tick that found the subscription full and returned empty would leave the rest for an hour.
    const w = t.app.services.webhooks.newWorker({ now: () => new Date(clock), perSubscription: 3, concurrency: 16, intervalMs: 3_600_000 });
    expect(await w.tick()).toBe(3);
    // All 3 in flight: the next tick waits for them to finish, then claims the next ones in the same tick.

    while ((await deliveriesOf(sub.id)).some((d) => d.status === 'pending')) {
      expect(await w.tick()).toBeGreaterThan(0);
    }
    await w.idle();
    expect(at(sub.path)).toHaveLength(12);
    expect(new Set(at(sub.path).map((r) => r.body.id)).size).toBe(12);
    expect(mostOpen.get(sub.path)).toBeLessThanOrEqual(3);
    const rows = await deliveriesOf(sub.id);
    expect(rows.every((d) => d.status === 'delivered' && d.attempts === 1)).toBe(true);
  });

  it('claims of several rows at once are still taken over by another instance when they expire', async () => {
    const sub = await subscribe(admin, ['trip.created']);
    plan.set(sub.path, [{ status: 200, delayMs: 300 }]);
    for (let i = 0; i < 4; i++) await newTrip();
    const slowInstance = t.app.services.webhooks.newWorker({ now: () => new Date(clock), timeoutMs: 2_000, claimTimeoutMs: 3_000 });
    expect(await slowInstance.tick()).toBe(4); // one claim, four rows
    clock += 10_000; // every one of those claims runs out while the receiver is still answering
    expect(await worker.runOnce()).toBe(4);
    await slowInstance.idle();
    const rows = await deliveriesOf(sub.id);
    expect(rows.map((d) => [d.status, d.attempts])).toEqual(Array(4).fill(['delivered', 2]));
    const log = await sys('SELECT attempt FROM webhook_attempt WHERE subscription_id = $1', [sub.id]);
    expect(log.map((r) => r.attempt)).toEqual([2, 2, 2, 2]);
  });
});

describe.skipIf(!process.env.TEST_DATABASE_URL)('a claim and its locks (PostgreSQL)', () => {
  it('locks the rows it takes, not the backlog it chose them from', async () => {
    const sub = await subscribe(admin, ['trip.created']);
    for (let i = 0; i < 12; i++) await newTrip();
    // The claim's transaction held open: another instance sees which rows are locked (SKIP LOCKED leaves them out).
    await t.db.withSystem(async (tx) => {
      const taken = await claimDue(tx, { now: new Date(clock), limit: 8, perSubscription: 2, claimMs: 15_000, token: 'held' });
      expect(taken).toHaveLength(2);
      const free = await sys<{ n: number }>(
        'SELECT count(*)::int AS n FROM (SELECT id FROM webhook_delivery WHERE subscription_id = $1 FOR UPDATE SKIP LOCKED) x',
        [sub.id],
      );
      expect(free[0].n).toBe(10);
      // The next claim, while these are in flight, takes nothing of this subscription (its limit) and locks nothing.
      expect(await claimDue(tx, { now: new Date(clock), limit: 8, perSubscription: 2, claimMs: 15_000, token: 'next' })).toHaveLength(0);
    });
  });
});

describe('subscriptions', () => {
  it('shows the secret once; rotation signs with both secrets during the overlap', async () => {
    const sub = await subscribe(admin, ['trip.created']);
    const got = (await t.req(admin, { method: 'GET', url: `/webhooks/subscriptions/${sub.id}` })).json();
    expect(got.secret).toBeUndefined();
    expect(got).toMatchObject({ secret_set: true, secret_set_at: expect.any(String) });
    expect(JSON.stringify(got)).not.toContain(sub.secret.slice(-8));
    const rot = await t.req(admin, {
      method: 'POST',
      url: `/webhooks/subscriptions/${sub.id}/rotate-secret`,
      payload: { overlap_seconds: 3600 },
    });
    expect(rot.statusCode, rot.body).toBe(200);
    const fresh = rot.json().secret as string;
    expect(fresh).not.toBe(sub.secret);
    await newTrip();
    await worker.runOnce();
    const [r] = at(sub.path);
    const ts = Number(r.headers['x-webhook-timestamp']);
    expect(String(r.headers['x-signature']).match(/v1=/g)).toHaveLength(2);
    verifySignature(fresh, r.raw, r.headers['x-signature'], ts);
    verifySignature(sub.secret, r.raw, r.headers['x-signature'], ts);
    // After the overlap only the new secret signs.
    clock += 2 * 3_600_000;
    await newTrip();
    await worker.runOnce();
    const r2 = at(sub.path)[1];
    expect(() => verifySignature(sub.secret, r2.raw, r2.headers['x-signature'], Number(r2.headers['x-webhook-timestamp']))).toThrow();
    verifySignature(fresh, r2.raw, r2.headers['x-signature'], Number(r2.headers['x-webhook-timestamp']));
  });

  it('sends a test event on request and redelivers one delivery as a new one with the same event', async () => {
    const sub = await subscribe(admin, ['trip.created']);
    const test = await t.req(admin, { method: 'POST', url: `/webhooks/subscriptions/${sub.id}/test` });
    expect(test.statusCode, test.body).toBe(202);
    expect(test.json()).toMatchObject({ event_type: 'webhook.test', status: 'pending' });
    await newTrip();
    await worker.runOnce();
    expect(
      at(sub.path)
        .map((r) => r.body.type)
        .sort(),
    ).toEqual(['trip.created', 'webhook.test']);
    const original = (await deliveriesOf(sub.id)).find((d) => d.event_type === 'trip.created')!;
    const again = await t.req(admin, { method: 'POST', url: `/webhooks/deliveries/${original.id}/redeliver` });
    expect(again.statusCode, again.body).toBe(202);
    expect(again.json()).toMatchObject({ redelivery_of: original.id, event_id: original.event_id, status: 'pending' });
    await worker.runOnce();
    const sent = at(sub.path).filter((r) => r.body.type === 'trip.created');
    expect(sent).toHaveLength(2);
    expect(sent[1].body).toEqual(sent[0].body);
    expect(sent[1].headers['x-webhook-id']).toBe(again.json().id);
  });

  it('merchants manage their own subscriptions and receive only their records; administrators see all', async () => {
    const mine = await subscribe(merchant, ['trip.created']);
    expect(mine.scope).toBe('merchant');
    const orgWide = await subscribe(admin, ['trip.created']);
    const merchantId = (await t.db.withSystem((tx) => t.app.services.logistics.api.merchantOfUser(tx, t.demo.users.merchant)))!.id;
    const ours = await newTrip(admin, { merchant_id: merchantId });
    await newTrip(admin); // no merchant
    await worker.runOnce();
    expect(at(mine.path).map((r) => r.body.resource_id)).toEqual([ours.id]);
    expect(at(mine.path)[0].body.resource).toMatchObject({ id: ours.id, merchant_id: merchantId });
    expect(at(orgWide.path)).toHaveLength(2);

    const merchantList = (await t.req(merchant, { method: 'GET', url: '/webhooks/subscriptions' })).json();
    expect(merchantList.data.map((s: { id: string }) => s.id)).toEqual([mine.id]);
    expect((await t.req(merchant, { method: 'GET', url: `/webhooks/subscriptions/${orgWide.id}` })).statusCode).toBe(404);
    expect((await t.req(merchant, { method: 'DELETE', url: `/webhooks/subscriptions/${orgWide.id}` })).statusCode).toBe(404);
    const adminList = (await t.req(admin, { method: 'GET', url: '/webhooks/subscriptions' })).json();
    expect(adminList.data.map((s: { id: string }) => s.id).sort()).toEqual([mine.id, orgWide.id].sort());
    // Other roles may not use webhooks; another organization sees nothing.
    expect((await t.req(await t.as('driver'), { method: 'GET', url: '/webhooks/subscriptions' })).statusCode).toBe(403);
    const other = await t.newOrganization();
    const otherAdmin = await t.login(other.logins.admin);
    expect((await t.req(otherAdmin, { method: 'GET', url: `/webhooks/subscriptions/${orgWide.id}` })).statusCode).toBe(404);
    expect((await t.req(otherAdmin, { method: 'GET', url: '/webhooks/subscriptions' })).json().data).toEqual([]);
    // Deleting removes the subscription and its log.
    expect((await t.req(admin, { method: 'DELETE', url: `/webhooks/subscriptions/${mine.id}` })).statusCode).toBe(204);
    expect(await deliveriesOf(mine.id)).toEqual([]);
  });

  it('refuses bad input with 400 and writes an audit row per change', async () => {
    const bad = (payload: Record<string, unknown>) => t.req(admin, { method: 'POST', url: '/webhooks/subscriptions', payload });
    expect((await bad({ url: `${base}/x`, event_types: ['trip.teleported'] })).statusCode).toBe(400);
    expect((await bad({ url: `${base}/x`, event_types: [] })).statusCode).toBe(400);
    expect((await bad({ url: `${base}/x`, event_types: ['*'], extra: 1 })).statusCode).toBe(400);
    const sub = await subscribe(admin, ['*']);
    const audit = await sys('SELECT action FROM audit_log WHERE entity_id = $1', [sub.id]);
    expect(audit.map((a) => a.action)).toEqual(['webhook_subscription.created']);
    expect(JSON.stringify(await sys('SELECT after FROM audit_log WHERE entity_id = $1', [sub.id]))).not.toContain(sub.secret);
  });
});

describe('signing secrets at rest', () => {
  const CHOSEN = 'my-receiver-secret-0123456789';
  const stored = async (id: string) =>
    (
      await sys<{ secret: string; previous_secret: string | null }>(
        'SELECT secret, previous_secret FROM webhook_subscription WHERE id = $1',
        [id],
      )
    )[0];

  it('stores every secret encrypted; a secret the caller chose is never returned, and deliveries verify with it', async () => {
    const generated = await subscribe(admin, ['trip.created']);
    const res = await t.req(admin, {
      method: 'POST',
      url: '/webhooks/subscriptions',
      payload: { url: `${base}/chosen`, event_types: ['trip.created'], secret: CHOSEN },
    });
    expect(res.statusCode, res.body).toBe(201);
    const chosen = res.json();
    expect(chosen.secret).toBeUndefined();
    expect(chosen).toMatchObject({ secret_set: true, secret_set_at: expect.any(String) });
    // In the database: AES-GCM values under the configured key's version, never the plain text.
    for (const [id, plain] of [
      [generated.id, generated.secret],
      [chosen.id, CHOSEN],
    ] as const) {
      const row = await stored(id);
      expect(row.secret).toMatch(new RegExp(`^enc:v1:${t.config.secrets!.current.id}:`));
      expect(row.secret).not.toContain(plain);
    }
    await newTrip();
    await worker.runOnce();
    const [r] = at('/chosen');
    verifySignature(CHOSEN, r.raw, r.headers['x-signature'], Number(r.headers['x-webhook-timestamp']));
    expect(JSON.stringify(await sys('SELECT before, after FROM audit_log WHERE entity_id = $1', [chosen.id]))).not.toContain(CHOSEN);
  });

  it('replaces a secret with a chosen one (never returned) and signs with both during the overlap', async () => {
    const sub = await subscribe(admin, ['trip.created']);
    const rot = await t.req(admin, {
      method: 'POST',
      url: `/webhooks/subscriptions/${sub.id}/rotate-secret`,
      payload: { overlap_seconds: 3600, secret: CHOSEN },
    });
    expect(rot.statusCode, rot.body).toBe(200);
    expect(rot.json().secret).toBeUndefined();
    expect(rot.body).not.toContain(CHOSEN);
    const row = await stored(sub.id);
    expect(row.previous_secret).toMatch(/^enc:v1:/);
    expect(`${row.secret}${row.previous_secret}`).not.toContain(CHOSEN);
    expect(`${row.secret}${row.previous_secret}`).not.toContain(sub.secret);
    await newTrip();
    await worker.runOnce();
    const [r] = at(sub.path);
    const ts = Number(r.headers['x-webhook-timestamp']);
    verifySignature(CHOSEN, r.raw, r.headers['x-signature'], ts);
    verifySignature(sub.secret, r.raw, r.headers['x-signature'], ts);
    const audit = await sys('SELECT after FROM audit_log WHERE entity_id = $1 AND action = $2', [
      sub.id,
      'webhook_subscription.secret_rotated',
    ]);
    expect(audit[0].after).toMatchObject({ origin: 'chosen', overlap_seconds: 3600 });
    expect(JSON.stringify(audit)).not.toContain(CHOSEN);
  });

  it.each([
    ['empty', ''],
    ['too short', 'short'],
    ['too long', 'x'.repeat(257)],
    ['with a space', 'has a space in the secret'],
  ])('refuses a %s secret with 400 and writes nothing', async (_name, secret) => {
    const sub = await subscribe(admin, ['trip.created']);
    const before = await stored(sub.id);
    const create = await t.req(admin, {
      method: 'POST',
      url: '/webhooks/subscriptions',
      payload: { url: `${base}/bad`, event_types: ['*'], secret },
    });
    expect(create.statusCode).toBe(400);
    expect(create.json().code).toBe('VALIDATION_FAILED');
    const rot = await t.req(admin, { method: 'POST', url: `/webhooks/subscriptions/${sub.id}/rotate-secret`, payload: { secret } });
    expect(rot.statusCode).toBe(400);
    expect(await stored(sub.id)).toEqual(before);
    expect(await sys('SELECT id FROM webhook_subscription')).toHaveLength(1);
  });

  it('a secret that cannot be decrypted (a key version not configured) fails the attempt with a clear error, and is retried', async () => {
    const sub = await subscribe(admin, ['trip.created']);
    const row = await stored(sub.id);
    await sys('UPDATE webhook_subscription SET secret = $2 WHERE id = $1', [
      sub.id,
      row.secret.replace(/^enc:v1:[0-9a-f]{8}:/, 'enc:v1:0badc0de:'),
    ]);
    await newTrip();
    await worker.runOnce();
    expect(at(sub.path)).toHaveLength(0);
    const [d] = await deliveriesOf(sub.id);
    expect(d.status).toBe('pending');
    expect(d.last_error).toMatch(/signing secret cannot be read: .*key version 0badc0de/);
  });
});

describe('SSRF refusals', () => {
  it('refuses http outside development and private or loopback targets unless allowed', async () => {
    const settings = t.config.settings;
    expect(t.app.ctx.config.settings).toBe(settings);
    const post = (url: string) => t.req(admin, { method: 'POST', url: '/webhooks/subscriptions', payload: { url, event_types: ['*'] } });
    try {
      settings.WEBHOOK_ALLOW_PRIVATE_TARGETS = false;
      for (const url of [
        `${base}/x`,
        'https://localhost/x',
        'https://10.1.2.3/x',
        'https://[::1]/x',
        'https://169.254.169.254/latest',
        'https://[::ffff:127.0.0.1]/x',
        'https://192.168.0.10/x',
      ]) {
        const res = await post(url);
        expect(res.statusCode, url).toBe(422);
        expect(res.json().code).toBe('WEBHOOK_TARGET_REFUSED');
      }
      settings.WEBHOOK_ALLOW_HTTP = false;
      const plain = await post('http://example.com/x');
      expect(plain.statusCode).toBe(422);
      expect(plain.json().detail).toMatch(/https/);
      expect((await post('ftp://example.com/x')).statusCode).toBe(422);
      expect((await post('https://user:pw@example.com/x')).statusCode).toBe(422);
      expect((await post('https://example.com/hooks')).statusCode).toBe(201);
    } finally {
      settings.WEBHOOK_ALLOW_PRIVATE_TARGETS = true;
      settings.WEBHOOK_ALLOW_HTTP = true;
    }
  });

  it('checks the address actually connected to: a name resolving to loopback is refused at send time, and not retried', async () => {
    const name = hostname();
    const resolved = await lookup(name).catch(() => null);
    const port = new URL(base).port;
    // A subscription made while private targets were allowed, then the setting is turned off.
    const sub = await subscribe(admin, ['trip.created']);
    await sys('UPDATE webhook_subscription SET url = $2 WHERE id = $1', [sub.id, `http://${name}:${port}${sub.path}`]);
    await newTrip();
    t.config.settings.WEBHOOK_ALLOW_PRIVATE_TARGETS = false;
    try {
      await worker.runOnce();
    } finally {
      t.config.settings.WEBHOOK_ALLOW_PRIVATE_TARGETS = true;
    }
    const [d] = await deliveriesOf(sub.id);
    if (resolved && isNonPublicAddress(resolved.address)) {
      expect(at(sub.path)).toHaveLength(0);
      expect(d).toMatchObject({ status: 'failed', attempts: 1 });
      expect(d.last_error).toMatch(/private, loopback or reserved/);
    }
  });

  it('classifies addresses, URLs and answers', async () => {
    for (const a of [
      '127.0.0.1',
      '10.0.0.1',
      '172.16.5.4',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '::1',
      'fd00::1',
      'fe80::1',
      '::ffff:10.0.0.1',
    ]) {
      expect(isNonPublicAddress(a), a).toBe(true);
    }
    for (const a of ['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111', '::ffff:8.8.8.8']) expect(isNonPublicAddress(a), a).toBe(false);
    const strict = { allowHttp: false, allowPrivate: false };
    expect(checkTargetUrl('https://hooks.example.com/a?b=1', strict)).toBeNull();
    expect(checkTargetUrl('https://127.1/a', strict)).not.toBeNull(); // WHATWG normalises to 127.0.0.1
    expect(checkTargetUrl('https://0x7f000001/a', strict)).not.toBeNull();
    expect(checkTargetUrl('https://svc.internal/a', strict)).not.toBeNull();
    const refused = await httpSender({
      url: `${base}/x`,
      body: '{}',
      headers: {},
      timeoutMs: 500,
      policy: { allowHttp: true, allowPrivate: false },
    });
    expect(refused).toMatchObject({ refused: true, statusCode: null });
    expect(classify({ statusCode: 204, headers: {}, excerpt: null, error: null, refused: false })).toBe('delivered');
    expect(classify({ statusCode: 301, headers: {}, excerpt: null, error: null, refused: false })).toBe('failed');
    expect(classify({ statusCode: 404, headers: {}, excerpt: null, error: null, refused: false })).toBe('failed');
    expect(classify({ statusCode: 429, headers: {}, excerpt: null, error: null, refused: false })).toBe('retry');
    expect(classify({ statusCode: null, headers: {}, excerpt: null, error: 'ECONNREFUSED', refused: false })).toBe('retry');
    const now = new Date('2026-01-01T00:00:00Z');
    expect(retryAfterMs('30', now)).toBe(30_000);
    expect(retryAfterMs('Thu, 01 Jan 2026 00:01:00 GMT', now)).toBe(60_000);
    expect(retryAfterMs('soon', now)).toBeNull();
    // Back-off: doubles, capped, jitter within [50%, 100%] of the step.
    expect(backoffMs(1, 1000, 10_000, () => 0)).toBe(500);
    expect(backoffMs(3, 1000, 10_000, () => 1)).toBe(4000);
    expect(backoffMs(10, 1000, 10_000, () => 1)).toBe(10_000);
  });
});
