import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compile } from './instance.js';
import { regretInsert } from './insertion.js';
import { relatedTrips } from './lns.js';
import { ejectInsert, type SearchContext } from './localsearch.js';
import { toPlan } from './plan.js';
import { Scratch } from './route.js';
import { Solution } from './solution.js';
import { randomInstance } from './testing/random-instances.js';
import { validatePlan } from './validate.js';

// Fixed fast-check seed so CI is reproducible; FUZZ_RUNS=n explores n fresh random instances.
const fuzzRuns = process.env.FUZZ_RUNS ? Number(process.env.FUZZ_RUNS) : undefined;
const runs = (n: number) => ({ numRuns: fuzzRuns ?? n, ...(fuzzRuns ? {} : { seed: 20_260_103 }) });

describe('ejectInsert (property)', () => {
  it('assigns the left-out trip and keeps every assigned one, or changes nothing; plans stay valid', () => {
    fc.assert(
      fc.property(randomInstance({ maxTrips: 14, maxDrivers: 3, minTrips: 2 }), fc.nat(), ({ problem, options }, marks) => {
        const inst = compile(problem, options);
        const ctx: SearchContext = { inst, scratch: new Scratch(inst), neighbors: relatedTrips(inst), deadline: Infinity, now: () => 0 };
        const sol = new Solution(inst);
        regretInsert(
          sol,
          Array.from({ length: inst.tripCount }, (_, t) => t),
          ctx.scratch,
        );
        // some routes not worth trying, by a per-instance mask (bit d of `marks`, shifted by the trip)
        const routes = (t: number, into: Uint8Array) => {
          for (let d = 0; d < into.length; d++) into[d] = marks === 0 || ((marks >> ((d + t) % 16)) & 1) === 1 ? 1 : 0;
        };
        for (const u of sol.unassignedTrips()) {
          const before = sol.clone();
          const moved = ejectInsert(sol, ctx, u, routes);
          if (moved) {
            expect(sol.assigned).toBe(before.assigned + 1);
            expect(sol.routeOf[u]).toBeGreaterThanOrEqual(0);
            for (let t = 0; t < inst.tripCount; t++) if (before.routeOf[t] >= 0) expect(sol.routeOf[t]).toBeGreaterThanOrEqual(0);
          } else {
            expect(sol.routes).toEqual(before.routes);
            expect(sol.assigned).toBe(before.assigned);
          }
          expect(sol.cost.every((c) => c < Infinity)).toBe(true);
        }
        const plan = toPlan(inst, sol.routes, {
          algorithm: 'regret-insertion+lns',
          seed: 0,
          iterations: 0,
          iterationBudget: 0,
          stoppedBy: 'iterations',
          curve: [],
          elapsedMs: 0,
        });
        expect(validatePlan(problem, plan, options)).toEqual([]);
        expect(plan.totals.assigned).toBe(sol.assigned);
      }),
      runs(300),
    );
  });

  it('makes room for a trip by moving another one to a second route', () => {
    // driver near has room for one trip and holds a; b may only ride with near; a may also ride with far
    const problem = {
      drivers: [
        { id: 'near', position: { lon: -68.119, lat: -16.49 }, capacity: 1, maxStops: 2 },
        { id: 'far', position: { lon: -68.13, lat: -16.5 }, capacity: 1 },
      ],
      trips: [
        { id: 'a', pickup: { lon: -68.1191, lat: -16.4901 }, dropoff: { lon: -68.125, lat: -16.495 } },
        { id: 'b', pickup: { lon: -68.1192, lat: -16.4902 }, dropoff: { lon: -68.11, lat: -16.48 }, excludedDriverIds: ['far'] },
      ],
    };
    const inst = compile(problem, {});
    const ctx: SearchContext = { inst, scratch: new Scratch(inst), neighbors: relatedTrips(inst), deadline: Infinity, now: () => 0 };
    const sol = new Solution(inst);
    sol.setRoute(0, [0, 1]);
    const all = (_t: number, into: Uint8Array) => into.fill(1);
    expect(ejectInsert(sol, ctx, 1, all)).toBe(true);
    expect([sol.routeOf[0], sol.routeOf[1], sol.assigned]).toEqual([1, 0, 2]);
    // nowhere else for a: nothing moves
    const alone = new Solution(inst);
    alone.setRoute(0, [0, 1]);
    expect(ejectInsert(alone, ctx, 1, (_t, into) => into.fill(0).fill(1, 0, 1))).toBe(false);
    expect(alone.routes).toEqual([[0, 1], []]);
  });
});
