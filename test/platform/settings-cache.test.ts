import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, pt, secondInstance, waitFor, type Session, type TestApp } from '../helpers.js';
import { newTrip } from '../logistics/fixtures.js';

let t: TestApp;
let admin: Session;
let dispatch: Session;

beforeAll(async () => {
  t = await createTestApp();
  admin = await t.as('admin');
  dispatch = await t.as('dispatch');
});
afterAll(() => t?.close());

const setFee = async (fee: string) => {
  const res = await t.req(admin, { method: 'PATCH', url: '/logistics/settings', payload: { default_delivery_fee: fee } });
  expect(res.statusCode, res.body).toBe(200);
};

describe('logistics settings read by the rules (cached on each instance)', () => {
  it('a change applies to the next trip at once on the instance that made it', async () => {
    await setFee('11.00');
    expect((await newTrip(t, dispatch)).delivery_fee).toBe('11.00');
    await setFee('12.50');
    expect((await newTrip(t, dispatch)).delivery_fee).toBe('12.50');
  });

  it('a change made on one instance reaches another instance that had the old settings cached', async () => {
    const second = await secondInstance(t);
    try {
      const onSecond = async () => {
        const res = await second.req(dispatch, {
          method: 'POST',
          url: '/trips',
          payload: {
            pickup_location: pt(-68.13, -16.5),
            pickup_address: 'Pickup street 1',
            dropoff_location: pt(-68.12, -16.49),
            dropoff_address: 'Dropoff street 2',
          },
        });
        expect(res.statusCode, res.body).toBe(201);
        return res.json().delivery_fee as string;
      };
      await setFee('13.00');
      expect(await onSecond()).toBe('13.00'); // now cached on the second instance
      await setFee('14.00');
      await waitFor(async () => (await onSecond()) === '14.00', { message: 'the change announced to the other instance' });
    } finally {
      await second.close();
    }
  });
});

describe("the organization's settings and branding read by other modules (cached on each instance)", () => {
  it('a branding change reaches the next read on this instance and on another one that had it cached', async () => {
    const driver = await t.as('driver');
    const second = await secondInstance(t);
    try {
      const brandOn = async (on: Pick<TestApp, 'req'>) =>
        (await on.req(driver, { method: 'GET', url: '/mobile/bootstrap' })).json().brand_assets.name as string;
      const rename = async (name: string) => {
        const res = await t.req(admin, { method: 'PATCH', url: `/organizations/${t.demo.organizationId}/branding`, payload: { name } });
        expect(res.statusCode, res.body).toBe(200);
      };
      await rename('Reparto Uno');
      expect(await brandOn(t)).toBe('Reparto Uno');
      expect(await brandOn(second)).toBe('Reparto Uno'); // cached on both
      await rename('Reparto Dos');
      expect(await brandOn(t)).toBe('Reparto Dos');
      await waitFor(async () => (await brandOn(second)) === 'Reparto Dos', { message: 'the branding change on the other instance' });
    } finally {
      await second.close();
    }
  });

  it("a settings change reaches the next read of the organization's time zone on another instance", async () => {
    const second = await secondInstance(t);
    try {
      // The cash reconciliation reads the organization's time zone (settings) and shows it.
      const zoneOn = async () => (await second.req(admin, { method: 'GET', url: '/admin/cash-reconciliation' })).json().timezone as string;
      const setZone = async (timezone: string) => {
        const res = await t.req(admin, { method: 'PATCH', url: '/settings', payload: { timezone } });
        expect(res.statusCode, res.body).toBe(200);
      };
      await setZone('America/Lima');
      expect(await zoneOn()).toBe('America/Lima'); // now cached on the other instance
      await setZone('America/Santiago');
      await waitFor(async () => (await zoneOn()) === 'America/Santiago', { message: 'the time zone on the other instance' });
    } finally {
      await second.close();
    }
  });
});
