import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t?.close());

it('boots, logs in and answers /me', async () => {
  const s = await t.as('admin');
  const res = await t.req(s, { method: 'GET', url: '/me' });
  expect(res.statusCode).toBe(200);
  expect(res.json().email).toBe('admin@demo.test');
});
