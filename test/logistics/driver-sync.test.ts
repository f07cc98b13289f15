import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type Session, type TestApp } from '../helpers.js';
import { driverDb, newDriver, tripDb, tripIn, type TestDriver } from './fixtures.js';
import { JPEG } from '../storage/fixtures.js';

/**
 * The driver's trip actions taken offline and pushed through POST /mobile/sync/push: each applied once however often
 * the app retries it, a trip that moved on meanwhile reported as a conflict, a wrong PIN counted as on the route.
 */
let t: TestApp;
let admin: Session;

beforeAll(async () => {
  t = await createTestApp();
  admin = await t.as('admin');
}, 60_000);
afterAll(() => t?.close());

type Op = { client_operation_id: string; type: string; payload: Record<string, unknown> };
async function push(d: TestDriver, ...operations: Op[]) {
  const r = await t.req(d.session, { method: 'POST', url: '/mobile/sync/push', payload: { operations } });
  expect(r.statusCode, r.body).toBe(200);
  return r.json().results as {
    client_operation_id: string;
    status: string;
    replayed: boolean;
    code?: string;
    server?: Record<string, unknown>;
    data?: Record<string, unknown>;
  }[];
}
const proofs = async (tripId: string) =>
  (await t.db.withSystem((tx) => tx.query('SELECT * FROM trip_proof WHERE trip_id = $1 ORDER BY stage', [tripId]))).rows;

async function photo(d: TestDriver, tripId: string): Promise<string> {
  const slot = await t.req(d.session, {
    method: 'POST',
    url: '/storage/evidence/uploads',
    payload: {
      trip_id: tripId,
      stage: 'delivery',
      proof_type: 'photo',
      mime_type: 'image/jpeg',
      filename: 'door.jpg',
      size_bytes: JPEG.length,
    },
  });
  expect(slot.statusCode, slot.body).toBe(201);
  const put = await t.req(d.session, {
    method: 'PUT',
    url: `/storage/uploads/${slot.json().upload_id}`,
    payload: JPEG,
    headers: { 'content-type': 'image/jpeg', 'x-upload-token': slot.json().upload_token },
  });
  expect(put.statusCode, put.body).toBe(201);
  return put.json().id;
}

