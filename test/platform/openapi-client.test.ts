import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import ts from 'typescript';
import openapiTS, { astToString } from 'openapi-typescript';
import { createTestApp, type TestApp } from '../helpers.js';
import { newShop, rows } from '../commerce/fixtures.js';
import { newUser } from '../logistics/fixtures.js';
import { DEMO_PASSWORD } from '../../src/seed.js';
import { newId } from '../../src/platform/ids.js';

/**
 * What client teams do: generate types from the served document with openapi-typescript, write a client with
 * openapi-fetch, compile it with `tsc --strict`, and run it against a real server. The client logs in, places an
 * order, has the merchant prepare it and follows the order's trip, only through the generated types.
 */

let t: TestApp;
let dir: string;
let baseUrl: string;
beforeAll(async () => {
  t = await createTestApp();
  // Inside node_modules so that `openapi-fetch` resolves from the generated client; never committed.
  dir = join(process.cwd(), 'node_modules', '.cache', `contract-client-${newId()}`);
  mkdirSync(dir, { recursive: true });
  const doc = (await t.req(null, { method: 'GET', url: '/api/v1/openapi.json' })).json();
  writeFileSync(join(dir, 'api.d.ts'), astToString(await openapiTS(doc)));
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
  baseUrl = await t.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  await t?.close();
});

const CLIENT = `
import createClient from 'openapi-fetch';
import type { components, paths } from './api.js';

type Problem = components['schemas']['Problem'];
type Position = components['schemas']['Position'];

export interface Who { customer: string; merchant: string; password: string; branchId: string; itemIds: string[] }

const fail = (what: string, error: Problem | undefined): never => {
  throw new Error(what + ': ' + (error ? error.status + ' ' + error.code + ' ' + error.detail : 'no body'));
};

export async function run(baseUrl: string, who: Who) {
  const api = createClient<paths>({ baseUrl });
  const login = async (email: string): Promise<{ Authorization: string }> => {
    const { data, error } = await api.POST('/api/v1/auth/login', { body: { email, password: who.password } });
    if (!data) return fail('login', error);
    return { Authorization: 'Bearer ' + data.access_token };
  };
  const customer = await login(who.customer);
  const at: Position = [-68.125, -16.51];
  const address = await api.POST('/api/v1/customer/addresses', { headers: customer, body: { address: 'Av. Arce 100', location: { type: 'Point', coordinates: at } } });
  if (!address.data) return fail('address', address.error);
  const placed = await api.POST('/api/v1/customer/orders', {
    headers: customer,
    body: { branch_id: who.branchId, address_id: address.data.id, items: who.itemIds.map((id) => ({ catalog_item_id: id, quantity: 1 })) },
  });
  if (!placed.data) return fail('order', placed.error);
  const merchant = await login(who.merchant);
  for (const status of ['confirmed', 'preparing', 'ready'] as const) {
    const moved = await api.PATCH('/api/v1/merchant/orders/{id}/status', { headers: merchant, params: { path: { id: placed.data.id } }, body: { status } });
    if (!moved.data) return fail(status, moved.error);
  }
  const mine = await api.GET('/api/v1/customer/orders', { headers: customer, params: { query: { limit: 10 } } });
  if (!mine.data) return fail('orders', mine.error);
  const order = mine.data.data.find((o) => o.id === placed.data.id);
  if (!order || !order.trip_id) throw new Error('the ready order has no trip');
  const trip = await api.GET('/api/v1/customer/trips/{id}', { headers: customer, params: { path: { id: order.trip_id } } });
  if (!trip.data) return fail('trip', trip.error);
  // Errors are typed too: a problem document with a stable code.
  const refused = await api.POST('/api/v1/customer/orders', { headers: customer, body: { quote_id: 'no-such-quote' } });
  if (!refused.error) throw new Error('an unknown quote was accepted');
  return { order, trip: trip.data, problem: refused.error };
}
`;

/** Requests the server always refuses must not compile either. */
const WRONG = `
import createClient from 'openapi-fetch';
import type { paths } from './api.js';
const api = createClient<paths>({ baseUrl: 'http://x' });
// neither email nor phone
void api.POST('/api/v1/auth/login', { body: { password: 'x' } });
// a cart without items
void api.POST('/api/v1/customer/orders', { body: { branch_id: 'b', address_id: 'a' } });
// a notification without a target
void api.POST('/api/v1/admin/notifications', { body: { title: 't', body: 'b' } });
// a trip status body with neither status nor reset_pin_lock
void api.POST('/api/v1/trips/{id}/status', { params: { path: { id: 'x' } }, body: { reason: 'r' } });
// a position with four numbers (an altitude is the third, nothing comes after)
const p: import('./api.js').components['schemas']['Position'] = [1, 2, 3, 4];
void p;
`;

function compile(file: string): string[] {
  const program = ts.createProgram([file], {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    skipLibCheck: true,
    types: ['node'],
    typeRoots: [join(process.cwd(), 'node_modules', '@types')],
  });
  return ts
    .getPreEmitDiagnostics(program)
    .map(
      (d) =>
        `${d.file ? `${d.file.fileName.split('/').pop()}:${d.file.getLineAndCharacterOfPosition(d.start ?? 0).line + 1}` : ''} ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`,
    );
}

describe('a client generated from the document (openapi-typescript + openapi-fetch, tsc --strict)', () => {
  it('compiles with --strict, then logs in, places an order and follows its trip against the server', async () => {
    writeFileSync(join(dir, 'client.ts'), CLIENT);
    expect(compile(join(dir, 'client.ts'))).toEqual([]);
    writeFileSync(
      join(dir, 'client.js'),
      ts.transpileModule(CLIENT, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } }).outputText,
    );

    const shop = await newShop(t);
    const [{ email: merchantEmail }] = await rows<{ email: string }>(t, 'SELECT email FROM users WHERE id = $1', [shop.merchant.userId]);
    const customer = await newUser(t, 'delivery');
    const { run } = await import(pathToFileURL(join(dir, 'client.js')).href);
    const out = await run(baseUrl, {
      customer: customer.email,
      merchant: merchantEmail,
      password: DEMO_PASSWORD,
      branchId: shop.branchId,
      itemIds: shop.items.map((i) => i.id),
    });
    expect(out.order.status).toBe('ready');
    expect(out.trip.id).toBe(out.order.trip_id);
    expect(out.trip.order_id).toBe(out.order.id);
    expect(out.problem).toMatchObject({ status: 404, code: 'NOT_FOUND' });
  });

  it('requests the server always refuses do not compile', () => {
    writeFileSync(join(dir, 'wrong.ts'), WRONG);
    const errors = compile(join(dir, 'wrong.ts'));
    const lines = new Set(errors.map((e) => e.split(' ')[0]));
    // One error on each of the five wrong calls (lines 6, 8, 10, 12, 14 of WRONG).
    expect([...lines].sort()).toEqual(['wrong.ts:12', 'wrong.ts:14', 'wrong.ts:6', 'wrong.ts:8', 'wrong.ts:10'].sort());
  });
});
