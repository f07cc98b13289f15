/**
 * Optimizer quality benchmark (pure CPU: no server, no database). For each instance — random
 * uniform and clustered (pickups around a few commercial centres of La Paz, drop-offs over the
 * city), 100 trips × 20 drivers and 500 × 60, a 60-minute route cap, service times — it solves with
 * the greedy nearest-driver baseline, with the default iteration budget, and with 10× that budget,
 * and reports time (wall: what a dispatcher waits, the search's two chains on two threads as in
 * the server; and the CPU of both threads: run it on an otherwise idle machine),
 * iterations, stop reason, assigned trips, objective, distance, mean drop-off time, drivers used,
 * the gap to the 10× run (see `gap`: assigned trips first, then the cost per assigned trip), and
 * the improvement curve (best objective at 0, 10, 25, 50, 100 % of the iterations, relative to the
 * final one). The table is measured after two warm-up solves (JIT), whose times are reported.
 * The runs have no wall-clock ceiling (the API's `time_budget_ms` would cut them on a loaded
 * machine): the times are those of the full, deterministic default budget.
 *
 *   npm run bench:optimizer [-- --quick]     (or: npx tsx bench/optimizer.ts [--quick])
 *   npx tsx bench/optimizer.ts --solver-seeds=1,2,3,4 [--only=clustered-500]
 *       the default budget only, once per solver seed on each instance: the mean and spread of the trips
 *       assigned, the cost per trip and the CPU (one seed decides rows near the 2 % threshold; compare code
 *       changes by these means)
 *   npx tsx bench/optimizer.ts --solver-seeds=1,2,3,4 --reference [--only=…]
 *       and the 10× budget per solver seed: the gap to it per seed, and between the means of the two budgets
 *   npm run bench -- --only=optimizer         (the same rows in the main benchmark's table)
 */
import { pathToFileURL } from 'node:url';
import type { BenchEnv, BenchRow } from './lib.js';
import { mulberry32, type Rng } from '../src/modules/dispatch/optimizer/prng.js';
import { helperChain } from '../src/modules/dispatch/service/chain-thread.js';
import {
  DEFAULTS,
  greedyNearestDriver,
  solve,
  validatePlan,
  type LonLat,
  type OptimizerOptions,
  type OptimizerProblem,
  type Plan,
} from '../src/modules/dispatch/optimizer/index.js';

const CITY: LonLat = { lon: -68.1193, lat: -16.4897 };
const M_PER_DEG_LAT = 111_320;
const M_PER_DEG_LON = 111_320 * Math.cos((CITY.lat * Math.PI) / 180);

/** Box-Muller normal deviate. */
function gaussian(rng: Rng): number {
  const u = 1 - rng();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rng());
}

const offset = (center: LonLat, eastM: number, northM: number): LonLat => ({
  lon: center.lon + eastM / M_PER_DEG_LON,
  lat: center.lat + northM / M_PER_DEG_LAT,
});
const around = (rng: Rng, center: LonLat, sigmaM: number): LonLat => offset(center, gaussian(rng) * sigmaM, gaussian(rng) * sigmaM);
const uniform = (rng: Rng, sideM: number): LonLat => offset(CITY, (rng() - 0.5) * sideM, (rng() - 0.5) * sideM);
const capacity = (rng: Rng) => 3 + Math.floor(rng() * 3);

/** Clustered: pickups around 5 commercial centres, drop-offs and drivers over the city. */
export function cityInstance(trips: number, drivers: number, seed: number): OptimizerProblem {
  const rng = mulberry32(seed);
  const centers = Array.from({ length: 5 }, () => around(rng, CITY, 2500));
  return {
    trips: Array.from({ length: trips }, (_, i) => ({
      id: `t${i}`,
      pickup: around(rng, centers[Math.floor(rng() * centers.length)], 350),
      dropoff: around(rng, CITY, 3000),
    })),
    drivers: Array.from({ length: drivers }, (_, i) => ({ id: `d${i}`, position: around(rng, CITY, 3000), capacity: capacity(rng) })),
  };
}

