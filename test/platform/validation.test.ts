import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type Session, type TestApp } from '../helpers.js';

let t: TestApp;
let admin: Session, platform: Session;
beforeAll(async () => {
  t = await createTestApp();
  [admin, platform] = await Promise.all([t.as('admin'), t.as('platform')]);
});
afterAll(() => t?.close());

const onboard = (email: string) =>
  t.req(null, {
    method: 'POST',
    url: '/onboarding',
    payload: {
      organization_name: 'Empty Body SRL',
      country: 'BO',
      admin: { email, password: 'Fresh-operator-2026', display_name: 'Owner' },
    },
  });

describe('enum validation errors list the allowed values', () => {
  it('in a query string', async () => {
    const res = await t.req(platform, { method: 'GET', url: '/operators?status=bogus' });
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe('VALIDATION_FAILED');
    expect(res.json().errors).toEqual([{ field: 'querystring.status', message: 'must be one of: pending, approved, rejected, suspended' }]);
    expect(res.json().detail).toContain('must be one of: pending, approved, rejected, suspended');
  });

  it('in a body, whatever the wrong value (string or number)', async () => {
    for (const bad of ['teleport', 7]) {
      const res = await t.req(admin, { method: 'POST', url: '/realtime/tokens', payload: { stream: bad } });
      expect(res.statusCode).toBe(400);
      expect(res.json().errors).toEqual([{ field: 'stream', message: 'must be one of: me, organization, trip, territories' }]);
    }
  });
});

describe('empty action bodies', () => {
  it('a POST action without a body counts as {} (one global rule), a JSON null body is refused', async () => {
    const { operator_id } = (await onboard('empty-body@rapido.test')).json();
    // No body at all, and no content-type: accepted.
    const approved = await t.req(platform, { method: 'POST', url: `/operators/${operator_id}/approve` });
    expect(approved.statusCode).toBe(200);
    expect(approved.json().status).toBe('approved');
    // `null` is not a missing body: 400, nothing changed.
    const nul = await t.req(platform, {
      method: 'POST',
      url: `/operators/${operator_id}/suspend`,
      headers: { 'content-type': 'application/json' },
      payload: 'null',
    });
    expect(nul.statusCode).toBe(400);
    expect(nul.json().code).toBe('VALIDATION_FAILED');
    const ops = (await t.req(platform, { method: 'GET', url: '/operators?status=approved&limit=100' })).json().data as { id: string }[];
    expect(ops.some((o) => o.id === operator_id)).toBe(true);
    // The same rule on other action routes (their per-route hooks are gone).
    const token = await t.req(admin, { method: 'POST', url: '/realtime/tokens' });
    expect(token.statusCode).toBe(201);
  });

  it('the document marks every POST whose body has no required field as optional', async () => {
    const doc = (await t.req(null, { method: 'GET', url: '/docs/json' })).json();
    const schemas = doc.components.schemas as Record<string, { required?: string[] }>;
    const resolve = (s: { $ref?: string; required?: string[]; type?: string }) =>
      (s.$ref ? schemas[s.$ref.split('/').pop()!] : s) as { required?: string[]; type?: string };
    let checked = 0;
    for (const [path, item] of Object.entries(
      doc.paths as Record<string, Record<string, { requestBody?: { required?: boolean; content: Record<string, { schema: object }> } }>>,
    )) {
      const op = item.post;
      const json = op?.requestBody?.content['application/json'];
      if (!json) continue;
      const body = resolve(json.schema);
      if (body.type !== 'object' || body.required?.length) continue;
      checked++;
      expect(op!.requestBody!.required, path).not.toBe(true);
    }
    expect(checked).toBeGreaterThan(5);
  });
});
