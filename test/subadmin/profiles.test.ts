import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type Session, type TestApp } from '../helpers.js';
import { DEMO_PASSWORD } from '../../src/seed.js';
import { SUBADMIN_PERMISSION_KEYS } from '../../src/platform/auth.js';
import { newId } from '../../src/platform/ids.js';
import { newSubadmin, newTerritory } from './fixtures.js';

let t: TestApp;
let admin: Session;
let A: string;
let B: string;
let C: string;

const profileDb = async (userId: string) =>
  (await t.db.withSystem((tx) => tx.query('SELECT * FROM subadmin_profile WHERE user_id = $1', [userId]))).rows[0];
const territoriesDb = async (userId: string) =>
  (
    await t.db.withSystem((tx) => tx.query('SELECT territory_id FROM user_territory WHERE user_id = $1 ORDER BY territory_id', [userId]))
  ).rows.map((r: { territory_id: string }) => r.territory_id);
const userByEmail = async (email: string) =>
  (await t.db.withSystem((tx) => tx.query('SELECT * FROM users WHERE email = $1', [email]))).rows[0];

beforeAll(async () => {
  t = await createTestApp();
  admin = await t.as('admin');
  A = await newTerritory(t, admin, 'Zone A', -67, -16);
  B = await newTerritory(t, admin, 'Zone B', -66, -16);
  C = await newTerritory(t, admin, 'Zone C', -65, -16);
});
afterAll(async () => t?.close());

describe('POST /admin/subadmins', () => {
  it('creates the user, the profile with SPEC default permissions, the territory links and an audit row', async () => {
    const email = `sa-${newId().slice(-10)}@test.test`;
    const res = await t.req(admin, {
      method: 'POST',
      url: '/admin/subadmins',
      payload: {
        email,
        password: DEMO_PASSWORD,
        display_name: 'Zona A',
        territory_ids: [A],
        commission_min_percent: '5',
        commission_max_percent: '15.5',
      },
    });
    expect(res.statusCode, res.body).toBe(201);
    const p = res.json();
    for (const k of SUBADMIN_PERMISSION_KEYS)
      expect(p.permissions[k], k).toBe(k !== 'payments_review_decide' && k !== 'cash_remittances_record');
    expect(p).toMatchObject({
      display_name: 'Zona A',
      active: true,
      territory_ids: [A],
      commission_min_percent: '5.00',
      commission_max_percent: '15.50',
      parent_subadmin_user_id: null,
    });
    const u = await userByEmail(email);
    expect(u).toMatchObject({ role: 'administrator', subadmin: true, dispatch: false });
    const row = await profileDb(u.id);
    expect(row.created_by_user_id).toBe(admin.userId);
    expect(row.permissions.payments_review_decide).toBe(false);
    expect(await territoriesDb(u.id)).toEqual([A]);
    const audit = await t.db.withSystem((tx) =>
      tx.query("SELECT * FROM audit_log WHERE entity_id = $1 AND action = 'subadmin.created'", [u.id]),
    );
    expect(audit.rowCount).toBe(1);

    const s = await t.login(email);
    expect(s.userId).toBe(u.id);
    const me = await t.req(s, { method: 'GET', url: '/subadmin/me' });
    expect(me.statusCode, me.body).toBe(200);
    expect(me.json().effective).toMatchObject({
      active: true,
      territory_ids: [A],
      commission_min_percent: '5.00',
      commission_max_percent: '15.50',
    });
    expect(me.json().effective.territories[0]).toMatchObject({ id: A, name: 'Zone A' });
    const whoami = await t.req(s, { method: 'GET', url: '/me' });
    expect(whoami.json().kind).toBe('subadmin');
  });

  it.each([
    ['min above max', { commission_min_percent: '20', commission_max_percent: '10' }, 422, 'COMMISSION_BOUNDS_INVALID'],
    ['above 100', { commission_min_percent: '5', commission_max_percent: '150' }, 422, 'COMMISSION_BOUNDS_INVALID'],
    ['a minimum without a maximum', { commission_min_percent: '5' }, 422, 'COMMISSION_BOUNDS_INVALID'],
    ['a maximum without a minimum', { commission_max_percent: '15' }, 422, 'COMMISSION_BOUNDS_INVALID'],
    ['not a percentage', { commission_max_percent: '-1' }, 400, 'VALIDATION_FAILED'],
    ['unknown territory', { territory_ids: ['nope'] }, 422, 'TERRITORY_NOT_FOUND'],
    ['no territory', { territory_ids: [] }, 400, 'VALIDATION_FAILED'],
    ['unknown permission key', { permissions: { fly: true } }, 400, 'VALIDATION_FAILED'],
    ['unknown field', { colour: 'red' }, 400, 'VALIDATION_FAILED'],
    ['unknown parent', { parent_subadmin_user_id: 'nobody' }, 422, 'PARENT_NOT_FOUND'],
  ])('refuses %s and writes nothing', async (_name, over, status, code) => {
    const email = `bad-${newId().slice(-10)}@test.test`;
    const res = await t.req(admin, {
      method: 'POST',
      url: '/admin/subadmins',
      payload: { email, password: DEMO_PASSWORD, display_name: 'x', territory_ids: [A], ...over },
    });
    expect(res.statusCode, res.body).toBe(status);
    expect(res.json().code).toBe(code);
    expect(await userByEmail(email)).toBeUndefined();
  });

  it('refuses a territory of another organization (422) and callers that are not administrators (403)', async () => {
    const other = await t.newOrganization();
    const otherAdmin = await t.login(other.logins.admin);
    const foreign = await newTerritory(t, otherAdmin, 'Foreign', -60, -10);
    const res = await t.req(admin, {
      method: 'POST',
      url: '/admin/subadmins',
      payload: { email: 'f@test.test', password: DEMO_PASSWORD, display_name: 'x', territory_ids: [foreign] },
    });
    expect(res.statusCode).toBe(422);
    expect(res.json().code).toBe('TERRITORY_NOT_FOUND');
    for (const who of ['dispatch', 'merchant', 'driver'] as const) {
      const r = await t.req(await t.as(who), {
        method: 'POST',
        url: '/admin/subadmins',
        payload: { email: 'g@test.test', password: DEMO_PASSWORD, display_name: 'x', territory_ids: [A] },
      });
      expect(r.statusCode, who).toBe(403);
    }
    const sub = await newSubadmin(t, admin, { territory_ids: [A] });
    expect((await t.req(sub.session, { method: 'GET', url: '/admin/subadmins' })).statusCode).toBe(403);
    // Another organization's administrator does not see our sub-administrators.
    expect(
      (await t.req(otherAdmin, { method: 'PATCH', url: `/admin/subadmins/${sub.userId}`, payload: { active: false } })).statusCode,
    ).toBe(404);
    const list = await t.req(otherAdmin, { method: 'GET', url: '/admin/subadmins' });
    expect(list.json().data).toEqual([]);
  });
});