/** Uniform: pickups, drop-offs and drivers uniform over a 10 km × 10 km square. */
export function uniformInstance(trips: number, drivers: number, seed: number): OptimizerProblem {
  const rng = mulberry32(seed);
  return {
    trips: Array.from({ length: trips }, (_, i) => ({ id: `t${i}`, pickup: uniform(rng, 10_000), dropoff: uniform(rng, 10_000) })),
    drivers: Array.from({ length: drivers }, (_, i) => ({ id: `d${i}`, position: uniform(rng, 10_000), capacity: capacity(rng) })),
  };
}

interface Case {
  kind: 'uniform' | 'clustered';
  trips: number;
  drivers: number;
  /** Target for the default budget, CPU milliseconds. */
  targetMs: number;
}

const CASES: Case[] = [
  { kind: 'uniform', trips: 100, drivers: 20, targetMs: 1000 },
  { kind: 'clustered', trips: 100, drivers: 20, targetMs: 1000 },
  { kind: 'uniform', trips: 500, drivers: 60, targetMs: 10_000 },
  { kind: 'clustered', trips: 500, drivers: 60, targetMs: 10_000 },
];

/** The constraints of every run: a 60-minute route cap and one minute of service at each stop. */
export const BENCH_OPTIONS: OptimizerOptions = { maxRouteDurationS: 3600, serviceTimePickupS: 60, serviceTimeDropoffS: 60 };

export interface Run {
  plan: Plan;
  wallMs: number;
  cpuMs: number;
}

function run(problem: OptimizerProblem, options: OptimizerOptions, greedy = false): Run {
  const cpu = process.cpuUsage();
  const started = performance.now();
  const plan = greedy ? greedyNearestDriver(problem, options) : solve(problem, options, { chain: helperChain });
  const wallMs = performance.now() - started;
  const used = process.cpuUsage(cpu);
  const errors = validatePlan(problem, plan, options);
  if (errors.length > 0) throw new Error(`invalid plan: ${errors.slice(0, 3).join('; ')}`);
  return { plan, wallMs, cpuMs: (used.user + used.system) / 1000 };
}

/** Best objective at a share of the iterations, relative to the final best (the curve is lexicographic: assigned, then cost). */
function curveAt(plan: Plan, share: number): string {
  const it = Math.floor(plan.iterations * share);
  let point = plan.curve[0];
  for (const p of plan.curve) if (p.iteration <= it) point = p;
  const last = plan.curve[plan.curve.length - 1];
  return point.assigned < last.assigned
    ? `${point.assigned - last.assigned} trips`
    : `+${(100 * (point.cost / last.cost - 1)).toFixed(1)}%`;
}

/**
 * Gap of the default run `a` to its own 10× run `b` on the primary objective, lexicographic: the
 * assigned trips first, then the time objective. Two figures: the count gap, 1 − assigned(a) /
 * assigned(b) (0 when a assigns as many or more), and the cost gap per assigned trip,
 * (cost(a) / assigned(a)) / (cost(b) / assigned(b)) − 1: the plain cost ratio when both assign as
 * many trips; with fewer trips the total cost would flatter a (fewer drop-offs in the sum), so it is
 * compared per trip. "Within 2 %": both gaps at most 2 %. The value reported is the larger of the two.
 */
export function gap(a: Plan, b: Plan): { value: number; met: boolean; note: string } {
  const g = gapOf(outcome(a), outcome(b));
  const pct = (v: number) => `${v >= 0 ? '+' : ''}${(100 * v).toFixed(2)} %`;
  const trips = a.totals.assigned - b.totals.assigned;
  const count =
    trips === 0
      ? `same ${a.totals.assigned} trips assigned`
      : `${a.totals.assigned} vs ${b.totals.assigned} trips assigned (${trips > 0 ? '+' : ''}${trips}, count gap ${pct(g.countGap)})`;
  const cost = trips === 0 ? `cost ${pct(g.costGap)}` : `cost per assigned trip ${pct(g.costGap)} (total cost ${pct(a.cost / b.cost - 1)})`;
  return {
    value: Math.round(1000 * Math.max(g.countGap, g.costGap)) / 10,
    met: g.met,
    note: `${count}; ${cost}; ${g.met ? 'meets' : 'MISSES'} the target (count gap and cost gap both <= 2 %)`,
  };
}

