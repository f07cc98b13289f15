/** Accounts can be stopped. Deactivation revokes sessions at once and closes streams. */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type Session, type TestApp } from '../helpers.js';
import { SseClient } from '../realtime/sse.js';
import { newDriver, newTrip, newUser, tripDb } from '../logistics/fixtures.js';
import { DEMO_PASSWORD } from '../../src/seed.js';

let t: TestApp;
let admin: Session;
let base: string;
const open: SseClient[] = [];

beforeAll(async () => {
  // The periodic session re-check is pushed out of reach, so a stream that ends was closed by the revocation itself.
  t = await createTestApp({ raw: { REALTIME_SESSION_CHECK_MS: String(86_400_000) } });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(t.app.server.address() as net.AddressInfo).port}/api/v1`;
  admin = await t.as('admin');
});
afterAll(async () => {
  for (const c of open) c.close();
  await t?.close();
});

const audits = async (action: string, id: string) =>
  (
    await t.db.withSystem((tx) =>
      tx.query<{ n: number }>('SELECT count(*)::int AS n FROM audit_log WHERE action = $1 AND entity_id = $2', [action, id]),
    )
  ).rows[0].n;
const deactivate = (s: Session, id: string, payload: Record<string, unknown> = {}) =>
  t.req(s, { method: 'POST', url: `/app-users/${id}/deactivate`, payload });
const reactivate = (s: Session, id: string) => t.req(s, { method: 'POST', url: `/app-users/${id}/reactivate`, payload: {} });

describe('deactivating a user', () => {
  it('revokes every session and refresh token at once, closes open streams by the revocation itself (not a periodic re-check), refuses login like a wrong password; audited', async () => {
    const u = await newUser(t, 'delivery');
    const s1 = await t.login(u.email);
    const s2 = await t.login(u.email);
    expect((await t.req(s1, { method: 'GET', url: '/me' })).statusCode).toBe(200);
    const stream = await SseClient.open(`${base}/realtime/me/stream`, { authorization: `Bearer ${s2.token}` });
    open.push(stream);
    expect(stream.status).toBe(200);

    const res = await deactivate(admin, u.userId, { reason: 'left the company' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ id: u.userId, active: false });
    await stream.until(() => stream.ended, 30_000, 'end of stream');
    expect(stream.ended).toBe(true);

    for (const s of [s1, s2]) {
      const me = await t.req(s, { method: 'GET', url: '/me' });
      expect(me.statusCode).toBe(401);
      expect(me.json().code).toBe('SESSION_REVOKED');
      const refreshed = await t.req(null, { method: 'POST', url: '/auth/refresh', payload: { refresh_token: s.refresh } });
      expect(refreshed.statusCode).toBe(401);
    }
    const login = await t.req(null, { method: 'POST', url: '/auth/login', payload: { email: u.email, password: DEMO_PASSWORD } });
    const wrong = await t.req(null, {
      method: 'POST',
      url: '/auth/login',
      payload: { email: 'customer@demo.test', password: 'Wrong-password-123' },
    });
    expect(login.statusCode).toBe(401);
    expect(login.json().code).toBe(wrong.json().code);
    const sessions = await t.db.withSystem((tx) =>
      tx.query('SELECT revoked_at, revoked_reason FROM auth_session WHERE user_id = $1', [u.userId]),
    );
    expect(sessions.rows.length).toBe(2);
    expect(sessions.rows.every((r: { revoked_reason: string }) => r.revoked_reason === 'user_deactivated')).toBe(true);
    expect(await audits('user.deactivated', u.userId)).toBe(1);

    // Reactivation lets the user log in again; the old sessions stay dead.
    const back = await reactivate(admin, u.userId);
    expect(back.statusCode, back.body).toBe(200);
    expect(back.json().active).toBe(true);
    expect(await audits('user.reactivated', u.userId)).toBe(1);
    expect((await t.req(s1, { method: 'GET', url: '/me' })).statusCode).toBe(401);
    const again = await t.login(u.email);
    expect((await t.req(again, { method: 'GET', url: '/me' })).statusCode).toBe(200);
  });

  it('a deactivated driver goes unavailable and gives back the trips he has not picked up', async () => {
    const d = await newDriver(t, { lon: -68.13, lat: -16.5 }, { capacity: 2 });
    const trip = await newTrip(t, admin);
    expect((await t.req(admin, { method: 'POST', url: `/trips/${trip.id}/assign`, payload: { driver_id: d.id } })).statusCode).toBe(200);
    expect((await deactivate(admin, d.userId)).statusCode).toBe(200);
    expect((await tripDb(t, trip.id)).status).toBe('pending');
    const drv = (await t.db.withSystem((tx) => tx.query('SELECT available, active_trips FROM driver WHERE id = $1', [d.id]))).rows[0];
    expect(drv).toMatchObject({ available: false, active_trips: 0 });
    expect((await t.req(d.session, { method: 'POST', url: '/driver/availability', payload: { available: true } })).statusCode).toBe(401);
    // Staff cannot put a deactivated user's driver profile back on the road either.
    const staff = await t.req(admin, { method: 'POST', url: `/drivers/${d.id}/availability`, payload: { available: true } });
    expect(staff.statusCode).toBe(422);
    expect(staff.json().code).toBe('DRIVER_NOT_APPROVED');
  });

  it('refuses oneself and platform operators; only administrators may call it; two administrators removing each other leave one', async () => {
    const self = await deactivate(admin, admin.userId);
    expect(self.statusCode).toBe(422);
    expect(self.json().code).toBe('CANNOT_DEACTIVATE_SELF');
    const platform = await t.as('platform');
    const plat = await deactivate(admin, platform.userId);
    expect([403, 404]).toContain(plat.statusCode);

    const other = await t.newOrganization('Two admins');
    const a = await t.login(other.logins.admin, DEMO_PASSWORD, other.organizationId);
    const bUser = await newUser(t, 'administrator', other.organizationId);
    const b = await t.login(bUser.email, DEMO_PASSWORD, other.organizationId);
    const dispatcher = await t.login(other.logins.dispatch, DEMO_PASSWORD, other.organizationId);
    expect((await deactivate(dispatcher, bUser.userId)).statusCode).toBe(403);

    const [r1, r2] = await Promise.all([deactivate(a, bUser.userId), deactivate(b, a.userId)]);
    const codes = [r1, r2].map((r) => r.statusCode).sort();
    expect(codes[0], `${r1.body} ${r2.body}`).toBe(200);
    const loser = [r1, r2].find((r) => r.statusCode !== 200)!;
    expect([401, 409]).toContain(loser.statusCode);
    if (loser.statusCode === 409) expect(loser.json().code).toBe('LAST_ADMINISTRATOR');
    const left = await t.db.withSystem((tx) =>
      tx.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM users WHERE organization_id = $1 AND active AND role = 'administrator' AND NOT dispatch AND NOT subadmin",
        [other.organizationId],
      ),
    );
    expect(left.rows[0].n).toBe(1);
  });

  it("another organization's administrator gets 404 and changes nothing", async () => {
    const u = await newUser(t, 'comercio');
    const other = await t.newOrganization('Other org');
    const otherAdmin = await t.login(other.logins.admin, DEMO_PASSWORD, other.organizationId);
    const res = await deactivate(otherAdmin, u.userId);
    expect(res.statusCode).toBe(404);
    const row = (await t.db.withSystem((tx) => tx.query('SELECT active FROM users WHERE id = $1', [u.userId]))).rows[0];
    expect(row.active).toBe(true);
    expect((await reactivate(otherAdmin, u.userId)).statusCode).toBe(404);
  });
});
