import type { OptimizerOptions, OptimizerProblem, Plan } from './types.js';

const close = (a: number, b: number) => Math.abs(a - b) <= 1e-6 * Math.max(1, Math.abs(a), Math.abs(b));

/**
 * Every rule a plan must keep, checked from the plan itself: known drivers and trips, each trip
 * exactly once (planned with one pickup before one dropoff on the same route, or unassigned),
 * load within capacity after every stop, territories, the stop limit, consistent distances and
 * totals; and the times: each leg's travel time (its distance / speed, unless a duration matrix
 * is given), no pickup before the trip is ready, the service times, the route's end within the
 * maximum route duration and the driver's shift end, all within `toleranceS` (for rounded plans).
 * Returns the violations (empty when valid).
 */
export function validatePlan(problem: OptimizerProblem, plan: Plan, options: OptimizerOptions = {}, toleranceS = 1e-6): string[] {
  const errors: string[] = [];
  const speedMps = ((options.speedKmh ?? 25) * 1000) / 3600;
  const ownDurations = !!options.distance && typeof options.distance !== 'function' && !!options.distance.durations;
  const svc = { pickup: options.serviceTimePickupS ?? 0, dropoff: options.serviceTimeDropoffS ?? 0 };
  const near = (a: number, b: number) => Math.abs(a - b) <= 1e-6 * Math.max(1, Math.abs(a), Math.abs(b)) + toleranceS;
  const drivers = new Map(problem.drivers.map((d) => [d.id, d]));
  const trips = new Map(problem.trips.map((t) => [t.id, t]));
  const seen = new Map<string, string>();
  const mark = (tripId: string, where: string) => {
    if (seen.has(tripId)) errors.push(`trip ${tripId} appears in ${seen.get(tripId)} and in ${where}`);
    else seen.set(tripId, where);
  };
  const routeDrivers = new Set<string>();
  let distanceM = 0;
  let durationS = 0;
  for (const route of plan.routes) {
    const driver = drivers.get(route.driverId);
    if (!driver) {
      errors.push(`route for unknown driver ${route.driverId}`);
      continue;
    }
    if (routeDrivers.has(driver.id)) errors.push(`driver ${driver.id} has more than one route`);
    routeDrivers.add(driver.id);
    if (options.maxStopsPerRoute !== undefined && route.stops.length > options.maxStopsPerRoute)
      errors.push(`driver ${driver.id}: ${route.stops.length} stops exceed ${options.maxStopsPerRoute}`);
    if (driver.maxStops !== undefined && route.stops.length > driver.maxStops)
      errors.push(`driver ${driver.id}: ${route.stops.length} stops exceed its limit ${driver.maxStops}`);
    let load = driver.currentLoad ?? 0;
    let lastDistance = 0;
    let lastArrival = 0;
    let lastDeparture = 0;
    const onBoard = new Set<string>();
    const done = new Set<string>();
    for (const stop of route.stops) {
      const trip = trips.get(stop.tripId);
      if (!trip) {
        errors.push(`driver ${driver.id}: unknown trip ${stop.tripId}`);
        continue;
      }
      if (stop.kind === 'pickup') {
        if (onBoard.has(trip.id) || done.has(trip.id)) errors.push(`trip ${trip.id} picked up twice`);
        mark(trip.id, `route of ${driver.id}`);
        onBoard.add(trip.id);
        load++;
        if (load > driver.capacity) errors.push(`driver ${driver.id}: load ${load} over capacity ${driver.capacity}`);
      } else {
        if (!onBoard.has(trip.id)) errors.push(`trip ${trip.id} dropped off before its pickup`);
        onBoard.delete(trip.id);
        done.add(trip.id);
        load--;
      }
      const expected = stop.kind === 'pickup' ? trip.pickup : trip.dropoff;
      if (stop.position.lon !== expected.lon || stop.position.lat !== expected.lat)
        errors.push(`trip ${trip.id}: ${stop.kind} position differs from the trip's`);
      if (stop.loadAfter !== load) errors.push(`trip ${trip.id}: loadAfter ${stop.loadAfter} should be ${load}`);
      if (stop.cumulativeDistanceM < lastDistance - 1e-6 || stop.arrivalOffsetS < lastArrival - 1e-6)
        errors.push(`driver ${driver.id}: distance or time goes backwards at trip ${trip.id}`);
      const leg = stop.cumulativeDistanceM - lastDistance;
      const legS = leg / (speedMps * (driver.speedFactor ?? 1));
      if (ownDurations ? stop.arrivalOffsetS < lastDeparture - 1e-6 : !near(stop.arrivalOffsetS, lastDeparture + legS))
        errors.push(`trip ${trip.id}: ${stop.kind} arrival ${stop.arrivalOffsetS} s does not follow the previous departure and the leg`);
      const start = stop.arrivalOffsetS + stop.waitS;
      if (stop.kind === 'pickup' && start < (trip.readyAtS ?? 0) - toleranceS)
        errors.push(`trip ${trip.id}: picked up at ${start} s before it is ready (${trip.readyAtS} s)`);
      if (stop.kind === 'dropoff' && stop.waitS !== 0) errors.push(`trip ${trip.id}: waits at its drop-off`);
      if (stop.waitS < 0 || !near(stop.departureOffsetS, start + svc[stop.kind]))
        errors.push(`trip ${trip.id}: ${stop.kind} departure ${stop.departureOffsetS} s is not arrival + wait + service`);
      lastDistance = stop.cumulativeDistanceM;
      lastArrival = stop.arrivalOffsetS;
      lastDeparture = stop.departureOffsetS;
      const territories = driver.territoryIds ?? [];
      if (trip.territoryId && territories.length > 0 && !territories.includes(trip.territoryId))
        errors.push(`trip ${trip.id} (territory ${trip.territoryId}) outside the territories of driver ${driver.id}`);
      if (trip.excludedDriverIds?.includes(driver.id)) errors.push(`trip ${trip.id} planned for excluded driver ${driver.id}`);
    }
    for (const id of onBoard) errors.push(`trip ${id} picked up but never dropped off`);
    if (!close(route.distanceM, lastDistance)) errors.push(`driver ${driver.id}: route distance disagrees with its stops`);
    if (!close(route.durationS, lastDeparture)) errors.push(`driver ${driver.id}: route duration disagrees with its stops`);
    if (options.maxRouteDurationS !== undefined && route.durationS > options.maxRouteDurationS + toleranceS)
      errors.push(`driver ${driver.id}: route of ${route.durationS} s exceeds the maximum ${options.maxRouteDurationS} s`);
    if (driver.shiftEndS !== undefined && route.stops.length > 0 && route.durationS > driver.shiftEndS + toleranceS)
      errors.push(`driver ${driver.id}: route ends at ${route.durationS} s, after the shift end ${driver.shiftEndS} s`);
    distanceM += route.distanceM;
    durationS += route.durationS;
  }
  for (const u of plan.unassigned) {
    if (!trips.has(u.tripId)) errors.push(`unknown unassigned trip ${u.tripId}`);
    mark(u.tripId, 'unassigned');
  }
  for (const t of problem.trips) if (!seen.has(t.id)) errors.push(`trip ${t.id} is missing from the plan`);
  const assigned = problem.trips.filter((t) => seen.get(t.id)?.startsWith('route')).length;
  if (plan.totals.assigned !== assigned) errors.push(`totals.assigned ${plan.totals.assigned} should be ${assigned}`);
  if (plan.totals.unassigned !== plan.unassigned.length) errors.push('totals.unassigned disagrees with the list');
  if (!close(plan.totals.distanceM, distanceM)) errors.push('totals.distanceM is not the sum of the routes');
  if (!close(plan.totals.durationS, durationS)) errors.push('totals.durationS is not the sum of the routes');
  return errors;
}
