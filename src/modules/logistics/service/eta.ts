import type { Actor } from '../../../platform/auth.js';
import type { Tx } from '../../../platform/db/index.js';
import type { Hook } from '../../../platform/hooks.js';
import type { LonLat } from '../../../platform/geo.js';
import { tripEtas, type EtaTrip } from './eta-model.js';
import { type TripRow, activeTripsOfDriver } from '../repo/trips.js';
import type { Promises } from './promises.js';
import type { StopKind } from '../schemas.js';
import { writeEtas } from '../repo/eta.js';
import type { TripCore } from './trips.js';

/** Fired in the transaction that recomputed a trip's ETA (notify's "arriving soon" subscribes in the composition root). */
export interface EtaUpdate {
  tripId: string;
  organizationId: string;
  status: TripRow['status'];
  etaPickupAt: Date | null;
  etaDropoffAt: Date | null;
  promisedAt: Date | null;
}
export type EtaUpdatedHook = Hook<[tx: Tx, update: EtaUpdate]>;

const etaTrip = (t: TripRow): EtaTrip => ({
  id: t.id,
  status: t.status,
  territoryId: t.territory_id,
  pickup: { lon: Number(t.pickup_lon), lat: Number(t.pickup_lat) },
  dropoff: { lon: Number(t.dropoff_lon), lat: Number(t.dropoff_lat) },
  stopOrder: t.stop_order,
  assignedAt: t.assigned_at ? new Date(t.assigned_at) : null,
});

/**
 * The committed plans' order of the driver's stops: the trips of each plan (the earliest given first) with their pickup
 * and dropoff positions in its route. Trips given outside a plan are not in it (they come after, in remainingStops).
 */
export function committedRoute(trips: TripRow[]): { tripId: string; kind: StopKind }[] {
  const plans = new Map<string, { first: number; stops: { tripId: string; kind: StopKind; at: number }[] }>();
  for (const t of trips) {
    if (!t.plan_id || t.stop_order === null || t.dropoff_order === null) continue;
    const assigned = t.assigned_at ? new Date(t.assigned_at).getTime() : 0;
    const plan = plans.get(t.plan_id) ?? { first: assigned, stops: [] };
    plan.first = Math.min(plan.first, assigned);
    plan.stops.push({ tripId: t.id, kind: 'pickup', at: t.stop_order }, { tripId: t.id, kind: 'dropoff', at: t.dropoff_order });
    plans.set(t.plan_id, plan);
  }
  return [...plans.values()]
    .sort((a, b) => a.first - b.first)
    .flatMap((p) => p.stops.sort((a, b) => a.at - b.at).map(({ tripId, kind }) => ({ tripId, kind })));
}

/**
 * Live ETAs: from the driver's position along his remaining stops in order (his other active trips too, in the committed
 * plan's order when they came from one), at the learned
 * speeds; written on every active trip of the driver, once per GPS batch (not per point). A trip whose ETA crosses its
 * promise plus `delay_grace_min` raises trip.delayed (once per crossing; again only after it came back under).
 */
export function createEta(core: Pick<TripCore, 'emit' | 'settings'>, promises: Promises, etaUpdated: EtaUpdatedHook) {
  async function refreshDriver(
    tx: Tx,
    actor: Pick<Actor, 'userId'> | null,
    driver: { id: string; organization_id: string },
    position: LonLat,
    at: Date,
    trips?: TripRow[],
  ) {
    const active = trips ?? (await activeTripsOfDriver(tx, driver.id));
    if (active.length === 0) return;
    const settings = await core.settings(tx, driver.organization_id);
    const { model, timeZone } = await promises.speeds(tx, driver.organization_id, settings);
    // From the fix's time, or now when the fix is older (he is not standing still in the past).
    const start = new Date(Math.max(at.getTime(), Date.now()));
    const etas = tripEtas(position, start, active.map(etaTrip), model, timeZone, committedRoute(active));
    const writes = active.map((t) => ({ id: t.id, pickup: etas.get(t.id)!.pickup, dropoff: etas.get(t.id)!.dropoff }));
    const { written, raised } = await writeEtas(tx, writes, settings.delay_grace_min);
    for (const r of raised) {
      const t = active.find((x) => x.id === r.id)!;
      const eta = etas.get(t.id)!;
      await core.emit(
        tx,
        actor,
        'trip.delayed',
        t,
        {
          promised_at: t.promised_at,
          eta_dropoff_at: eta.dropoff,
          late_by_s: r.late_by_s,
          grace_min: settings.delay_grace_min,
          source: 'eta',
        },
        'staff',
      );
    }
    // A trip skipped as locked is being changed by another transaction, which also settles its order.
    for (const t of active.filter((x) => written.has(x.id))) {
      const eta = etas.get(t.id)!;
      await etaUpdated.run(tx, {
        tripId: t.id,
        organizationId: t.organization_id,
        status: t.status,
        etaPickupAt: eta.pickup,
        etaDropoffAt: eta.dropoff,
        promisedAt: t.promised_at,
      });
    }
  }

  return { refreshDriver };
}

export type Eta = ReturnType<typeof createEta>;
