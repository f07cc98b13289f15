import type { Actor } from '../../../platform/auth.js';
import type { LogisticsContext } from '../context.js';
import type { Tx } from '../../../platform/db/index.js';
import { AppError } from '../../../platform/errors.js';
import { newId, safeEqual } from '../../../platform/ids.js';
import { formatMoney, money } from '../../../platform/money.js';
import { assertObjectLink } from '../../storage/index.js';
import type { Static } from '@sinclair/typebox';
import { PIN_MAX_ATTEMPTS } from './transitions.js';
import { type DriverRow } from '../repo/drivers.js';
import { type TripRow, countWrongPin } from '../repo/trips.js';
import { insertProof, proofsOfTrip, type ProofRow } from '../repo/proofs.js';
import type { PinStage, ProofOut } from '../schemas.js';
import type { Assignment } from './assignment.js';
import type { TripCore } from './trips.js';
import type { Exceptions } from './exceptions.js';

export type Stage = PinStage;
export interface VerifyInput {
  pin: string;
  evidence?: { type: string; storage_key: string };
  /** Delivery of a trip with cash to collect: the cash taken at the door (required there, refused elsewhere). */
  cash_collected?: string;
  /** Why cash_collected differs from the trip's cash_to_collect (required then: a discrepancy for review). */
  cash_discrepancy_reason?: string;
}

/**
 * The cash step of a delivery: a trip with cash to collect needs the amount collected (> 0); a different amount needs a reason
 * (recorded as a discrepancy for review); a trip without cash, or the pickup, takes no cash. Returns the trip's cash effect.
 */
export function cashStep(
  t: Pick<TripRow, 'cash_to_collect'>,
  stage: Stage,
  input: Pick<VerifyInput, 'cash_collected' | 'cash_discrepancy_reason'>,
) {
  const expected = money(t.cash_to_collect);
  if (stage === 'pickup' || expected.isZero()) {
    if (input.cash_collected !== undefined || input.cash_discrepancy_reason !== undefined) {
      throw AppError.unprocessable('This step collects no cash', 'NO_CASH_TO_COLLECT', [
        { field: 'cash_collected', message: 'only at the delivery of a trip with cash_to_collect' },
      ]);
    }
    return null;
  }
  if (input.cash_collected === undefined) {
    throw AppError.unprocessable(
      `This delivery collects ${formatMoney(expected)} in cash: send cash_collected`,
      'CASH_COLLECTION_REQUIRED',
      [{ field: 'cash_collected', message: `required (cash_to_collect ${formatMoney(expected)})` }],
    );
  }
  const collected = money(input.cash_collected);
  if (!collected.gt(0))
    throw AppError.unprocessable('cash_collected must be > 0 (a delivery that collects nothing is a failed delivery)', 'INVALID_AMOUNT', [
      { field: 'cash_collected', message: 'must be > 0' },
    ]);
  const differs = !collected.eq(expected);
  if (differs && !input.cash_discrepancy_reason) {
    throw AppError.unprocessable(
      `The cash collected differs from ${formatMoney(expected)}: say why in cash_discrepancy_reason`,
      'CASH_DISCREPANCY_REASON_REQUIRED',
      [{ field: 'cash_discrepancy_reason', message: 'required when cash_collected differs from cash_to_collect' }],
    );
  }
  return { cash: { collected: formatMoney(collected), discrepancyReason: differs ? input.cash_discrepancy_reason! : null } };
}
/** A wrong PIN must still count after the request fails, so the error is returned and thrown after commit. */
export type VerifyOutcome = { ok: true; trip: TripRow } | { ok: false; error: AppError };

const STAGES = {
  pickup: {
    from: 'accepted',
    to: 'picked_up',
    pin: 'pickup_pin',
    attempts: 'pickup_pin_attempts',
    purpose: 'pickup_evidence',
    event: 'trip.pickup_verified',
  },
  delivery: {
    from: 'in_transit',
    to: 'completed',
    pin: 'delivery_pin',
    attempts: 'delivery_pin_attempts',
    purpose: 'delivery_evidence',
    event: 'trip.delivery_verified',
  },
} as const;

