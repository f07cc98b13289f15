/**
 * Optimizer benchmark: city-like instances (pickups clustered around a few commercial centres of
 * La Paz, dropoffs spread over the city, drivers anywhere), solved by `solve` and by the greedy
 * nearest-driver baseline in the same run. Pure CPU: needs no server or database.
 *
 *   npx tsx bench/optimizer.ts [--quick]
 */
import { pathToFileURL } from 'node:url';
import type { BenchEnv, BenchRow } from './lib.js';
import { mulberry32, type Rng } from '../src/modules/dispatch/optimizer/prng.js';
import {
  greedyNearestDriver,
  solve,
  validatePlan,
  type LonLat,
  type OptimizerProblem,
} from '../src/modules/dispatch/optimizer/index.js';

const CITY: LonLat = { lon: -68.1193, lat: -16.4897 };
const M_PER_DEG_LAT = 111_320;
const M_PER_DEG_LON = 111_320 * Math.cos((CITY.lat * Math.PI) / 180);

/** Box-Muller normal deviate. */
function gaussian(rng: Rng): number {
  const u = 1 - rng();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rng());
}

function around(rng: Rng, center: LonLat, sigmaM: number): LonLat {
  return {
    lon: center.lon + (gaussian(rng) * sigmaM) / M_PER_DEG_LON,
    lat: center.lat + (gaussian(rng) * sigmaM) / M_PER_DEG_LAT,
  };
}

export function cityInstance(trips: number, drivers: number, seed: number): OptimizerProblem {
  const rng = mulberry32(seed);
  const centers = Array.from({ length: 5 }, () => around(rng, CITY, 2500));
  return {
    trips: Array.from({ length: trips }, (_, i) => ({
      id: `t${i}`,
      pickup: around(rng, centers[Math.floor(rng() * centers.length)], 350),
      dropoff: around(rng, CITY, 3000),
    })),
    drivers: Array.from({ length: drivers }, (_, i) => ({
      id: `d${i}`,
      position: around(rng, CITY, 3000),
      capacity: 3 + Math.floor(rng() * 3),
    })),
  };
}

interface Case {
  name: string;
  trips: number;
  drivers: number;
  timeBudgetMs: number;
  targetMs: number;
  targetRatio?: number;
  /** Variant with a stop limit: the pure distance objective otherwise piles trips on a few drivers. */
  maxStopsPerRoute?: number;
}

const CASES: Case[] = [
  { name: '100x20', trips: 100, drivers: 20, timeBudgetMs: 800, targetMs: 1000, targetRatio: 0.8 },
  { name: '500x60', trips: 500, drivers: 60, timeBudgetMs: 8000, targetMs: 10_000 },
  { name: '100x20 max 10 stops', trips: 100, drivers: 20, timeBudgetMs: 800, targetMs: 1000, maxStopsPerRoute: 10 },
  { name: '500x60 max 20 stops', trips: 500, drivers: 60, timeBudgetMs: 8000, targetMs: 10_000, maxStopsPerRoute: 20 },
];

export default async function optimizerBench(env: Pick<BenchEnv, 'report' | 'quick'>): Promise<void> {
  const seeds = env.quick ? [1] : [1, 2, 3];
  for (const c of CASES) {
    for (const seed of seeds) {
      const problem = cityInstance(c.trips, c.drivers, seed);
      const scenario = `optimizer ${c.name} #${seed}`;
      const options = { seed, maxStopsPerRoute: c.maxStopsPerRoute };
      const greedy = greedyNearestDriver(problem, options);
      const started = performance.now();
      const plan = solve(problem, { ...options, timeBudgetMs: c.timeBudgetMs });
      const ms = performance.now() - started;
      const errors = validatePlan(problem, plan, options);
      if (errors.length > 0) throw new Error(`${scenario}: invalid plan: ${errors.slice(0, 3).join('; ')}`);
      const ratio = plan.totals.distanceM / greedy.totals.distanceM;
      const verdict = ms < c.targetMs && (c.targetRatio === undefined || ratio <= c.targetRatio) ? 'meets target' : 'MISSES target';
      const rows: BenchRow[] = [
        { scenario, metric: 'solve time', value: Math.round(ms), unit: 'ms', note: `target < ${c.targetMs} ms` },
        { scenario, metric: 'iterations', value: plan.iterations },
        { scenario, metric: 'assigned', value: plan.totals.assigned, note: `greedy ${greedy.totals.assigned}` },
        { scenario, metric: 'distance', value: Math.round(plan.totals.distanceM / 10) / 100, unit: 'km' },
        {
          scenario,
          metric: 'longest route',
          value: Math.max(...plan.routes.map((r) => r.stops.length)),
          unit: 'stops',
          note: `${plan.routes.filter((r) => r.stops.length > 0).length} of ${c.drivers} drivers used`,
        },
        { scenario, metric: 'greedy distance', value: Math.round(greedy.totals.distanceM / 10) / 100, unit: 'km' },
        {
          scenario,
          metric: 'distance / greedy',
          value: Math.round(ratio * 1000) / 1000,
          note: `${c.targetRatio ? `target <= ${c.targetRatio}; ` : ''}${verdict}`,
        },
      ];
      rows.forEach(env.report);
    }
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const rows: BenchRow[] = [];
  await optimizerBench({ quick: process.argv.includes('--quick'), report: (row) => rows.push(row) });
  console.table(rows.map((r) => ({ ...r, unit: r.unit ?? '', note: r.note ?? '' })));
}
