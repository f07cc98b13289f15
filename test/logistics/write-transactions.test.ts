import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Tx } from '../../src/platform/db/index.js';
import { countingDb } from '../counting-db.js';
import { createTestApp, waitFor, type TestApp } from '../helpers.js';
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

/** Until a statement starting with `statement` waits for a lock (a GPS batch waiting for the driver's row). */
const waitForLockWait = (statement: string) =>
  waitFor(
    async () =>
      (
        await t.db.withSystem((s) =>
          s.query(`SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND position($1 in query) > 0`, [statement]),
        )
      ).rowCount > 0,
    { message: `a statement waiting for a lock: ${statement}` },
  );

/** What the transaction said of itself just before its COMMIT. */
const commitMode = (trips: string[]) => trips.find((s) => s.startsWith('synchronous_commit='));

/** `n` points a millisecond apart from `from` (default: `n` ms ago). */
const points = (prefix: string, n: number, from = Date.now() - n) =>
  Array.from({ length: n }, (_, i) => ({
    client_point_id: `${prefix}-${i}`,
    location: pt(-68.134 + i * 0.001, -16.5),
    recorded_at: new Date(from + i).toISOString(),
  }));

describe('a GPS batch of a driver without trips under way', () => {
  it('stores the points and moves him in its first statement; a resend notes his contact the same way', async () => {
    const sent = points(`idle${seq}`, 2);
    const post = () =>
      counted((headers) =>
        t.req(kit.driver.session, { method: 'POST', url: '/driver/locations/batch', payload: { points: sent }, headers }),
      );
    const first = await post();
    expect(first.body).toMatchObject({ accepted: 2, duplicates: 0, last_location: pt(-68.133, -16.5) });
    expect(first.trips).toEqual([expect.stringMatching(/^WITH drv AS \( SELECT /), 'synchronous_commit=off', 'COMMIT']);
    const row = async () =>
      (
        await t.db.withSystem((tx) =>
          tx.query<{ lon: number; last_location_at: Date; last_seen_at: Date }>(
            'SELECT (last_location)[0] AS lon, last_location_at, last_seen_at FROM driver WHERE id = $1',
            [kit.driver.id],
          ),
        )
      ).rows[0];
    const moved = await row();
    expect(moved.lon).toBe(-68.133);
    expect(moved.last_location_at.toISOString()).toBe(sent[1].recorded_at);

    const again = await post();
    expect(again.body).toMatchObject({ accepted: 0, duplicates: 2, last_location: pt(-68.133, -16.5) });
    expect(again.trips).toEqual([expect.stringMatching(/^WITH drv AS \( SELECT /), 'synchronous_commit=off', 'COMMIT']);
    const seen = await row();
    expect(seen.last_location_at).toEqual(moved.last_location_at);
    expect(seen.last_seen_at.getTime()).toBeGreaterThanOrEqual(moved.last_seen_at.getTime());
  });
});

describe.skipIf(!process.env.TEST_DATABASE_URL)('a GPS batch of a driver given a trip while it runs (PostgreSQL)', () => {
  it('reads him idle, waits for his row, finds him claimed on it, and writes his row last, as for a driver on a trip', async () => {
    const id = kit.driver.id;
    let batch!: ReturnType<typeof counted>;
    await t.db.withSystem(async (tx) => {
      // A capacity claim on him, not committed yet: the batch reads him without a trip, then waits for his row.
      await tx.query('UPDATE driver SET active_trips = active_trips + 1 WHERE id = $1', [id]);
      batch = counted((headers) =>
        t.req(kit.driver.session, {
          method: 'POST',
          url: '/driver/locations/batch',
          payload: { points: points(`claimed${seq}`, 1) },
          headers,
        }),
      );
      await waitForLockWait('INSERT INTO driver_location');
    });
    try {
      const { body, trips } = await batch;
      expect(body).toMatchObject({ accepted: 1, last_location: pt(-68.134, -16.5) });
      expect(trips, trips.join('\n')).toEqual([
        expect.stringMatching(/^WITH drv AS \( SELECT /),
        'synchronous_commit=off',
        expect.stringMatching(/^UPDATE driver d SET last_seen_at .* \+ COMMIT$/),
      ]);
    } finally {
      await t.db.withSystem((tx) => tx.query('UPDATE driver SET active_trips = active_trips - 1 WHERE id = $1', [id]));
    }
  });
});

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

/** An order placed, ready, assigned to the kit's driver, accepted, picked up and on the way, with 3 GPS points since the acceptance. */
async function onTheWay() {
  const o = await kit.place(shop, { destination: 'platform', subtotal: '20.00', fee: '5.00' });
  const tripId = await kit.ready(shop, o.id);
  const d = kit.driver;
  ok(await t.req(kit.admin, { method: 'POST', url: `/trips/${tripId}/assign`, payload: { driver_id: d.id } }));
  ok(await t.req(d.session, { method: 'POST', url: `/driver/trips/${tripId}/accept` }));
  const accepted = Date.now();
  const trip = await tripDb(t, tripId);
  ok(await t.req(d.session, { method: 'POST', url: `/trips/${tripId}/verify-pickup`, payload: { pin: trip.pickup_pin } }));
  ok(await t.req(d.session, { method: 'POST', url: `/driver/trips/${tripId}/start-delivery` }));
  ok(await t.req(d.session, { method: 'POST', url: '/driver/locations/batch', payload: { points: points(tripId, 3, accepted) } }));
  return { tripId, orderId: o.id, pin: trip.delivery_pin as string };
}

describe('a GPS batch of a driver on the way', () => {
  it('finds the driver, stores the points and reads his trips under way in its first statement', async () => {
    const { tripId, pin } = await onTheWay();
    const { body, trips } = await counted((headers) =>
      t.req(kit.driver.session, { method: 'POST', url: '/driver/locations/batch', payload: { points: points(`w${tripId}`, 2) }, headers }),
    );
    expect(body.accepted).toBe(2);
    // No lookup of the driver nor of his trips of its own: the next exchange is already the trip's location event.
    expect(trips[0], trips.join('\n')).toMatch(/^WITH drv AS \( SELECT /);
    expect(trips[1], trips.join('\n')).toMatch(/^WITH e AS \( INSERT INTO event/);
    expect(body.last_location).toEqual(pt(-68.133, -16.5));
    ok(await t.req(kit.driver.session, { method: 'POST', url: `/trips/${tripId}/verify-delivery`, payload: { pin } }));
  });
});

// The driver and the trip (locked), the trip's update and reload, the proof, the events with their notifications and
// devices (the organization's webhook subscriptions are cached), the order (locked, moved, reloaded) and its ledger and
// audit, the driver's capacity, the trip's track, the COMMIT (a platform-paid order of the demo shop).
const MAX_DELIVERY_ROUND_TRIPS = 43;

describe('POST /trips/:id/verify-delivery', () => {
  it('completes the trip, books the order and keeps the track in a synchronous commit', async () => {
    const { tripId, pin } = await onTheWay();
    const { body, trips } = await counted((headers) =>
      t.req(kit.driver.session, { method: 'POST', url: `/trips/${tripId}/verify-delivery`, payload: { pin }, headers }),
    );
    expect(body.status).toBe('completed');
    expect(commitMode(trips)).toBe('synchronous_commit=on');
    // The driver's row (every GPS batch of his waits for it) is taken by the last statements only: his capacity back,
    // then the trip's track; the order, the ledger and the notifications come before.
    const takesDriver = trips.findIndex((s) => /^UPDATE driver |FROM driver WHERE id = \$1 FOR NO KEY UPDATE/.test(s));
    expect(trips.slice(takesDriver), trips.join('\n')).toEqual([
      expect.stringMatching(/^UPDATE driver SET active_trips/),
      expect.stringMatching(/^WITH noted AS \(UPDATE driver SET last_track_ended_at/),
      'synchronous_commit=on',
      'COMMIT',
    ]);
    expect(trips.filter((s) => !s.startsWith('synchronous_commit=')).length, trips.join('\n')).toBeLessThanOrEqual(
      MAX_DELIVERY_ROUND_TRIPS,
    );
    const [kept] = (
      await t.db.withSystem((tx) => tx.query('SELECT cardinality(recorded_at) AS n FROM trip_track WHERE trip_id = $1', [tripId]))
    ).rows;
    expect(kept.n).toBe(3);
  });
});

/** The end of the driver's newest kept track, as his row notes it, and that track's own end. */
async function trackEnds(driverId: string) {
  const { rows } = await t.db.withSystem((tx) =>
    tx.query(
      `SELECT d.last_track_ended_at AS noted, (SELECT max(ended_at) FROM trip_track k WHERE k.driver_id = d.id) AS kept
         FROM driver d WHERE d.id = $1`,
      [driverId],
    ),
  );
  return rows[0] as { noted: Date | null; kept: Date | null };
}

describe('POST /driver/locations/batch', () => {
  it('takes the driver’s row last: his events and ETAs come first, then his position, then the COMMIT', async () => {
    const { tripId } = await onTheWay();
    const { body, trips } = await counted((headers) =>
      t.req(kit.driver.session, {
        method: 'POST',
        url: '/driver/locations/batch',
        payload: { points: points(`late-${tripId}`, 3) },
        headers,
      }),
    );
    expect(body.accepted).toBe(3);
    expect(body.last_location.coordinates).toEqual([-68.132, -16.5]);
    // The driver's row (a capacity claim on him waits for it) is written by the last statement only, sent with the
    // late-point merge (which finds nothing to merge: every point is after the end of his last kept track) and the
    // COMMIT in one exchange.
    const takesDriver = trips.findIndex((s) => /UPDATE driver |FROM driver WHERE id = \$1 FOR/.test(s));
    expect(trips.slice(takesDriver - 1), trips.join('\n')).toEqual([
      'synchronous_commit=off',
      expect.stringMatching(/^UPDATE driver d SET last_seen_at .* \+ WITH b AS .* \+ COMMIT$/),
    ]);
    expect(
      trips.slice(0, takesDriver).some((s) => /trip\.location_updated|INSERT INTO event|outbox/i.test(s)),
      trips.join('\n'),
    ).toBe(true);
    const [driver] = (
      await t.db.withSystem((tx) =>
        tx.query('SELECT (last_location)[0] AS lon, last_location_at FROM driver WHERE id = $1', [kit.driver.id]),
      )
    ).rows;
    expect(driver.lon).toBe(-68.132);

    // The next fix, within the period of the arriving-soon message just sent: the message is decided against (the
    // trip's lock and its last message) without reading the trip again.
    const next = await counted((headers) =>
      t.req(kit.driver.session, {
        method: 'POST',
        url: '/driver/locations/batch',
        payload: { points: points(`next-${tripId}`, 1) },
        headers,
      }),
    );
    const locked = next.trips.findIndex((s) => s.includes('pg_advisory_xact_lock'));
    expect(locked, next.trips.join('\n')).toBeGreaterThan(0);
    expect(next.trips[locked - 1], next.trips.join('\n')).toMatch(/^WITH u AS/); // the ETAs' update, not a read of the trip
    expect(next.trips.slice(locked + 2), next.trips.join('\n')).toEqual([
      'synchronous_commit=off',
      expect.stringMatching(/^UPDATE driver d SET last_seen_at .* \+ COMMIT$/),
    ]);
  });
});

describe.skipIf(!process.env.TEST_DATABASE_URL)('a GPS batch waiting for a trip end that holds the driver (PostgreSQL)', () => {
  it('merges its points into the track the trip end kept, in the exchange of its COMMIT, after its wait', async () => {
    const { tripId } = await onTheWay();
    const id = kit.driver.id;
    // Recorded before the trip end begins: within the window of the track it keeps.
    const sent = points(`ending-${tripId}`, 2);
    let batch!: ReturnType<typeof counted>;
    await t.db.withSystem(async (tx) => {
      // A trip end, not committed yet: it holds the driver's row, keeps a track whose window holds the batch's points
      // (which it cannot see: the batch has not committed), and notes its end on the row.
      const { rows } = await tx.query<{ organization_id: string }>(
        `UPDATE driver SET last_track_ended_at = now() WHERE id = $1 RETURNING organization_id`,
        [id],
      );
      await tx.query(
        `INSERT INTO trip_track (organization_id, trip_id, driver_id, started_at, ended_at, lons, lats, recorded_at, speeds_mps)
         VALUES ($1, $2, $3, now() - interval '1 hour', now(), '{}', '{}', '{}', '{}')`,
        [rows[0].organization_id, tripId, id],
      );
      batch = counted((headers) =>
        t.req(kit.driver.session, { method: 'POST', url: '/driver/locations/batch', payload: { points: sent }, headers }),
      );
      await waitForLockWait('UPDATE driver d SET last_seen_at');
    });
    const { body, trips } = await batch;
    expect(body.accepted).toBe(2);
    expect(trips[trips.length - 1], trips.join('\n')).toMatch(/^UPDATE driver d SET last_seen_at .* \+ WITH b AS .* \+ COMMIT$/);
    const { rows } = await t.db.withSystem((tx) =>
      tx.query<{ at: Date[] }>('SELECT recorded_at AS at FROM trip_track WHERE trip_id = $1', [tripId]),
    );
    expect(rows[0].at.map((d) => new Date(d).toISOString())).toEqual(sent.map((p) => p.recorded_at));
  });
});

describe('late points of an ended trip', () => {
  it('a batch with a point at or before the end of the driver’s last kept track merges it, after his row; later ones do not', async () => {
    const { tripId, pin } = await onTheWay();
    ok(await t.req(kit.driver.session, { method: 'POST', url: `/trips/${tripId}/verify-delivery`, payload: { pin } }));
    const ends = await trackEnds(kit.driver.id);
    expect(ends.noted).toEqual(ends.kept);
    const kept = async () =>
      (await t.db.withSystem((tx) => tx.query('SELECT cardinality(recorded_at) AS n FROM trip_track WHERE trip_id = $1', [tripId]))).rows[0]
        .n;
    expect(await kept()).toBe(3);

    const late = await counted((headers) =>
      t.req(kit.driver.session, {
        method: 'POST',
        url: '/driver/locations/batch',
        payload: { points: points(`synced-${tripId}`, 1, ends.kept!.getTime() - 1) },
        headers,
      }),
    );
    expect(late.body.accepted).toBe(1);
    // The merge comes right after the driver's row is written (by the batch's first statement when he has no trip
    // under way, else by its own, in the merge's exchange), and carries the COMMIT.
    expect(late.trips.slice(-2), late.trips.join('\n')).toEqual([
      'synchronous_commit=off',
      expect.stringMatching(/^(UPDATE driver d SET last_seen_at .* \+ )?WITH b AS .* \+ COMMIT$/),
    ]);
    expect(await kept()).toBe(4);

    const fresh = await counted((headers) =>
      t.req(kit.driver.session, {
        method: 'POST',
        url: '/driver/locations/batch',
        payload: { points: points(`after-${tripId}`, 2, ends.kept!.getTime() + 1) },
        headers,
      }),
    );
    expect(fresh.body.accepted).toBe(2);
    expect(
      fresh.trips.some((s) => /^WITH b AS/.test(s)),
      fresh.trips.join('\n'),
    ).toBe(false);
    expect(await kept()).toBe(4);
  });
});
