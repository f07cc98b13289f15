import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers.js';
import { OPERATOR_TRANSITIONS, type OperatorStatus } from '../../src/modules/organizations/service.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t?.close());

const onboard = (email: string, password = 'Fresh-operator-2026') =>
  t.req(null, {
    method: 'POST',
    url: '/onboarding',
    payload: { organization_name: 'Rapido SRL', country: 'BO', admin: { email, password, display_name: 'Owner' } },
  });

describe('onboarding and operators', () => {
  it('creates an organization, a pending operator and its administrator', async () => {
    const res = await onboard('owner@rapido.test');
    expect(res.statusCode).toBe(201);
    const b = res.json();
    expect(b.status).toBe('pending');
    const rows = await t.db.withSystem(async (tx) => (await tx.query('SELECT status FROM operator WHERE id = $1', [b.operator_id])).rows);
    expect(rows).toEqual([{ status: 'pending' }]);
    // The pending operator's administrator can log in and see himself, but not work yet.
    const s = await t.login('owner@rapido.test', 'Fresh-operator-2026');
    expect((await t.req(s, { method: 'GET', url: '/me' })).statusCode).toBe(200);
    const blocked = await t.req(s, { method: 'GET', url: '/app-users' });
    expect(blocked.statusCode).toBe(403);
    expect(blocked.json().code).toBe('OPERATOR_NOT_APPROVED');
  });

  it('refuses a weak or missing password and writes nothing', async () => {
    const count = async () => t.db.withSystem(async (tx) => (await tx.query('SELECT count(*)::int AS n FROM organization')).rows[0].n);
    const before = await count();
    for (const pw of ['password123', 'qwerty1234', 'Password12!', '1q2w3e4r5t', 'aaaaaaaaaaaa']) {
      const res = await onboard(`weak-${pw}@x.test`, pw);
      expect(res.statusCode).toBe(400);
      expect(res.json().code).toBe('WEAK_PASSWORD');
    }
    // The length is in the schema (minLength 10, as documented): a validation error on the field.
    const short = await onboard('weak-short@x.test', 'short1');
    expect(short.statusCode).toBe(400);
    expect(short.json()).toMatchObject({ code: 'VALIDATION_FAILED', errors: [{ field: 'admin.password' }] });
    const missing = await t.req(null, {
      method: 'POST',
      url: '/onboarding',
      payload: { organization_name: 'X', admin: { email: 'a@b.co', display_name: 'A' } },
    });
    expect(missing.statusCode).toBe(400);
    expect(await count()).toBe(before);
  });

  it('walks the operator state machine; refused transitions are 409; only platform operators decide', async () => {
    const { operator_id } = (await onboard('owner2@rapido.test')).json();
    const platform = await t.as('platform');
    const admin = await t.as('admin');
    expect((await t.req(admin, { method: 'POST', url: `/operators/${operator_id}/approve` })).statusCode).toBe(403);
    const act = (a: string) =>
      t.req(platform, { method: 'POST', url: `/operators/${operator_id}/${a}`, payload: { reason: `because ${a}` } });
    const bad = await act('reactivate');
    expect(bad.statusCode).toBe(409);
    expect(bad.json()).toMatchObject({ code: 'INVALID_TRANSITION', current_status: 'pending' });
    expect((await act('approve')).json().status).toBe('approved');
    expect((await act('approve')).statusCode).toBe(409);
    expect((await act('suspend')).json().status).toBe('suspended');
    const s = await t.login('owner2@rapido.test', 'Fresh-operator-2026');
    expect((await t.req(s, { method: 'GET', url: '/app-users' })).json().code).toBe('OPERATOR_NOT_APPROVED');
    expect((await act('reactivate')).json().status).toBe('approved');
    expect((await t.req(s, { method: 'GET', url: '/app-users' })).statusCode).toBe(200);
    const audit = await t.db.withSystem(async (tx) =>
      (await tx.query('SELECT action FROM audit_log WHERE entity_id = $1 ORDER BY id', [operator_id])).rows.map((r) => r.action),
    );
    expect(audit).toEqual(['operator.onboarded', 'operator.approve', 'operator.suspend', 'operator.reactivate']);
    const list = await t.req(platform, { method: 'GET', url: '/operators?status=approved&limit=200' });
    expect(list.json().data.map((o: { id: string }) => o.id)).toContain(operator_id);
  });

  it('the operator transition table', () => {
    const all: OperatorStatus[] = ['pending', 'approved', 'rejected', 'suspended'];
    const allowed = all.flatMap((from) => all.filter((to) => OPERATOR_TRANSITIONS[from].includes(to)).map((to) => `${from}->${to}`));
    expect(allowed.sort()).toEqual(['approved->suspended', 'pending->approved', 'pending->rejected', 'suspended->approved']);
  });
});

