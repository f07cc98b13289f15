import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type Session, type TestApp } from '../helpers.js';

let t: TestApp;
let admin: Session, dispatch: Session, driver: Session, customer: Session, merchant: Session;

beforeAll(async () => {
  t = await createTestApp();
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
const push = (s: Session, operations: unknown[]) => t.req(s, { method: 'POST', url: '/mobile/sync/push', payload: { operations } });
const testNotification = async (s: Session) => (await t.req(s, { method: 'POST', url: '/notifications/test' })).json();
const device = async (s: Session) =>
  (
    await t.req(s, {
      method: 'POST',
      url: '/mobile/devices',
      payload: { platform: 'ios', push_token: `tok-${Math.random().toString(36).slice(2)}-${Date.now()}` },
    })
  ).json();

describe('mobile contract', () => {
  it('bootstrap gives each app its role, package, builds, features, endpoints and brand', async () => {
    await t.req(admin, { method: 'PATCH', url: `/organizations/${t.demo.organizationId}/branding`, payload: { primary_color: '#112233' } });
    const d = (await t.req(driver, { method: 'GET', url: '/mobile/bootstrap' })).json();
    expect(d).toMatchObject({
      app_role: 'repartidor',
      user_id: t.demo.users.driver,
      app: { package_name: 'com.deliveryplatform.repartidor' },
      features: { gps_batch: true, offline_sync: true, platform_payments: false },
      endpoints: {
        locations_batch: '/api/v1/driver/locations/batch',
        sync_pull: '/api/v1/mobile/sync/pull',
        my_stream: '/api/v1/realtime/me/stream',
      },
      brand_assets: { name: 'Demo Logistics', primary_color: '#112233', assets: { manifest: '/api/v1/mobile/brand-assets' } },
    });
    expect(d.app.builds.map((b: any) => b.platform).sort()).toEqual(['android', 'ios']);
    expect(d.endpoints.organization_stream).toBeUndefined();
    const m = (await t.req(merchant, { method: 'GET', url: '/mobile/bootstrap' })).json();
    expect(m).toMatchObject({ app_role: 'comercio', app: { package_name: 'com.deliveryplatform.comercio' }, features: { catalog: true } });
    const c = (await t.req(customer, { method: 'GET', url: '/mobile/bootstrap' })).json();
    expect(c.app_role).toBe('delivery');
    const a = (await t.req(dispatch, { method: 'GET', url: '/mobile/bootstrap' })).json();
    expect(a).toMatchObject({
      app_role: 'administrator',
      principal: 'dispatch',
      endpoints: { organization_stream: '/api/v1/realtime/organization/stream' },
    });
    expect((await t.req(null, { method: 'GET', url: '/mobile/bootstrap' })).statusCode).toBe(401);
  });

  it('contract, brand assets and builds', async () => {
    const contract = (await t.req(customer, { method: 'GET', url: '/mobile/contract' })).json();
    expect(contract).toMatchObject({
      api_base: '/api/v1',
      release: '0.7.2',
      sync: {
        entities: expect.arrayContaining(['notifications', 'devices']),
        operations: expect.arrayContaining(['notification.read', 'device.heartbeat']),
      },
    });
    // The driver app's trip actions, taken offline (the failed delivery among them).
    expect([...contract.sync.operations].sort()).toEqual([
      'device.heartbeat',
      'notification.read',
      'trip.accept',
      'trip.fail_delivery',
      'trip.reject',
      'trip.return',
      'trip.start_delivery',
      'trip.verify_delivery',
      'trip.verify_pickup',
    ]);
    expect(contract.realtime.event_types).toEqual(
      expect.arrayContaining(['trip.delivery_verified', 'trip.delivery_failed', 'trip.returned']),
    );
    const brand = (await t.req(customer, { method: 'GET', url: '/mobile/brand-assets' })).json();
    expect(brand).toMatchObject({ organization_id: t.demo.organizationId, slug: 'demo' });
    const builds = (await t.req(driver, { method: 'GET', url: '/app-builds?app_role=repartidor' })).json();
    expect(builds.data.length).toBeGreaterThan(0);
    expect(builds.data.every((b: any) => b.app_role === 'repartidor' && b.package_name === 'com.deliveryplatform.repartidor')).toBe(true);
    expect((await sql('SELECT count(*)::int AS n FROM app_build WHERE organization_id = $1', [t.demo.organizationId]))[0].n).toBe(8);
    expect((await t.req(driver, { method: 'GET', url: '/app-builds?app_role=boss' })).statusCode).toBe(400);
    // Another organization without published builds gets the defaults.
    const other = await t.newOrganization('Builds Other');
    const o = await t.login(other.logins.driver);
    const ob = (await t.req(o, { method: 'GET', url: '/app-builds' })).json();
    expect(ob.data.every((b: any) => b.id.startsWith('default-'))).toBe(true);
  });

  it('apps and mobile health are for administration', async () => {
    const dev = await device(driver);
    await t.req(driver, {
      method: 'POST',
      url: '/mobile/heartbeat',
      payload: { device_id: dev.id, app_version: '0.7.2', battery_level: 70, network: 'wifi' },
    });
    expect((await t.req(driver, { method: 'GET', url: '/mobile/apps' })).statusCode).toBe(403);
    expect((await t.req(dispatch, { method: 'GET', url: '/admin/mobile-health' })).statusCode).toBe(403);
    const apps = (await t.req(admin, { method: 'GET', url: '/mobile/apps' })).json();
    expect(apps.data.find((a: any) => a.app_role === 'repartidor')).toMatchObject({ devices_registered: 1, devices_seen_last_hour: 1 });
    const h = (await t.req(admin, { method: 'GET', url: '/admin/mobile-health' })).json();
    expect(h.devices.seen_last_hour).toEqual([{ app_role: 'repartidor', platform: 'ios', app_version: '0.7.2', devices: 1 }]);
    // The storage section is contributed by the storage module (test/integration/mobile-sync.test.ts checks its figures).
    expect(h).toMatchObject({
      storage: { status: 'ok' },
      push: { gateway: 'not_configured' },
      integrations: { push_gateway: { state: 'not_configured' } },
    });
    expect(h.builds).toHaveLength(4);
    expect(h.instance.rss_bytes).toBeGreaterThan(0);
    // The connection pool as this answer saw it (its own connection in use); the embedded database has none.
    if (t.url) expect(h.instance.database_pool).toMatchObject({ max: expect.any(Number), in_use: expect.any(Number), waiting: 0 });
    else expect(h.instance.database_pool).toBeNull();
  });
});

describe('sync pull', () => {
  it('returns what changed since the cursor, with tombstones, and the next cursor', async () => {
    const first = (await t.req(customer, { method: 'GET', url: '/mobile/sync/pull' })).json();
    expect(first.since).toBeNull();
    // A customer also syncs the commerce entities (test/integration/mobile-sync.test.ts).
    expect(Object.keys(first.entities).sort()).toEqual(['addresses', 'devices', 'notifications', 'orders']);
    const since = first.cursor;
    const n = await testNotification(customer);
    const dev = await device(customer);
    const gone = await device(customer);
    expect((await t.req(customer, { method: 'DELETE', url: `/mobile/devices/${gone.id}` })).statusCode).toBe(204);
    await testNotification(driver); // someone else's change
    const next = (await t.req(customer, { method: 'GET', url: `/mobile/sync/pull?cursor=${since}` })).json();
    expect(next.entities.notifications.changed.map((x: any) => x.id)).toEqual([n.id]);
    expect(next.entities.devices.changed.map((x: any) => x.id)).toEqual([dev.id]);
    expect(next.entities.devices.deleted.map((x: any) => x.id)).toEqual([gone.id]);
    expect(next.cursor).not.toBe(since);
    expect(next.has_more).toBe(false);
    // Reading a notification makes it change again.
    await t.req(customer, { method: 'POST', url: `/notifications/${n.id}/read` });
    const after = (await t.req(customer, { method: 'GET', url: `/mobile/sync/pull?cursor=${next.cursor}` })).json();
    expect(after.entities.notifications.changed).toEqual([expect.objectContaining({ id: n.id, read: true })]);
    expect(after.entities.devices).toEqual({ changed: [], deleted: [] });
  });

  it('refuses a since that is not an ISO timestamp, and a cursor it did not issue', async () => {
    expect((await t.req(customer, { method: 'GET', url: '/mobile/sync/pull?since=yesterday' })).statusCode).toBe(400);
    const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
    const forged = [
      b64({ a: '10:5:' }),
      b64({ a: 'zzzzzzzzzzzzz~1~' }),
      b64({ a: 'a~5~9' }),
      b64({ a: null, b: 'a~5~', p: { devices: ['-1', 'x'] } }),
      b64({ a: 'a~5~', z: 1 }),
    ];
    for (const cursor of [...forged, 'bm90IGpzb24']) {
      const res = await t.req(customer, { method: 'GET', url: `/mobile/sync/pull?cursor=${cursor}` });
      expect(res.statusCode).toBe(400);
      expect(res.headers['content-type']).toMatch(/problem\+json/);
      expect(res.json().code).toBe('INVALID_CURSOR');
    }
    // The deprecated since (app versions before the cursor): every current record and every tombstone (the device
    // deleted by the previous test), a superset of the changes since then, and a cursor. A first sync has no tombstones.
    const legacy = (await t.req(customer, { method: 'GET', url: '/mobile/sync/pull?since=2026-01-01T00:00:00Z' })).json();
    expect(legacy).toMatchObject({ since: '2026-01-01T00:00:00.000Z', cursor: expect.any(String), has_more: false });
    const first = (await t.req(customer, { method: 'GET', url: '/mobile/sync/pull' })).json();
    expect(legacy.entities.devices.deleted).toHaveLength(1);
    expect(first.entities.devices.deleted).toEqual([]);
    expect(legacy.entities.devices.changed).toEqual(first.entities.devices.changed);
    // Its cursor goes on like any other: nothing new since.
    const next = (await t.req(customer, { method: 'GET', url: `/mobile/sync/pull?cursor=${legacy.cursor}` })).json();
    for (const changes of Object.values(next.entities)) expect(changes).toEqual({ changed: [], deleted: [] });
    expect((await t.req(customer, { method: 'GET', url: '/mobile/sync/pull?since=2026-01-01T00:00:00Z&x=1' })).statusCode).toBe(400);
  });
});

describe('sync push', () => {
  it('refuses a batch whose operation lacks client_operation_id, applying nothing', async () => {
    const n = await testNotification(merchant);
    const res = await push(merchant, [
      { client_operation_id: 'op-ok-1', type: 'notification.read', payload: { notification_id: n.id } },
      { type: 'notification.read', payload: { notification_id: n.id } },
    ]);
    expect(res.statusCode).toBe(400);
    expect((await sql('SELECT read_at FROM notification WHERE id = $1', [n.id]))[0].read_at).toBeNull();
    expect(await sql('SELECT 1 FROM sync_operation WHERE client_operation_id = $1', ['op-ok-1'])).toHaveLength(0);
  });

  it('applies each operation separately and is idempotent on client_operation_id', async () => {
    const n = await testNotification(merchant);
    const ops = [
      { client_operation_id: 'm-read-1', type: 'notification.read', payload: { notification_id: n.id } },
      { client_operation_id: 'm-unknown-1', type: 'trip.teleport', payload: {} },
      { client_operation_id: 'm-bad-1', type: 'notification.read', payload: { id: n.id } },
      { client_operation_id: 'm-missing-1', type: 'notification.read', payload: { notification_id: 'no-such-notification' } },
    ];
    const r1 = (await push(merchant, ops)).json().results;
    expect(r1.map((r: any) => [r.client_operation_id, r.status, r.code ?? null, r.replayed])).toEqual([
      ['m-read-1', 'applied', null, false],
      ['m-unknown-1', 'rejected', 'UNKNOWN_OPERATION', false],
      ['m-bad-1', 'rejected', 'VALIDATION_FAILED', false],
      ['m-missing-1', 'rejected', 'NOT_FOUND', false],
    ]);
    const readAt = (await sql('SELECT read_at FROM notification WHERE id = $1', [n.id]))[0].read_at;
    expect(readAt).not.toBeNull();
    const r2 = (await push(merchant, [ops[0]])).json().results[0];
    expect(r2).toMatchObject({ status: 'applied', replayed: true, data: { id: n.id, read: true } });
    expect(r2.data.read_at).toBe(r1[0].data.read_at);
    expect(
      await sql('SELECT status FROM sync_operation WHERE user_id = $1 AND client_operation_id = $2', [t.demo.users.merchant, 'm-read-1']),
    ).toEqual([{ status: 'applied' }]);
    // The same id for a different operation is refused.
    const reused = (await push(merchant, [{ ...ops[0], payload: { notification_id: 'other' } }])).json().results[0];
    expect(reused).toMatchObject({ status: 'rejected', code: 'CLIENT_OPERATION_ID_REUSED' });
  });

  it('concurrent retries of one operation apply it once', async () => {
    const dev = await device(driver);
    const op = {
      client_operation_id: 'hb-race-1',
      type: 'device.heartbeat',
      payload: { device_id: dev.id, battery_level: 55, recorded_at: new Date().toISOString() },
    };
    const results = await Promise.all([push(driver, [op]), push(driver, [op]), push(driver, [op])]);
    const bodies = results.map((r) => r.json().results[0]);
    expect(bodies.every((b) => b.status === 'applied')).toBe(true);
    expect(bodies.filter((b) => !b.replayed)).toHaveLength(1);
    expect((await sql('SELECT heartbeat_count, battery_level FROM device WHERE id = $1', [dev.id]))[0]).toEqual({
      heartbeat_count: 1,
      battery_level: 55,
    });
    expect(await sql('SELECT 1 FROM sync_operation WHERE client_operation_id = $1', ['hb-race-1'])).toHaveLength(1);
  });

  it('a stale update loses to the newer server state with a conflict, changing nothing', async () => {
    const dev = await device(driver);
    const now = Date.now();
    const res = (
      await push(driver, [
        {
          client_operation_id: 'hb-new',
          type: 'device.heartbeat',
          payload: { device_id: dev.id, battery_level: 20, network: 'wifi', recorded_at: new Date(now).toISOString() },
        },
        {
          client_operation_id: 'hb-old',
          type: 'device.heartbeat',
          payload: { device_id: dev.id, battery_level: 99, network: 'offline', recorded_at: new Date(now - 60_000).toISOString() },
        },
      ])
    ).json().results;
    expect(res[0].status).toBe('applied');
    expect(res[1]).toMatchObject({ status: 'conflict', code: 'STALE_UPDATE', server: { id: dev.id, battery_level: 20, network: 'wifi' } });
    expect((await sql('SELECT battery_level, network, heartbeat_count FROM device WHERE id = $1', [dev.id]))[0]).toEqual({
      battery_level: 20,
      network: 'wifi',
      heartbeat_count: 1,
    });
    // Retrying the stale one gives the same stored conflict.
    const again = (
      await push(driver, [
        {
          client_operation_id: 'hb-old',
          type: 'device.heartbeat',
          payload: { device_id: dev.id, battery_level: 99, network: 'offline', recorded_at: new Date(now - 60_000).toISOString() },
        },
      ])
    ).json().results[0];
    expect(again).toMatchObject({ status: 'conflict', code: 'STALE_UPDATE', replayed: true });
  });

  it("cannot touch another user's or another organization's records", async () => {
    const n = await testNotification(customer);
    const dev = await device(customer);
    const res = (
      await push(driver, [
        { client_operation_id: 'x-read', type: 'notification.read', payload: { notification_id: n.id } },
        { client_operation_id: 'x-hb', type: 'device.heartbeat', payload: { device_id: dev.id, recorded_at: new Date().toISOString() } },
      ])
    ).json().results;
    expect(res.map((r: any) => r.code)).toEqual(['NOT_FOUND', 'NOT_FOUND']);
    const other = await t.newOrganization('Sync Other');
    const foreign = await t.login(other.logins.customer);
    const f = (
      await push(foreign, [{ client_operation_id: 'f-read', type: 'notification.read', payload: { notification_id: n.id } }])
    ).json().results[0];
    expect(f.code).toBe('NOT_FOUND');
    expect((await sql('SELECT read_at FROM notification WHERE id = $1', [n.id]))[0].read_at).toBeNull();
    // The same client_operation_id of another user is a different operation.
    const own = (
      await push(customer, [{ client_operation_id: 'x-read', type: 'notification.read', payload: { notification_id: n.id } }])
    ).json().results[0];
    expect(own).toMatchObject({ status: 'applied', replayed: false });
  });

  it('bounds the batch and rejects unknown fields', async () => {
    const many = Array.from({ length: 101 }, (_, i) => ({ client_operation_id: `b-${i}`, type: 'notification.read', payload: {} }));
    expect((await push(driver, many)).statusCode).toBe(400);
    expect((await push(driver, [])).statusCode).toBe(400);
    expect((await push(driver, [{ client_operation_id: 'z', type: 'notification.read', payload: {}, extra: 1 }])).statusCode).toBe(400);
  });
});
