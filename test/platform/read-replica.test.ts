import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, waitFor, type Session, type TestApp } from '../helpers.js';
import { privateClustersAvailable, startPrivateCluster, type PrivateCluster } from '../hardening/private-cluster.js';
import { newTrip } from '../logistics/fixtures.js';
import { newCustomer, newExpress, newShop, ok, orderDb, orderIn } from '../commerce/fixtures.js';

/**
 * DATABASE_REPLICA_URL against a real streaming replica: a private cluster and a hot standby made from it with
 * pg_basebackup, started by this test. The reads of GET requests go to the replica when it covers the caller's own
 * writes and is within REPLICA_MAX_LAG_MS; behind or gone, the primary answers and nothing fails.
 * PostgreSQL suite only (it starts two clusters of its own).
 */
const run = privateClustersAvailable && Boolean(process.env.TEST_DATABASE_URL);
const MAX_LAG_MS = 8_000;

let primary: PrivateCluster;
let standby: PrivateCluster;
let t: TestApp;
let admin: Session;
let dispatch: Session;

async function onStandby(sql: string, database = 'postgres') {
  const c = new pg.Client({ connectionString: standby.url(database) });
  await c.connect();
  try {
    return (await c.query(sql)).rows;
  } finally {
    await c.end();
  }
}

const until = <T>(what: string, probe: () => Promise<T | undefined | false>, timeout = 20_000) =>
  waitFor(probe, { timeout, interval: 50, message: what }) as Promise<T>;

const replicaState = async () => (await t.req(null, { method: 'GET', url: '/health' })).json().replica?.state as string | undefined;
const counts = () => t.db.replicaStatus!()!;

/** Once the replica covers the dispatcher's own last write (his login), his list is read there. */
const dispatcherReadsOnReplica = () =>
  until('a list read on the replica', async () => {
    const before = counts().reads_on_replica;
    expect((await t.req(dispatch, { method: 'GET', url: '/trips' })).statusCode).toBe(200);
    return counts().reads_on_replica > before;
  });

beforeAll(async () => {
  if (!run) return;
  primary = await startPrivateCluster();
  standby = await primary.standby();
  const saved = process.env.TEST_DATABASE_URL;
  process.env.TEST_DATABASE_URL = primary.url();
  try {
    t = await createTestApp({}, { replica: { url: (name) => standby.url(name), maxLagMs: MAX_LAG_MS, checkMs: 50 } });
  } finally {
    process.env.TEST_DATABASE_URL = saved;
  }
  admin = await t.as('admin');
  dispatch = await t.as('dispatch');
}, 120_000);

afterAll(async () => {
  if (!run) return;
  await t?.close().catch(() => undefined);
  primary?.remove();
});

