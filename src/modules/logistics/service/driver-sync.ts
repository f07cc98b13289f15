import { Type, type TSchema } from '@sinclair/typebox';
import type { Actor } from '../../../platform/auth.js';
import type { LogisticsContext, SyncOutcome, SyncPort } from '../context.js';
import { Id, ShortText, Strict } from '../../../platform/schemas.js';
import { tripOut } from './mappers.js';
import { type FailureReason, EvidenceIn, FailureReasonSchema, PIN_STAGES, ReasonBody, VerifyBody } from '../schemas.js';
import type { VerifyOutcome } from './proofs.js';
import type { LogisticsService } from './logistics.js';

type Evidence = { type: string; storage_key: string };
const Pin = Type.String({ minLength: 1, maxLength: 12 });

/**
 * The driver's trip actions as offline operations (POST /mobile/sync/push), applied like their routes:
 * `trip.accept` {trip_id}, `trip.reject` {trip_id, reason?}, `trip.verify_pickup` {trip_id, pin, evidence?} and `trip.verify_delivery`
 * {trip_id, pin, evidence?, cash_collected?, cash_discrepancy_reason?} (a cash trip without its cash step is rejected, CASH_COLLECTION_REQUIRED), `trip.start_delivery` {trip_id}, `trip.fail_delivery` {trip_id, reason, note?, evidence?},
 * `trip.return` {trip_id, pin}. A trip that moved on meanwhile (cancelled, reassigned, already delivered) is a
 * `conflict` (409 INVALID_TRANSITION, TRIP_NOT_ASSIGNED_TO_YOU); a caller without a driver profile gets `rejected`.
 * A wrong PIN is `rejected` (INVALID_PIN with `attempts_remaining` in `server`) and, as on the routes, still counts:
 * a batch of guesses pushed offline locks the PIN after 5 like guesses sent one by one. The trip's new state reaches
 * the app through the `trips` pull.
 */
export function registerDriverTripSync(ctx: LogisticsContext, svc: LogisticsService) {
  const op = (type: string, payload: TSchema, apply: Parameters<SyncPort['registerOperation']>[0]['apply']) =>
    ctx.deps.sync.registerOperation({ type, payload, apply });

  const pinOutcome = (o: VerifyOutcome, actor: Actor): SyncOutcome =>
    o.ok
      ? { status: 'applied', data: tripOut(o.trip, actor) }
      : { status: 'rejected', code: o.error.code, message: o.error.message, server: o.error.extra, keep: true };

  op('trip.accept', Strict({ trip_id: Id }), async (tx, actor, p: { trip_id: string }) => {
    const t = await svc.assignment.accept(tx, actor, await svc.drivers.self(tx, actor), p.trip_id);
    return { status: 'applied', data: tripOut(t, actor) };
  });
  op('trip.reject', Strict({ trip_id: Id, ...ReasonBody.properties }), async (tx, actor, p: { trip_id: string; reason?: string }) => {
    const t = await svc.assignment.reject(tx, actor, await svc.drivers.self(tx, actor), p.trip_id, p.reason);
    return { status: 'applied', data: tripOut(t, actor) };
  });
  op('trip.start_delivery', Strict({ trip_id: Id }), async (tx, actor, p: { trip_id: string }) => {
    const t = await svc.assignment.startDelivery(tx, actor, await svc.drivers.self(tx, actor), p.trip_id);
    return { status: 'applied', data: tripOut(t, actor) };
  });
  // The delivery of a cash trip needs its cash step offline too (cash_collected, and a reason when it differs), as on the route.
  for (const stage of PIN_STAGES) {
    const payload =
      stage === 'delivery'
        ? Strict({ trip_id: Id, ...VerifyBody.properties })
        : Strict({ trip_id: Id, pin: Pin, evidence: Type.Optional(EvidenceIn) });
    op(
      `trip.verify_${stage}`,
      payload,
      async (
        tx,
        actor,
        p: { trip_id: string; pin: string; evidence?: Evidence; cash_collected?: string; cash_discrepancy_reason?: string },
      ) =>
        pinOutcome(
          await svc.proofs.verify(tx, actor, await svc.drivers.self(tx, actor), p.trip_id, stage, {
            pin: p.pin,
            evidence: p.evidence,
            cash_collected: p.cash_collected,
            cash_discrepancy_reason: p.cash_discrepancy_reason,
          }),
          actor,
        ),
    );
  }
  op(
    'trip.fail_delivery',
    Strict({ trip_id: Id, reason: FailureReasonSchema, note: Type.Optional(ShortText(500)), evidence: Type.Optional(EvidenceIn) }),
    async (tx, actor, p: { trip_id: string; reason: FailureReason; note?: string; evidence?: Evidence }) => {
      const t = await svc.failedDelivery.fail(tx, actor, await svc.drivers.self(tx, actor), p.trip_id, {
        reason: p.reason,
        note: p.note,
        evidence: p.evidence,
      });
      return { status: 'applied', data: tripOut(t, actor) };
    },
  );
  op('trip.return', Strict({ trip_id: Id, pin: Pin }), async (tx, actor, p: { trip_id: string; pin: string }) =>
    pinOutcome(await svc.failedDelivery.confirmReturn(tx, actor, await svc.drivers.self(tx, actor), p.trip_id, p.pin), actor),
  );
}
