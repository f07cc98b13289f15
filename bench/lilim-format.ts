/**
 * Li & Lim PDPTW instances (see ../shared/benchmarks/li-lim/README.md) as optimizer problems, and plans as SINTEF
 * solution files. Node 0 is the depot; every pickup node (demand > 0) is a trip to its delivery node.
 */
import type { DistanceMatrix, OptimizerOptions, OptimizerProblem, Plan } from '../src/modules/dispatch/optimizer/index.js';

export interface LiLimNode {
  id: number;
  x: number;
  y: number;
  demand: number;
  early: number;
  late: number;
  service: number;
  pickup: number;
  delivery: number;
}

export interface LiLimInstance {
  name: string;
  vehicles: number;
  capacity: number;
  nodes: LiLimNode[];
}

export function parseLiLim(name: string, text: string): LiLimInstance {
  const lines = text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l.length > 0);
  const [vehicles, capacity] = lines[0].split(/\s+/).map(Number);
  const nodes = lines.slice(1).map((l) => {
    const [id, x, y, demand, early, late, service, pickup, delivery] = l.split(/\s+/).map(Number);
    return { id, x, y, demand, early, late, service, pickup, delivery };
  });
  return { name, vehicles, capacity, nodes };
}

/**
 * The instance as the optimizer sees it: a trip per pickup node (id = the pickup node's id) with both windows, its
 * load in units and its service times; one driver per vehicle at the depot, leaving no earlier than the depot opens
 * and back by its closing; Euclidean distances as the custom matrix, travel time = distance.
 */
export function liLimProblem(inst: LiLimInstance): { problem: OptimizerProblem; matrix: DistanceMatrix } {
  const depot = inst.nodes[0];
  const byId = new Map(inst.nodes.map((n) => [n.id, n]));
  // positions only identify the points (the matrix gives the distances); scaled into valid coordinates
  const at = (n: LiLimNode) => ({ lon: n.x / 1000, lat: n.y / 1000 });
  const pickups = inst.nodes.filter((n) => n.id !== depot.id && n.pickup === 0 && n.delivery > 0);
  const problem: OptimizerProblem = {
    trips: pickups.map((p) => {
      const d = byId.get(p.delivery)!;
      return {
        id: String(p.id),
        pickup: at(p),
        dropoff: at(d),
        pickupAfterS: p.early,
        pickupBeforeS: p.late,
        deliverAfterS: d.early,
        deliverBeforeS: d.late,
        units: p.demand,
        serviceTimePickupS: p.service,
        serviceTimeDropoffS: d.service,
      };
    }),
    drivers: Array.from({ length: inst.vehicles }, (_, v) => ({
      id: `v${v + 1}`,
      position: at(depot),
      returnTo: at(depot),
      capacity: inst.capacity,
      startAtS: depot.early,
      shiftEndS: depot.late,
    })),
  };
  const points: LiLimNode[] = [
    ...pickups.flatMap((p) => [p, byId.get(p.delivery)!]),
    ...problem.drivers.map(() => depot),
    ...problem.drivers.map(() => depot),
  ];
  const m = points.length;
  const distances = new Float64Array(m * m);
  for (let a = 0; a < m; a++)
    for (let b = 0; b < m; b++) distances[a * m + b] = Math.hypot(points[a].x - points[b].x, points[a].y - points[b].y);
  return { problem, matrix: { distances, durations: distances } };
}

export const liLimOptions = (matrix: DistanceMatrix, extra: OptimizerOptions = {}): OptimizerOptions => ({
  objective: 'vehicles',
  distance: matrix,
  ...extra,
});

/** The plan's routes as node ids (the depot left out), one array per used vehicle. */
export function planRoutes(inst: LiLimInstance, plan: Plan): number[][] {
  const byId = new Map(inst.nodes.map((n) => [n.id, n]));
  return plan.routes
    .filter((r) => r.stops.length > 0)
    .map((r) => r.stops.map((s) => (s.kind === 'pickup' ? Number(s.tripId) : byId.get(Number(s.tripId))!.delivery)));
}

/** A solution file in the SINTEF format. */
export function sintefSolution(name: string, routes: number[][], date = new Date()): string {
  return [
    `Instance name : ${name}`,
    'Authors       : delivery-logistics optimizer',
    `Date          : ${date.toISOString().slice(0, 10)}`,
    'Reference     : npm run bench:lilim',
    'Solution',
    ...routes.map((r, i) => `Route ${i + 1} : ${r.join(' ')}`),
    '',
  ].join('\n');
}
