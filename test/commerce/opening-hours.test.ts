import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers.js';
import { openingState } from '../../src/modules/commerce/service/opening-hours.js';
import { cart, newCustomer, newShop, ok, rows, type Shop } from './fixtures.js';

const LA_PAZ = 'America/La_Paz'; // UTC-4, no daylight saving

describe('openingState (pure)', () => {
  // 2026-11-25 is a Wednesday (day 3).
  const at = (iso: string) => new Date(iso);
  it('same-day interval: open inside, closed outside with the next opening', () => {
    const hours = [{ day: 3, open: '09:00', close: '18:00' }];
    expect(openingState(hours, LA_PAZ, at('2026-11-25T14:00:00Z')).open).toBe(true); // 10:00 local
    const before = openingState(hours, LA_PAZ, at('2026-11-25T12:30:00Z')); // 08:30 local
    expect(before).toEqual({ open: false, next_open_at: at('2026-11-25T13:00:00Z') });
    const after = openingState(hours, LA_PAZ, at('2026-11-25T22:30:00Z')); // 18:30 local: next Wednesday
    expect(after.next_open_at).toEqual(at('2026-12-02T13:00:00Z'));
  });
  it('overnight interval 20:00-02:00 belongs to the day it opens and runs past midnight', () => {
    const hours = [{ day: 3, open: '20:00', close: '02:00' }];
    expect(openingState(hours, LA_PAZ, at('2026-11-26T01:00:00Z')).open).toBe(true); // Wed 21:00
    expect(openingState(hours, LA_PAZ, at('2026-11-26T05:30:00Z')).open).toBe(true); // Thu 01:30
    expect(openingState(hours, LA_PAZ, at('2026-11-26T06:00:00Z')).open).toBe(false); // Thu 02:00
    // Saturday night to Sunday (day 6 -> day 0) wraps around the week.
    const sat = [{ day: 6, open: '22:00', close: '03:00' }];
    expect(openingState(sat, LA_PAZ, at('2026-11-29T06:00:00Z')).open).toBe(true); // Sun 02:00
    expect(openingState(sat, LA_PAZ, at('2026-11-29T08:00:00Z')).next_open_at).toEqual(at('2026-12-06T02:00:00Z'));
  });
  it('open equal to close is 24 hours; no intervals is always open', () => {
    const allDay = [0, 1, 2, 3, 4, 5, 6].map((day) => ({ day, open: '00:00', close: '00:00' }));
    for (const iso of ['2026-11-25T04:00:00Z', '2026-11-25T03:59:00Z', '2026-11-29T12:00:00Z'])
      expect(openingState(allDay, LA_PAZ, at(iso)).open).toBe(true);
    expect(openingState([], LA_PAZ, at('2026-11-25T04:00:00Z'))).toEqual({ open: true, next_open_at: null });
  });
  it('uses the organization time zone, not UTC', () => {
    const hours = [{ day: 3, open: '09:00', close: '10:00' }];
    expect(openingState(hours, 'UTC', at('2026-11-25T09:30:00Z')).open).toBe(true);
    expect(openingState(hours, LA_PAZ, at('2026-11-25T09:30:00Z')).open).toBe(false);
  });
});

let t: TestApp;
let shop: Shop;
let customer: Awaited<ReturnType<typeof newCustomer>>;
beforeAll(async () => {
  t = await createTestApp();
  shop = await newShop(t);
  customer = await newCustomer(t);
});
afterAll(() => t?.close());