/** What `gap` compares of a plan (or of the mean over several plans): trips assigned and cost per assigned trip. */
interface Outcome {
  assigned: number;
  perTrip: number;
}

const outcome = (p: Plan): Outcome => ({ assigned: p.totals.assigned, perTrip: p.cost / Math.max(1, p.totals.assigned) });

/** The two gaps of `gap` and whether both are within 2 %. */
function gapOf(a: Outcome, b: Outcome): { countGap: number; costGap: number; met: boolean } {
  const countGap = Math.max(0, 1 - a.assigned / b.assigned);
  const costGap = a.perTrip / b.perTrip - 1;
  // Compared in hundredths of a percent: 1 − 392/400 is 0.020000000000000018 in floating point, and exactly 2 % is within.
  const within = (g: number) => Math.round(g * 10_000) <= 200;
  return { countGap, costGap, met: within(countGap) && within(costGap) };
}

const km = (m: number) => Math.round(m / 10) / 100;
const minutes = (s: number) => Math.round(s / 6) / 10;
const used = (p: Plan) => p.routes.filter((r) => r.stops.length > 0);

/**
 * The benchmark as a scenario of bench/run.ts (`env.report` gets every row) or standalone (below).
 * Instance seeds 1 and 2 (1 with --quick); each row's solver seed is its instance seed. The gap to the 10× run is
 * reported twice: for that seed, and between the means over GAP_SEEDS solver seeds (the default and the 10× budget
 * once per seed; skipped with --quick, and with --quick the 500 × 60 rows have no 10× run at all).
 */
export async function optimizerBench(env: Pick<BenchEnv, 'report' | 'quick'>): Promise<void> {
  const seeds = env.quick ? [1] : [1, 2];
  // The first solves in a process also pay for compiling the solver (V8 optimizes and re-optimizes
  // it on threads of its own, counted in the process CPU time): measured here, the first and the
  // second solve of a fresh process took 2 to 3 times as long as later ones. A server solves plan
  // after plan, so the table is measured after two warm-up solves of instances that are not in it;
  // their times are reported too.
  for (const [n, make] of [
    ['first', uniformInstance],
    ['second', cityInstance],
  ] as const) {
    const warm = run(make(100, 20, 99), { ...BENCH_OPTIONS, seed: 99, timeBudgetMs: 3_600_000 });
    env.report({
      scenario: `optimizer warm-up ${make === uniformInstance ? 'uniform' : 'clustered'} 100x20 #99`,
      metric: `${n} solve, wall (JIT warming)`,
      value: Math.round(warm.wallMs),
      unit: 'ms',
      note: `${Math.round(warm.cpuMs)} ms CPU, ${warm.plan.iterations} iterations; the rows below are measured after both`,
    });
  }
  for (const c of CASES) {
    for (const seed of seeds) {
      const problem = (c.kind === 'uniform' ? uniformInstance : cityInstance)(c.trips, c.drivers, seed);
      const scenario = `optimizer ${c.kind} ${c.trips}x${c.drivers} #${seed}`;
      const budget = DEFAULTS.iterations(c.trips);
      // no wall-clock ceiling: the default iteration budget runs to its end, as on an idle machine
      const options: OptimizerOptions = { ...BENCH_OPTIONS, seed, timeBudgetMs: 3_600_000 };
      const greedy = run(problem, options, true);
      const base = run(problem, options);
      const report = (metric: string, value: number, unit?: string, note?: string) => env.report({ scenario, metric, value, unit, note });
      report(
        'wall time (default budget)',
        Math.round(base.wallMs),
        'ms',
        `wall: the solve's own time, its two chains on two threads; ${Math.round(base.cpuMs)} ms CPU in all; target < ${c.targetMs} ms; ${base.wallMs < c.targetMs ? 'meets' : 'MISSES'} target`,
      );
      report('iterations', base.plan.iterations, '', `budget ${budget}, stopped by ${base.plan.stoppedBy}`);
      report('assigned', base.plan.totals.assigned, 'trips', `greedy ${greedy.plan.totals.assigned} of ${c.trips}`);
      report(
        'mean drop-off',
        minutes(base.plan.totals.sumDropoffS / Math.max(1, base.plan.totals.assigned)),
        'min',
        `greedy ${minutes(greedy.plan.totals.sumDropoffS / Math.max(1, greedy.plan.totals.assigned))} min`,
      );
      report('distance', km(base.plan.totals.distanceM), 'km', `greedy ${km(greedy.plan.totals.distanceM)} km`);
      const routes = used(base.plan);
      report(
        'drivers used',
        routes.length,
        '',
        `longest route ${Math.max(0, ...routes.map((r) => r.stops.length))} stops, ${minutes(Math.max(0, ...routes.map((r) => r.durationS)))} min`,
      );
      report(
        'improvement curve',
        base.plan.curve.length,
        'new bests',
        `best at 0/10/25/50/100 % of the iterations vs final: ${[0, 0.1, 0.25, 0.5, 1].map((s) => curveAt(base.plan, s)).join(' / ')}`,
      );
      if (env.quick && c.trips > 100) continue;
      const ten = run(problem, { ...options, iterations: 10 * budget });
      report(
        'wall time (10× budget)',
        Math.round(ten.wallMs),
        'ms',
        `${Math.round(ten.cpuMs)} ms CPU, ${ten.plan.iterations} iterations, stopped by ${ten.plan.stoppedBy}`,
      );
      const g = gap(base.plan, ten.plan);
      report('gap to 10× budget', g.value, '%', g.note);
      if (env.quick) continue;
      const pairs = GAP_SEEDS.map((s) => (s === seed ? { base, ten } : budgetPair(problem, s, budget)));
      const seeds = seedGaps(pairs);
      report(`gap, ${GAP_SEEDS.length} solver seeds`, seeds.value, '%', seeds.note);
    }
  }
}

