/**
 * The optimizer on the Li & Lim PDPTW benchmark (see ../shared/benchmarks/li-lim/README.md): each instance file goes
 * through the same solve() the API uses (objective `vehicles`, Euclidean distances as a custom matrix, travel time =
 * distance), the solution is written as DIR/<name>.txt in the SINTEF format and checked by the independent checker
 * (bench/lilim-check.ts), and each row shows vehicles and distance against the best known solution (best-known-100.csv
 * or a best-known*.csv next to the instances' folder), the gap and the time; then a summary.
 *
 *   npm run bench:lilim -- --out DIR [--time-limit-s N] [--iterations N] [--seed N] FILE...
 *
 * --time-limit-s: the wall-clock ceiling of one solve (default 30; a ceiling only: the iteration budget decides).
 */
import { mkdirSync, readFileSync, writeFileSync, existsSync, readdirSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { solve } from '../src/modules/dispatch/optimizer/index.js';
import { checkLiLimSolution } from './lilim-check.js';
import { liLimOptions, liLimProblem, parseLiLim, planRoutes, sintefSolution } from './lilim-format.js';

interface Args {
  out: string;
  timeLimitS: number;
  iterations?: number;
  seed?: number;
  files: string[];
}

function parseArgs(argv: string[]): Args {
  const args: Args = { out: '', timeLimitS: 30, files: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      const v = a.includes('=') ? a.slice(a.indexOf('=') + 1) : argv[++i];
      if (v === undefined) throw new Error(`${a} needs a value`);
      return v;
    };
    if (a.startsWith('--out')) args.out = value();
    else if (a.startsWith('--time-limit-s')) args.timeLimitS = Number(value());
    else if (a.startsWith('--iterations')) args.iterations = Number(value());
    else if (a.startsWith('--seed')) args.seed = Number(value());
    else if (a.startsWith('--')) throw new Error(`unknown option ${a}`);
    else args.files.push(a);
  }
  if (!args.out || args.files.length === 0) throw new Error('usage: npm run bench:lilim -- --out DIR [--time-limit-s N] FILE...');
  if (!(args.timeLimitS > 0)) throw new Error('--time-limit-s must be a positive number');
  return args;
}

/** Best known (routes, distance) per instance name, from the best-known*.csv files near the instance files. */
function bestKnown(files: string[]): Map<string, { routes: number; distance: number }> {
  const out = new Map<string, { routes: number; distance: number }>();
  const dirs = new Set(files.flatMap((f) => [dirname(f), dirname(dirname(f))]));
  for (const dir of dirs) {
    if (!existsSync(dir)) continue;
    for (const f of readdirSync(dir).filter((x) => x.startsWith('best-known') && x.endsWith('.csv'))) {
      const [header, ...rows] = readFileSync(join(dir, f), 'utf8').trim().split(/\r?\n/);
      const cols = header.split(',');
      for (const row of rows) {
        const v = row.split(',');
        const get = (c: string) => v[cols.indexOf(c)];
        out.set(get('instance'), { routes: Number(get('routes')), distance: Number(get('distance')) });
      }
    }
  }
  return out;
}

export interface LiLimRow {
  name: string;
  vehicles: number;
  distance: number;
  bestVehicles?: number;
  bestDistance?: number;
  seconds: number;
  /** CPU seconds of the process during the solve (the wall time stretches when the machine is busy). */
  cpuSeconds: number;
  iterations: number;
  stoppedBy: string;
  errors: string[];
}

