import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Tx } from '../../src/platform/db/index.js';
import { countingDb } from '../counting-db.js';
import { createTestApp, type TestApp } from '../helpers.js';
import { demoShop, ok, orderKit, type MoneyShop, type OrderKit } from '../money/fixtures.js';
import { pt, tripDb } from './fixtures.js';

/**
 * The write transactions of the busiest routes, seen from inside: the app's Database is wrapped (test/counting-db.ts)
 * so that every exchange of a counted request is noted, and just before its COMMIT the transaction's own
 * `synchronous_commit` is read (a reader outside the transaction cannot see a `set_config(..., true)`).
 */
const counting = new Map<string, string[]>();
const beforeCommit = async (tx: Tx, store: string[]) => {
  const { rows } = await tx.query<{ synchronous_commit: string }>('SHOW synchronous_commit');
  store.push(`synchronous_commit=${rows[0].synchronous_commit}`);
};

let t: TestApp;
let kit: OrderKit;
let shop: MoneyShop;

beforeAll(async () => {
  t = await createTestApp({}, { wrapDb: countingDb(counting, beforeCommit) });
  kit = await orderKit(t);
  shop = await demoShop(t);
}, 60_000);
afterAll(() => t?.close());

let seq = 0;
async function counted(run: (headers: Record<string, string>) => Promise<Parameters<typeof ok>[0]>, status = 200) {
  const trips: string[] = [];
  const requestId = `counted-${++seq}`;
  counting.set(requestId, trips);
  try {
    const res = await run({ 'x-request-id': requestId });
    if (process.env.SHOW_ROUND_TRIPS) process.stderr.write(`${requestId}:\n  ${trips.join('\n  ')}\n`);
    return { body: ok(res, status), trips };
  } finally {
    counting.delete(requestId);
  }
}

/** What the transaction said of itself just before its COMMIT. */
const commitMode = (trips: string[]) => trips.find((s) => s.startsWith('synchronous_commit='));

const points = (prefix: string, n: number) => {
  const now = Date.now();
  return Array.from({ length: n }, (_, i) => ({
    client_point_id: `${prefix}-${i}`,
    location: pt(-68.134 + i * 0.001, -16.5),
    recorded_at: new Date(now - (n - i) * 1000).toISOString(),
  }));
};

describe('GPS points commit without waiting for the WAL flush; money and trip changes wait', () => {
  it('POST /driver/locations/batch, POST /driver/location and the dispatcher’s POST /drivers/:id/location commit asynchronously', async () => {
    const d = kit.driver;
    const batch = await counted((headers) =>
      t.req(d.session, { method: 'POST', url: '/driver/locations/batch', payload: { points: points(`b${seq}`, 3) }, headers }),
    );
    expect(batch.body.accepted).toBe(3);
    expect(commitMode(batch.trips), batch.trips.join('\n')).toBe('synchronous_commit=off');

    const one = await counted((headers) =>
      t.req(d.session, { method: 'POST', url: '/driver/location', payload: { location: pt(-68.133, -16.501) }, headers }),
    );
    expect(one.body.accepted).toBe(1);
    expect(commitMode(one.trips)).toBe('synchronous_commit=off');

    const byDispatch = await counted((headers) =>
      t.req(kit.admin, { method: 'POST', url: `/drivers/${d.id}/location`, payload: { location: pt(-68.132, -16.501) }, headers }),
    );
    expect(byDispatch.body.accepted).toBe(1);
    expect(commitMode(byDispatch.trips)).toBe('synchronous_commit=off');
  });

  it('a trip transition keeps the synchronous commit of the session', async () => {
    // The setting is the transaction's own: the next transaction on the same pooled connection is back to the default.
    const o = await kit.place(shop, { destination: 'platform', subtotal: '20.00', fee: '5.00' });
    const tripId = await kit.ready(shop, o.id);
    const assign = await counted((headers) =>
      t.req(kit.admin, { method: 'POST', url: `/trips/${tripId}/assign`, payload: { driver_id: kit.driver.id }, headers }),
    );
    expect(commitMode(assign.trips)).toBe('synchronous_commit=on');
  });
});

/** An order placed, ready, assigned to the kit's driver, accepted, picked up and on the way, with a few GPS points. */
async function onTheWay() {
  const o = await kit.place(shop, { destination: 'platform', subtotal: '20.00', fee: '5.00' });
  const tripId = await kit.ready(shop, o.id);
  const d = kit.driver;
  ok(await t.req(kit.admin, { method: 'POST', url: `/trips/${tripId}/assign`, payload: { driver_id: d.id } }));
  ok(await t.req(d.session, { method: 'POST', url: `/driver/trips/${tripId}/accept` }));
  const trip = await tripDb(t, tripId);
  ok(await t.req(d.session, { method: 'POST', url: `/trips/${tripId}/verify-pickup`, payload: { pin: trip.pickup_pin } }));
  ok(await t.req(d.session, { method: 'POST', url: `/driver/trips/${tripId}/start-delivery` }));
  ok(await t.req(d.session, { method: 'POST', url: '/driver/locations/batch', payload: { points: points(tripId, 3) } }));
  return { tripId, orderId: o.id, pin: trip.delivery_pin as string };
}

describe('POST /trips/:id/verify-delivery', () => {
  it('completes the trip, books the order and keeps the track in a synchronous commit', async () => {
    const { tripId, pin } = await onTheWay();
    const { body, trips } = await counted((headers) =>
      t.req(kit.driver.session, { method: 'POST', url: `/trips/${tripId}/verify-delivery`, payload: { pin }, headers }),
    );
    expect(body.status).toBe('completed');
    expect(commitMode(trips)).toBe('synchronous_commit=on');
  });
});
