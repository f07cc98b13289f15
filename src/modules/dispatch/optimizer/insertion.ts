import type { Instance } from './instance.js';
import { shuffle, type Rng } from './prng.js';
import { withInsertion, type Insertion, type Scratch } from './route.js';
import { insertionInto, type Solution } from './solution.js';

/** Random perturbation of insertion costs (Ropke & Pisinger): uniform in ±amplitude metres. */
export interface Noise {
  rng: Rng;
  amplitude: number;
}

const jitter = (noise: Noise | undefined) => (noise ? noise.amplitude * (2 * noise.rng() - 1) : 0);

export interface RecreateOptions {
  noise?: Noise;
  /** banned[d] = 1: route d may not receive trips (forces trips elsewhere). */
  banned?: Uint8Array;
  /**
   * Granular insertion: per trip, the routes worth pricing (1 = yes), written into `into`; a trip
   * with no feasible position among them is priced in every route.
   */
  candidates?: (sol: Solution, t: number, into: Uint8Array) => void;
  /** Price insertions by how much longer they make the route (see bestInsertion), to assign more trips. */
  packing?: boolean;
  /**
   * With `candidates`: the trips that are priced in every route when none of their candidate routes has room (by
   * default every trip). The others stay where they are (left out) rather than cost a scan of every route.
   */
  widen?: ReadonlySet<number>;
}

/**
 * Regret-2 cheapest insertion: every pending trip knows its cheapest feasible insertion in every
 * route; the trip whose best option beats its second best by the most (a trip with a single
 * feasible route first) is inserted at its cheapest position, and only the changed route is
 * re-evaluated. O(k·D·n²) to start, then O(k·(D + n²)) per inserted trip. Trips with no feasible
 * position stay unassigned.
 */
export function regretInsert(
  sol: Solution,
  pending: readonly number[],
  scratch: Scratch,
  { noise, banned, candidates, packing, widen }: RecreateOptions = {},
): void {
  const inst = sol.inst;
  const D = inst.driverCount;
  const k = pending.length;
  if (k === 0 || D === 0) return;
  // per (pending trip a, route d) at a·D + d; buffers reused from call to call (every entry read is written first)
  const { cost, posI, posJ, allowed, widened, draws, c1, c2, d1 } = scratch.regretBuffers(k, D);
  allowed.fill(1, 0, k * D);
  const ins: Insertion = { cost: Infinity, i: 0, j: 0 };
  /**
   * Re-prices trip a in route d after another trip went into d. On metric instances (triangle inequality) a trip
   * with no feasible place in d before has none after: with the new trip's stops taken out again every stop would
   * be reached no later, with no more load and fewer stops. It is not priced again; its noise draw is still taken,
   * so the random sequence, and the plan, stay the same.
   */
  const evaluate = (a: number, d: number) => {
    const at = a * D + d;
    if (banned?.[d] || !allowed[at]) cost[at] = Infinity;
    else if (inst.metric && cost[at] === Infinity) jitter(noise);
    else {
      cost[at] = insertionInto(sol, d, pending[a], scratch, ins, packing) + jitter(noise);
      posI[at] = ins.i;
      posJ[at] = ins.j;
    }
  };
  // First prices every trip in its candidate routes (trip by trip: the remembered insertions of a trip are
  // contiguous; a route's times are remembered per driver, so the order does not cost them again); a trip with no
  // feasible position among them is then priced in every route. The noise is drawn afterwards, trip by trip.
  if (candidates) for (let a = 0; a < k; a++) candidates(sol, pending[a], allowed.subarray(a * D, (a + 1) * D));
  const price = (a: number, d: number) => {
    cost[a * D + d] = insertionInto(sol, d, pending[a], scratch, ins, packing);
    posI[a * D + d] = ins.i;
    posJ[a * D + d] = ins.j;
  };
  for (let a = 0; a < k; a++) {
    for (let d = 0; d < D; d++) if (!banned?.[d] && allowed[a * D + d]) price(a, d);
  }
  widened.fill(0, 0, k);
  for (let a = 0; a < k; a++) {
    let any = false;
    for (let d = 0; d < D; d++) {
      if (banned?.[d] || !allowed[a * D + d]) cost[a * D + d] = Infinity;
      else if (cost[a * D + d] < Infinity) any = true;
    }
    if (!any && candidates && (!widen || widen.has(pending[a]))) {
      widened[a] = 1;
      for (let d = 0; d < D; d++) if (!banned?.[d] && !allowed[a * D + d]) price(a, d);
    }
  }
  if (noise) {
    for (let a = 0; a < k; a++) {
      // one draw per priced route, and again for every route when the trip was widened
      draws.fill(0, 0, D);
      for (let d = 0; d < D; d++) if (!banned?.[d] && allowed[a * D + d]) draws[d] = jitter(noise);
      if (widened[a]) for (let d = 0; d < D; d++) if (!banned?.[d]) draws[d] = jitter(noise);
      for (let d = 0; d < D; d++) cost[a * D + d] += draws[d];
    }
  }
  for (let a = 0; a < k; a++) if (widened[a]) allowed.fill(1, a * D, (a + 1) * D);
  // per trip, its cheapest and second cheapest cost and the first route with the cheapest (c1, c2, d1)
  for (let a = 0; a < k; a++) bestTwo(cost, a, D, c1, c2, d1);
  const alive = Array.from({ length: k }, (_, a) => a);
  while (alive.length > 0) {
    let pick = -1;
    let pickRoute = -1;
    let pickRegret = -1;
    let pickCost = Infinity;
    for (let x = 0; x < alive.length; x++) {
      const a = alive[x];
      if (d1[a] < 0) continue;
      const regret = c2[a] - c1[a];
      if (regret > pickRegret || (regret === pickRegret && c1[a] < pickCost)) {
        pick = x;
        pickRoute = d1[a];
        pickRegret = regret;
        pickCost = c1[a];
      }
    }
    if (pick < 0) return;
    const a = alive[pick];
    alive.splice(pick, 1);
    const at = a * D + pickRoute;
    sol.setRoute(pickRoute, withInsertion(sol.routes[pickRoute], pending[a], { cost: cost[at], i: posI[at], j: posJ[at] }));
    for (const b of alive) {
      const old = cost[b * D + pickRoute];
      evaluate(b, pickRoute);
      const c = cost[b * D + pickRoute];
      // Only this route's cost changed: nothing to do when it did not (a trip with no room in it, the most common
      // case on a crowded instance); the best two follow in O(1) unless it was one of them (then the trip's routes
      // are scanned again). Same values, same first route on ties.
      if (c === old) continue;
      if (d1[b] === pickRoute || old <= c2[b]) bestTwo(cost, b, D, c1, c2, d1);
      else {
        if (c < c1[b] || (c === c1[b] && pickRoute < d1[b])) {
          c2[b] = c1[b];
          c1[b] = c;
          d1[b] = pickRoute;
        } else if (c < c2[b]) c2[b] = c;
      }
    }
  }
}

