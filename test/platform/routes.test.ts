import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t?.close());

const apiRoutes = () => t.app.routeTable.filter((r) => r.url.startsWith('/api/v1'));

describe('route table', () => {
  it('every private route answers 401 without a token', async () => {
    const priv = apiRoutes().filter((r) => !r.isPublic);
    expect(priv.length).toBeGreaterThan(15);
    const failures: string[] = [];
    for (const r of priv) {
      const url = r.url.replace(/:[A-Za-z_]+/g, '01890000-0000-7000-8000-000000000000');
      const res = await t.app.inject({
        method: r.method as 'GET',
        url,
        payload: ['POST', 'PATCH', 'PUT'].includes(r.method) ? {} : undefined,
      });
      if (res.statusCode !== 401 || (r.method !== 'HEAD' && res.json().code !== 'UNAUTHORIZED'))
        failures.push(`${r.method} ${r.url} → ${res.statusCode}`);
    }
    expect(failures).toEqual([]);
  });

  it('public routes are the few named ones', () => {
    const pub = apiRoutes()
      .filter((r) => r.isPublic)
      .map((r) => `${r.method} ${r.url}`);
    const allowed = [
      /\/health$/,
      /\/health\/ready$/,
      /\/auth\/login$/,
      /\/auth\/refresh$/,
      /\/contracts\/current$/,
      /\/onboarding$/,
      /\/openapi\.json$/,
      /\/webhook$/,
      /\/realtime\//,
      /\/public\/tracking\/:token$/,
      /\/public\/tracking\/:token\/preferences$/,
      /\/gps\/osmand\/:token$/,
      // Shop order webhooks, verified by their HMAC signature.
      /\/shops\/(woocommerce|shopify)\/:connection_id$/,
    ];
    expect(pub.filter((p) => !allowed.some((re) => re.test(p)))).toEqual([]);
  });

  it('every route has an operationId and a success response schema', () => {
    const missing = apiRoutes()
      .filter((r) => !r.url.endsWith('/openapi.json'))
      .filter((r) => !r.operationId || !r.hasResponseSchema)
      .map((r) => `${r.method} ${r.url}`);
    expect(missing).toEqual([]);
  });

  it('serves the OpenAPI document with unique operationIds and the UI', async () => {
    const res = await t.req(null, { method: 'GET', url: '/api/v1/openapi.json' });
    expect(res.statusCode).toBe(200);
    const doc = res.json();
    expect(doc.openapi).toBe('3.1.0');
    const ops = Object.entries(doc.paths as Record<string, Record<string, { operationId?: string }>>).flatMap(([, p]) =>
      Object.entries(p)
        .filter(([m]) => m !== 'head')
        .map(([, o]) => o.operationId),
    );
    void Object.values(doc.paths as Record<string, Record<string, { operationId?: string }>>).flatMap((p) =>
      Object.values(p).map((o) => o.operationId),
    );
    expect(ops.length).toBeGreaterThan(15);
    expect(new Set(ops).size).toBe(ops.length);
    expect(doc.paths['/api/v1/auth/login'].post.responses['200']).toBeDefined();
    const ui = await t.req(null, { method: 'GET', url: '/docs/' });
    expect([200, 302]).toContain(ui.statusCode);
  });
});