describe('driver trip operations over sync push', () => {
  it('accept, pickup PIN, start, delivery PIN with a photo: a whole delivery queued offline is applied once, however often it is pushed', async () => {
    const d = await newDriver(t, { lon: -68.13, lat: -16.5 }, { admin });
    const tripId = await tripIn(t, admin, d, 'assigned');
    const row = await tripDb(t, tripId);
    const first: Op[] = [
      { client_operation_id: `a-${tripId}`, type: 'trip.accept', payload: { trip_id: tripId } },
      { client_operation_id: `p-${tripId}`, type: 'trip.verify_pickup', payload: { trip_id: tripId, pin: row.pickup_pin } },
      { client_operation_id: `s-${tripId}`, type: 'trip.start_delivery', payload: { trip_id: tripId } },
    ];
    expect((await push(d, ...first)).map((r) => r.status)).toEqual(['applied', 'applied', 'applied']);
    const key = await photo(d, tripId);
    const deliver: Op = {
      client_operation_id: `d-${tripId}`,
      type: 'trip.verify_delivery',
      payload: { trip_id: tripId, pin: row.delivery_pin, evidence: { type: 'photo', storage_key: key } },
    };
    const [done] = await push(d, deliver);
    expect(done).toMatchObject({ status: 'applied', replayed: false, data: { status: 'completed' } });
    // The app lost the answer and pushes the whole queue again: every result replayed, nothing applied twice.
    const again = await push(d, ...first, deliver);
    expect(again.map((r) => [r.status, r.replayed])).toEqual([
      ['applied', true],
      ['applied', true],
      ['applied', true],
      ['applied', true],
    ]);
    expect((await tripDb(t, tripId)).status).toBe('completed');
    const stored = await proofs(tripId);
    expect(stored.map((p) => [p.stage, p.storage_key])).toEqual([
      ['delivery', key],
      ['pickup', null],
    ]);
    expect((await driverDb(t, d.id)).active_trips).toBe(0);
  });

  it('a trip cancelled while the driver was offline: the queued delivery is a conflict in words, nothing applied', async () => {
    const d = await newDriver(t, { lon: -68.13, lat: -16.5 }, { admin });
    const tripId = await tripIn(t, admin, d, 'in_transit');
    const row = await tripDb(t, tripId);
    const cancel = await t.req(admin, {
      method: 'POST',
      url: `/trips/${tripId}/status`,
      payload: { status: 'cancelled', reason: 'customer called' },
    });
    expect(cancel.statusCode, cancel.body).toBe(200);
    const [r] = await push(d, {
      client_operation_id: `d-${tripId}`,
      type: 'trip.verify_delivery',
      payload: { trip_id: tripId, pin: row.delivery_pin },
    });
    expect(r).toMatchObject({ status: 'conflict', code: 'INVALID_TRANSITION' });
    expect((await tripDb(t, tripId)).status).toBe('cancelled');
    expect((await proofs(tripId)).map((p) => p.stage)).toEqual(['pickup']);
  });

  it('wrong PINs pushed offline count towards the lock like PINs sent online; a retried wrong PIN counts once', async () => {
    const d = await newDriver(t, { lon: -68.13, lat: -16.5 }, { admin });
    const tripId = await tripIn(t, admin, d, 'in_transit');
    const row = await tripDb(t, tripId);
    const wrong = row.delivery_pin === '000000' ? '111111' : '000000';
    const guess = (i: number): Op => ({
      client_operation_id: `g${i}-${tripId}`,
      type: 'trip.verify_delivery',
      payload: { trip_id: tripId, pin: wrong },
    });
    const [one] = await push(d, guess(1));
    expect(one).toMatchObject({ status: 'rejected', code: 'INVALID_PIN', server: { attempts_remaining: 4 } });
    // The same operation again (the app retrying): the stored answer, not a second attempt.
    const [same] = await push(d, guess(1));
    expect(same).toMatchObject({ status: 'rejected', replayed: true, server: { attempts_remaining: 4 } });
    const rest = await push(d, guess(2), guess(3), guess(4), guess(5));
    expect(rest.map((r) => r.server?.attempts_remaining)).toEqual([3, 2, 1, 0]);
    expect(rest.at(-1)!.code).toBe('PIN_LOCKED');
    // Locked: even the right PIN is refused now.
    const [right] = await push(d, {
      client_operation_id: `r-${tripId}`,
      type: 'trip.verify_delivery',
      payload: { trip_id: tripId, pin: row.delivery_pin },
    });
    expect(right).toMatchObject({ status: 'rejected', code: 'PIN_LOCKED' });
    expect((await tripDb(t, tripId)).status).toBe('in_transit');
  });

  it('reject with a reason, fail with a reason and the return with the pickup PIN, offline', async () => {
    const d = await newDriver(t, { lon: -68.13, lat: -16.5 }, { admin, capacity: 2 });
    const offered = await tripIn(t, admin, d, 'assigned');
    const [rej] = await push(d, {
      client_operation_id: `rej-${offered}`,
      type: 'trip.reject',
      payload: { trip_id: offered, reason: 'flat tyre' },
    });
    expect(rej).toMatchObject({ status: 'applied', data: { status: 'pending' } });
    expect((await tripDb(t, offered)).status_reason).toBe('flat tyre');

    const tripId = await tripIn(t, admin, d, 'in_transit');
    const row = await tripDb(t, tripId);
    const results = await push(
      d,
      { client_operation_id: `f-${tripId}`, type: 'trip.fail_delivery', payload: { trip_id: tripId, reason: 'recipient_absent' } },
      { client_operation_id: `ret-${tripId}`, type: 'trip.return', payload: { trip_id: tripId, pin: row.pickup_pin } },
    );
    expect(results.map((r) => r.status)).toEqual(['applied', 'applied']);
    expect((await tripDb(t, tripId)).status).toBe('returned');
    // Bad input: a payload without its PIN is rejected and nothing is written.
    const other = await tripIn(t, admin, d, 'accepted');
    const [bad] = await push(d, { client_operation_id: `bad-${other}`, type: 'trip.verify_pickup', payload: { trip_id: other } });
    expect(bad).toMatchObject({ status: 'rejected', code: 'VALIDATION_FAILED' });
    expect((await tripDb(t, other)).status).toBe('accepted');
  });
});