/** La Paz wall-clock HH:MM `minutes` from now. */
const localTime = (minutes: number) =>
  new Intl.DateTimeFormat('en-GB', { timeZone: LA_PAZ, hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(
    new Date(Date.now() + minutes * 60_000),
  );
const everyDay = (open: string, close: string) => [0, 1, 2, 3, 4, 5, 6].map((day) => ({ day, open, close }));
const setHours = async (hours: unknown) =>
  ok(await t.req(shop.merchant, { method: 'PATCH', url: `/merchant/branches/${shop.branchId}`, payload: { opening_hours: hours } }));

describe('opening hours at checkout', () => {
  it('accepts overnight hours on a branch (20:00-02:00)', async () => {
    const b = await setHours([{ day: 5, open: '20:00', close: '02:00' }]);
    expect(b.opening_hours).toEqual([{ day: 5, open: '20:00', close: '02:00' }]);
  });

  it('refuses preflight and order outside the hours with BRANCH_CLOSED and the next opening, writing nothing', async () => {
    await setHours(everyDay(localTime(120), localTime(180)));
    const [before] = await rows(
      t,
      'SELECT (SELECT count(*) FROM merchant_order)::int AS o, (SELECT count(*) FROM checkout_quote)::int AS q',
    );
    for (const url of ['/customer/checkout/preflight', '/customer/orders']) {
      const res = await t.req(customer.session, { method: 'POST', url, payload: cart(shop, customer.addressId) });
      expect(res.statusCode, res.body).toBe(422);
      expect(res.headers['content-type']).toContain('application/problem+json');
      const body = res.json();
      expect(body.code).toBe('BRANCH_CLOSED');
      const wait = new Date(body.next_open_at).getTime() - Date.now();
      expect(wait).toBeGreaterThan(118 * 60_000);
      expect(wait).toBeLessThan(121 * 60_000);
    }
    expect(
      (await rows(t, 'SELECT (SELECT count(*) FROM merchant_order)::int AS o, (SELECT count(*) FROM checkout_quote)::int AS q'))[0],
    ).toEqual(before);
  });

  it('takes the order inside the hours, also when the interval runs past midnight', async () => {
    await setHours(everyDay(localTime(-60), localTime(60)));
    const o = ok(await t.req(customer.session, { method: 'POST', url: '/customer/orders', payload: cart(shop, customer.addressId) }), 201);
    expect(o.status).toBe('pending_confirmation');
    // An interval from one minute before now until 00:00-length later wraps midnight whenever now is late.
    await setHours(everyDay(localTime(-1), localTime(-2)));
    ok(
      await t.req(customer.session, { method: 'POST', url: '/customer/checkout/preflight', payload: cart(shop, customer.addressId) }),
      201,
    );
  });

  it('a branch without declared hours is always open', async () => {
    await setHours([]);
    ok(
      await t.req(customer.session, { method: 'POST', url: '/customer/checkout/preflight', payload: cart(shop, customer.addressId) }),
      201,
    );
  });
});

describe('open or closed at a glance (merchant branches)', () => {
  it('each branch says whether it is open now and when it opens next, by the organization time zone; an inactive branch is closed', async () => {
    const listed = async () =>
      (
        ok(await t.req(shop.merchant, { method: 'GET', url: '/merchant/branches' })).data as {
          id: string;
          open_now: boolean;
          next_open_at: string | null;
        }[]
      ).find((b) => b.id === shop.branchId)!;
    // Closed: every day from an hour from now to two hours from now; opens in about an hour (to the minute).
    const closed = await setHours(everyDay(localTime(60), localTime(120)));
    expect(closed).toMatchObject({ open_now: false });
    const next = new Date(closed.next_open_at).getTime() - Date.now();
    expect(next).toBeGreaterThan(58 * 60_000);
    expect(next).toBeLessThanOrEqual(60 * 60_000);
    expect(await listed()).toMatchObject({ open_now: false, next_open_at: closed.next_open_at });
    // Overnight range covering now (opens two hours from now, closes an hour from now the next day): open.
    expect(await setHours(everyDay(localTime(120), localTime(60)))).toMatchObject({ open_now: true, next_open_at: null });
    expect(await listed()).toMatchObject({ open_now: true, next_open_at: null });
    // No hours: always open; inactive: never.
    expect(await setHours([])).toMatchObject({ open_now: true });
    const off = ok(await t.req(shop.merchant, { method: 'PATCH', url: `/merchant/branches/${shop.branchId}`, payload: { active: false } }));
    expect(off).toMatchObject({ active: false, open_now: false, next_open_at: null });
    ok(await t.req(shop.merchant, { method: 'PATCH', url: `/merchant/branches/${shop.branchId}`, payload: { active: true } }));
    const created = ok(
      await t.req(shop.merchant, {
        method: 'POST',
        url: '/merchant/branches',
        payload: {
          name: 'Noche',
          address: 'Calle 2',
          location: { type: 'Point', coordinates: [-68.13, -16.5] },
          opening_hours: everyDay(localTime(60), localTime(120)),
        },
      }),
      201,
    );
    expect(created.open_now).toBe(false);
  });
});
