import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compile, startNode, type Instance } from './instance.js';
import { Scratch, bestInsertion, feasibleCost, feasibleCostFrom, isPickup, timePrefixes, tripOf, type Insertion } from './route.js';
import { Solution, insertionInto } from './solution.js';
import type { Objective, OptimizerProblem } from './types.js';

// Fixed fast-check seed so CI is reproducible; FUZZ_RUNS=n explores n fresh random instances.
const fuzzRuns = process.env.FUZZ_RUNS ? Number(process.env.FUZZ_RUNS) : undefined;
const runs = (n: number) => ({ numRuns: fuzzRuns ?? n, ...(fuzzRuns ? {} : { seed: 20_260_102 }) });

/**
 * Oracle: the objective cost of a whole route, re-timed from its first stop (shares no code with
 * route.ts): Infinity when a drop-off precedes its pickup, the load exceeds the driver's room or
 * the route ends after the driver's limit.
 */
function fullCost(inst: Instance, d: number, stops: readonly number[]): number {
  const { n } = inst;
  let at = startNode(inst, d);
  let time = 0;
  let load = 0;
  let sumDrop = 0;
  let metres = 0;
  const picked = new Set<number>();
  for (const s of stops) {
    time += inst.travel[at * n + s];
    metres += inst.dist[at * n + s];
    at = s;
    if (s % 2 === 0) {
      picked.add(s / 2);
      load++;
      if (load > inst.room[d]) return Infinity;
      time = Math.max(time, inst.ready[s / 2]) + inst.svcPickup;
    } else {
      if (!picked.has((s - 1) / 2)) return Infinity;
      load--;
      sumDrop += time;
      time += inst.svcDropoff;
    }
  }
  if (time > inst.limit[d] + 1e-9) return Infinity;
  return inst.wTime * sumDrop + inst.wDist * metres;
}

/** Oracle: the cheapest insertion of trip t by trying every (pickup, drop-off) position and re-timing the whole route. */
function cheapestByFullRetiming(inst: Instance, d: number, stops: readonly number[], t: number): number {
  if (!inst.compat[t * inst.driverCount + d] || stops.length + 2 > inst.maxStops[d]) return Infinity;
  const base = fullCost(inst, d, stops);
  let best = Infinity;
  for (let i = 0; i <= stops.length; i++) {
    for (let j = i; j <= stops.length; j++) {
      const next = [...stops.slice(0, i), 2 * t, ...stops.slice(i, j), 2 * t + 1, ...stops.slice(j)];
      best = Math.min(best, fullCost(inst, d, next) - base);
    }
  }
  return best;
}

const coord = (center: number) => fc.integer({ min: -1000, max: 1000 }).map((v) => center + (v / 1000) * 0.03);
const point = fc.record({ lon: coord(-68.13), lat: coord(-16.5) });

/**
 * A random instance (one driver, 6 to 10 trips, capacity, ready times, service times, a route
 * limit, any objective) and a feasible route: its trips in turn, each at random positions, kept
 * when the route stays feasible; the last two trips stay out, to be inserted.
 */
const routeCase = fc
  .record({
    driver: fc.record({
      position: point,
      capacity: fc.integer({ min: 1, max: 5 }),
      shiftEndS: fc.option(fc.integer({ min: 1200, max: 7200 }), { nil: undefined }),
    }),
    trips: fc.array(
      fc.record({ pickup: point, dropoff: point, readyAtS: fc.option(fc.integer({ min: 0, max: 1800 }), { nil: undefined }) }),
      { minLength: 6, maxLength: 10 },
    ),
    maxRouteDurationS: fc.option(fc.constantFrom(2400, 3600, 5400), { nil: undefined }),
    serviceTimePickupS: fc.constantFrom(0, 60, 180),
    serviceTimeDropoffS: fc.constantFrom(0, 60, 120),
    objective: fc.constantFrom<Objective>('time', 'balanced', 'distance'),
    keys: fc.array(fc.double({ min: 0, max: 0.999, noNaN: true }), { minLength: 20, maxLength: 20 }),
  })
  .map(({ driver, trips, keys, ...options }) => {
    const problem: OptimizerProblem = {
      drivers: [
        { id: 'd', position: driver.position, capacity: driver.capacity, ...(driver.shiftEndS ? { shiftEndS: driver.shiftEndS } : {}) },
      ],
      trips: trips.map((t, i) => ({ id: `t${i}`, pickup: t.pickup, dropoff: t.dropoff, ...(t.readyAtS ? { readyAtS: t.readyAtS } : {}) })),
    };
    const inst = compile(problem, options);
    let stops: number[] = [];
    for (let t = 0; t < inst.tripCount - 2; t++) {
      const i = Math.floor(keys[2 * t] * (stops.length + 1));
      const j = i + Math.floor(keys[2 * t + 1] * (stops.length - i + 1));
      const next = [...stops.slice(0, i), 2 * t, ...stops.slice(i, j), 2 * t + 1, ...stops.slice(j)];
      if (fullCost(inst, 0, next) < Infinity) stops = next;
    }
    return { inst, stops };
  });

