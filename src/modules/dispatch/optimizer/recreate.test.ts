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
      fc.property(randomInstance({ maxTrips: 16, maxDrivers: 3, minTrips: 1 }), fc.integer({ min: 1, max: 12 }), ({ problem, options }, k) => {
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
      }),
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
    ['sequential', (sol: Solution, widen?: ReadonlySet<number>) => sequentialInsert(sol, [0], new Scratch(inst), mulberry32(1), { candidates: onlyWest, widen })],
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

describe('recreate with `need` (property)', () => {
  // Trips 0..T-1 pending from an empty plan; half of the routes are candidates of each trip, and a random share of
  // the trips look beyond them (widen), as in the search.
  const setup = fc.tuple(randomInstance({ maxTrips: 12, maxDrivers: 4, minTrips: 1 }), fc.integer({ min: 0, max: 14 }), fc.integer(), fc.boolean());
  const half = (_: Solution, t: number, into: Uint8Array) => into.forEach((_, d) => (into[d] = (d + t) % 2 === 0 ? 1 : 0));

  for (const [name, recreate] of [
    ['regret', (sol: Solution, pending: number[], seed: number, options: Parameters<typeof regretInsert>[3]) => regretInsert(sol, pending, new Scratch(sol.inst), options)],
    [
      'sequential',
      (sol: Solution, pending: number[], seed: number, options: Parameters<typeof sequentialInsert>[4]) => sequentialInsert(sol, pending, new Scratch(sol.inst), mulberry32(seed), options),
    ],
  ] as const) {
    it(`${name}: stops (false) only when the full recreate inserts fewer than \`need\` trips, and otherwise gives the same plan`, () => {
      fc.assert(
        fc.property(setup, ([{ problem, options }, need, seed, granular]) => {
          const inst = compile(problem, options);
          const pending = Array.from({ length: inst.tripCount }, (_, t) => t);
          const widen = new Set(pending.filter((t) => (t * 7 + seed) % 3 === 0));
          const base = granular ? { candidates: half, widen } : {};
          const full = new Solution(inst);
          recreate(full, pending, seed, base);
          const cut = new Solution(inst);
          const complete = recreate(cut, pending, seed, { ...base, need });
          if (complete) {
            expect(full.assigned).toBeGreaterThanOrEqual(need);
            expect(cut.routes).toEqual(full.routes);
          } else {
            expect(full.assigned).toBeLessThan(need);
            expect(cut.assigned).toBeLessThanOrEqual(full.assigned);
          }
        }),
        runs(200),
      );
    });
  }

  it('sequential: asked for more trips than are pending, inserts none', () => {
    const inst = compile(
      {
        drivers: [{ id: 'd0', position: { lon: -68.13, lat: -16.5 }, capacity: 2 }],
        trips: [{ id: 't0', pickup: { lon: -68.131, lat: -16.5 }, dropoff: { lon: -68.132, lat: -16.501 } }],
      },
      {},
    );
    const sol = new Solution(inst);
    expect(sequentialInsert(sol, [0], new Scratch(inst), mulberry32(1), { need: 2 })).toBe(false);
    expect(sol.assigned).toBe(0);
    expect(sequentialInsert(sol, [0], new Scratch(inst), mulberry32(1), { need: 1 })).toBe(true);
    expect(sol.assigned).toBe(1);
  });
});
