import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers.js';
import { PRINCIPALS } from '../../src/platform/auth.js';

let t: TestApp;
let doc: Record<string, any>;
beforeAll(async () => {
  t = await createTestApp();
  doc = (await t.req(null, { method: 'GET', url: '/docs/json' })).json();
});
afterAll(() => t?.close());

const docPath = (url: string) => url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

describe('the OpenAPI document says who may call each operation', () => {
  it('every operation carries x-roles (and x-permission where a sub-administrator needs one) and says it in its description', () => {
    const missing: string[] = [];
    for (const [path, item] of Object.entries<Record<string, any>>(doc.paths)) {
      for (const [method, op] of Object.entries<Record<string, any>>(item)) {
        if (!Array.isArray(op['x-roles']) || !String(op.description ?? '').includes('**Access**'))
          missing.push(`${method.toUpperCase()} ${path}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it("matches each route's declaration, the one the auth hook enforces", () => {
    const wrong: string[] = [];
    let checked = 0;
    for (const r of t.app.routeTable) {
      if (!r.url.startsWith('/api/v1/') || r.method === 'HEAD' || r.method === 'OPTIONS') continue;
      const op = doc.paths[docPath(r.url)]?.[r.method.toLowerCase()];
      if (!op) continue;
      // Stream routes are public to the hook and check the caller themselves: compared below.
      if (r.url.includes('/realtime/') && r.url.endsWith('/stream')) continue;
      checked++;
      const roles = r.isPublic ? [] : (r.roles ?? PRINCIPALS);
      if (
        JSON.stringify([...op['x-roles']].sort()) !== JSON.stringify([...roles].sort()) ||
        (op['x-permission'] ?? undefined) !== r.permission
      ) {
        wrong.push(`${r.method} ${r.url}: ${JSON.stringify(op['x-roles'])} ${op['x-permission']}`);
      }
    }
    expect(wrong).toEqual([]);
    expect(checked).toBeGreaterThan(100);
  });

  it('examples: public, restricted with a permission key, any user, a stream', () => {
    const op = (path: string, method: string) => doc.paths[path][method];
    expect(op('/api/v1/auth/login', 'post')['x-roles']).toEqual([]);
    expect(op('/api/v1/auth/login', 'post').description).toContain('**Access**: public');
    const territories = op('/api/v1/realtime/territories/stream', 'get');
    expect(territories).toMatchObject({ 'x-roles': ['subadmin'], 'x-permission': 'tracking' });
    expect(territories.description).toContain('sub-administrators need the `tracking` permission');
    expect(op('/api/v1/realtime/organization/stream', 'get')['x-roles']).toEqual(['administrator', 'dispatch']);
    expect(op('/api/v1/me', 'get')['x-roles']).toEqual([...PRINCIPALS]);
    expect(op('/api/v1/me', 'get').description).toContain('any authenticated user');
  });
});

describe('the OpenAPI document lists every route the server answers', () => {
  it('HEAD /storage/objects/{object_id} is documented (its own operation, headObject)', () => {
    const head = doc.paths['/api/v1/storage/objects/{object_id}']?.head;
    expect(head).toBeDefined();
    expect(head.operationId).toBe('headObject');
    expect(head['x-roles'].length).toBeGreaterThan(0);
  });

  it('every GET, POST, PUT, PATCH and DELETE route under /api/v1 is in the document', () => {
    const undocumented = t.app.routeTable
      .filter((r) => r.url.startsWith('/api/v1/') && !['HEAD', 'OPTIONS'].includes(r.method) && r.url !== '/api/v1/openapi.json')
      .filter((r) => !doc.paths[docPath(r.url)]?.[r.method.toLowerCase()])
      .map((r) => `${r.method} ${r.url}`);
    expect(undocumented).toEqual([]);
  });
});
