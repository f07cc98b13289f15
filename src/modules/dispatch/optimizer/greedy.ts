import { DEFAULTS, compile, startNode } from './instance.js';
import { toPlan } from './plan.js';
import type { OptimizerOptions, OptimizerProblem, Plan } from './types.js';

/**
 * Baseline for the benchmark: trips in the given order, each to the driver nearest to the trip's
 * pickup (measured from where the driver's route currently ends) among the drivers of its
 * territory with a free seat, stops left and time left (route duration, shift end); pickup and
 * dropoff are appended, so trips never share a vehicle. O(T·D).
 */
export function greedyNearestDriver(problem: OptimizerProblem, options: OptimizerOptions = {}): Plan {
  const started = performance.now();
  const inst = compile(problem, options);
  const { dist, travel, n } = inst;
  const D = inst.driverCount;
  const routes: number[][] = Array.from({ length: D }, () => []);
  const end = Array.from({ length: D }, (_, d) => startNode(inst, d));
  const endTime = new Float64Array(D);
  for (let t = 0; t < inst.tripCount; t++) {
    let best = -1;
    let bestDist = Infinity;
    let bestEnd = 0;
    for (let d = 0; d < D; d++) {
      if (!inst.compat[t * D + d] || inst.room[d] < 1 || routes[d].length + 2 > inst.maxStops[d]) continue;
      const c = dist[end[d] * n + 2 * t];
      if (c >= bestDist) continue;
      const finish =
        Math.max(endTime[d] + travel[end[d] * n + 2 * t], inst.ready[t]) + inst.svcPickup + travel[2 * t * n + 2 * t + 1] + inst.svcDropoff;
      if (finish > inst.limit[d] + 1e-9) continue;
      bestDist = c;
      best = d;
      bestEnd = finish;
    }
    if (best < 0) continue;
    routes[best].push(2 * t, 2 * t + 1);
    end[best] = 2 * t + 1;
    endTime[best] = bestEnd;
  }
  return toPlan(inst, routes, {
    algorithm: 'greedy-nearest-driver',
    seed: options.seed ?? DEFAULTS.seed,
    iterations: 0,
    iterationBudget: 0,
    stoppedBy: 'iterations',
    curve: [],
    elapsedMs: performance.now() - started,
  });
}
