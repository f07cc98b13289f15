import type { AppContext, Worker } from '../../platform/context.js';
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