/** Trip a's cheapest cost (c1[a]), first route with it (d1[a], -1 when none is finite) and second cheapest cost (c2[a]) over the D routes of `cost`. */
function bestTwo(cost: Float64Array, a: number, D: number, c1: Float64Array, c2: Float64Array, d1: Int32Array): void {
  let best = Infinity;
  let second = Infinity;
  let route = -1;
  for (let d = 0; d < D; d++) {
    const c = cost[a * D + d];
    if (c < best) {
      second = best;
      best = c;
      route = d;
    } else if (c < second) second = c;
  }
  c1[a] = best;
  c2[a] = second;
  d1[a] = route;
}

/** Trips in random order, each at its cheapest feasible position across all routes. O(k·D·n²). */
export function sequentialInsert(
  sol: Solution,
  pending: readonly number[],
  scratch: Scratch,
  rng: Rng,
  { noise, banned, candidates, packing, widen }: RecreateOptions = {},
): void {
  const inst: Instance = sol.inst;
  const ins: Insertion = { cost: Infinity, i: 0, j: 0 };
  const best: Insertion = { cost: Infinity, i: 0, j: 0 };
  const allowed = new Uint8Array(inst.driverCount);
  for (const t of shuffle(rng, pending.slice())) {
    let bestRoute = -1;
    best.cost = Infinity;
    if (candidates) candidates(sol, t, allowed);
    else allowed.fill(1);
    for (let pass = 0; pass < 2 && bestRoute < 0; pass++) {
      if (pass === 1) {
        if (!candidates || (widen && !widen.has(t))) break;
        allowed.fill(1);
      }
      for (let d = 0; d < inst.driverCount; d++) {
        if (banned?.[d] || !allowed[d]) continue;
        const c = insertionInto(sol, d, t, scratch, ins, packing) + jitter(noise);
        if (c < best.cost) {
          Object.assign(best, ins);
          best.cost = c;
          bestRoute = d;
        }
      }
    }
    if (bestRoute >= 0) sol.setRoute(bestRoute, withInsertion(sol.routes[bestRoute], t, best));
  }
}
