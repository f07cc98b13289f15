import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type Session, type TestApp } from '../helpers.js';
import { DEMO_PASSWORD } from '../../src/seed.js';
import { newTrip, pt } from '../logistics/fixtures.js';

let t: TestApp;
let admin: Session, merchant: Session;
beforeAll(async () => {
  t = await createTestApp();
  [admin, merchant] = await Promise.all([t.as('admin'), t.as('merchant')]);
});
afterAll(() => t?.close());

const users = async () => (await t.db.withSystem((tx) => tx.query('SELECT count(*)::int AS n FROM users'))).rows[0].n as number;
const newAppUser = (phone: string, email: string) =>
  t.req(admin, {
    method: 'POST',
    url: '/app-users',
    payload: { email, phone, password: DEMO_PASSWORD, display_name: 'Phone user', role: 'delivery' },
  });

describe('phone numbers are stored in E.164 with the organization default country', () => {
  it('the default country is BO and can be changed to another ISO 3166 code (unknown codes 400, listing the allowed ones)', async () => {
    const settings = (await t.req(admin, { method: 'GET', url: '/settings' })).json();
    expect(settings.default_country).toBe('BO');
    const bad = await t.req(admin, { method: 'PATCH', url: '/settings', payload: { default_country: 'ZZ' } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().errors[0]).toMatchObject({ field: 'default_country' });
    expect(bad.json().errors[0].message).toMatch(/^must be one of: .*\bBO\b.*\bUS\b/);
  });

  it('users: a national number as typed becomes +591…, and logging in with it as typed (or in E.164) works', async () => {
    const res = await newAppUser('7123-4567', 'phone-bo@test.test');
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().phone).toBe('+59171234567');
    const stored = await t.db.withSystem((tx) => tx.query("SELECT phone FROM users WHERE email = 'phone-bo@test.test'"));
    expect(stored.rows).toEqual([{ phone: '+59171234567' }]);
    for (const phone of ['71234567', '+591 7123 4567']) {
      const login = await t.req(null, { method: 'POST', url: '/auth/login', payload: { phone, password: DEMO_PASSWORD } });
      expect(login.statusCode, `${phone}: ${login.body}`).toBe(200);
    }
    // The same number typed another way is the same user.
    const dup = await newAppUser('+591 71234567', 'phone-bo-2@test.test');
    expect(dup.statusCode).toBe(409);
  });

  it('invalid numbers are 400 INVALID_PHONE and nothing is written', async () => {
    const before = await users();
    for (const phone of ['123456', '+999 1234567', '0000000000']) {
      const res = await newAppUser(phone, `bad-${phone.replace(/\D/g, '')}@test.test`);
      expect(res.statusCode, phone).toBe(400);
      expect(['INVALID_PHONE', 'VALIDATION_FAILED']).toContain(res.json().code);
    }
    const res = await newAppUser('123456', 'bad-x@test.test');
    expect(res.json()).toMatchObject({ code: 'INVALID_PHONE', errors: [{ field: 'phone' }] });
    expect(await users()).toBe(before);
  });

  it('support_phone, branch phone and the trip recipient_phone follow the default country', async () => {
    const us = await t.req(admin, {
      method: 'PATCH',
      url: '/settings',
      payload: { default_country: 'US', support_phone: '(212) 736-5000' },
    });
    expect(us.statusCode, us.body).toBe(200);
    expect(us.json()).toMatchObject({ default_country: 'US', support_phone: '+12127365000' });
    const back = await t.req(admin, { method: 'PATCH', url: '/settings', payload: { default_country: 'BO', support_phone: '2 2441234' } });
    expect(back.json()).toMatchObject({ default_country: 'BO', support_phone: '+59122441234' });

    const branch = await t.req(merchant, {
      method: 'POST',
      url: '/merchant/branches',
      payload: { name: 'Phone branch', address: 'Av. 6 de Agosto 1', location: pt(-68.12, -16.5), phone: '7765 4321' },
    });
    expect(branch.statusCode, branch.body).toBe(201);
    expect(branch.json().phone).toBe('+59177654321');
    const patched = await t.req(merchant, {
      method: 'PATCH',
      url: `/merchant/branches/${branch.json().id}`,
      payload: { phone: '+1 212 736 5000' },
    });
    expect(patched.json().phone).toBe('+12127365000');
    const badBranch = await t.req(merchant, {
      method: 'PATCH',
      url: `/merchant/branches/${branch.json().id}`,
      payload: { phone: '12345' },
    });
    expect(badBranch.statusCode).toBe(400);

    const trip = await newTrip(t, admin, { recipient_phone: '71234000' });
    const link = await t.req(admin, { method: 'GET', url: `/trips/${trip.id}/recipient-link` });
    expect(link.statusCode, link.body).toBe(200);
    expect(link.json().recipient_phone).toBe('+59171234000');
    const trips = async () => (await t.db.withSystem((tx) => tx.query('SELECT count(*)::int AS n FROM trip'))).rows[0].n as number;
    const before = await trips();
    const bad = await t.req(admin, {
      method: 'POST',
      url: '/trips',
      payload: {
        pickup_location: pt(-68.13, -16.5),
        pickup_address: 'A',
        dropoff_location: pt(-68.12, -16.49),
        dropoff_address: 'B',
        recipient_phone: '1234567',
      },
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ code: 'INVALID_PHONE', errors: [{ field: 'recipient_phone' }] });
    expect(await trips()).toBe(before);
  });
});
