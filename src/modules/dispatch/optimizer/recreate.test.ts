import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compile } from './instance.js';
import { regretInsert, sequentialInsert } from './insertion.js';
import { nearStops } from './lns.js';
import { mulberry32 } from './prng.js';
import { Scratch } from './route.js';
import { Solution } from './solution.js';
import { randomInstance } from './testing/random-instances.js';
import type { OptimizerProblem } from './types.js';

// Fixed fast-check seed so CI is reproducible; FUZZ_RUNS=n explores n fresh random instances.
const fuzzRuns = process.env.FUZZ_RUNS ? Number(process.env.FUZZ_RUNS) : undefined;
const runs = (n: number) => ({ numRuns: fuzzRuns ?? n, ...(fuzzRuns ? {} : { seed: 20_261_127 }) });

describe('nearStops (property)', () => {
  it('gives, per trip, the owners of the k stops nearest to its pickup and to its drop-off, as sorting every stop would', () => {
    fc.assert(
      fc.property(
        randomInstance({ maxTrips: 16, maxDrivers: 3, minTrips: 1 }),
        fc.integer({ min: 1, max: 12 }),
        ({ problem, options }, k) => {
          const inst = compile(problem, options);
          const T = inst.tripCount;
          const got = nearStops(inst, k);
          for (let t = 0; t < T; t++) {
            const want = new Set<number>();
            for (const from of [2 * t, 2 * t + 1]) {
              const others = Array.from({ length: 2 * T }, (_, x) => x).filter((x) => Math.floor(x / 2) !== t);
              others.sort((a, b) => inst.dist[from * inst.n + a] - inst.dist[from * inst.n + b] || a - b);
              for (const x of others.slice(0, k)) want.add(Math.floor(x / 2));
            }
            expect([...got[t]].sort((a, b) => a - b)).toEqual([...want].sort((a, b) => a - b));
          }
        },
      ),
      runs(150),
    );
  });
});

describe('recreate: which trips look beyond their candidate routes', () => {
  // Two drivers far apart; trip 0 sits next to driver 1, but only driver 0's route is a candidate.
  const problem: OptimizerProblem = {
    drivers: [
      { id: 'west', position: { lon: -68.2, lat: -16.5 }, capacity: 2 },
      { id: 'east', position: { lon: -68.1, lat: -16.5 }, capacity: 2 },
    ],
    trips: [{ id: 'near-east', pickup: { lon: -68.101, lat: -16.5 }, dropoff: { lon: -68.102, lat: -16.501 } }],
  };
  // a 10-minute route cap: the west driver cannot reach the trip in time
  const inst = compile(problem, { maxRouteDurationS: 600 });
  const onlyWest = (_: Solution, __: number, into: Uint8Array) => {
    into.fill(0);
    into[0] = 1;
  };

  for (const [name, recreate] of [
    ['regret', (sol: Solution, widen?: ReadonlySet<number>) => regretInsert(sol, [0], new Scratch(inst), { candidates: onlyWest, widen })],
    [
      'sequential',
      (sol: Solution, widen?: ReadonlySet<number>) =>
        sequentialInsert(sol, [0], new Scratch(inst), mulberry32(1), { candidates: onlyWest, widen }),
    ],
  ] as const) {
    it(`${name}: a trip in \`widen\` (or any trip without it) is priced in every route when its candidates have no room`, () => {
      for (const widen of [undefined, new Set([0])]) {
        const sol = new Solution(inst);
        recreate(sol, widen);
        expect(sol.routeOf[0]).toBe(1);
      }
    });

    it(`${name}: a trip not in \`widen\` stays out rather than be priced beyond its candidate routes`, () => {
      const sol = new Solution(inst);
      recreate(sol, new Set<number>());
      expect(sol.routeOf[0]).toBe(-1);
      expect(sol.assigned).toBe(0);
    });
  }
});