describe('bestInsertion (property)', () => {
  it('prices every trip as trying every position and re-timing the whole route would', () => {
    fc.assert(
      fc.property(routeCase, ({ inst, stops }) => {
        const scratch = new Scratch(inst);
        const out: Insertion = { cost: Infinity, i: 0, j: 0 };
        const inRoute = new Set(stops.map(tripOf));
        for (let t = 0; t < inst.tripCount; t++) {
          if (inRoute.has(t)) continue;
          const expected = cheapestByFullRetiming(inst, 0, stops, t);
          const got = bestInsertion(inst, 0, stops, t, scratch, out);
          if (expected === Infinity) expect(got).toBe(Infinity);
          else {
            expect(Math.abs(got - expected)).toBeLessThanOrEqual(1e-6 * Math.max(1, Math.abs(expected)));
            // and the positions it reports give that cost
            const next = stops.slice();
            next.splice(out.j, 0, 2 * t + 1);
            next.splice(out.i, 0, 2 * t);
            expect(Math.abs(fullCost(inst, 0, next) - fullCost(inst, 0, stops) - got)).toBeLessThanOrEqual(
              1e-6 * Math.max(1, Math.abs(got)),
            );
          }
        }
      }),
      runs(300),
    );
  });

  it('gives the same answer with its lower-bound pruning (great-circle instances) as with the full scan', () => {
    fc.assert(
      fc.property(routeCase, ({ inst, stops }) => {
        expect(inst.metric).toBe(true);
        const fullScan: Instance = { ...inst, metric: false };
        const scratch = new Scratch(inst);
        const a: Insertion = { cost: Infinity, i: 0, j: 0 };
        const b: Insertion = { cost: Infinity, i: 0, j: 0 };
        for (let t = 0; t < inst.tripCount; t++) {
          if (stops.some((s) => tripOf(s) === t)) continue;
          const pruned = bestInsertion(inst, 0, stops, t, scratch, a);
          const full = bestInsertion(fullScan, 0, stops, t, scratch, b);
          expect(pruned).toBe(full);
          if (full < Infinity) expect([a.i, a.j]).toEqual([b.i, b.j]);
        }
      }),
      runs(300),
    );
  });

  it('on great-circle instances, a trip that fits nowhere in a route fits nowhere once another trip is in it too (regret insertion does not price it again)', () => {
    let checked = 0;
    fc.assert(
      fc.property(routeCase, ({ inst, stops }) => {
        const scratch = new Scratch(inst);
        const out: Insertion = { cost: Infinity, i: 0, j: 0 };
        const [x, y] = [inst.tripCount - 2, inst.tripCount - 1];
        for (const [u, t] of [
          [x, y],
          [y, x],
        ]) {
          if (bestInsertion(inst, 0, stops, u, scratch, out) < Infinity) continue;
          // every feasible way of putting t in, not only its cheapest
          for (let i = 0; i <= stops.length; i++) {
            for (let j = i; j <= stops.length; j++) {
              const next = [...stops.slice(0, i), 2 * t, ...stops.slice(i, j), 2 * t + 1, ...stops.slice(j)];
              if (fullCost(inst, 0, next) === Infinity) continue;
              checked++;
              expect(bestInsertion(inst, 0, next, u, scratch, out)).toBe(Infinity);
            }
          }
        }
      }),
      runs(300),
    );
    expect(checked).toBeGreaterThan(0);
  });

  it('insertionInto (remembered per route version, O(1) rejection of full routes) answers as bestInsertion does', () => {
    fc.assert(
      fc.property(routeCase, fc.array(fc.nat(100), { minLength: 1, maxLength: 30 }), ({ inst, stops }, picks) => {
        const scratch = new Scratch(inst);
        const sol = new Solution(inst);
        sol.setRoute(0, stops);
        const a: Insertion = { cost: Infinity, i: 0, j: 0 };
        const b: Insertion = { cost: Infinity, i: 0, j: 0 };
        for (const pick of picks) {
          const t = pick % inst.tripCount;
          const d = (pick >> 3) % inst.driverCount;
          if (sol.routeOf[t] >= 0) {
            // change the route holding it (a new version) and ask again
            const r = sol.routeOf[t];
            sol.setRoute(
              r,
              sol.routes[r].filter((s) => tripOf(s) !== t),
            );
          }
          const cached = insertionInto(sol, d, t, scratch, a);
          const direct = bestInsertion(inst, d, sol.routes[d], t, scratch, b);
          expect(cached).toBe(direct);
          if (direct < Infinity) {
            expect([a.i, a.j]).toEqual([b.i, b.j]);
            if (pick % 3 === 0) {
              const next = sol.routes[d].slice();
              next.splice(a.j, 0, 2 * t + 1);
              next.splice(a.i, 0, 2 * t);
              sol.setRoute(d, next);
            }
          }
          expect(sol.routes[d].every((s) => isPickup(s) || sol.routes[d].indexOf(s - 1) < sol.routes[d].indexOf(s))).toBe(true);
        }
      }),
      runs(200),
    );
  });
});

