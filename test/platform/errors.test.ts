import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t?.close());

const countUsers = () => t.db.withSystem(async (tx) => (await tx.query<{ n: number }>('SELECT count(*)::int AS n FROM users')).rows[0].n);

function expectProblem(
  res: { statusCode: number; headers: Record<string, unknown>; json(): any; body: string },
  status: number,
  code: string,
) {
  expect(res.statusCode).toBe(status);
  expect(String(res.headers['content-type'])).toContain('application/problem+json');
  const b = res.json();
  expect(b).toMatchObject({
    status,
    code,
    title: expect.any(String),
    detail: expect.any(String),
    request_id: expect.any(String),
    type: expect.any(String),
  });
  expect(res.body).not.toMatch(/at .*\.(ts|js):\d+/); // no stack traces
  return b;
}

describe('problem responses', () => {
  it('unknown route → 404 problem', async () => {
    expectProblem(await t.req(null, { method: 'GET', url: '/nope' }), 404, 'NOT_FOUND');
  });

  it('malformed JSON → 400, nothing written', async () => {
    const admin = await t.as('admin');
    const before = await countUsers();
    const res = await t.req(admin, {
      method: 'POST',
      url: '/app-users',
      headers: { 'content-type': 'application/json' },
      payload: '{"email": "x@y.z", ',
    });
    expectProblem(res, 400, 'MALFORMED_JSON');
    expect(await countUsers()).toBe(before);
  });

  it('unknown fields, wrong types and over-long strings are listed per field', async () => {
    const admin = await t.as('admin');
    const before = await countUsers();
    const res = await t.req(admin, {
      method: 'POST',
      url: '/app-users',
      payload: { email: 'new@demo.test', password: 'Str0ng-enough-pw', display_name: 'x'.repeat(500), role: 42, is_root: true },
    });
    const b = expectProblem(res, 400, 'VALIDATION_FAILED');
    const fields = b.errors.map((e: { field: string }) => e.field);
    expect(fields).toEqual(expect.arrayContaining(['display_name', 'role', 'is_root']));
    expect(await countUsers()).toBe(before);
  });

  it('numbers sent as strings in a body are refused (no coercion)', async () => {
    const admin = await t.as('admin');
    const res = await t.req(admin, { method: 'PATCH', url: '/settings', payload: { require_platform_payment_before_order: 'true' } });
    expectProblem(res, 400, 'VALIDATION_FAILED');
  });

  it('a body over 1 MiB → 413', async () => {
    const admin = await t.as('admin');
    const res = await t.req(admin, {
      method: 'POST',
      url: '/documents',
      payload: { subject_type: 'user', doc_type: 'license', title: 'x'.repeat(1_100_000) },
    });
    expectProblem(res, 413, 'PAYLOAD_TOO_LARGE');
  });

  it('a wrong content type → 415', async () => {
    const admin = await t.as('admin');
    const res = await t.req(admin, { method: 'POST', url: '/documents', headers: { 'content-type': 'application/xml' }, payload: '<a/>' });
    expectProblem(res, 415, 'UNSUPPORTED_MEDIA_TYPE');
  });

  it('a request id is echoed in the header and the problem', async () => {
    const res = await t.req(null, { method: 'GET', url: '/me', headers: { 'x-request-id': 'req-12345678' } });
    const b = expectProblem(res, 401, 'UNAUTHORIZED');
    expect(b.request_id).toBe('req-12345678');
    expect(res.headers['x-request-id']).toBe('req-12345678');
  });
});