/**
 * The solver seeds of the seed-averaged gap. One 10× run is itself a draw: on clustered 500 × 60 #2 the 10× runs of
 * seeds 1–4 assign 389, 394, 395 and 390 trips, a spread larger than the 2 % margin, so a row near it turns on the
 * seed; the gap between the means of a few seeds is the gap to expect.
 */
const GAP_SEEDS = [1, 2, 3, 4];

/** The default and the 10× budget for one solver seed. */
function budgetPair(problem: OptimizerProblem, seed: number, budget: number): { base: Run; ten: Run } {
  const options: OptimizerOptions = { ...BENCH_OPTIONS, seed, timeBudgetMs: 3_600_000 };
  return { base: run(problem, options), ten: run(problem, { ...options, iterations: 10 * budget }) };
}

/**
 * The gap of each default run to the 10× run of its seed, and between the means of the two budgets (mean trips
 * assigned, mean cost per assigned trip): the value reported is the larger of the mean count and cost gaps.
 */
export function seedGaps(pairs: { base: Run; ten: Run }[]): { value: number; met: boolean; note: string } {
  const each = pairs.map((p) => gap(p.base.plan, p.ten.plan));
  const m = gapOf(meanOutcome(pairs.map((p) => p.base)), meanOutcome(pairs.map((p) => p.ten)));
  const pct = (v: number) => `${(100 * v).toFixed(2)} %`;
  const trips = (runs: Run[]) => runs.map((r) => r.plan.totals.assigned).join(', ');
  return {
    value: Math.round(1000 * Math.max(m.countGap, m.costGap)) / 10,
    met: m.met,
    note:
      `trips ${trips(pairs.map((p) => p.base))} vs ${trips(pairs.map((p) => p.ten))} (10×); per seed ${each.map((g) => `${g.value} %`).join(', ')}, ` +
      `${each.filter((g) => g.met).length} of ${each.length} within 2 %; between the means: count ${pct(m.countGap)}, cost per trip ${pct(m.costGap)}; ` +
      `${m.met ? 'meets' : 'MISSES'} the target`,
  };
}

export default optimizerBench;

