import { startNode, unassignedReason, type Instance } from './instance.js';
import { isPickup, tripOf } from './route.js';
import type { Plan, PlannedRoute, PlannedStop } from './types.js';

/** Routes (node sequences per driver) turned into the public plan, with arrival offsets. */
export function toPlan(
  inst: Instance,
  routes: readonly (readonly number[])[],
  meta: Pick<Plan, 'algorithm' | 'seed' | 'iterations' | 'elapsedMs'>,
): Plan {
  const { problem, dist, dur, n } = inst;
  const planned = new Uint8Array(inst.tripCount);
  const plannedRoutes: PlannedRoute[] = problem.drivers.map((driver, d) => {
    let prev = startNode(inst, d);
    let distanceM = 0;
    let durationS = 0;
    let load = driver.currentLoad ?? 0;
    const stops: PlannedStop[] = routes[d].map((node) => {
      const leg = dist[prev * n + node];
      distanceM += leg;
      durationS += dur ? dur[prev * n + node] : leg / inst.speedMps;
      prev = node;
      const trip = problem.trips[tripOf(node)];
      const pickup = isPickup(node);
      load += pickup ? 1 : -1;
      planned[tripOf(node)] = 1;
      return {
        tripId: trip.id,
        kind: pickup ? 'pickup' : 'dropoff',
        position: pickup ? trip.pickup : trip.dropoff,
        arrivalOffsetS: durationS,
        cumulativeDistanceM: distanceM,
        loadAfter: load,
      };
    });
    return { driverId: driver.id, stops, distanceM, durationS };
  });
  const unassigned = problem.trips
    .map((trip, t) => ({ trip, t }))
    .filter(({ t }) => !planned[t])
    .map(({ trip, t }) => ({ tripId: trip.id, reason: unassignedReason(inst, t) }));
  return {
    ...meta,
    routes: plannedRoutes,
    unassigned,
    totals: {
      assigned: inst.tripCount - unassigned.length,
      unassigned: unassigned.length,
      distanceM: plannedRoutes.reduce((s, r) => s + r.distanceM, 0),
      durationS: plannedRoutes.reduce((s, r) => s + r.durationS, 0),
    },
  };
}
