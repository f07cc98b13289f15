/**
 * npm run bench:eta : ETA accuracy of the learned speeds against the constant `average_speed_kmh`, on a simulated day.
 *
 * A synthetic organization with three territories whose true speed varies by hour of the week (rush hours slower,
 * nights faster, the centre slowest) and per trip (log-normal noise, a few "forgotten" trips completed far too late).
 * Four weeks of completed trips teach the speeds (`learnSpeeds`, the code the server runs); then a day of new trips is
 * replayed: 30, 15 and 5 minutes before each drop-off, the ETA from the driver's position at that moment is compared
 * with the true arrival. Reports the mean absolute error and the p90, in minutes, learned vs constant.
 * Deterministic (seeded); pure functions only, no database.
 */
import { haversineMeters, type LonLat } from '../src/platform/geo.js';
import {
  constantSpeeds,
  hourOfWeek,
  learnSpeeds,
  travelSeconds,
  type SpeedModel,
  type SpeedSample,
} from '../src/modules/logistics/service/eta-model.js';

const SETTING_KMH = 25;
const HISTORY_TRIPS = Number(process.env.ETA_HISTORY ?? 6000);
const DAY_TRIPS = Number(process.env.ETA_DAY ?? 1500);
const HORIZONS_MIN = [30, 15, 5];

let seed = 20_261_128;
const rand = () => {
  seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
  return seed / 2 ** 31;
};
const gauss = () => Math.sqrt(-2 * Math.log(rand() || 1e-9)) * Math.cos(2 * Math.PI * rand());

const TERRITORIES = [
  { id: 'centro', base: 4.2, at: { lon: -68.135, lat: -16.5 } },
  { id: 'sur', base: 6.5, at: { lon: -68.08, lat: -16.54 } },
  { id: 'alto', base: 8.0, at: { lon: -68.18, lat: -16.5 } },
];

/** True mean straight-line speed (m/s) of a territory at an hour of the week. */
function trueSpeed(base: number, how: number): number {
  const hour = how % 24;
  const weekend = how >= 5 * 24;
  let f = 1;
  if (!weekend && ((hour >= 7 && hour < 9) || (hour >= 17 && hour < 20))) f = 0.55;
  else if (hour >= 12 && hour < 14) f = 0.75;
  else if (hour >= 22 || hour < 6) f = 1.35;
  if (weekend) f *= 1.1;
  return base * f;
}

const offset = (p: LonLat, km: number, angle: number): LonLat => ({
  lon: p.lon + (km / 107) * Math.cos(angle),
  lat: p.lat + (km / 111) * Math.sin(angle),
});

interface SimTrip {
  territory: (typeof TERRITORIES)[number];
  pickup: LonLat;
  dropoff: LonLat;
  start: Date;
  speed: number;
}

function simTrip(start: Date): SimTrip {
  const territory = TERRITORIES[Math.floor(rand() * TERRITORIES.length)]!;
  const pickup = offset(territory.at, rand() * 2, rand() * 2 * Math.PI);
  const dropoff = offset(pickup, 1 + rand() * 9, rand() * 2 * Math.PI);
  const noise = Math.exp(0.15 * gauss());
  const forgotten = rand() < 0.03 ? 0.15 : 1; // completed long after the real hand-over
  return { territory, pickup, dropoff, start, speed: trueSpeed(territory.base, hourOfWeek(start)) * noise * forgotten };
}

const DAY_MS = 86_400_000;
const monday = Date.parse('2026-11-02T00:00:00Z');

// Four weeks of history before the replayed day (Monday of the fifth week), starts spread over the day (more at meal times).
const samples: SpeedSample[] = [];
for (let i = 0; i < HISTORY_TRIPS; i++) {
  const start = new Date(monday + Math.floor(rand() * 28) * DAY_MS + (6 + rand() * 17) * 3600_000);
  const s = simTrip(start);
  samples.push({ territoryId: s.territory.id, hourOfWeek: hourOfWeek(start), speedMps: s.speed });
}
const learned = learnSpeeds(samples, SETTING_KMH);
const constant = constantSpeeds(SETTING_KMH);

const errors = new Map<string, number[]>();
const day = monday + 28 * DAY_MS + 2 * DAY_MS; // a Wednesday
for (let i = 0; i < DAY_TRIPS; i++) {
  const s = simTrip(new Date(day + (6 + rand() * 17) * 3600_000));
  if (s.speed < 1) continue; // a forgotten trip has no true arrival to compare with
  const dist = haversineMeters(s.pickup, s.dropoff);
  const durationS = dist / s.speed;
  for (const h of HORIZONS_MIN) {
    if (durationS < h * 60) continue;
    // Where the driver is h minutes before the drop-off, along the straight line.
    const f = 1 - (h * 60) / durationS;
    const here = { lon: s.pickup.lon + (s.dropoff.lon - s.pickup.lon) * f, lat: s.pickup.lat + (s.dropoff.lat - s.pickup.lat) * f };
    const now = new Date(s.start.getTime() + (durationS - h * 60) * 1000);
    for (const [name, model] of [
      ['learned', learned],
      ['constant', constant],
    ] as [string, SpeedModel][]) {
      const predicted = travelSeconds(here, s.dropoff, model, s.territory.id, now);
      const key = `${name}|${h}`;
      if (!errors.has(key)) errors.set(key, []);
      errors.get(key)!.push(Math.abs(predicted - h * 60) / 60);
    }
  }
}

const mean = (v: number[]) => v.reduce((a, b) => a + b, 0) / v.length;
const p90 = (v: number[]) => [...v].sort((a, b) => a - b)[Math.min(v.length - 1, Math.floor(0.9 * v.length))]!;
console.log(
  `ETA accuracy: ${samples.length} history trips (${learned.samples} kept as samples), ${DAY_TRIPS} trips replayed; constant ${SETTING_KMH} km/h`,
);
console.log('| before drop-off | n | learned mean | learned p90 | constant mean | constant p90 | mean error vs constant |');
console.log('|---|---|---|---|---|---|---|');
let worst = Infinity;
for (const h of HORIZONS_MIN) {
  const l = errors.get(`learned|${h}`) ?? [];
  const c = errors.get(`constant|${h}`) ?? [];
  const gain = 1 - mean(l) / mean(c);
  worst = Math.min(worst, gain);
  console.log(
    `| ${h} min | ${l.length} | ${mean(l).toFixed(2)} | ${p90(l).toFixed(2)} | ${mean(c).toFixed(2)} | ${p90(c).toFixed(2)} | ${(-gain * 100).toFixed(0)} % |`,
  );
}
console.log(
  `target (learned mean error at least 30 % below the constant's at every horizon): ${worst >= 0.3 ? 'met' : 'NOT met'} (worst ${(worst * 100).toFixed(0)} % below)`,
);
