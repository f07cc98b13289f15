import net from 'node:net';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, pt, sleep, waitFor, type Session, type TestApp } from '../helpers.js';
import { SseClient, json } from './sse.js';
import type { EventInput } from '../../src/platform/events.js';

let t: TestApp;
let base: string;
let orgId: string;
let admin: Session, dispatch: Session, driver: Session, customer: Session, merchant: Session;
const open: SseClient[] = [];

beforeAll(async () => {
  t = await createTestApp({ raw: { REALTIME_HEARTBEAT_MS: '300', REALTIME_MAX_BUFFER_BYTES: String(256 * 1024) } });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const addr = t.app.server.address() as net.AddressInfo;
  base = `http://127.0.0.1:${addr.port}/api/v1`;
  orgId = t.demo.organizationId;
  [admin, dispatch, driver, customer, merchant] = await Promise.all([
    t.as('admin'),
    t.as('dispatch'),
    t.as('driver'),
    t.as('customer'),
    t.as('merchant'),
  ]);
});
afterAll(async () => {
  for (const c of open) c.close();
  await t?.close();
});

/** A token for the demo driver as the service signs one: these claims, for this audience, under this key, valid from `iat` to `exp` (seconds). */
const driverToken = (claims: Record<string, unknown>, audience: string, key: Uint8Array, iat: number, exp: number) =>
  new SignJWT(claims)
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject(t.demo.users.driver)
    .setIssuer('delivery-api')
    .setAudience(audience)
    .setIssuedAt(iat)
    .setExpirationTime(exp)
    .sign(key);
const record = (org: string, input: EventInput) => t.db.withSystem((tx) => t.app.ctx.events.record(tx, org, input));
const trip = (type: string, tripId: string, extra: Partial<EventInput> = {}): EventInput => ({
  type,
  entityType: 'trip',
  entityId: tripId,
  actorUserId: t.demo.users.dispatch,
  audienceUserIds: [t.demo.users.driver],
  payload: { code: tripId },
  ...extra,
});

async function stream(path: string, s: Session | null, headers: Record<string, string> = {}) {
  const c = await SseClient.open(`${base}${path}`, s ? { authorization: `Bearer ${s.token}`, ...headers } : headers);
  open.push(c);
  return c;
}

const connections = () => t.app.services.realtime.connectionCount;
const until = (cond: () => boolean) => waitFor(cond, { message: 'connection count' });
/** An event for `userId` recorded after the ones under test: streams deliver in order, so once it is in, all before it are. */
const marker = async (c: SseClient, userId?: string) => {
  const m = await record(orgId, trip('trip.location_updated', 'marker', userId ? { audienceUserIds: [userId] } : {}));
  await c.waitFor((f) => f.id === String(m.seq));
  return m.seq;
};

