import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type Session, type TestApp } from '../helpers.js';
import { newSubadmin, newTerritory } from '../subadmin/fixtures.js';

let t: TestApp;
let admin: Session;
beforeAll(async () => {
  t = await createTestApp();
  admin = await t.as('admin');
});
afterAll(() => t?.close());

describe('free-text search', () => {
  it('matches % and _ literally instead of as wildcards', async () => {
    const search = async (q: string) =>
      (await t.req(admin, { method: 'GET', url: `/app-users?q=${encodeURIComponent(q)}&limit=100` })).json().data as { email: string }[];
    const all = await search('demo');
    expect(all.length).toBeGreaterThan(3);
    expect(await search('%')).toEqual([]);
    expect(await search('_')).toEqual([]);
    expect(await search('\\')).toEqual([]);
    expect((await search('customer@')).map((u) => u.email)).toEqual(['customer@demo.test']);
  });
});

describe('/me', () => {
  it("shows a sub-administrator's scope in snake_case", async () => {
    const territory = await newTerritory(t, admin, 'Scope test', -66.15, -17.39);
    const sub = await newSubadmin(t, admin, { territory_ids: [territory] });
    const me = (await t.req(sub.session, { method: 'GET', url: '/me' })).json();
    expect(Object.keys(me.subadmin_scope).sort()).toEqual([
      'active',
      'commission_max_percent',
      'commission_min_percent',
      'permissions',
      'territory_ids',
    ]);
    expect(me.subadmin_scope.territory_ids).toEqual([territory]);
    expect((await t.req(admin, { method: 'GET', url: '/me' })).json().subadmin_scope).toBeNull();
  });
});