/**
 * The default budget once per solver seed on each instance (`only`: e.g. "clustered-500"), printed as one line per
 * instance: assigned trips (mean, min–max, each seed's), cost per assigned trip, iterations and CPU (means).
 * `reference`: also the 10× budget per solver seed, and the gap of the default runs to them, per seed and between
 * the means (the gap one should expect of a seed: one 10× run is itself one draw, and rows near 2 % turn on it).
 */
export function seedSpread(solverSeeds: number[], only?: string, reference = false): void {
  const kinds = CASES.map((c) => `${c.kind}-${c.trips}`);
  if (only && !kinds.includes(only)) throw new Error(`--only: one of ${kinds.join(', ')}`);
  if (solverSeeds.length === 0 || solverSeeds.some((s) => !Number.isInteger(s)))
    throw new Error('--solver-seeds: integers, comma-separated');
  for (const make of [uniformInstance, cityInstance]) run(make(100, 20, 99), { ...BENCH_OPTIONS, seed: 99, timeBudgetMs: 3_600_000 });
  for (const c of CASES) {
    for (const seed of [1, 2]) {
      if (only && `${c.kind}-${c.trips}` !== only) continue;
      const problem = (c.kind === 'uniform' ? uniformInstance : cityInstance)(c.trips, c.drivers, seed);
      const name = `${c.kind} ${c.trips}x${c.drivers} #${seed}`;
      const runs = solverSeeds.map((s) => run(problem, { ...BENCH_OPTIONS, seed: s, timeBudgetMs: 3_600_000 }));
      console.log(`${name}: ${spread(runs)} (solver seeds ${solverSeeds.join(', ')})`);
      if (!reference) continue;
      const budget = DEFAULTS.iterations(c.trips);
      const tens = solverSeeds.map((s) => run(problem, { ...BENCH_OPTIONS, seed: s, iterations: 10 * budget, timeBudgetMs: 3_600_000 }));
      console.log(`${name} 10×: ${spread(tens)}`);
      console.log(`${name} gap: ${seedGaps(runs.map((base, i) => ({ base, ten: tens[i] }))).note}`);
    }
  }
}

/** Mean assigned trips and mean cost per assigned trip of some runs. */
function meanOutcome(runs: Run[]): Outcome {
  const all = runs.map((r) => outcome(r.plan));
  return { assigned: all.reduce((s, o) => s + o.assigned, 0) / all.length, perTrip: all.reduce((s, o) => s + o.perTrip, 0) / all.length };
}

/** Assigned trips (mean, min–max, each run's), mean cost per assigned trip, iterations and CPU. */
function spread(runs: Run[]): string {
  const mean = (f: (r: Run) => number) => runs.reduce((sum, r) => sum + f(r), 0) / runs.length;
  const assigned = runs.map((r) => r.plan.totals.assigned);
  return (
    `assigned ${mean((r) => r.plan.totals.assigned).toFixed(2)} (${Math.min(...assigned)}–${Math.max(...assigned)}: ${assigned.join(', ')}), ` +
    `cost per trip ${mean((r) => outcome(r.plan).perTrip).toFixed(0)}, ${mean((r) => r.plan.iterations).toFixed(0)} iterations, ${mean((r) => r.wallMs).toFixed(0)} ms wall, ${mean((r) => r.cpuMs).toFixed(0)} ms CPU`
  );
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href && process.argv.some((a) => a.startsWith('--solver-seeds='))) {
  const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
  seedSpread(arg('solver-seeds')!.split(',').map(Number), arg('only'), process.argv.includes('--reference'));
} else if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const rows: BenchRow[] = [];
  console.log('Optimizer benchmark: wall times of solves on two threads, with the CPU they used; run it on an otherwise idle machine.');
  await optimizerBench({
    quick: process.argv.includes('--quick'),
    report: (row) => {
      rows.push(row);
      console.log(
        `${row.scenario.padEnd(36)} ${row.metric.padEnd(24)} ${String(row.value).padStart(8)} ${row.unit ?? ''}${row.note ? `  (${row.note})` : ''}`,
      );
    },
  });
}
