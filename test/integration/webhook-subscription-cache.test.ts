import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { createPostgresDatabase, type Database } from '../../src/platform/db/index.js';
import { countingDb } from '../counting-db.js';
import { createTestApp, waitFor, type Session, type TestApp } from '../helpers.js';

/**
 * The webhooks' per-organization cache of active subscriptions: every change of a subscription (created, deactivated,
 * enabled again, its event types changed, deleted, disabled by the worker) takes effect on the next event of the
 * instance that made it and, through the announcement at commit, on the other instances; an organization with no
 * subscription spends no statement on webhooks for an event, one with a match spends the deliveries' insert alone
 * (queued ahead of the next exchange).
 */

const CHANNEL = 'webhook_subscriptions_changed';
/** The statements of the counted requests, by request id (test/counting-db.ts). */
const counting = new Map<string, string[]>();
let t: TestApp;
let admin: Session;
let seq = 0;

beforeAll(async () => {
  t = await createTestApp({ raw: { WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' } }, { wrapDb: countingDb(counting) });
  admin = await t.as('admin');
  await t.db.withSystem((tx) => tx.query('DELETE FROM webhook_subscription'));
});
afterAll(() => t?.close());

const sys = async (text: string, params: unknown[] = []) => (await t.db.withSystem((tx) => tx.query(text, params))).rows;

const TRIP = {
  pickup_location: { type: 'Point', coordinates: [-68.13, -16.5] },
  pickup_address: 'Pickup 1',
  dropoff_location: { type: 'Point', coordinates: [-68.12, -16.49] },
  dropoff_address: 'Dropoff 2',
};

/** A trip created through `app` (a trip.created event): its id, the subscriptions it was queued for and its webhook statements. */
async function newTrip(app: FastifyInstance = t.app) {
  const requestId = `webhook-cache-${++seq}`;
  const statements: string[] = [];
  counting.set(requestId, statements);
  try {
    const res = await app.inject({
      method: 'POST',
      url: '/api/v1/trips',
      headers: { authorization: `Bearer ${admin.token}`, 'x-request-id': requestId },
      payload: TRIP,
    });
    expect(res.statusCode, res.body).toBe(201);
    const id = res.json().id as string;
    const queued = await sys("SELECT subscription_id FROM webhook_delivery WHERE resource_key = 'trip:' || $1 ORDER BY subscription_id", [
      id,
    ]);
    return {
      id,
      queuedFor: queued.map((r) => r.subscription_id as string),
      webhookStatements: statements.filter((s) => /webhook_/.test(s)),
    };
  } finally {
    counting.delete(requestId);
  }
}

async function subscribe(eventTypes: string[]) {
  const res = await t.req(admin, {
    method: 'POST',
    url: '/webhooks/subscriptions',
    payload: { url: `http://127.0.0.1:9/hook-${++seq}`, event_types: eventTypes },
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as { id: string };
}
async function patch(id: string, payload: Record<string, unknown>) {
  const res = await t.req(admin, { method: 'PATCH', url: `/webhooks/subscriptions/${id}`, payload });
  expect(res.statusCode, res.body).toBe(200);
}

const LOAD = expect.stringMatching(/^SELECT id, scope, owner_user_id, merchant_id, event_types FROM webhook_subscription/);
/** The deliveries' insert is queued ahead of the transaction's next statement: no round trip of its own. */
const INSERT = expect.stringMatching(/^queued INSERT INTO webhook_delivery/);

describe('the cache of active subscriptions, on one instance', () => {
  it('a subscription created, deactivated, enabled again, retyped or deleted takes effect on the very next event', async () => {
    await newTrip(); // the organization's (empty) list is loaded and cached
    // No subscription: no statement at all.
    expect(await newTrip()).toMatchObject({ queuedFor: [], webhookStatements: [] });

    const sub = await subscribe(['trip.created']);
    expect(await newTrip()).toMatchObject({ queuedFor: [sub.id], webhookStatements: [LOAD, INSERT] });
    // Cached: the insert alone.
    expect(await newTrip()).toMatchObject({ queuedFor: [sub.id], webhookStatements: [INSERT] });

    await patch(sub.id, { active: false });
    expect(await newTrip()).toMatchObject({ queuedFor: [], webhookStatements: [LOAD] });
    await patch(sub.id, { active: true });
    expect(await newTrip()).toMatchObject({ queuedFor: [sub.id], webhookStatements: [LOAD, INSERT] });

    await patch(sub.id, { event_types: ['trip.cancelled'] });
    expect(await newTrip()).toMatchObject({ queuedFor: [], webhookStatements: [LOAD] });
    await patch(sub.id, { event_types: ['trip.cancelled', 'trip.created'] });
    expect(await newTrip()).toMatchObject({ queuedFor: [sub.id], webhookStatements: [LOAD, INSERT] });

    const del = await t.req(admin, { method: 'DELETE', url: `/webhooks/subscriptions/${sub.id}` });
    expect(del.statusCode, del.body).toBe(204);
    expect(await newTrip()).toMatchObject({ queuedFor: [], webhookStatements: [LOAD] });
    expect(await newTrip()).toMatchObject({ queuedFor: [], webhookStatements: [] });
  });

  it('a subscription disabled by the worker gets nothing from the next event; enabled again, it does', async () => {
    const sub = await subscribe(['trip.created']);
    expect((await newTrip()).queuedFor).toEqual([sub.id]);
    // Every attempt fails, and a first failure is already a day of failures: the worker disables the subscription.
    const worker = t.app.services.webhooks.newWorker({
      now: () => new Date(Date.now() + 60_000),
      disableAfterMs: 0,
      sender: async () => ({ statusCode: 500, headers: {}, excerpt: null, error: null, refused: false }),
    });
    expect(await worker.runOnce()).toBe(1);
    expect(await sys('SELECT active, disabled_reason FROM webhook_subscription WHERE id = $1', [sub.id])).toEqual([
      { active: false, disabled_reason: 'failing' },
    ]);
    expect(await newTrip()).toMatchObject({ queuedFor: [], webhookStatements: [LOAD] });
    await patch(sub.id, { active: true });
    expect(await newTrip()).toMatchObject({ queuedFor: [sub.id], webhookStatements: [LOAD, INSERT] });
    await sys('DELETE FROM webhook_subscription');
  });

  it('a cached subscription deleted without an announcement (directly in SQL) is left out by the insert', async () => {
    const sub = await subscribe(['trip.created']);
    expect((await newTrip()).queuedFor).toEqual([sub.id]);
    await sys('DELETE FROM webhook_subscription WHERE id = $1', [sub.id]);
    // The cached list still names it: the insert runs, writes nothing, and the write succeeds.
    expect(await newTrip()).toMatchObject({ queuedFor: [], webhookStatements: [INSERT] });
  });
});

describe('the cache of active subscriptions, on two instances of one database', () => {
  let other: FastifyInstance;
  let otherDb: Database | null = null;

  beforeAll(async () => {
    // On PostgreSQL a second pool and listener (another instance); on PGlite a second app on the same database.
    otherDb = t.url ? createPostgresDatabase(t.url, { max: 5 }) : null;
    other = await buildApp({ config: t.config, db: otherDb ?? t.db });
    await other.ready();
  });
  afterAll(async () => {
    await other?.close();
    await otherDb?.close();
  });

  it('a subscription created through one instance gets the events raised on the other right after the commit', async () => {
    await sys('DELETE FROM webhook_subscription');
    // The other instance listens once an announcement reaches it (LISTEN is set up in the background): announce
    // (an empty key: every organization is forgotten) until one lands.
    let heard = 0;
    await (otherDb ?? t.db).listen(CHANNEL, () => heard++);
    await waitFor(
      async () => {
        await sys('SELECT pg_notify($1, $2)', [CHANNEL, '']);
        return waitFor(() => heard > 0, { timeout: 1_000 }).catch(() => false);
      },
      { message: "the other instance's listener" },
    );
    // The other instance has the organization's empty list cached.
    expect((await newTrip(other)).queuedFor).toEqual([]);
    expect((await newTrip(other)).queuedFor).toEqual([]);

    const sub = await subscribe(['trip.created']);
    // The announcement reaches the other instance at the commit: its next events are queued for the subscription.
    await waitFor(async () => (await newTrip(other)).queuedFor.includes(sub.id), {
      timeout: 10_000,
      message: 'an event on the other instance queued for the new subscription',
    });
    expect((await newTrip(other)).queuedFor).toEqual([sub.id]);
  });
});
