/**
 * Independent checker of a Li & Lim solution in the SINTEF format: reads the instance file and the solution text
 * itself (no optimizer code), and recomputes everything from the coordinates: every pickup and delivery exactly once,
 * a pickup before its delivery on the same route, the load within [0, capacity] after every stop, service starting
 * within each window (waiting allowed), each route back at the depot by its closing, no more routes than vehicles,
 * and the total distance (Euclidean, not rounded).
 */

interface Node {
  x: number;
  y: number;
  demand: number;
  early: number;
  late: number;
  service: number;
  pickup: number;
  delivery: number;
}

export interface CheckResult {
  vehicles: number;
  distance: number;
  errors: string[];
}

const TOLERANCE = 1e-6;

export function checkLiLimSolution(instanceText: string, solutionText: string): CheckResult {
  const errors: string[] = [];
  const lines = instanceText.split(/\r?\n/).filter((l) => l.trim() !== '');
  const [fleet, capacity] = lines[0].trim().split(/\s+/).map(Number);
  const nodes = new Map<number, Node>();
  for (const l of lines.slice(1)) {
    const f = l.trim().split(/\s+/).map(Number);
    nodes.set(f[0], { x: f[1], y: f[2], demand: f[3], early: f[4], late: f[5], service: f[6], pickup: f[7], delivery: f[8] });
  }
  const depot = nodes.get(0);
  if (!depot) return { vehicles: 0, distance: 0, errors: ['instance has no depot (node 0)'] };
  const routes: number[][] = [];
  for (const l of solutionText.split(/\r?\n/)) {
    const m = /^Route\s+\d+\s*:(.*)$/.exec(l.trim());
    if (!m) continue;
    const ids = m[1].trim() === '' ? [] : m[1].trim().split(/\s+/).map(Number);
    if (ids.some((x) => !Number.isInteger(x))) errors.push(`unreadable route line: ${l}`);
    if (ids.length === 0) errors.push(`empty route: ${l}`);
    routes.push(ids);
  }
  if (routes.length > fleet) errors.push(`${routes.length} routes, more than the ${fleet} vehicles`);
  const leg = (a: Node, b: Node) => Math.hypot(a.x - b.x, a.y - b.y);
  const visits = new Map<number, number>();
  let distance = 0;
  routes.forEach((route, r) => {
    const where = `route ${r + 1}`;
    let prev = depot;
    let time = depot.early;
    let load = 0;
    const seen = new Set<number>();
    for (const id of route) {
      const node = nodes.get(id);
      if (!node || id === 0) {
        errors.push(`${where}: unknown node ${id}`);
        continue;
      }
      visits.set(id, (visits.get(id) ?? 0) + 1);
      distance += leg(prev, node);
      const arrival = time + leg(prev, node);
      const start = Math.max(arrival, node.early);
      if (start > node.late + TOLERANCE)
        errors.push(`${where}: node ${id} served at ${start.toFixed(3)}, after its window closes (${node.late})`);
      time = start + node.service;
      load += node.demand;
      if (load > capacity + TOLERANCE) errors.push(`${where}: load ${load} over capacity ${capacity} after node ${id}`);
      if (load < -TOLERANCE) errors.push(`${where}: negative load after node ${id}`);
      if (node.demand < 0 && !seen.has(node.pickup))
        errors.push(`${where}: delivery ${id} before (or without) its pickup ${node.pickup} on this route`);
      if (node.demand > 0 && node.delivery > 0 && !route.includes(node.delivery))
        errors.push(`${where}: pickup ${id} without its delivery ${node.delivery}`);
      seen.add(id);
      prev = node;
    }
    distance += leg(prev, depot);
    const back = time + leg(prev, depot);
    if (back > depot.late + TOLERANCE) errors.push(`${where}: back at the depot at ${back.toFixed(3)}, after it closes (${depot.late})`);
  });
  for (const [id, node] of nodes) {
    if (id === 0) continue;
    const count = visits.get(id) ?? 0;
    if (count === 0) errors.push(`node ${id} (${node.demand > 0 ? 'pickup' : 'delivery'}) is not served`);
    if (count > 1) errors.push(`node ${id} is served ${count} times`);
  }
  return { vehicles: routes.length, distance, errors };
}
