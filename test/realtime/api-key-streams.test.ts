import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type Session, type TestApp } from '../helpers.js';
import type { EventInput } from '../../src/platform/events.js';
import { SseClient, json } from './sse.js';
import { newTrip } from '../logistics/fixtures.js';

let t: TestApp;
let base: string;
let admin: Session;
let merchant: Session;
let otherAdmin: Session;
let otherOrgId: string;
const open: SseClient[] = [];

beforeAll(async () => {
  t = await createTestApp();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(t.app.server.address() as net.AddressInfo).port}/api/v1`;
  admin = await t.as('admin');
  merchant = await t.as('merchant');
  const other = await t.newOrganization('Stream Key Org B');
  otherOrgId = other.organizationId;
  otherAdmin = await t.login(other.logins.admin);
});
afterAll(async () => {
  for (const c of open) c.close();
  await t?.close();
});

async function createKey(s: Session, scopes: string[]) {
  const res = await t.req(s, { method: 'POST', url: '/api-keys', payload: { name: 'event reader', scopes } });
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as { id: string; key: string };
}

async function stream(path: string, key: string) {
  const c = await SseClient.open(`${base}${path}`, { authorization: `Bearer ${key}` });
  open.push(c);
  return c;
}

const record = (org: string, type: string, code: string) =>
  t.db.withSystem((tx) =>
    t.app.ctx.events.record(tx, org, { type, entityType: 'trip', entityId: code, actorUserId: null, payload: { code } } as EventInput),
  );

describe('event streams with an API key', () => {
  it("a key with the events:read scope streams its owner's events; another scope or a stream the owner may not open is refused", async () => {
    const k = await createKey(admin, ['events:read']);
    const c = await stream('/realtime/organization/stream', k.key);
    expect(c.status).toBe(200);
    expect(c.headers['content-type']).toMatch(/^text\/event-stream/);
    const ev = await record(t.demo.organizationId, 'trip.created', 'key-stream-1');
    const frame = await c.waitFor((f) => f.id === String(ev.seq));
    expect(frame.event).toBe('trip.created');
    expect(json(frame).payload).toMatchObject({ code: 'key-stream-1' });

    // a key without the scope is refused as on any other route a key may not call
    const readOnly = await createKey(admin, ['trips:read']);
    const refused = await stream('/realtime/organization/stream', readOnly.key);
    expect(refused.status).toBe(403);
    expect(refused.headers['content-type']).toContain('application/problem+json');
    expect(JSON.parse(await refused.body()).code).toBe('API_KEY_SCOPE');

    // a merchant's key streams his own events, never the organization's
    const mk = await createKey(merchant, ['events:read']);
    const mine = await stream('/realtime/me/stream', mk.key);
    expect(mine.status).toBe(200);
    const notMine = await stream('/realtime/organization/stream', mk.key);
    expect(notMine.status).toBe(403);
    expect(JSON.parse(await notMine.body()).code).toBe('FORBIDDEN');
  });

  it('a revoked key is refused with a 401 problem, and its open stream ends', async () => {
    const k = await createKey(admin, ['events:read']);
    const c = await stream('/realtime/organization/stream', k.key);
    expect(c.status).toBe(200);
    expect((await t.req(admin, { method: 'DELETE', url: `/api-keys/${k.id}` })).statusCode).toBe(204);
    await c.until(() => c.ended, 15_000, 'end of the revoked key stream');
    expect(c.ended).toBe(true);
    const again = await stream('/realtime/organization/stream', k.key);
    expect(again.status).toBe(401);
    expect(again.headers['content-type']).toContain('application/problem+json');
    expect(JSON.parse(await again.body()).code).toBe('INVALID_API_KEY');
    const forged = await stream('/realtime/me/stream', `${k.key.slice(0, -4)}AAAA`);
    expect(forged.status).toBe(401);
  });

  it('a key of another organization sees nothing of this one', async () => {
    const theirs = await createKey(otherAdmin, ['events:read']);
    const c = await stream('/realtime/organization/stream', theirs.key);
    expect(c.status).toBe(200);
    const ours = await record(t.demo.organizationId, 'trip.created', 'ours-secret');
    const their = await record(otherOrgId, 'trip.created', 'theirs-1');
    // streams deliver in order: once their event is in, ours would have been before it
    await c.waitFor((f) => f.id === String(their.seq));
    expect(c.events.some((f) => f.id === String(ours.seq) || (f.data ?? '').includes('ours-secret'))).toBe(false);
    // nor one of our trips' streams: another organization's trip is not found
    const trip = await newTrip(t, admin);
    const tripStream = await stream(`/realtime/trips/${trip.id}/stream`, theirs.key);
    expect(tripStream.status).toBe(404);
    expect(tripStream.headers['content-type']).toContain('application/problem+json');
  });
});
