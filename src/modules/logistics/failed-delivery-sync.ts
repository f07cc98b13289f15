import { Type } from '@sinclair/typebox';
import type { LogisticsContext } from './index.js';
import { Id, ShortText, Strict } from '../../platform/schemas.js';
import { tripOut, type FailureReason } from './model.js';
import { EvidenceIn, FailureReasonSchema } from './schemas.js';
import type { LogisticsService } from './service.js';

/**
 * Offline operation `trip.fail_delivery` (POST /mobile/sync/push): a failed delivery the driver recorded without signal,
 * applied like POST /driver/trips/{id}/fail-delivery. A trip no longer in transit (already failed, cancelled...) is a
 * `conflict`; a caller without a driver profile gets `rejected`. The trip's new state reaches the app through the `trips` pull.
 */
export function registerFailedDeliverySync(ctx: LogisticsContext, svc: LogisticsService) {
  ctx.deps.sync.registerOperation({
    type: 'trip.fail_delivery',
    payload: Strict({ trip_id: Id, reason: FailureReasonSchema, note: Type.Optional(ShortText(500)), evidence: Type.Optional(EvidenceIn) }),
    async apply(tx, actor, p: { trip_id: string; reason: FailureReason; note?: string; evidence?: { type: string; storage_key: string } }) {
      const driver = await svc.drivers.self(tx, actor);
      const t = await svc.failedDelivery.fail(tx, actor, driver, p.trip_id, { reason: p.reason, note: p.note, evidence: p.evidence });
      return { status: 'applied', data: tripOut(t, actor) };
    },
  });
}
