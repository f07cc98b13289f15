import type { AppContext } from '../../platform/context.js';
import { Id, ShortText, Strict } from '../../platform/schemas.js';
import { Type } from '@sinclair/typebox';
import { syncRegistry } from '../mobile/index.js';
import { TRIP_SELECT, tripOut, type FailureReason, type TripRow } from './model.js';
import { EvidenceIn, FailureReasonSchema } from './schemas.js';
import type { LogisticsService } from './service.js';

/**
 * Offline sync entity `trips` (GET /mobile/sync/pull) for drivers: the trips assigned to the caller that changed
 * after `since`, oldest change first, in the driver's view (tripOut). Trips are never deleted, so there are no
 * tombstones; a trip reassigned to another driver stops appearing (the `trip.reassigned` event tells the app).
 */
export function registerLogisticsSync(ctx: AppContext, svc: LogisticsService) {
  /**
   * Offline operation `trip.fail_delivery` (POST /mobile/sync/push): a failed delivery recorded without signal, applied like
   * POST /driver/trips/{id}/fail-delivery; a trip no longer in transit (already failed, cancelled...) is a `conflict` with the server's trip.
   */
  syncRegistry(ctx).registerOperation({
    type: 'trip.fail_delivery',
    payload: Strict({ trip_id: Id, reason: FailureReasonSchema, note: Type.Optional(ShortText(500)), evidence: Type.Optional(EvidenceIn) }),
    async apply(tx, actor, p: { trip_id: string; reason: FailureReason; note?: string; evidence?: { type: string; storage_key: string } }) {
      const driver = await svc.drivers.self(tx, actor);
      const t = await svc.failedDelivery.fail(tx, actor, driver, p.trip_id, { reason: p.reason, note: p.note, evidence: p.evidence });
      return { status: 'applied', data: tripOut(t, actor) };
    },
  });

  syncRegistry(ctx).registerProvider({
    entity: 'trips',
    kinds: ['repartidor'],
    async pull(tx, actor, { since, limit }) {
      const { rows } = await tx.query<TripRow>(`${TRIP_SELECT} WHERE d.user_id = $1 AND ($2::timestamptz IS NULL OR t.updated_at > $2) ORDER BY t.updated_at, t.id LIMIT $3`, [
        actor.userId,
        since,
        limit,
      ]);
      return { changed: rows.map((t) => tripOut(t, actor)), deleted: [] };
    },
  });
}
