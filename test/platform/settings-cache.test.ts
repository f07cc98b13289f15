import type { InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { createTestApp, pt, waitFor, type Session, type TestApp } from '../helpers.js';
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
    const second = await buildApp({ config: t.config, db: t.db });
    await second.ready();
    try {
      const onSecond = async () => {
        const res = await second.inject({
          method: 'POST',
          url: '/api/v1/trips',
          headers: { authorization: `Bearer ${dispatch.token}` },
          payload: {
            pickup_location: pt(-68.13, -16.5),
            pickup_address: 'Pickup street 1',
            dropoff_location: pt(-68.12, -16.49),
            dropoff_address: 'Dropoff street 2',
          },
        } as InjectOptions);
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
    const second = await buildApp({ config: t.config, db: t.db });
    await second.ready();
    try {
      const brandOn = async (app: typeof t.app) =>
        (await app.inject({ method: 'GET', url: '/api/v1/mobile/bootstrap', headers: { authorization: `Bearer ${driver.token}` } })).json()
          .brand_assets.name as string;
      const rename = async (name: string) => {
        const res = await t.req(admin, { method: 'PATCH', url: `/organizations/${t.demo.organizationId}/branding`, payload: { name } });
        expect(res.statusCode, res.body).toBe(200);
      };
      await rename('Reparto Uno');
      expect(await brandOn(t.app)).toBe('Reparto Uno');
      expect(await brandOn(second)).toBe('Reparto Uno'); // cached on both
      await rename('Reparto Dos');
      expect(await brandOn(t.app)).toBe('Reparto Dos');
      await waitFor(async () => (await brandOn(second)) === 'Reparto Dos', { message: 'the branding change on the other instance' });
    } finally {
      await second.close();
    }
  });

  it("a settings change reaches the next read of the organization's time zone on another instance", async () => {
    const second = await buildApp({ config: t.config, db: t.db });
    await second.ready();
    try {
      // The cash reconciliation reads the organization's time zone (settings) and shows it.
      const zoneOn = async () =>
        (
          await second.inject({
            method: 'GET',
            url: '/api/v1/admin/cash-reconciliation',
            headers: { authorization: `Bearer ${admin.token}` },
          })
        ).json().timezone as string;
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
