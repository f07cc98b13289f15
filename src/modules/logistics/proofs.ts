import type { Actor } from '../../platform/auth.js';
import type { LogisticsContext } from './index.js';
import type { Tx } from '../../platform/db/index.js';
import { AppError } from '../../platform/errors.js';
import { newId, safeEqual } from '../../platform/ids.js';
import { assertObjectLink } from '../../platform/storage-links.js';
import { PIN_MAX_ATTEMPTS, type DriverRow, type TripRow } from './model.js';
import type { Assignment } from './assignment.js';
import type { TripCore } from './trips-service.js';

export type Stage = 'pickup' | 'delivery';
export interface VerifyInput {
  pin: string;
  evidence?: { type: string; storage_key: string };
}
/** A wrong PIN must still count after the request fails, so the error is returned and thrown after commit. */
export type VerifyOutcome = { ok: true; trip: TripRow } | { ok: false; error: AppError };

const STAGES = {
  pickup: { from: 'accepted', to: 'picked_up', pin: 'pickup_pin', attempts: 'pickup_pin_attempts', purpose: 'pickup_evidence', event: 'trip.pickup_verified' },
  delivery: { from: 'in_transit', to: 'completed', pin: 'delivery_pin', attempts: 'delivery_pin_attempts', purpose: 'delivery_evidence', event: 'trip.delivery_verified' },
} as const;

export interface ProofRow {
  id: string;
  trip_id: string;
  stage: Stage;
  pin_verified: boolean;
  evidence_type: string | null;
  storage_key: string | null;
  driver_id: string | null;
  verified_by_user_id: string | null;
  created_at: Date;
}

export const proofOut = (p: ProofRow) => ({
  id: p.id,
  trip_id: p.trip_id,
  stage: p.stage,
  pin_verified: p.pin_verified,
  evidence: p.evidence_type && p.storage_key ? { type: p.evidence_type, storage_key: p.storage_key } : null,
  driver_id: p.driver_id,
  verified_by_user_id: p.verified_by_user_id,
  created_at: p.created_at,
});

export function createProofs(ctx: LogisticsContext, core: TripCore, assignment: Assignment) {
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
    if (input.evidence) await assertObjectLink(ctx, tx, actor, input.evidence.storage_key, [s.purpose], { tripId: t.id, stage, proofType: input.evidence.type });
    if (!safeEqual(input.pin, t[s.pin])) {
      const { rows } = await tx.query<{ n: number }>(`UPDATE trip SET ${s.attempts} = ${s.attempts} + 1, updated_at = now() WHERE id = $1 RETURNING ${s.attempts} AS n`, [t.id]);
      const left = PIN_MAX_ATTEMPTS - rows[0].n;
      return {
        ok: false,
        error: left <= 0 ? pinLocked(stage) : new AppError(422, 'INVALID_PIN', `The ${stage} PIN is wrong`, undefined, { attempts_remaining: left }),
      };
    }
    const after = await core.move(tx, t, s.to);
    await tx.query(
      `INSERT INTO trip_proof (organization_id, id, trip_id, stage, pin_verified, evidence_type, storage_key, driver_id, verified_by_user_id)
       VALUES ($1, $2, $3, $4, true, $5, $6, $7, $8)`,
      [t.organization_id, newId(), t.id, stage, input.evidence?.type ?? null, input.evidence?.storage_key ?? null, driver.id, actor.userId],
    );
    await core.emit(tx, actor, s.event, after, { stage, evidence: input.evidence ? { type: input.evidence.type, storage_key: input.evidence.storage_key } : null });
    if (stage === 'delivery') {
      await core.releaseDriver(tx, t.driver_id);
      await core.emit(tx, actor, 'trip.completed', after, { delivery_fee: after.delivery_fee, driver_earning: after.driver_earning });
    }
    return { ok: true, trip: after };
  }

  async function list(tx: Tx, tripId: string): Promise<ProofRow[]> {
    const { rows } = await tx.query<ProofRow>(
      `SELECT id, trip_id, stage, pin_verified, evidence_type, storage_key, driver_id, verified_by_user_id, created_at
         FROM trip_proof WHERE trip_id = $1 ORDER BY created_at, id`,
      [tripId],
    );
    return rows;
  }

  return { verify, list };
}

const pinLocked = (stage: Stage) =>
  new AppError(423, 'PIN_LOCKED', `The ${stage} PIN is locked after ${PIN_MAX_ATTEMPTS} wrong attempts; dispatch must reset it`, undefined, { attempts_remaining: 0 });
