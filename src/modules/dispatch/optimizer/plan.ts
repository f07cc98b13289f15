import { startNode, unassignedReason, type Instance } from './instance.js';
import { isPickup, routeCost, tripOf } from './route.js';
import type { Plan, PlannedRoute, PlannedStop } from './types.js';

/** Routes (node sequences per driver) turned into the public plan, with the times of every stop. */
export function toPlan(
  inst: Instance,
  routes: readonly (readonly number[])[],
  meta: Pick<Plan, 'algorithm' | 'seed' | 'iterations' | 'iterationBudget' | 'stoppedBy' | 'curve' | 'elapsedMs'>,
): Plan {
  const { problem, dist, travel, n } = inst;
  const planned = new Uint8Array(inst.tripCount);
  let sumDropoffS = 0;
  let maxDropoffS = 0;
  const plannedRoutes: PlannedRoute[] = problem.drivers.map((driver, d) => {
    let prev = startNode(inst, d);
    let distanceM = 0;
    let time = 0;
    let load = driver.currentLoad ?? 0;
    const stops: PlannedStop[] = routes[d].map((node) => {
      distanceM += dist[prev * n + node];
      time += travel[prev * n + node];
      prev = node;
      const t = tripOf(node);
      const trip = problem.trips[t];
      const pickup = isPickup(node);
      const arrival = time;
      const waitS = pickup ? Math.max(0, inst.ready[t] - arrival) : 0;
      time += waitS + (pickup ? inst.svcPickup : inst.svcDropoff);
      load += pickup ? 1 : -1;
      planned[t] = 1;
      if (!pickup) {
        sumDropoffS += arrival;
        maxDropoffS = Math.max(maxDropoffS, arrival);
      }
      return {
        tripId: trip.id,
        kind: pickup ? 'pickup' : 'dropoff',
        position: pickup ? trip.pickup : trip.dropoff,
        arrivalOffsetS: arrival,
        waitS,
        departureOffsetS: time,
        cumulativeDistanceM: distanceM,
        loadAfter: load,
      };
    });
    return { driverId: driver.id, stops, distanceM, durationS: time };
  });
  const unassigned = problem.trips
    .map((trip, t) => ({ trip, t }))
    .filter(({ t }) => !planned[t])
    .map(({ trip, t }) => ({ tripId: trip.id, reason: unassignedReason(inst, t, routes) }));
  return {
    ...meta,
    objective: inst.objective,
    cost: routes.reduce((s, r, d) => s + routeCost(inst, d, r), 0),
    routes: plannedRoutes,
    unassigned,
    totals: {
      assigned: inst.tripCount - unassigned.length,
      unassigned: unassigned.length,
      distanceM: plannedRoutes.reduce((s, r) => s + r.distanceM, 0),
      durationS: plannedRoutes.reduce((s, r) => s + r.durationS, 0),
      sumDropoffS,
      maxDropoffS,
    },
  };
}
