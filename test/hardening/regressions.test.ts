/** Findings of the isolation probe and the fuzzer, each pinned by the request that found it. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t?.close());

const count = async (sql: string, params: unknown[] = []) =>
  Number((await t.db.withSystem((tx) => tx.query<{ n: number }>(sql, params))).rows[0].n);

function expectProblem(
  res: { statusCode: number; headers: Record<string, unknown>; body: string; json: () => any },
  status: number,
  code: string,
) {
  expect(res.statusCode, res.body).toBe(status);
  expect(String(res.headers['content-type'])).toMatch(/^application\/problem\+json/);
  expect(res.json()).toMatchObject({ status, code });
}

describe('router errors are problem responses (fuzz finding 1)', () => {
  it("malformed percent-encoding in a path parameter: 400 problem+json, not Fastify's own JSON", async () => {
    const admin = await t.as('admin');
    for (const bad of ['%', '%zz', '%ff%fe', '%u0000'])
      expectProblem(await t.req(admin, { method: 'GET', url: `/trips/${bad}/tracking` }), 400, 'MALFORMED_REQUEST');
  });

  it('an oversized path parameter: 414 problem+json', async () => {
    const admin = await t.as('admin');
    const res = await t.req(admin, { method: 'POST', url: `/trips/${'x'.repeat(2000)}/auto-assign`, payload: {} });
    expectProblem(res, 414, 'URI_TOO_LONG');
    expect(res.json().detail.length).toBeLessThanOrEqual(200);
  });
});

describe('NUL characters in text are refused with 400, nothing written (fuzz finding 2)', () => {
  it('in a text column (test notification title)', async () => {
    const customer = await t.as('customer');
    const before = await count('SELECT count(*)::int AS n FROM notification WHERE user_id = $1', [customer.userId]);
    expectProblem(
      await t.req(customer, { method: 'POST', url: '/notifications/test', payload: { title: 'a\u0000b', body: 'x' } }),
      400,
      'INVALID_VALUE',
    );
    expect(await count('SELECT count(*)::int AS n FROM notification WHERE user_id = $1', [customer.userId])).toBe(before);
  });

  it('in a trip address', async () => {
    const admin = await t.as('admin');
    const before = await count('SELECT count(*)::int AS n FROM trip');
    const pt = { type: 'Point', coordinates: [-68.13, -16.5] };
    expectProblem(
      await t.req(admin, {
        method: 'POST',
        url: '/trips',
        payload: { pickup_location: pt, pickup_address: 'Calle\u00001', dropoff_location: pt, dropoff_address: 'x' },
      }),
      400,
      'INVALID_VALUE',
    );
    expect(await count('SELECT count(*)::int AS n FROM trip')).toBe(before);
  });

  it('inside a JSON value stored as jsonb (admin notification data)', async () => {
    const admin = await t.as('admin');
    const customer = await t.as('customer');
    const before = await count('SELECT count(*)::int AS n FROM notification WHERE user_id = $1', [customer.userId]);
    expectProblem(
      await t.req(admin, {
        method: 'POST',
        url: '/admin/notifications',
        payload: { title: 't', body: 'b', data: { k: 'v\u0000' }, user_ids: [customer.userId] },
      }),
      400,
      'INVALID_VALUE',
    );
    expect(await count('SELECT count(*)::int AS n FROM notification WHERE user_id = $1', [customer.userId])).toBe(before);
  });
});
