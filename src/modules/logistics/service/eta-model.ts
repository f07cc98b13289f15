import { haversineMeters, type LonLat } from '../../../platform/geo.js';
import type { StopKind } from '../schemas.js';

/**
 * The pure part of promises and live ETAs (no database, no clock): travel speeds learned from completed trips, the
 * order of a driver's remaining stops, and the arrival times along them. Distances are great-circle metres, so a
 * learned speed is an effective "straight-line" speed: it absorbs the detours of the streets of its territory and hour.
 */

/** Hours in a week: the bucket of a speed is (day of week 0 = Monday .. 6) × 24 + hour, in the organization's time zone. */
export const HOURS_OF_WEEK = 168;

/** Fewer samples than this in a bucket: the next, coarser level answers (territory by hour of day, territory, organization). */
export const MIN_SPEED_SAMPLES = 5;

/** A completed trip as a speed sample: straight-line pickup→dropoff metres over picked_up_at→completed_at seconds. */
export interface SpeedSample {
  territoryId: string | null;
  /** Hour of the week (0..167) when the leg started. */
  hourOfWeek: number;
  speedMps: number;
}

/** Samples outside this band are GPS or workflow noise (a trip completed from the store, a forgotten one). */
export const MIN_SAMPLE_MPS = 0.5;
export const MAX_SAMPLE_MPS = 40;

export function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** Where a learned speed came from (the bench and the promise report it). */
export type SpeedSource = 'territory_hour_of_week' | 'territory_hour' | 'territory' | 'organization' | 'setting';

export interface SpeedModel {
  /** Metres per second for a leg in the territory starting at the hour of the week. */
  speed(territoryId: string | null, hourOfWeek: number): { mps: number; source: SpeedSource };
  readonly samples: number;
}

/**
 * Learns speeds from samples: the median of the bucket (robust to the odd forgotten trip), from the finest level that
 * has at least `minSamples` samples: territory × hour of week, territory × hour of day, territory, organization;
 * else the `fallbackKmh` setting.
 */
export function learnSpeeds(samples: SpeedSample[], fallbackKmh: number, minSamples = MIN_SPEED_SAMPLES): SpeedModel {
  const buckets = new Map<string, number[]>();
  const add = (key: string, v: number) => {
    const b = buckets.get(key);
    if (b) b.push(v);
    else buckets.set(key, [v]);
  };
  let n = 0;
  for (const s of samples) {
    if (!(s.speedMps >= MIN_SAMPLE_MPS && s.speedMps <= MAX_SAMPLE_MPS)) continue;
    n++;
    const t = s.territoryId ?? '-';
    add(`w|${t}|${s.hourOfWeek}`, s.speedMps);
    add(`h|${t}|${s.hourOfWeek % 24}`, s.speedMps);
    add(`t|${t}`, s.speedMps);
    add('o', s.speedMps);
  }
  const medians = new Map<string, number>();
  for (const [k, v] of buckets) if (v.length >= minSamples) medians.set(k, median(v));
  const fallback = (fallbackKmh * 1000) / 3600;
  return {
    samples: n,
    speed(territoryId, hourOfWeek) {
      const t = territoryId ?? '-';
      const levels: [string, SpeedSource][] = [
        [`w|${t}|${hourOfWeek}`, 'territory_hour_of_week'],
        [`h|${t}|${hourOfWeek % 24}`, 'territory_hour'],
        [`t|${t}`, 'territory'],
        ['o', 'organization'],
      ];
      for (const [k, source] of levels) {
        const v = medians.get(k);
        if (v !== undefined) return { mps: v, source };
      }
      return { mps: fallback, source: 'setting' };
    },
  };
}

/** A model that always answers the setting (no learning): the constant the bench compares against. */
export const constantSpeeds = (kmh: number): SpeedModel => learnSpeeds([], kmh);

const DAY_INDEX: Record<string, number> = { Mon: 0, Tue: 1, Wed: 2, Thu: 3, Fri: 4, Sat: 5, Sun: 6 };
const formatters = new Map<string, Intl.DateTimeFormat>();

/** The hour of the week (0 = Monday 00:00–01:00) of an instant in a time zone. */
export function hourOfWeek(at: Date, timeZone = 'UTC'): number {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', { timeZone, weekday: 'short', hour: 'numeric', hourCycle: 'h23' });
    formatters.set(timeZone, f);
  }
  let day = 0;
  let hour = 0;
  for (const p of f.formatToParts(at)) {
    if (p.type === 'weekday') day = DAY_INDEX[p.value] ?? 0;
    else if (p.type === 'hour') hour = Number(p.value) % 24;
  }
  return day * 24 + hour;
}

/** Seconds a driver spends at a stop (parking, handing over); the ETA of the next stop starts after it. */
export const DWELL_S = { pickup: 180, dropoff: 120 } as const;

export interface EtaTrip {
  id: string;
  status: string;
  territoryId: string | null;
  pickup: LonLat;
  dropoff: LonLat;
  /** Position of the pickup in a committed plan's route (1-based), or null. */
  stopOrder: number | null;
  /** When the driver got it (ties and trips outside a plan). */
  assignedAt: Date | null;
}

export interface Stop {
  tripId: string;
  kind: StopKind;
  at: LonLat;
  territoryId: string | null;
}

