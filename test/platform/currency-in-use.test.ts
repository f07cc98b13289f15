import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers.js';
import { newTrip } from '../logistics/fixtures.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t?.close());

describe('one currency per organization (CURRENCY_IN_USE)', () => {
  it('a trip alone fixes the currency: organizations asks logistics, not its table', async () => {
    const org = await t.newOrganization('Trips Only');
    const admin = await t.login(org.logins.admin);
    const setCurrency = (c: string) => t.req(admin, { method: 'PATCH', url: '/settings', payload: { default_currency: c } });
    // Nothing recorded yet: the currency may change.
    expect((await setCurrency('USD')).statusCode).toBe(200);
    const trip = await newTrip(t, admin);
    expect(trip.currency).toBe('USD');
    const refused = await setCurrency('BOB');
    expect(refused.statusCode, refused.body).toBe(409);
    expect(refused.json().code).toBe('CURRENCY_IN_USE');
    expect((await t.req(admin, { method: 'GET', url: '/settings' })).json().default_currency).toBe('USD');
  });
});
