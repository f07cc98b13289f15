/**
 * The Li & Lim benchmark path (bench/lilim.ts): instances trimmed to their first pickup-and-delivery pairs go through
 * solve() and are written as SINTEF solutions, which the independent checker (bench/lilim-check.ts) accepts; and the
 * checker rejects solutions broken on purpose.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkLiLimSolution } from '../../bench/lilim-check.js';
import { liLimOptions, liLimProblem, parseLiLim, planRoutes, sintefSolution } from '../../bench/lilim-format.js';
import { main } from '../../bench/lilim.js';
import { solve } from '../../src/modules/dispatch/optimizer/index.js';

const DIR = join(import.meta.dirname, '../../../shared/benchmarks/li-lim/instances');
const tmp = mkdtempSync(join(tmpdir(), 'lilim-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** The instance with only its first `pairs` pickup-and-delivery pairs (ids kept). */
function trimmed(name: string, pairs: number): string {
  const [head, ...rows] = readFileSync(join(DIR, `${name}.txt`), 'utf8')
    .trim()
    .split(/\r?\n/);
  const fields = rows.map((r) => r.trim().split(/\s+/).map(Number));
  const keep = new Set<number>([0]);
  for (const f of fields) {
    if (keep.size > 2 * pairs) break;
    if (f[0] !== 0 && f[7] === 0 && f[8] > 0) keep.add(f[0]).add(f[8]);
  }
  return [head, ...rows.filter((_, i) => keep.has(fields[i][0]))].join('\n') + '\n';
}

const SMALL = ['lc101', 'lr105', 'lrc201'];

describe('Li & Lim benchmark', () => {
  it('writes a SINTEF solution per instance that the independent checker accepts', () => {
    const files = SMALL.map((name) => {
      const file = join(tmp, `${name}.txt`);
      writeFileSync(file, trimmed(name, 12));
      return file;
    });
    const out = join(tmp, 'out');
    const rows = main(['--out', out, '--iterations', '400', '--time-limit-s', '60', ...files]);
    expect(rows.map((r) => r.name)).toEqual(SMALL);
    for (const [i, row] of rows.entries()) {
      const solution = readFileSync(join(out, `${row.name}.txt`), 'utf8');
      expect(solution).toContain(`Instance name : ${row.name}`);
      const check = checkLiLimSolution(readFileSync(files[i], 'utf8'), solution);
      expect(check.errors).toEqual([]);
      expect(row.errors).toEqual([]);
      expect(check.vehicles).toBeGreaterThan(0);
    }
  });

  describe('checker', () => {
    const text = trimmed('lc101', 6);
    const inst = parseLiLim('lc101', text);
    const { problem, matrix } = liLimProblem(inst);
    const plan = solve(problem, liLimOptions(matrix, { iterations: 200, timeBudgetMs: 60_000 }));
    const routes = planRoutes(inst, plan);
    const check = (r: number[][]) => checkLiLimSolution(text, sintefSolution('lc101', r)).errors.join('\n');

    it('accepts the solver solution and recomputes its distance from the coordinates', () => {
      const result = checkLiLimSolution(text, sintefSolution('lc101', routes));
      expect(result.errors).toEqual([]);
      expect(result.distance).toBeCloseTo(plan.totals.distanceM, 6);
      expect(result.vehicles).toBe(routes.length);
    });

    it('rejects a missing or repeated node', () => {
      expect(check([routes[0].slice(1), ...routes.slice(1)])).toMatch(/not served/);
      expect(check([...routes, [routes[0][0]]])).toMatch(/served 2 times/);
    });

    it('rejects a delivery before its pickup, or on another route', () => {
      const pickup = inst.nodes.find((n) => n.id === routes[0][0])!;
      const swapped = routes[0].filter((x) => x !== pickup.delivery);
      swapped.unshift(pickup.delivery);
      expect(check([swapped, ...routes.slice(1)])).toMatch(/before \(or without\) its pickup/);
      const split = routes[0].filter((x) => x !== pickup.delivery);
      expect(check([split, ...routes.slice(1), [pickup.delivery]])).toMatch(/without its delivery/);
    });

    it('rejects a window missed, a load over capacity, a late return and too many routes', () => {
      // every pair on a route of its own, in reverse order of the windows: some window closes before the route gets there
      const all = routes.flat();
      expect(check([all.slice().reverse()])).toMatch(/window closes|before \(or without\)/);
      const tiny = text.replace(/^(\s*\d+\s+)\d+/, '$11');
      expect(checkLiLimSolution(tiny, sintefSolution('lc101', routes)).errors.join('\n')).toMatch(/over capacity/);
      const closing = text.split('\n')[1].trim().split(/\s+/);
      const early = text.replace(
        text.split('\n')[1],
        [closing[0], closing[1], closing[2], closing[3], closing[4], '100', ...closing.slice(6)].join('\t'),
      );
      expect(checkLiLimSolution(early, sintefSolution('lc101', routes)).errors.join('\n')).toMatch(/back at the depot/);
      const fleet = Number(text.trim().split(/\s+/)[0]);
      expect(check([...routes, ...Array.from({ length: fleet }, () => [])])).toMatch(/more than the/);
    });
  });
});
