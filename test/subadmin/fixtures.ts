import { expect } from 'vitest';
import type { Session, TestApp } from '../helpers.js';
import { DEMO_PASSWORD } from '../../src/seed.js';
import { newId } from '../../src/platform/ids.js';

export { pt } from '../support.js';

/** A square territory of side 2·half degrees around (lon, lat), created by the administrator. */
export async function newTerritory(t: TestApp, admin: Session, name: string, lon: number, lat: number, half = 0.05): Promise<string> {
  const ring: [number, number][] = [
    [lon - half, lat - half],
    [lon + half, lat - half],
    [lon + half, lat + half],
    [lon - half, lat + half],
    [lon - half, lat - half],
  ];
  const res = await t.req(admin, {
    method: 'POST',
    url: '/territories',
    payload: { name, geometry: { type: 'Polygon', coordinates: [ring] } },
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().id;
}

export interface TestSubadmin {
  userId: string;
  email: string;
  session: Session;
}

/** A sub-administrator created through POST /admin/subadmins (or POST /subadmin/profiles when `by` is a sub-administrator), logged in. */
export async function newSubadmin(t: TestApp, by: Session, body: Record<string, unknown>, url = '/admin/subadmins'): Promise<TestSubadmin> {
  const email = `sub-${newId().slice(-12)}@test.test`;
  const res = await t.req(by, { method: 'POST', url, payload: { email, password: DEMO_PASSWORD, display_name: 'Sub admin', ...body } });
  expect(res.statusCode, res.body).toBe(201);
  return { userId: res.json().user_id, email, session: await t.login(email) };
}

export async function setPermissions(t: TestApp, admin: Session, userId: string, permissions: Record<string, boolean>) {
  const res = await t.req(admin, { method: 'PATCH', url: `/admin/subadmins/${userId}`, payload: { permissions } });
  expect(res.statusCode, res.body).toBe(200);
}