describe.skipIf(!run)('a streaming read replica', () => {
  it('serves the reads of GET requests once it follows, never a write', async () => {
    await until('the replica following', async () => (await replicaState()) === 'following');
    await dispatcherReadsOnReplica();
    // GET /health counts them, as the instance's status does.
    const health = (await t.req(null, { method: 'GET', url: '/health' })).json().replica;
    expect(health.reads_on_replica).toBeGreaterThan(0);
    expect(health.reads_on_primary).toBeGreaterThanOrEqual(0);
    // A write goes to the primary (a standby refuses writes: it would fail otherwise).
    const trip = await newTrip(t, admin);
    expect(trip.id).toBeTruthy();
  });

  it('gives the writer his own write at once, others a bounded stale read, and the primary once the replica is too far behind', async () => {
    await dispatcherReadsOnReplica();
    // The stale read has to fall inside one pause's lag bound; on a slow machine the bound can pass before it is
    // made (the read then goes to the primary, as it should): the replay is resumed and paused again.
    for (let attempt = 1; ; attempt++) {
      await onStandby('SELECT pg_wal_replay_pause()');
      await until('the replay paused', async () => (await onStandby('SELECT pg_get_wal_replay_pause_state() AS s'))[0].s === 'paused');
      try {
        const trip = await newTrip(t, admin);
        // The writer reads his own write: the replica does not cover it, so the primary answers.
        const own = await t.req(admin, { method: 'GET', url: `/trips/${trip.id}` });
        expect(own.statusCode).toBe(200);
        // Another user, while the replica is within the bound: the replica answers, without the new trip yet.
        const before = counts().reads_on_replica;
        const stale = await t.req(dispatch, { method: 'GET', url: `/trips/${trip.id}` });
        if (counts().reads_on_replica === before && attempt < 3) continue;
        expect(counts().reads_on_replica).toBeGreaterThan(before);
        expect(stale.statusCode).toBe(404);
        // Paused past the bound: "behind", and every read goes to the primary (the replay is still paused).
        await until('the replica behind', async () => (await replicaState()) === 'behind');
        const fresh = await t.req(dispatch, { method: 'GET', url: `/trips/${trip.id}` });
        expect(fresh.statusCode).toBe(200);
        break;
      } finally {
        await onStandby('SELECT pg_wal_replay_resume()');
        await until('the replica following again', async () => (await replicaState()) === 'following');
      }
    }
  }, 120_000);

  it("serves a customer's orders and trips, a merchant's orders and a recipient's tracking link", async () => {
    await until('the replica following', async () => (await replicaState()) === 'following');
    const shop = await newShop(t);
    const customer = await newCustomer(t);
    const orderId = await orderIn(t, shop, customer, 'ready');
    const tripId = (await orderDb(t, orderId)).trip_id as string;
    // A recipient without an account (an express delivery) follows his trip by its link.
    const express = await newExpress(t, shop);
    const link = ok(await t.req(shop.merchant, { method: 'GET', url: `/trips/${express.trip_id}/recipient-link` }));
    /** Asked again until the replica covers the reader's own writes (the order, the link): then read there. */
    const readOnReplica = (what: string, read: () => Promise<{ statusCode: number; body: string }>) =>
      until(what, async () => {
        const before = counts().reads_on_replica;
        const res = await read();
        expect(res.statusCode, res.body).toBe(200);
        return counts().reads_on_replica > before;
      });
    await readOnReplica("the customer's orders", () => t.req(customer.session, { method: 'GET', url: '/customer/orders' }));
    await readOnReplica("the customer's trip", () => t.req(customer.session, { method: 'GET', url: `/customer/trips/${tripId}` }));
    await readOnReplica("the customer's trips", () => t.req(customer.session, { method: 'GET', url: '/customer/trips' }));
    await readOnReplica("the merchant's orders", () => t.req(shop.merchant, { method: 'GET', url: '/merchant/orders' }));
    await readOnReplica('the tracking link', () => t.app.inject({ method: 'GET', url: link.url }));
    await readOnReplica("the trip's tracking", () => t.req(admin, { method: 'GET', url: `/trips/${tripId}/tracking` }));
  });

  it('keeps answering when the replica goes away, and says so', async () => {
    await until('the replica following', async () => (await replicaState()) === 'following');
    const trip = await newTrip(t, admin);
    await until(
      'the trip on the replica',
      async () => (await onStandby(`SELECT 1 FROM trip WHERE id = '${trip.id}'`, new URL(t.url!).pathname.slice(1))).length > 0,
    );
    standby.stop('immediate');
    for (let i = 0; i < 5; i++) {
      const res = await t.req(dispatch, { method: 'GET', url: `/trips/${trip.id}` });
      expect(res.statusCode).toBe(200);
    }
    expect((await t.req(dispatch, { method: 'GET', url: '/trips' })).statusCode).toBe(200);
    await until('the replica unreachable', async () => (await replicaState()) === 'unreachable');
    standby.start();
    await until('the replica following after its restart', async () => (await replicaState()) === 'following');
  });
});
