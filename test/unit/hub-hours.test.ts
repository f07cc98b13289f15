import { describe, expect, it } from 'vitest';
import { hubDay } from '../../src/modules/logistics/service/hubs.js';

/** A hub's hours on the local day of an instant: the opening and closing instants, in the organization's time zone. */
describe('hub hours of a day', () => {
  const week = [
    { day: 6, open: '08:00', close: '18:30' },
    { day: 0, open: '10:00', close: '24:00' },
  ];

  it('gives the instants of the local day of the instant, whatever the UTC day', () => {
    // Saturday 2026-11-28 23:30 in La Paz (UTC−4) is already Sunday in UTC: still Saturday's hours
    expect(hubDay(week, 'America/La_Paz', new Date('2026-11-29T03:30:00Z'))).toEqual({
      opens_at: new Date('2026-11-28T12:00:00Z'),
      closes_at: new Date('2026-11-28T22:30:00Z'),
      closed: false,
    });
    // Sunday: 24:00 is the midnight that ends the day
    expect(hubDay(week, 'America/La_Paz', new Date('2026-11-29T15:00:00Z')).closes_at).toEqual(new Date('2026-11-30T04:00:00Z'));
  });

  it('follows a daylight-saving change: the wall clock, not a fixed offset', () => {
    const hours = [{ day: 0, open: '08:00', close: '18:00' }];
    // Madrid, Sunday 29 March 2026: 02:00 becomes 03:00 (UTC+1 to UTC+2)
    expect(hubDay(hours, 'Europe/Madrid', new Date('2026-03-29T12:00:00Z'))).toEqual({
      opens_at: new Date('2026-03-29T06:00:00Z'),
      closes_at: new Date('2026-03-29T16:00:00Z'),
      closed: false,
    });
  });

  it('is closed on a weekday without an interval, and always open without any hours', () => {
    expect(hubDay(week, 'America/La_Paz', new Date('2026-11-30T15:00:00Z'))).toEqual({ opens_at: null, closes_at: null, closed: true });
    expect(hubDay([], 'America/La_Paz', new Date())).toEqual({ opens_at: null, closes_at: null, closed: false });
  });
});