describe('settings, branding, users, documents, audit', () => {
  it('updates settings with an audit row', async () => {
    const admin = await t.as('admin');
    // The demo organization already has items and orders in BOB: its currency is fixed (one currency per organization).
    const fixed = await t.req(admin, { method: 'PATCH', url: '/settings', payload: { default_currency: 'USD' } });
    expect(fixed.statusCode).toBe(409);
    expect(fixed.json().code).toBe('CURRENCY_IN_USE');
    const res = await t.req(admin, {
      method: 'PATCH',
      url: '/settings',
      payload: { require_platform_payment_before_order: true, default_currency: 'BOB', timezone: 'America/La_Paz' },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ require_platform_payment_before_order: true, default_currency: 'BOB', timezone: 'America/La_Paz' });
    expect((await t.req(admin, { method: 'GET', url: '/settings' })).json().require_platform_payment_before_order).toBe(true);
    const audit = await t.req(admin, { method: 'GET', url: '/audit?action=settings.updated' });
    expect(audit.json().data[0]).toMatchObject({
      action: 'settings.updated',
      before: { require_platform_payment_before_order: false },
      after: { require_platform_payment_before_order: true },
    });
  });

  it('branding: colours must be #RRGGBB; another organization is 404', async () => {
    const admin = await t.as('admin');
    const ok = await t.req(admin, {
      method: 'PATCH',
      url: `/organizations/${t.demo.organizationId}/branding`,
      payload: { primary_color: '#12ab9F', name: 'Demo Express' },
    });
    expect(ok.statusCode).toBe(200);
    expect(ok.json()).toMatchObject({ primary_color: '#12ab9F', name: 'Demo Express' });
    expect(
      (await t.req(admin, { method: 'PATCH', url: `/organizations/${t.demo.organizationId}/branding`, payload: { primary_color: 'red' } }))
        .statusCode,
    ).toBe(400);
    const other = await t.newOrganization();
    expect(
      (await t.req(admin, { method: 'PATCH', url: `/organizations/${other.organizationId}/branding`, payload: { name: 'Hacked' } }))
        .statusCode,
    ).toBe(404);
  });

  it('app users: create, list with cursor, duplicate email 409', async () => {
    const admin = await t.as('admin');
    const mk = (email: string) =>
      t.req(admin, {
        method: 'POST',
        url: '/app-users',
        payload: { email, password: 'Another-pass-99', display_name: 'Rider', role: 'repartidor' },
      });
    expect((await mk('rider1@demo.test')).statusCode).toBe(201);
    expect((await mk('rider2@demo.test')).statusCode).toBe(201);
    const dup = await mk('RIDER1@demo.test');
    expect(dup.statusCode).toBe(409);
    expect(dup.json().code).toBe('DUPLICATE_USER');
    const p1 = (await t.req(admin, { method: 'GET', url: '/app-users?role=repartidor&limit=2' })).json();
    expect(p1.data).toHaveLength(2);
    expect(p1.next_cursor).toBeTruthy();
    const p2 = (await t.req(admin, { method: 'GET', url: `/app-users?role=repartidor&limit=2&cursor=${p1.next_cursor}` })).json();
    expect(p2.data.length).toBeGreaterThan(0);
    const ids = [...p1.data, ...p2.data].map((u: { id: string }) => u.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect((await t.req(admin, { method: 'GET', url: '/app-users?cursor=%%%' })).statusCode).toBe(400);
  });

  it('documents: submit, review once, another organization cannot review', async () => {
    const driver = await t.as('driver');
    const admin = await t.as('admin');
    const doc = await t.req(driver, {
      method: 'POST',
      url: '/documents',
      payload: { subject_type: 'driver', doc_type: 'license', title: 'Driver licence' },
    });
    expect(doc.statusCode).toBe(201);
    const id = doc.json().id;
    const other = await t.newOrganization();
    const otherAdmin = await t.login(other.logins.admin);
    expect(
      (await t.req(otherAdmin, { method: 'POST', url: `/documents/${id}/review`, payload: { decision: 'approved' } })).statusCode,
    ).toBe(404);
    expect((await t.req(driver, { method: 'POST', url: `/documents/${id}/review`, payload: { decision: 'approved' } })).statusCode).toBe(
      403,
    );
    const r = await t.req(admin, { method: 'POST', url: `/documents/${id}/review`, payload: { decision: 'rejected', notes: 'blurry' } });
    expect(r.json()).toMatchObject({ status: 'rejected', review_notes: 'blurry' });
    expect((await t.req(admin, { method: 'POST', url: `/documents/${id}/review`, payload: { decision: 'approved' } })).statusCode).toBe(
      409,
    );
    // The driver sees his own documents; the customer sees none of them.
    expect((await t.req(driver, { method: 'GET', url: '/documents' })).json().data.map((d: { id: string }) => d.id)).toContain(id);
    expect((await t.req(await t.as('customer'), { method: 'GET', url: '/documents' })).json().data).toEqual([]);
  });

  it('dashboard: counts for administrators and dispatch; not for customers', async () => {
    const res = await t.req(await t.as('dispatch'), { method: 'GET', url: '/dashboard' });
    expect(res.statusCode).toBe(200);
    expect(res.json().sections.operator).toMatchObject({ operator_status: 'approved', users_by_role: expect.any(Object) });
    expect((await t.req(await t.as('customer'), { method: 'GET', url: '/dashboard' })).statusCode).toBe(403);
  });

  it('health and the contract are public', async () => {
    expect((await t.req(null, { method: 'GET', url: '/health' })).json()).toMatchObject({ status: 'ok', database: 'ok' });
    expect((await t.req(null, { method: 'GET', url: '/contracts/current' })).json()).toMatchObject({
      api_version: 'v1',
      release: 'V0.7.2',
    });
  });
});