const ON_BOARD = new Set(['picked_up', 'in_transit']);
const TO_PICK = new Set(['assigned', 'accepted']);

/**
 * A driver's remaining stops, in order. With a committed plan's route (`route`: its stops in order), the remaining
 * stops follow it; stops it does not know (trips given since) come after. Without one: what he carries first
 * (dropoffs, in the order he got the trips), then each trip still to pick up, pickup then dropoff, in the plan's
 * stop order when the trips have one, else in the order he got them.
 */
export function remainingStops(trips: EtaTrip[], route: { tripId: string; kind: StopKind }[] = []): Stop[] {
  const byId = new Map(trips.map((t) => [t.id, t]));
  const pending = (t: EtaTrip, kind: StopKind) =>
    kind === 'pickup' ? TO_PICK.has(t.status) : TO_PICK.has(t.status) || ON_BOARD.has(t.status);
  const stop = (t: EtaTrip, kind: StopKind): Stop => ({
    tripId: t.id,
    kind,
    at: kind === 'pickup' ? t.pickup : t.dropoff,
    territoryId: t.territoryId,
  });
  const out: Stop[] = [];
  const seen = new Set<string>();
  for (const r of route) {
    const t = byId.get(r.tripId);
    const key = `${r.tripId}|${r.kind}`;
    if (!t || seen.has(key) || !pending(t, r.kind)) continue;
    // A dropoff never before its own pickup.
    if (r.kind === 'dropoff' && TO_PICK.has(t.status) && !seen.has(`${t.id}|pickup`)) continue;
    seen.add(key);
    out.push(stop(t, r.kind));
  }
  const rank = (t: EtaTrip) => [t.stopOrder ?? Number.MAX_SAFE_INTEGER, t.assignedAt?.getTime() ?? 0] as const;
  const sorted = [...trips].sort((a, b) => {
    const [ra, rb] = [rank(a), rank(b)];
    return ra[0] - rb[0] || ra[1] - rb[1] || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
  });
  const rest: Stop[] = [];
  for (const t of sorted.filter((x) => ON_BOARD.has(x.status))) rest.push(stop(t, 'dropoff'));
  for (const t of sorted.filter((x) => TO_PICK.has(x.status))) rest.push(stop(t, 'pickup'), stop(t, 'dropoff'));
  for (const s of rest) {
    const key = `${s.tripId}|${s.kind}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(s);
  }
  return out;
}

/** Arrival time at each stop from `from` at `start`, leg by leg at the model's speed for the stop's territory and hour. */
export function arrivals(
  from: LonLat,
  start: Date,
  stops: Stop[],
  speeds: SpeedModel,
  timeZone = 'UTC',
  dwell: { pickup: number; dropoff: number } = DWELL_S,
): Date[] {
  let t = start.getTime();
  let here = from;
  const out: Date[] = [];
  for (const s of stops) {
    const v = speeds.speed(s.territoryId, hourOfWeek(new Date(t), timeZone)).mps;
    t += (haversineMeters(here, s.at) / v) * 1000;
    out.push(new Date(t));
    t += dwell[s.kind] * 1000;
    here = s.at;
  }
  return out;
}

/** Per trip: the ETA at its pickup (null once picked up) and at its dropoff, from the driver's position along his stops. */
export function tripEtas(
  from: LonLat,
  start: Date,
  trips: EtaTrip[],
  speeds: SpeedModel,
  timeZone = 'UTC',
  route: { tripId: string; kind: StopKind }[] = [],
) {
  const stops = remainingStops(trips, route);
  const times = arrivals(from, start, stops, speeds, timeZone);
  const out = new Map<string, { pickup: Date | null; dropoff: Date | null }>();
  for (const t of trips) out.set(t.id, { pickup: null, dropoff: null });
  stops.forEach((s, i) => {
    out.get(s.tripId)![s.kind] = times[i]!;
  });
  return out;
}

/** Travel seconds of a leg (the promise's travel estimate). */
export function travelSeconds(
  from: LonLat,
  to: LonLat,
  speeds: SpeedModel,
  territoryId: string | null,
  at: Date,
  timeZone = 'UTC',
): number {
  return haversineMeters(from, to) / speeds.speed(territoryId, hourOfWeek(at, timeZone)).mps;
}

/** The delivery promise: `start` (order time, or when the branch has it ready) + preparation + travel + dispatch buffer. */
export function promiseAt(start: Date, parts: { preparationMin: number; travelS: number; bufferMin: number }): Date {
  return new Date(start.getTime() + (parts.preparationMin * 60 + parts.travelS + parts.bufferMin * 60) * 1000);
}

/**
 * Whether a trip's ETA crossed its promise plus the grace, and what to do about the marker: raise trip.delayed when it
 * is late and was not (`delayedAt` null), clear the marker when it came back under, nothing otherwise (once per crossing).
 */
export function delayTransition(
  etaDropoff: Date | null,
  promisedAt: Date | null,
  graceMin: number,
  delayedAt: Date | null,
): 'raise' | 'clear' | null {
  if (!etaDropoff || !promisedAt) return null;
  const late = etaDropoff.getTime() > promisedAt.getTime() + graceMin * 60_000;
  if (late && !delayedAt) return 'raise';
  if (!late && delayedAt) return 'clear';
  return null;
}