describe('me stream', () => {
  it('needs a token, then streams my events as SSE frames, with heartbeats', async () => {
    const anon = await stream('/realtime/me/stream', null);
    expect(anon.status).toBe(401);
    expect(JSON.parse(await anon.body()).code).toBe('UNAUTHORIZED');

    const c = await stream('/realtime/me/stream', driver);
    expect(c.status).toBe(200);
    expect(c.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(c.headers['cache-control']).toContain('no-cache');
    const mine = await record(orgId, trip('trip.assigned', 'trip-me-1'));
    await record(orgId, trip('trip.assigned', 'trip-other', { audienceUserIds: [t.demo.users.customer] }));
    const last = await record(orgId, trip('trip.on_the_way', 'trip-me-1'));
    await c.waitFor((f) => f.id === String(last.seq + 1));
    const end = await marker(c, t.demo.users.driver);
    const types = c.events.filter((f) => Number(f.id) < end).map((f) => f.event);
    // trip.assigned, its inbox notification, then trip.on_the_way and its notification; never the customer's event.
    expect(types).toEqual(['trip.assigned', 'notification.created', 'trip.on_the_way', 'notification.created']);
    const first = c.events[0];
    expect(first.id).toBe(String(mine.seq));
    expect(json(first)).toMatchObject({
      seq: mine.seq,
      type: 'trip.assigned',
      entity_type: 'trip',
      entity_id: 'trip-me-1',
      payload: { code: 'trip-me-1' },
    });
    expect(json(first).audience_user_ids).toBeUndefined();
    expect(json(c.events[1]).payload.notification).toMatchObject({
      user_id: t.demo.users.driver,
      type: 'trip.assigned',
      title: 'Trip assigned',
    });
    const ids = c.events.map((f) => Number(f.id));
    expect([...ids].sort((a, b) => a - b)).toEqual(ids);
    await c.until(() => c.comments.includes('heartbeat'), 3_000, 'heartbeat');
    c.close();
  });

  it('answers an unknown Last-Event-ID (garbage, or beyond the newest event) with stream.reset, then the live stream', async () => {
    const before = await record(orgId, trip('trip.assigned', 'trip-reset-0'));
    await until(() => t.app.services.realtime.hub.watermark >= before.seq);
    const openBefore = connections();
    for (const [sent, how] of [
      ['abc', 'header'],
      [String(before.seq + 1_000_000), 'header'],
      [String(before.seq + 2_000_000), 'query'],
    ] as const) {
      const c =
        how === 'header'
          ? await stream('/realtime/me/stream', driver, { 'last-event-id': sent })
          : await stream(`/realtime/me/stream?last_event_id=${sent}`, driver);
      expect(c.status).toBe(200);
      const reset = await c.waitFor((f) => f.event === 'stream.reset');
      expect(json(reset)).toMatchObject({ type: 'stream.reset', reason: 'unknown_event_id', last_event_id: sent, refetch: true });
      // The client's Last-Event-ID moves to a real resume point, at or after the newest event it could know.
      expect(Number(reset.id)).toBe(json(reset).resume_from);
      expect(Number(reset.id)).toBeGreaterThanOrEqual(before.seq);
      // Live events follow on the same connection: none is dropped for being "below" the bogus id.
      const live = await record(orgId, trip('trip.on_the_way', 'trip-reset-1'));
      const got = await c.waitFor((f) => f.id === String(live.seq));
      expect(got.event).toBe('trip.on_the_way');
      expect(c.events[0].event).toBe('stream.reset');
      c.close();
      await until(() => connections() === openBefore);
    }
  });

  it('answers a Last-Event-ID older than the oldest event kept with stream.reset (expired), then the live stream', async () => {
    const openBefore = connections();
    const old = await record(orgId, trip('trip.assigned', 'trip-expired-0'));
    const kept = await record(orgId, trip('trip.assigned', 'trip-expired-1'));
    // Events up to `old` are gone (retention): a client resuming from before them cannot be replayed.
    await t.db.withSystem((tx) => tx.query('DELETE FROM event WHERE seq <= $1', [old.seq]));
    await until(() => t.app.services.realtime.hub.watermark >= kept.seq);
    const c = await stream('/realtime/me/stream', driver, { 'last-event-id': String(old.seq - 1) });
    const reset = await c.waitFor((f) => f.event === 'stream.reset');
    expect(json(reset)).toMatchObject({ reason: 'expired_event_id', last_event_id: String(old.seq - 1), refetch: true });
    expect(json(reset).resume_from).toBeGreaterThanOrEqual(kept.seq);
    const live = await record(orgId, trip('trip.on_the_way', 'trip-expired-2'));
    await c.waitFor((f) => f.id === String(live.seq));
    c.close();
    await until(() => connections() === openBefore);
  });

  it('frees the connection when the client goes away', async () => {
    // The count is the instance's: wait until it has let go of the streams earlier tests closed (a close
    // noticed while this test runs would hide its own connection on a loaded machine).
    await waitFor(() => connections() === open.filter((x) => x.status === 200 && !x.closed && !x.ended).length, {
      message: 'earlier streams released',
    });
    const before = connections();
    const c = await stream('/realtime/me/stream', customer);
    expect(c.status).toBe(200);
    await until(() => connections() === before + 1);
    c.close();
    await until(() => connections() === before);
  });

  it('closes the stream when the session is revoked', async () => {
    const s = await t.login('driver@demo.test');
    const c = await stream('/realtime/me/stream', s);
    expect(c.status).toBe(200);
    const out = await t.req(s, { method: 'POST', url: '/auth/logout' });
    expect(out.statusCode).toBeLessThan(300);
    await c.until(() => c.ended, 5_000, 'end');
    const again = await stream('/realtime/me/stream', s);
    expect(again.status).toBe(401);
  });
});

describe('authorization at opening', () => {
  it('keeps a stream open past the expiry of the access token that opened it, while its session lives', async () => {
    const now = Math.floor(Date.now() / 1000);
    const sid = JSON.parse(Buffer.from(driver.token.split('.')[1]!, 'base64url').toString()).sid as string;
    const shortLived = await driverToken(
      { org: orgId, role: 'repartidor', kind: 'repartidor', sid, typ: 'access' },
      'delivery-api',
      t.config.keys.accessToken,
      now,
      now + 2,
    );
    const me = () => t.req(null, { method: 'GET', url: '/me', headers: { authorization: `Bearer ${shortLived}` } });
    expect((await me()).statusCode).toBe(200);
    const c = await stream('/realtime/me/stream', null, { authorization: `Bearer ${shortLived}` });
    expect(c.status).toBe(200);
    await waitFor(async () => (await me()).statusCode === 401, { timeout: 10_000, interval: 200, message: 'the access token expired' });
    const after = await record(orgId, trip('trip.location_updated', 'after-expiry', { audienceUserIds: [t.demo.users.driver] }));
    await c.waitFor((f) => f.id === String(after.seq));
    expect(c.ended).toBe(false);
  });
});

describe('resume', () => {
  it('replays what was missed after a dropped connection, then goes live, with nothing lost or repeated', async () => {
    const c1 = await stream('/realtime/me/stream', customer);
    const a = await record(orgId, trip('trip.location_updated', 'trip-r', { audienceUserIds: [t.demo.users.customer] }));
    await c1.waitFor((f) => f.id === String(a.seq));
    c1.close();
    const missed = [];
    for (let i = 0; i < 5; i++)
      missed.push(
        await record(orgId, trip('trip.location_updated', 'trip-r', { audienceUserIds: [t.demo.users.customer], payload: { i } })),
      );
    await record(orgId, trip('trip.location_updated', 'trip-x', { audienceUserIds: [t.demo.users.driver] }));

    const c2 = await stream('/realtime/me/stream', customer, { 'last-event-id': String(a.seq) });
    await c2.waitForEvents(5);
    const live = await record(
      orgId,
      trip('trip.location_updated', 'trip-r', { audienceUserIds: [t.demo.users.customer], payload: { live: true } }),
    );
    await c2.waitFor((f) => f.id === String(live.seq));
    expect(c2.events.map((f) => Number(f.id))).toEqual([...missed.map((e) => e.seq), live.seq]);
    c2.close();

    // The same through the query parameter.
    const c3 = await stream(`/realtime/me/stream?last_event_id=${missed[2].seq}`, customer);
    await c3.waitForEvents(3);
    expect(c3.events.map((f) => Number(f.id))).toEqual([missed[3].seq, missed[4].seq, live.seq]);
    c3.close();
  });

  it('loses nothing and repeats nothing when events are recorded while the replay runs', async () => {
    const start = await record(orgId, trip('trip.location_updated', 'trip-c', { audienceUserIds: [t.demo.users.merchant] }));
    for (let i = 0; i < 30; i++)
      await record(orgId, trip('trip.location_updated', 'trip-c', { audienceUserIds: [t.demo.users.merchant], payload: { i } }));
    const writer = (async () => {
      for (let i = 0; i < 30; i++)
        await record(orgId, trip('trip.location_updated', 'trip-c', { audienceUserIds: [t.demo.users.merchant], payload: { w: i } }));
    })();
    const c = await stream('/realtime/me/stream', merchant, { 'last-event-id': String(start.seq) });
    await writer;
    const { rows } = await t.db.withSystem((tx) =>
      tx.query<{ seq: number }>(
        `SELECT seq FROM event WHERE organization_id = $1 AND seq > $2 AND $3 = ANY(audience_user_ids) ORDER BY seq`,
        [orgId, start.seq, t.demo.users.merchant],
      ),
    );
    expect(rows).toHaveLength(60);
    await c.waitForEvents(60, 10_000);
    const end = await marker(c, t.demo.users.merchant);
    expect(c.events.map((f) => Number(f.id)).filter((seq) => seq < end)).toEqual(rows.map((r) => r.seq));
    c.close();
  });
});

describe('organization, trip and territory streams', () => {
  it('organization stream: dispatch and administrators only, own organization only, no personal notifications', async () => {
    expect((await stream('/realtime/organization/stream', driver)).status).toBe(403);
    const other = await t.newOrganization('Stream Other');
    const c = await stream('/realtime/organization/stream', dispatch);
    const a = await stream('/realtime/organization/stream', admin);
    expect([c.status, a.status]).toEqual([200, 200]);
    await record(other.organizationId, trip('trip.created', 'foreign-trip', { audienceUserIds: [], actorUserId: null }));
    const mine = await record(orgId, trip('trip.created', 'org-trip', { audienceUserIds: [t.demo.users.customer] }));
    await c.waitFor((f) => f.id === String(mine.seq));
    await a.waitFor((f) => f.id === String(mine.seq));
    // A later event of the other organization, then one of ours: once ours is in, the foreign one was withheld.
    await record(other.organizationId, trip('trip.created', 'foreign-trip-2', { audienceUserIds: [], actorUserId: null }));
    const end = await marker(c);
    await a.waitFor((f) => f.id === String(end));
    for (const s of [c, a]) {
      expect(s.events.filter((f) => Number(f.id) < end).map((f) => f.event)).toEqual(['trip.created']);
      expect(json(s.events[0]).entity_id).toBe('org-trip');
      s.close();
    }
  });

  it("trip stream: the trip's participants (driver, customer, merchant owner) and staff get that trip's events only; others 404", async () => {
    const demo = (
      await t.db.withSystem((tx) =>
        tx.query(
          'SELECT (SELECT id FROM merchant WHERE owner_user_id = $1) AS merchant_id, (SELECT id FROM driver WHERE user_id = $2) AS driver_id',
          [t.demo.users.merchant, t.demo.users.driver],
        ),
      )
    ).rows[0];
    const created = await t.req(dispatch, {
      method: 'POST',
      url: '/trips',
      payload: {
        pickup_location: pt(-68.13, -16.5),
        pickup_address: 'A 1',
        dropoff_location: pt(-68.12, -16.51),
        dropoff_address: 'B 2',
        merchant_id: demo.merchant_id,
        customer_user_id: t.demo.users.customer,
      },
    });
    expect(created.statusCode, created.body).toBe(201);
    const tripId = created.json().id as string;
    expect(
      (await t.req(dispatch, { method: 'POST', url: `/trips/${tripId}/assign`, payload: { driver_id: demo.driver_id } })).statusCode,
    ).toBe(200);

    const stranger = await t.db.withSystem((tx) =>
      t.app.services.identity.insertUser(tx, orgId, {
        email: 'other-driver-stream@demo.test',
        password: 'Demo-pass-2026',
        display_name: 'other',
        role: 'repartidor',
      }),
    );
    expect(stranger.id).toBeTruthy();
    expect((await stream(`/realtime/trips/${tripId}/stream`, await t.login('other-driver-stream@demo.test'))).status).toBe(404);
    expect((await stream('/realtime/trips/no-such-trip/stream', driver)).status).toBe(404);

    const watchers = [driver, customer, merchant, dispatch];
    const streams = [];
    for (const s of watchers) {
      const c = await stream(`/realtime/trips/${tripId}/stream`, s);
      expect(c.status).toBe(200);
      streams.push(c);
    }
    await record(
      orgId,
      trip('trip.accepted', 'another-trip', { audienceUserIds: [t.demo.users.driver, t.demo.users.customer, t.demo.users.merchant] }),
    );
    // A real transition of the trip: the driver accepts it (logistics records trip.accepted in that transaction).
    expect((await t.req(driver, { method: 'POST', url: `/driver/trips/${tripId}/accept` })).statusCode).toBe(200);
    const accepted = (
      await t.db.withSystem((tx) => tx.query("SELECT seq FROM event WHERE entity_id = $1 AND type = 'trip.accepted'", [tripId]))
    ).rows[0];
    for (const c of streams) {
      await c.waitFor((f) => f.id === String(accepted.seq));
      expect(c.events.map((f) => json(f).entity_id)).toEqual(c.events.map(() => tripId));
      expect(c.events.map((f) => f.event)).toContain('trip.accepted');
      c.close();
    }
  });

  it('territory stream: sub-administrators, events of their territories only', async () => {
    expect((await stream('/realtime/territories/stream', admin)).status).toBe(403);
    // Real territories and a sub-administrator confined to the first.
    const square = (lon: number) => ({
      type: 'Polygon',
      coordinates: [
        [
          [lon, -10],
          [lon + 0.1, -10],
          [lon + 0.1, -9.9],
          [lon, -9.9],
          [lon, -10],
        ],
      ],
    });
    const terrA = (await t.req(admin, { method: 'POST', url: '/territories', payload: { name: 'stream A', geometry: square(-60) } })).json()
      .id;
    const terrB = (await t.req(admin, { method: 'POST', url: '/territories', payload: { name: 'stream B', geometry: square(-59) } })).json()
      .id;
    const created = await t.req(admin, {
      method: 'POST',
      url: '/admin/subadmins',
      payload: { email: 'sub-stream@demo.test', password: 'Demo-pass-2026', display_name: 'sub', territory_ids: [terrA] },
    });
    expect(created.statusCode, created.body).toBe(201);
    const s = await t.login('sub-stream@demo.test');
    const c = await stream('/realtime/territories/stream', s);
    expect(c.status).toBe(200);
    await record(orgId, trip('trip.created', 'tb', { territoryId: terrB }));
    const e = await record(orgId, trip('trip.created', 'ta', { territoryId: terrA }));
    await c.waitFor((f) => f.id === String(e.seq));
    expect(c.events.map((f) => json(f).entity_id)).toEqual(['ta']);
    c.close();
  });
});

describe('stream tokens', () => {
  it('opens a stream with ?stream_token= instead of the Authorization header', async () => {
    const res = await t.req(driver, { method: 'POST', url: '/realtime/tokens', payload: {} });
    expect(res.statusCode).toBe(201);
    const { stream_token, expires_in, token_type } = res.json();
    expect([expires_in, token_type]).toEqual([60, 'stream']);
    const c = await stream(`/realtime/me/stream?stream_token=${stream_token}`, null);
    expect(c.status).toBe(200);
    const e = await record(orgId, trip('trip.assigned', 'trip-token'));
    await c.waitFor((f) => f.id === String(e.seq));
    c.close();
  });

  it('is single purpose: not an access token, and an access token is not a stream token', async () => {
    const { stream_token } = (await t.req(driver, { method: 'POST', url: '/realtime/tokens' })).json();
    const me = await t.req(null, { method: 'GET', url: '/me', headers: { authorization: `Bearer ${stream_token}` } });
    expect(me.statusCode).toBe(401);
    const c = await stream(`/realtime/me/stream?stream_token=${driver.token}`, null);
    expect(c.status).toBe(401);
    expect(JSON.parse(await c.body()).code).toBe('INVALID_STREAM_TOKEN');
  });

  it("is signed with its own key: claims of either kind signed with the other purpose's key are refused", async () => {
    const now = Math.floor(Date.now() / 1000);
    const claims = {
      org: orgId,
      role: 'repartidor',
      kind: 'repartidor',
      sid: JSON.parse(Buffer.from(driver.token.split('.')[1]!, 'base64url').toString()).sid as string,
    };
    // An access token in every field, but signed with the stream key: not an access token.
    const accessShaped = await driverToken({ ...claims, typ: 'access' }, 'delivery-api', t.config.keys.streamToken, now, now + 60);
    expect((await t.req(null, { method: 'GET', url: '/me', headers: { authorization: `Bearer ${accessShaped}` } })).statusCode).toBe(401);
    // A stream token in every field, but signed with the access key: not a stream token.
    const streamShaped = await driverToken(
      { ...claims, typ: 'stream', scope: {} },
      'delivery-api:stream',
      t.config.keys.accessToken,
      now,
      now + 60,
    );
    expect((await stream(`/realtime/me/stream?stream_token=${streamShaped}`, null)).status).toBe(401);
    // The same claims under the right keys are accepted (so the refusals above are the keys').
    const right = await driverToken(
      { ...claims, typ: 'stream', scope: {} },
      'delivery-api:stream',
      t.config.keys.streamToken,
      now,
      now + 60,
    );
    expect((await stream(`/realtime/me/stream?stream_token=${right}`, null)).status).toBe(200);
    expect(Buffer.from(t.config.keys.accessToken).equals(Buffer.from(t.config.keys.streamToken))).toBe(false);
  });

  it('honours its scope and its expiry', async () => {
    const scoped = (await t.req(admin, { method: 'POST', url: '/realtime/tokens', payload: { stream: 'me' } })).json().stream_token;
    expect((await stream(`/realtime/organization/stream?stream_token=${scoped}`, null)).status).toBe(403);
    expect((await stream(`/realtime/me/stream?stream_token=${scoped}`, null)).status).toBe(200);
    const bad = await t.req(admin, { method: 'POST', url: '/realtime/tokens', payload: { stream: 'everything' } });
    expect(bad.statusCode).toBe(400);
    const expired = await driverToken(
      { org: orgId, role: 'repartidor', kind: 'repartidor', sid: 'x', typ: 'stream', scope: {} },
      'delivery-api:stream',
      t.config.keys.streamToken,
      Math.floor(Date.now() / 1000) - 120,
      Math.floor(Date.now() / 1000) - 60,
    );
    expect((await stream(`/realtime/me/stream?stream_token=${expired}`, null)).status).toBe(401);
  });
});

describe('slow consumers', () => {
  it('drops a client that does not read instead of buffering without bound', async () => {
    const reader = await stream('/realtime/organization/stream', dispatch);
    const before = connections();
    const port = (t.app.server.address() as net.AddressInfo).port;
    const sock = net.connect(port, '127.0.0.1');
    await new Promise((r) => sock.once('connect', r));
    sock.write(
      `GET /api/v1/realtime/organization/stream HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${admin.token}\r\nAccept: text/event-stream\r\n\r\n`,
    );
    await until(() => connections() === before + 1);
    sock.pause(); // never read again
    const big = 'x'.repeat(64 * 1024);
    // One event at a time: a reading client keeps up, the paused one fills its socket and is dropped.
    for (let i = 0; i < 500 && connections() > before; i++) {
      const ev = await record(orgId, { type: 'trip.location_updated', entityType: 'trip', entityId: 'slow', payload: { big } });
      await reader.waitFor((f) => f.id === String(ev.seq));
    }
    await until(() => connections() === before);
    sock.destroy();
    // The client that reads was not affected.
    const last = await record(orgId, { type: 'trip.completed', entityType: 'trip', entityId: 'slow' });
    await reader.waitFor((f) => f.id === String(last.seq), 30_000);
    expect(reader.ended).toBe(false);
    reader.close();
  });
});

describe('commit order on PostgreSQL', () => {
  it.skipIf(!process.env.TEST_DATABASE_URL)(
    'a later sequence that commits first waits for the earlier one, so Last-Event-ID stays a safe resume point',
    async () => {
      const c = await stream('/realtime/me/stream', customer);
      let release!: () => void;
      const held = new Promise<void>((r) => (release = r));
      let firstSeq = 0;
      // Transaction A takes the lower sequence but commits last.
      const a = t.db.withSystem(async (tx) => {
        const ev = await t.app.ctx.events.record(
          tx,
          orgId,
          trip('trip.location_updated', 'order-a', { audienceUserIds: [t.demo.users.customer] }),
        );
        firstSeq = ev.seq;
        await held;
      });
      await until(() => firstSeq > 0);
      const b = await record(orgId, trip('trip.location_updated', 'order-b', { audienceUserIds: [t.demo.users.customer] }));
      expect(b.seq).toBeGreaterThan(firstSeq);
      // The claim is an absence while A stays open: every later event is held back too, and nothing the hub
      // shows marks B as received and held, so a short wait is the only way to give a wrong release its chance.
      await sleep(100);
      expect(c.events.map((f) => Number(f.id))).not.toContain(b.seq);
      release();
      await a;
      await c.waitFor((f) => f.id === String(b.seq));
      expect(c.events.map((f) => Number(f.id))).toEqual([firstSeq, b.seq]);
      c.close();
    },
  );
});

describe('two instances on one PostgreSQL', () => {
  it.skipIf(!process.env.TEST_DATABASE_URL)('an event committed through one instance reaches a stream on the other', async () => {
    const { createPostgresDatabase } = await import('../../src/platform/db/index.js');
    const { buildApp } = await import('../../src/app.js');
    const db2 = createPostgresDatabase(t.url!, { max: 5 });
    const app2 = await buildApp({ config: t.config, db: db2 });
    await app2.listen({ port: 0, host: '127.0.0.1' });
    try {
      const port2 = (app2.server.address() as net.AddressInfo).port;
      const c = await SseClient.open(`http://127.0.0.1:${port2}/api/v1/realtime/me/stream`, { authorization: `Bearer ${customer.token}` });
      open.push(c);
      expect(c.status).toBe(200);
      // Through the API of instance 1: a test notification to myself.
      const res = await t.req(customer, { method: 'POST', url: '/notifications/test', payload: { title: 'across instances' } });
      expect(res.statusCode).toBe(201);
      const f = await c.waitFor((x) => x.event === 'notification.created');
      expect(json(f).payload.notification).toMatchObject({ id: res.json().id, title: 'across instances' });
      c.close();
    } finally {
      await app2.close();
      await db2.close();
    }
  });
});