describe('PATCH /admin/subadmins/:id', () => {
  it('changes name, territories, permissions and bounds, refreshes updated_at, audits, and takes effect at once', async () => {
    const sub = await newSubadmin(t, admin, { territory_ids: [A] });
    const before = await profileDb(sub.userId);
    expect((await t.req(sub.session, { method: 'GET', url: '/drivers' })).statusCode).toBe(200);
    const res = await t.req(admin, {
      method: 'PATCH',
      url: `/admin/subadmins/${sub.userId}`,
      payload: {
        display_name: 'Renamed',
        territory_ids: [B, C],
        permissions: { drivers_view: false, payments_review_decide: true },
        commission_min_percent: '1',
        commission_max_percent: '2',
      },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({
      display_name: 'Renamed',
      territory_ids: [B, C].sort(),
      commission_min_percent: '1.00',
      commission_max_percent: '2.00',
    });
    expect(res.json().permissions).toMatchObject({ drivers_view: false, payments_review_decide: true, drivers_create: true });
    const after = await profileDb(sub.userId);
    expect(after.updated_at.getTime()).toBeGreaterThan(before.updated_at.getTime());
    expect(await territoriesDb(sub.userId)).toEqual([B, C].sort());
    const audit = await t.db.withSystem((tx) =>
      tx.query("SELECT before, after FROM audit_log WHERE entity_id = $1 AND action = 'subadmin.updated'", [sub.userId]),
    );
    expect(audit.rowCount).toBe(1);
    // The scope cache is invalidated by the change: the next request already sees it.
    const denied = await t.req(sub.session, { method: 'GET', url: '/drivers' });
    expect(denied.statusCode).toBe(403);
    expect(denied.json().code).toBe('PERMISSION_DENIED');
    expect((await t.req(sub.session, { method: 'GET', url: '/subadmin/me' })).json().effective.territory_ids).toEqual([B, C].sort());

    // Deactivated: every sub-administrator route is 403 SUBADMIN_INACTIVE; reactivated: back.
    expect((await t.req(admin, { method: 'PATCH', url: `/admin/subadmins/${sub.userId}`, payload: { active: false } })).statusCode).toBe(
      200,
    );
    const inactive = await t.req(sub.session, { method: 'GET', url: '/subadmin/me' });
    expect(inactive.statusCode).toBe(403);
    expect(inactive.json().code).toBe('SUBADMIN_INACTIVE');
    expect((await t.req(admin, { method: 'PATCH', url: `/admin/subadmins/${sub.userId}`, payload: { active: true } })).statusCode).toBe(
      200,
    );
    expect((await t.req(sub.session, { method: 'GET', url: '/subadmin/me' })).statusCode).toBe(200);
  });

  it('refuses bad bounds (422), an empty patch (400) and an unknown id (404), changing nothing', async () => {
    const sub = await newSubadmin(t, admin, { territory_ids: [A], commission_min_percent: '5', commission_max_percent: '10' });
    const bad = await t.req(admin, { method: 'PATCH', url: `/admin/subadmins/${sub.userId}`, payload: { commission_min_percent: '11' } });
    expect(bad.statusCode).toBe(422);
    expect(bad.json().code).toBe('COMMISSION_BOUNDS_INVALID');
    expect((await profileDb(sub.userId)).commission_min_percent).toBe('5.00');
    // Bounds come in pairs: clearing one of them alone is refused; clearing both is allowed.
    const half = await t.req(admin, { method: 'PATCH', url: `/admin/subadmins/${sub.userId}`, payload: { commission_max_percent: null } });
    expect(half.statusCode).toBe(422);
    expect(half.json()).toMatchObject({ code: 'COMMISSION_BOUNDS_INVALID', errors: [{ field: 'commission_max_percent' }] });
    expect((await profileDb(sub.userId)).commission_max_percent).toBe('10.00');
    expect((await t.req(admin, { method: 'PATCH', url: `/admin/subadmins/${sub.userId}`, payload: {} })).statusCode).toBe(400);
    expect((await t.req(admin, { method: 'PATCH', url: '/admin/subadmins/nobody', payload: { active: false } })).statusCode).toBe(404);
  });

  it('lists sub-administrators with filters', async () => {
    const sub = await newSubadmin(t, admin, { territory_ids: [C] });
    const res = await t.req(admin, { method: 'GET', url: `/admin/subadmins?territory_id=${C}` });
    expect(res.statusCode).toBe(200);
    const ids = res.json().data.map((p: { user_id: string }) => p.user_id);
    expect(ids).toContain(sub.userId);
    for (const p of res.json().data) expect(p.territory_ids).toContain(C);
  });
});

describe('sub-users (POST/GET /subadmin/profiles)', () => {
  it('creates a sub-user within the parent scope, with narrowed defaults, and refuses anything beyond it', async () => {
    const parent = await newSubadmin(t, admin, {
      territory_ids: [A, B],
      permissions: { coupons_manage: false },
      commission_min_percent: '5',
      commission_max_percent: '15',
    });
    const child = await newSubadmin(t, parent.session, { territory_ids: [A] }, '/subadmin/profiles');
    const row = await profileDb(child.userId);
    expect(row).toMatchObject({
      parent_subadmin_user_id: parent.userId,
      created_by_user_id: parent.userId,
      commission_min_percent: '5.00',
      commission_max_percent: '15.00',
    });
    expect(row.permissions).toMatchObject({ coupons_manage: false, payments_review_decide: false, drivers_view: true });

    for (const [over, field] of [
      [{ territory_ids: [C] }, 'territory_ids'],
      [{ territory_ids: [A], permissions: { coupons_manage: true } }, 'permissions.coupons_manage'],
      [{ territory_ids: [A], permissions: { payments_review_decide: true } }, 'permissions.payments_review_decide'],
      [{ territory_ids: [A], commission_min_percent: '2', commission_max_percent: '10' }, 'commission_min_percent'],
      [{ territory_ids: [A], commission_max_percent: '20' }, 'commission_max_percent'],
      [{ territory_ids: [A], parent_subadmin_user_id: admin.userId }, null],
    ] as const) {
      const email = `child-${newId().slice(-10)}@test.test`;
      const res = await t.req(parent.session, {
        method: 'POST',
        url: '/subadmin/profiles',
        payload: { email, password: DEMO_PASSWORD, display_name: 'c', ...over },
      });
      if (field === null) {
        expect(res.statusCode).toBe(400); // parent is not a field of this route: the parent is the caller
      } else {
        expect(res.statusCode, res.body).toBe(422);
        expect(res.json().code).toBe('EXCEEDS_PARENT_SCOPE');
        expect(res.json().errors[0].field).toBe(field);
      }
      expect(await userByEmail(email)).toBeUndefined();
    }

    const list = await t.req(parent.session, { method: 'GET', url: '/subadmin/profiles' });
    expect(list.statusCode).toBe(200);
    expect(list.json().data.map((p: { user_id: string }) => p.user_id)).toEqual([child.userId]);
    // The child lists nobody below him, and he cannot see his parent as a sub-user.
    expect((await t.req(child.session, { method: 'GET', url: '/subadmin/profiles' })).json().data).toEqual([]);
  });

  it('needs subusers_manage (403) and narrows a sub-user when the parent loses a territory or a permission', async () => {
    const parent = await newSubadmin(t, admin, { territory_ids: [A, B] });
    const child = await newSubadmin(t, parent.session, { territory_ids: [A, B] }, '/subadmin/profiles');
    await t.req(admin, {
      method: 'PATCH',
      url: `/admin/subadmins/${parent.userId}`,
      payload: { territory_ids: [A], permissions: { drivers_view: false } },
    });
    const me = (await t.req(child.session, { method: 'GET', url: '/subadmin/me' })).json();
    expect(me.profile.territory_ids).toEqual([A, B].sort());
    expect(me.effective.territory_ids).toEqual([A]);
    expect(me.effective.permissions.drivers_view).toBe(false);
    expect((await t.req(child.session, { method: 'GET', url: '/drivers' })).statusCode).toBe(403);
    // The parent deactivated: the child is inactive too.
    await t.req(admin, { method: 'PATCH', url: `/admin/subadmins/${parent.userId}`, payload: { active: false } });
    expect((await t.req(child.session, { method: 'GET', url: '/subadmin/me' })).json().code).toBe('SUBADMIN_INACTIVE');
    await t.req(admin, {
      method: 'PATCH',
      url: `/admin/subadmins/${parent.userId}`,
      payload: { active: true, permissions: { subusers_manage: false } },
    });
    const denied = await t.req(parent.session, {
      method: 'POST',
      url: '/subadmin/profiles',
      payload: { email: 'z@test.test', password: DEMO_PASSWORD, display_name: 'z', territory_ids: [A] },
    });
    expect(denied.statusCode).toBe(403);
    expect((await t.req(parent.session, { method: 'GET', url: '/subadmin/profiles' })).statusCode).toBe(403);
  });

  it('lets a sub-administrator patch only his sub-users, within his scope, never their parent; refuses cycles', async () => {
    const parent = await newSubadmin(t, admin, { territory_ids: [A, B] });
    const child = await newSubadmin(t, parent.session, { territory_ids: [A] }, '/subadmin/profiles');
    const stranger = await newSubadmin(t, admin, { territory_ids: [A] });
    const ok = await t.req(parent.session, {
      method: 'PATCH',
      url: `/admin/subadmins/${child.userId}`,
      payload: { territory_ids: [B], display_name: 'moved' },
    });
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.json().territory_ids).toEqual([B]);
    const beyond = await t.req(parent.session, {
      method: 'PATCH',
      url: `/admin/subadmins/${child.userId}`,
      payload: { territory_ids: [C] },
    });
    expect(beyond.statusCode).toBe(422);
    expect(beyond.json().code).toBe('EXCEEDS_PARENT_SCOPE');
    expect(
      (
        await t.req(parent.session, {
          method: 'PATCH',
          url: `/admin/subadmins/${child.userId}`,
          payload: { parent_subadmin_user_id: null },
        })
      ).statusCode,
    ).toBe(403);
    expect(
      (await t.req(parent.session, { method: 'PATCH', url: `/admin/subadmins/${stranger.userId}`, payload: { active: false } })).statusCode,
    ).toBe(404);
    expect(
      (await t.req(parent.session, { method: 'PATCH', url: `/admin/subadmins/${parent.userId}`, payload: { territory_ids: [A, B, C] } }))
        .statusCode,
    ).toBe(404);
    expect(
      (await t.req(child.session, { method: 'PATCH', url: `/admin/subadmins/${parent.userId}`, payload: { active: false } })).statusCode,
    ).toBe(404);
    expect((await profileDb(stranger.userId)).active).toBe(true);

    const cycle = await t.req(admin, {
      method: 'PATCH',
      url: `/admin/subadmins/${parent.userId}`,
      payload: { parent_subadmin_user_id: child.userId },
    });
    expect(cycle.statusCode).toBe(422);
    expect(cycle.json().code).toBe('PARENT_CYCLE');
    expect(
      (
        await t.req(admin, {
          method: 'PATCH',
          url: `/admin/subadmins/${parent.userId}`,
          payload: { parent_subadmin_user_id: parent.userId },
        })
      ).json().code,
    ).toBe('PARENT_CYCLE');
    // Moving the child under the stranger: its territories must fit the new parent's.
    const move = await t.req(admin, {
      method: 'PATCH',
      url: `/admin/subadmins/${child.userId}`,
      payload: { parent_subadmin_user_id: stranger.userId },
    });
    expect(move.statusCode).toBe(422);
    expect(move.json().code).toBe('EXCEEDS_PARENT_SCOPE');
    const moved = await t.req(admin, {
      method: 'PATCH',
      url: `/admin/subadmins/${child.userId}`,
      payload: { parent_subadmin_user_id: stranger.userId, territory_ids: [A] },
    });
    expect(moved.statusCode, moved.body).toBe(200);
    expect((await profileDb(child.userId)).parent_subadmin_user_id).toBe(stranger.userId);
  });
});
