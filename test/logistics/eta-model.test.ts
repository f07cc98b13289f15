import { describe, expect, it } from 'vitest';
import { haversineMeters } from '../../src/platform/geo.js';
import {
  arrivals,
  constantSpeeds,
  delayTransition,
  DWELL_S,
  hourOfWeek,
  learnSpeeds,
  median,
  promiseAt,
  remainingStops,
  tripEtas,
  type EtaTrip,
} from '../../src/modules/logistics/service/eta-model.js';

const at = (lon: number, lat: number) => ({ lon, lat });
const trip = (id: string, status: string, over: Partial<EtaTrip> = {}): EtaTrip => ({
  id,
  status,
  territoryId: 'T',
  pickup: at(-68.13, -16.5),
  dropoff: at(-68.12, -16.49),
  stopOrder: null,
  assignedAt: new Date('2026-01-05T10:00:00Z'),
  ...over,
});

describe('learned speeds', () => {
  it('answers the median of the finest bucket with enough samples, and the setting without any', () => {
    const samples = [3, 4, 5, 6, 100].map((v) => ({ territoryId: 'T', hourOfWeek: 10, speedMps: v }));
    const m = learnSpeeds(samples, 36, 5);
    // 100 m/s is noise (above the band) and dropped: only 4 samples remain in the bucket, so the next levels answer nothing either.
    expect(m.speed('T', 10)).toEqual({ mps: 10, source: 'setting' });
    const ok = learnSpeeds([...samples, { territoryId: 'T', hourOfWeek: 10, speedMps: 7 }], 36, 5);
    expect(ok.speed('T', 10)).toEqual({ mps: 5, source: 'territory_hour_of_week' });
    // Another hour of the same day of the week: the territory level (all its samples) answers.
    expect(ok.speed('T', 11).source).toBe('territory');
    expect(ok.speed('U', 10).source).toBe('organization');
    expect(median([1, 9, 2])).toBe(2);
    expect(median([1, 2, 3, 10])).toBe(2.5);
  });

  it('is robust to a forgotten trip (a very slow sample) where a mean is not', () => {
    const samples = [6, 6.2, 5.8, 6.1, 0.6].map((v) => ({ territoryId: 'T', hourOfWeek: 3, speedMps: v }));
    expect(learnSpeeds(samples, 25, 5).speed('T', 3).mps).toBe(6);
  });

  it('buckets by hour of the week in the time zone', () => {
    // Monday 2026-01-05 10:30 in La Paz (UTC-4) is 14:30 UTC.
    expect(hourOfWeek(new Date('2026-01-05T14:30:00Z'), 'America/La_Paz')).toBe(10);
    expect(hourOfWeek(new Date('2026-01-11T23:59:00Z'), 'UTC')).toBe(6 * 24 + 23);
  });
});

describe('remaining stops and arrivals', () => {
  it('a trip still to pick up counts the leg to the store before the dropoff', () => {
    const driver = at(-68.15, -16.52);
    const t = trip('a', 'accepted');
    const speeds = constantSpeeds(36); // 10 m/s
    const start = new Date('2026-01-05T10:00:00Z');
    const eta = tripEtas(driver, start, [t], speeds).get('a')!;
    const toPickup = haversineMeters(driver, t.pickup) / 10;
    const toDropoff = haversineMeters(t.pickup, t.dropoff) / 10;
    expect((eta.pickup!.getTime() - start.getTime()) / 1000).toBeCloseTo(toPickup, 2);
    expect((eta.dropoff!.getTime() - start.getTime()) / 1000).toBeCloseTo(toPickup + DWELL_S.pickup + toDropoff, 2);
  });

  it('what the driver carries is delivered first; then the trips to pick up in plan order', () => {
    const carried = trip('c', 'in_transit', { assignedAt: new Date('2026-01-05T09:00:00Z') });
    const second = trip('b', 'accepted', { stopOrder: 2 });
    const first = trip('a', 'assigned', { stopOrder: 1 });
    expect(remainingStops([second, carried, first]).map((s) => `${s.tripId}:${s.kind}`)).toEqual([
      'c:dropoff',
      'a:pickup',
      'a:dropoff',
      'b:pickup',
      'b:dropoff',
    ]);
  });

  it("follows a committed route's order, never a dropoff before its pickup", () => {
    const a = trip('a', 'accepted');
    const b = trip('b', 'accepted');
    const route = [
      { tripId: 'a', kind: 'pickup' as const },
      { tripId: 'b', kind: 'pickup' as const },
      { tripId: 'b', kind: 'dropoff' as const },
      { tripId: 'a', kind: 'dropoff' as const },
    ];
    expect(remainingStops([a, b], route).map((s) => `${s.tripId}:${s.kind}`)).toEqual(['a:pickup', 'b:pickup', 'b:dropoff', 'a:dropoff']);
    expect(remainingStops([a, b], [{ tripId: 'a', kind: 'dropoff' }]).map((s) => `${s.tripId}:${s.kind}`)).toEqual([
      'a:pickup',
      'a:dropoff',
      'b:pickup',
      'b:dropoff',
    ]);
  });

  it('arrivals use the speed of each leg (territory and hour)', () => {
    const m = learnSpeeds(
      Array.from({ length: 5 }, () => ({ territoryId: 'slow', hourOfWeek: 0, speedMps: 2 })),
      36,
    );
    const start = new Date('2026-01-05T00:00:00Z'); // Monday 00:00 UTC: hour of week 0
    const stop = { tripId: 'x', kind: 'dropoff' as const, at: at(-68.13, -16.5), territoryId: 'slow' };
    const from = at(-68.14, -16.5);
    const [t] = arrivals(from, start, [stop], m);
    expect((t!.getTime() - start.getTime()) / 1000).toBeCloseTo(haversineMeters(from, stop.at) / 2, 2);
  });
});

describe('promise and delay', () => {
  it('promise = start + preparation + travel + buffer', () => {
    expect(promiseAt(new Date('2026-01-05T10:00:00Z'), { preparationMin: 15, travelS: 600, bufferMin: 10 }).toISOString()).toBe(
      '2026-01-05T10:35:00.000Z',
    );
  });

  it('raises once per crossing of promise + grace, clears when back under', () => {
    const promised = new Date('2026-01-05T10:00:00Z');
    const late = new Date('2026-01-05T10:06:00Z');
    const within = new Date('2026-01-05T10:04:00Z');
    expect(delayTransition(late, promised, 5, null)).toBe('raise');
    expect(delayTransition(late, promised, 5, new Date())).toBeNull();
    expect(delayTransition(within, promised, 5, new Date())).toBe('clear');
    expect(delayTransition(within, promised, 5, null)).toBeNull();
    expect(delayTransition(null, promised, 5, new Date())).toBeNull();
  });
});