describe('feasibleCostFrom (property)', () => {
  it('prices a re-ordered suffix of a route as feasibleCost prices the whole sequence', () => {
    fc.assert(
      fc.property(
        routeCase,
        fc.nat(),
        fc.array(fc.nat(), { minLength: 20, maxLength: 20 }),
        fc.option(fc.double({ min: 0, max: 2, noNaN: true }), { nil: undefined }),
        ({ inst, stops }, cut, swaps, boundShare) => {
          const scratch = new Scratch(inst);
          for (let x = 0; x < stops.length; x++) scratch.pos[stops[x]] = x;
          timePrefixes(inst, 0, stops, scratch);
          const from = stops.length === 0 ? 0 : cut % (stops.length + 1);
          // the suffix shuffled (precedence and capacity may break: both must say so)
          const seq = stops.slice();
          for (let x = from; x < seq.length; x++) {
            const y = from + (swaps[x % swaps.length] % (seq.length - from));
            [seq[x], seq[y]] = [seq[y], seq[x]];
          }
          const bound = boundShare === undefined ? Infinity : boundShare * fullCost(inst, 0, stops);
          scratch.seq.length = 0;
          scratch.seq.push(...seq);
          const whole = feasibleCost(inst, 0, seq, seq.length, scratch, bound);
          const suffix = feasibleCostFrom(inst, 0, scratch.seq, from, seq.length, scratch, bound);
          expect(suffix).toBe(whole);
        },
      ),
      runs(400),
    );
  });
});

describe('Solution (property)', () => {
  it('keeps routeOf and the assigned count right through moves and swaps of trips between routes', () => {
    const problem: OptimizerProblem = {
      drivers: [0, 1, 2].map((i) => ({ id: `d${i}`, position: { lon: -68.13 + 0.01 * i, lat: -16.5 }, capacity: 10 })),
      trips: Array.from({ length: 8 }, (_, i) => ({
        id: `t${i}`,
        pickup: { lon: -68.13, lat: -16.5 + 0.001 * i },
        dropoff: { lon: -68.12, lat: -16.5 + 0.001 * i },
      })),
    };
    const inst = compile(problem, {});
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.nat(7), fc.nat(7), fc.nat(2)), { maxLength: 40 }), (moves) => {
        const sol = new Solution(inst);
        for (const [a, b, d] of moves) {
          const ra = sol.routeOf[a];
          const rb = sol.routeOf[b];
          if (ra >= 0 && rb >= 0 && ra !== rb) {
            // swap a and b as exchangePass does: a's route first gets b, then b's route gets a
            const restA = sol.routes[ra].filter((s) => tripOf(s) !== a);
            const restB = sol.routes[rb].filter((s) => tripOf(s) !== b);
            sol.setRoute(ra, [...restA, 2 * b, 2 * b + 1]);
            sol.setRoute(rb, [...restB, 2 * a, 2 * a + 1]);
          } else if (ra >= 0)
            sol.setRoute(
              ra,
              sol.routes[ra].filter((s) => tripOf(s) !== a),
            );
          else sol.setRoute(d, [...sol.routes[d], 2 * a, 2 * a + 1]);
          const inRoutes = sol.routes.flatMap((r, d) => r.filter(isPickup).map((s) => [tripOf(s), d]));
          expect(sol.assigned).toBe(inRoutes.length);
          for (const [t, d] of inRoutes) expect(sol.routeOf[t]).toBe(d);
          expect(new Set(inRoutes.map(([t]) => t)).size).toBe(inRoutes.length);
        }
      }),
      runs(200),
    );
  });
});