export function main(argv: string[]): LiLimRow[] {
  const args = parseArgs(argv);
  mkdirSync(args.out, { recursive: true });
  const best = bestKnown(args.files);
  const rows: LiLimRow[] = [];
  const pad = (s: string | number, w: number) => String(s).padStart(w);
  console.log(`time limit ${args.timeLimitS} s per instance${args.iterations ? `, ${args.iterations} iterations` : ''}`);
  console.log(
    `${'instance'.padEnd(10)} ${pad('veh', 4)} ${pad('best', 4)} ${pad('distance', 10)} ${pad('best', 10)} ${pad('gap %', 7)} ${pad('time s', 7)} ${pad('cpu s', 6)} ${pad('iter', 6)}  check`,
  );
  for (const file of args.files) {
    const name = basename(file).replace(/\.txt$/, '');
    const text = readFileSync(file, 'utf8');
    const inst = parseLiLim(name, text);
    const { problem, matrix } = liLimProblem(inst);
    const started = performance.now();
    const cpu = process.cpuUsage();
    const plan = solve(
      problem,
      liLimOptions(matrix, { timeBudgetMs: args.timeLimitS * 1000, iterations: args.iterations, seed: args.seed }),
    );
    const seconds = (performance.now() - started) / 1000;
    const used = process.cpuUsage(cpu);
    const cpuSeconds = (used.user + used.system) / 1e6;
    const routes = planRoutes(inst, plan);
    const solution = sintefSolution(name, routes);
    writeFileSync(join(args.out, `${name}.txt`), solution);
    const check = checkLiLimSolution(text, solution);
    const b = best.get(name);
    const row: LiLimRow = {
      name,
      vehicles: check.vehicles,
      distance: check.distance,
      bestVehicles: b?.routes,
      bestDistance: b?.distance,
      seconds,
      cpuSeconds,
      iterations: plan.iterations,
      stoppedBy: plan.stoppedBy,
      errors: check.errors,
    };
    rows.push(row);
    const gap = b && b.routes === row.vehicles ? (((row.distance - b.distance) / b.distance) * 100).toFixed(2) : '';
    console.log(
      `${name.padEnd(10)} ${pad(row.vehicles, 4)} ${pad(b?.routes ?? '', 4)} ${pad(row.distance.toFixed(2), 10)} ${pad(b?.distance.toFixed(2) ?? '', 10)} ${pad(gap, 7)} ${pad(seconds.toFixed(1), 7)} ${pad(cpuSeconds.toFixed(1), 6)} ${pad(plan.iterations + (plan.stoppedBy === 'time' ? '*' : ''), 6)}  ${check.errors.length === 0 ? 'ok' : check.errors.slice(0, 3).join('; ')}`,
    );
  }
  const feasible = rows.filter((r) => r.errors.length === 0);
  const known = rows.filter((r) => r.bestVehicles !== undefined);
  const hit = known.filter((r) => r.errors.length === 0 && r.vehicles <= r.bestVehicles!);
  const matched = known.filter((r) => r.errors.length === 0 && r.vehicles === r.bestVehicles);
  const meanGap = matched.length ? matched.reduce((s, r) => s + (r.distance - r.bestDistance!) / r.bestDistance!, 0) / matched.length : NaN;
  const maxTime = Math.max(...rows.map((r) => r.seconds));
  console.log(
    `\nfeasible and complete: ${feasible.length}/${rows.length}; best known vehicle count: ${hit.length}/${known.length} (${((100 * hit.length) / Math.max(1, known.length)).toFixed(1)} %); ` +
      `mean distance gap where the vehicles match: ${(meanGap * 100).toFixed(2)} % (${matched.length} instances); ` +
      `time: mean ${(rows.reduce((s, r) => s + r.seconds, 0) / rows.length).toFixed(1)} s, max ${maxTime.toFixed(1)} s ` +
      `(CPU mean ${(rows.reduce((s, r) => s + r.cpuSeconds, 0) / rows.length).toFixed(1)} s, max ${Math.max(...rows.map((r) => r.cpuSeconds)).toFixed(1)} s); ` +
      `cut by the time limit (*): ${rows.filter((r) => r.stoppedBy === 'time').length}`,
  );
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}` || process.argv[1]?.endsWith('lilim.ts')) main(process.argv.slice(2));
