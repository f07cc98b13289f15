import { describe, expect, it } from 'vitest';
import { GPS_RULE, haversine, keepFix } from '../../web/src/driver-gps.js';

/** The driver app's rule for which GPS fixes it keeps (web/src/driver-gps.ts). */

const start = { lat: -16.5, lon: -68.13, at: 1_000_000 };
/** A point `m` metres north of the start, `ms` later. */
const north = (m: number, ms: number) => ({ lat: start.lat + m / 111_195, lon: start.lon, at: start.at + ms });

describe('keepFix', () => {
  it('keeps the first fix', () => {
    expect(keepFix(null, start, false)).toBe(true);
    expect(keepFix(null, start, true)).toBe(true);
  });

  it('moving: one point every 5 s at most, and only after 15 m', () => {
    expect(haversine(start, north(20, 0))).toBeCloseTo(20, 0);
    expect(keepFix(start, north(20, 4999), false)).toBe(false);
    expect(keepFix(start, north(20, 5000), false)).toBe(true);
    expect(keepFix(start, north(10, 30_000), false)).toBe(false);
  });

  it('standing still: once a minute', () => {
    expect(keepFix(start, north(0, 59_999), false)).toBe(false);
    expect(keepFix(start, north(3, 59_999), false)).toBe(false);
    expect(keepFix(start, north(0, GPS_RULE.stillEveryMs), false)).toBe(true);
  });

  it('on a low battery: three times less often, moving or still', () => {
    expect(keepFix(start, north(50, 5000), true)).toBe(false);
    expect(keepFix(start, north(50, 14_999), true)).toBe(false);
    expect(keepFix(start, north(50, 15_000), true)).toBe(true);
    expect(keepFix(start, north(0, 60_000), true)).toBe(false);
    expect(keepFix(start, north(0, 180_000), true)).toBe(true);
  });
});
