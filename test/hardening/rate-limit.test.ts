import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers.js';
import { cart, newCustomer, newShop, type Shop } from '../commerce/fixtures.js';
import { buildApp } from '../../src/app.js';
import type { FastifyInstance } from 'fastify';

/**
 * Per-user request rate limit on expensive routes, counted in the database: two
 * app instances on one database share the count.
 */
let t: TestApp;
let shop: Shop;
let second: FastifyInstance;

beforeAll(async () => {
  t = await createTestApp({ raw: { RATE_LIMIT_ORDERS_PER_MINUTE: '3' } });
  shop = await newShop(t);
  // A second instance on the same database (its own process memory).
  second = await buildApp({ config: t.config, db: t.db });
  await second.ready();
});
afterAll(async () => {
  await second?.close();
  await t?.close();
});

describe('rate limit on expensive routes', () => {
  it('refuses a user’s orders beyond the limit across instances with 429 RATE_LIMITED and Retry-After; nothing is written; others are unaffected', async () => {
    const a = await newCustomer(t);
    const b = await newCustomer(t);
    const place = (app: FastifyInstance, c: typeof a) =>
      app.inject({
        method: 'POST',
        url: '/api/v1/customer/orders',
        headers: { authorization: `Bearer ${c.session.token}` },
        payload: cart(shop, c.addressId),
      });
    const orders = async (userId: string) =>
      Number(
        (await t.db.withSystem((tx) => tx.query('SELECT count(*)::int AS n FROM merchant_order WHERE customer_user_id = $1', [userId])))
          .rows[0].n,
      );

    expect((await place(t.app, a)).statusCode).toBe(201);
    expect((await place(second, a)).statusCode).toBe(201);
    expect((await place(t.app, a)).statusCode).toBe(201);
    const refused = await place(second, a);
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(refused.json()).toMatchObject({ status: 429, code: 'RATE_LIMITED', limit: 3, limit_group: 'orders' });
    expect(await orders(a.userId)).toBe(3);
    // Another user has their own budget; cheap routes are not limited.
    expect((await place(t.app, b)).statusCode).toBe(201);
    const doc = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
    expect(doc.paths['/api/v1/customer/orders'].post.description).toContain('RATE_LIMIT_ORDERS_PER_MINUTE');
    expect(
      (await t.app.inject({ method: 'GET', url: '/api/v1/customer/orders', headers: { authorization: `Bearer ${a.session.token}` } }))
        .statusCode,
    ).toBe(200);
  });
});
