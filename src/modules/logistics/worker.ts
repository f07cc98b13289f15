import type { AppContext, Worker } from '../../platform/context.js';
import { maintainLocationPartitions } from './repo/locations.js';
import { dueOffers } from './repo/trips.js';
import type { LogisticsService } from './service/logistics.js';

/**
 * One round of the acceptance timeout across organizations: the assigned trips whose offer is older than
 * their organization's `acceptance_timeout_s` (where it is enabled), each expired in its own tenant
 * transaction (see `expireOffer`). `now` is a parameter so tests drive the clock.
 */
export async function expireOffers(ctx: AppContext, svc: LogisticsService, now: Date = new Date(), batch = 50): Promise<number> {
  const due = await ctx.db.withSystem((tx) => dueOffers(tx, now, batch));
  let handled = 0;
  for (const r of due) {
    if (
      await ctx.db.withTenant({ organizationId: r.organization_id, userId: null }, (tx) =>
        svc.assignment.expireOffer(tx, { tripId: r.id, assignedAt: r.assigned_at }, now),
      )
    )
      handled++;
  }
  return handled;
}

export function offerTimeoutWorker(ctx: AppContext, svc: LogisticsService): Worker {
  return { name: 'acceptance-timeout', intervalMs: 5_000, tick: () => expireOffers(ctx, svc) };
}

/**
 * Upkeep of the GPS history (driver_location, one partition per UTC day): the partitions of today and the next
 * LOCATION_PARTITIONS_AHEAD_DAYS exist, the days past LOCATION_HISTORY_RETENTION_DAYS are dropped. Idempotent and
 * serialised across instances by the database function (an advisory lock), so every instance may run it; it runs
 * at start and then hourly, which keeps a week of margin even if an instance sleeps through a day.
 * `today` (a UTC date, YYYY-MM-DD) is a parameter so tests drive the clock.
 */
export async function maintainLocationHistory(ctx: AppContext, today: string | null = null): Promise<{ created: number; dropped: number }> {
  return ctx.db.withSystem((tx) =>
    maintainLocationPartitions(
      tx,
      ctx.config.settings.LOCATION_PARTITIONS_AHEAD_DAYS,
      ctx.config.settings.LOCATION_HISTORY_RETENTION_DAYS,
      today,
    ),
  );
}

export function locationHistoryWorker(ctx: AppContext): Worker {
  // Always "idle": the loop then waits the interval before the next round.
  return { name: 'location-partitions', intervalMs: 60 * 60_000, tick: () => maintainLocationHistory(ctx).then(() => 0) };
}