export type { ProofRow } from '../repo/proofs.js';

export const proofOut = (p: ProofRow): Static<typeof ProofOut> => ({
  id: p.id,
  trip_id: p.trip_id,
  stage: p.stage,
  pin_verified: p.pin_verified,
  evidence: p.evidence_type && p.storage_key ? { type: p.evidence_type, storage_key: p.storage_key } : null,
  driver_id: p.driver_id,
  verified_by_user_id: p.verified_by_user_id,
  created_at: p.created_at,
});

export function createProofs(ctx: LogisticsContext, core: TripCore, assignment: Assignment, exceptions: Pick<Exceptions, 'pinLocked'>) {
  /**
   * Verifies the pickup PIN (accepted → picked_up) or the delivery PIN (in_transit → completed) of the
   * driver's own trip. 423 PIN_LOCKED after 5 wrong attempts (until dispatch resets it); optional
   * evidence must be a stored object of this trip and stage, uploaded as the same kind of proof as `type`
   * (the storage module decides, 422 otherwise).
   */
  async function verify(tx: Tx, actor: Actor, driver: DriverRow, tripId: string, stage: Stage, input: VerifyInput): Promise<VerifyOutcome> {
    const s = STAGES[stage];
    const t = await assignment.ownTrip(tx, driver, tripId);
    if (t.status !== s.from) throw AppError.invalidTransition('Trip', t.status, s.to);
    if (t[s.attempts] >= PIN_MAX_ATTEMPTS) throw pinLocked(stage);
    const cash = cashStep(t, stage, input);
    if (input.evidence)
      await assertObjectLink(ctx, tx, actor, input.evidence.storage_key, [s.purpose], {
        tripId: t.id,
        stage,
        proofType: input.evidence.type,
      });
    if (!safeEqual(input.pin, t[s.pin])) {
      const left = PIN_MAX_ATTEMPTS - (await countWrongPin(tx, t.id, stage));
      if (left === 0) await exceptions.pinLocked(tx, actor, t, stage);
      return {
        ok: false,
        error:
          left <= 0
            ? pinLocked(stage)
            : new AppError(422, 'INVALID_PIN', `The ${stage} PIN is wrong`, undefined, { attempts_remaining: left }),
      };
    }
    // The delivery takes the driver's row last (releaseDriverAndKeepTrack below): the hooks of trip.completed (the order,
    // the ledger) run before it, so the row a GPS batch of his waits for is held for the last statements only.
    const after = await core.move(tx, t, s.to, { ...(cash ? { effect: cash } : {}), keepTrackLater: stage === 'delivery' });
    await insertProof(tx, {
      organizationId: t.organization_id,
      id: newId(),
      tripId: t.id,
      stage,
      pinVerified: true,
      evidenceType: input.evidence?.type ?? null,
      storageKey: input.evidence?.storage_key ?? null,
      driverId: driver.id,
      verifiedByUserId: actor.userId,
    });
    await core.emitMoved(tx, actor, s.event, after, {
      stage,
      evidence: input.evidence ? { type: input.evidence.type, storage_key: input.evidence.storage_key } : null,
    });
    if (stage === 'delivery') {
      await core.emitMoved(tx, actor, 'trip.completed', after, {
        delivery_fee: after.delivery_fee,
        driver_earning: after.driver_earning,
        ...(cash
          ? {
              cash_to_collect: after.cash_to_collect,
              cash_collected: after.cash_collected,
              cash_discrepancy_reason: after.cash_discrepancy_reason,
            }
          : {}),
      });
      await core.releaseDriverAndKeepTrack(tx, after);
    }
    return { ok: true, trip: after };
  }

  const list = (tx: Tx, tripId: string): Promise<ProofRow[]> => proofsOfTrip(tx, tripId);

  return { verify, list };
}

const pinLocked = (stage: Stage) =>
  new AppError(
    423,
    'PIN_LOCKED',
    `The ${stage} PIN is locked after ${PIN_MAX_ATTEMPTS} wrong attempts; dispatch must reset it`,
    undefined,
    { attempts_remaining: 0 },
  );
