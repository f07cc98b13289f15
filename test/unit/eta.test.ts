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
  travelSeconds,
  tripEtas,
  type EtaTrip,
} from '../../src/modules/logistics/service/eta-model.js';
import { validatePromise, validateWindow } from '../../src/modules/logistics/service/promises.js';
import { lateBySeconds, recipientContactVisible } from '../../src/modules/logistics/service/mappers.js';
import type { TripRow } from '../../src/modules/logistics/repo/trips.js';

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

describe('promise travel time', () => {
  it('is the straight-line distance at the learned speed of the territory and the hour the leg starts', () => {
    const from = at(-68.135, -16.5);
    const to = at(-68.1, -16.52);
    const monday8 = new Date('2026-01-05T08:30:00Z');
    const samples = Array.from({ length: 5 }, () => ({ territoryId: 't1', hourOfWeek: 8, speedMps: 5 }));
    const speeds = learnSpeeds(samples, 36);
    expect(travelSeconds(from, to, speeds, 't1', monday8)).toBeCloseTo(haversineMeters(from, to) / 5, 6);
    // Another hour of the week: the territory's level (all its samples) still answers 5 m/s; another territory the
    // organization's; nothing learned: the setting (36 km/h = 10 m/s).
    expect(travelSeconds(from, to, speeds, 't1', new Date('2026-01-05T15:00:00Z'))).toBeCloseTo(haversineMeters(from, to) / 5, 6);
    expect(travelSeconds(from, to, constantSpeeds(36), 't1', monday8)).toBeCloseTo(haversineMeters(from, to) / 10, 6);
  });
});

describe('delivery windows and promises set by hand', () => {
  const now = new Date('2026-01-05T10:00:00Z');
  const refusal = (fn: () => unknown) => {
    try {
      fn();
    } catch (e) {
      return e;
    }
    return null;
  };

  it('a window needs an end after its start, in the future; either may be absent', () => {
    expect(validateWindow(null, null, now)).toEqual({ after: null, before: null });
    expect(validateWindow(null, '2026-01-05T12:00:00Z', now)).toEqual({ after: null, before: new Date('2026-01-05T12:00:00Z') });
    expect(validateWindow('2026-01-05T11:00:00Z', new Date('2026-01-05T12:00:00Z'), now)).toEqual({
      after: new Date('2026-01-05T11:00:00Z'),
      before: new Date('2026-01-05T12:00:00Z'),
    });
    expect(refusal(() => validateWindow('2026-01-05T11:00:00Z', null, now))).toMatchObject({ status: 422, code: 'WINDOW_INVALID' });
    expect(refusal(() => validateWindow('2026-01-05T12:00:00Z', '2026-01-05T12:00:00Z', now))).toMatchObject({
      status: 422,
      code: 'WINDOW_INVALID',
    });
    expect(refusal(() => validateWindow(null, now, now))).toMatchObject({ status: 422, code: 'PROMISE_IN_PAST' });
    expect(refusal(() => validateWindow('soon', null, now))).toMatchObject({ status: 400 });
  });

  it('a promise set by staff is in the future', () => {
    expect(validatePromise('2026-01-05T10:00:01Z', now)).toEqual(new Date('2026-01-05T10:00:01Z'));
    expect(refusal(() => validatePromise(now, now))).toMatchObject({ status: 422, code: 'PROMISE_IN_PAST' });
    expect(refusal(() => validatePromise('tomorrow', now))).toMatchObject({ status: 400 });
  });
});

describe('lateness and who sees the recipient', () => {
  const trip = (over: Partial<TripRow>) =>
    ({
      promised_at: null,
      eta_dropoff_at: null,
      completed_at: null,
      status: 'in_transit',
      driver_id: 'd',
      driver_user_id: 'u',
      ...over,
    }) as TripRow;
  const promised = new Date('2026-01-05T10:00:00Z');

  it('late by the delivery time once completed, by the live ETA while a driver has it; null without either', () => {
    expect(lateBySeconds(trip({ promised_at: promised, status: 'completed', completed_at: new Date('2026-01-05T10:02:00Z') }))).toBe(120);
    expect(lateBySeconds(trip({ promised_at: promised, eta_dropoff_at: new Date('2026-01-05T09:59:00Z') }))).toBe(-60);
    expect(lateBySeconds(trip({ promised_at: promised, eta_dropoff_at: new Date('2026-01-05T10:01:00Z'), driver_id: null }))).toBeNull();
    expect(
      lateBySeconds(trip({ promised_at: promised, status: 'returning', eta_dropoff_at: new Date('2026-01-05T10:01:00Z') })),
    ).toBeNull();
    expect(lateBySeconds(trip({ eta_dropoff_at: new Date('2026-01-05T10:01:00Z') }))).toBeNull();
  });

  it("only the trip's own driver, while he carries it", () => {
    const driver = { userId: 'u', kind: 'repartidor' as const };
    expect(recipientContactVisible(trip({ status: 'picked_up' }), driver)).toBe(true);
    expect(recipientContactVisible(trip({ status: 'assigned' }), driver)).toBe(false);
    expect(recipientContactVisible(trip({ status: 'completed' }), driver)).toBe(false);
    expect(recipientContactVisible(trip({ status: 'in_transit' }), { userId: 'other', kind: 'repartidor' })).toBe(false);
    expect(recipientContactVisible(trip({ status: 'in_transit' }), { userId: 'u', kind: 'administrator' })).toBe(false);
  });
});
