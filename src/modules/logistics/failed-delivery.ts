import type { Actor } from '../../platform/auth.js';
import type { LogisticsContext } from './index.js';
import type { Tx } from '../../platform/db/index.js';
import { AppError } from '../../platform/errors.js';
import { newId, safeEqual } from '../../platform/ids.js';
import { assertObjectLink } from '../../platform/storage-links.js';
import { PIN_MAX_ATTEMPTS, type DriverRow, type FailureReason, type TripRow } from './model.js';
import type { Assignment } from './assignment.js';
import type { VerifyOutcome } from './proofs.js';
import { insertProof } from './repo/proofs.js';
import { getSettings } from './repo/settings.js';
import { countWrongPin } from './repo/trips.js';
import type { TripCore } from './trips-service.js';
import type { Exceptions } from './exceptions.js';

export interface FailDeliveryInput {
  reason: FailureReason;
  note?: string;
  evidence?: { type: string; storage_key: string };
}

/**
 * The failed-delivery outcome. The driver, at the dropoff with the goods (`in_transit`), reports why he could not hand
 * them over; the organization's `failed_delivery_policy` decides what follows:
 * - `return_to_merchant` (default): the trip goes to `returning` (it still occupies the driver) and ends as `returned`
 *   when the driver hands the goods back and proves it with the pickup PIN the merchant gives him;
 * - `close`: the trip ends as `failed` at once.
 * Events trip.delivery_failed and trip.returned; orders, express requests and money follow them (commerce hooks).
 */
type CoreMoves = Pick<TripCore, 'emit' | 'move' | 'releaseDriver'>;

/**
 * Records a failed delivery of a locked `in_transit` trip (driver or dispatch): the trip goes to `to` (returning or failed),
 * stamps failed_at and the reason, writes the delivery-stage proof (no PIN; the evidence, if any) and emits
 * trip.delivery_failed; a closed (failed) trip frees the driver's capacity.
 */
export async function recordFailure(
  core: CoreMoves,
  tx: Tx,
  actor: Actor,
  t: TripRow,
  to: 'returning' | 'failed',
  input: FailDeliveryInput & { by: 'driver' | 'dispatch'; policy: string },
) {
  const after = await core.move(tx, t, to, {
    reason: `delivery failed: ${input.reason}`,
    effect: { failure: { reason: input.reason, note: input.note ?? null } },
  });
  await insertProof(tx, {
    organizationId: t.organization_id,
    id: newId(),
    tripId: t.id,
    stage: 'delivery',
    pinVerified: false,
    evidenceType: input.evidence?.type ?? null,
    storageKey: input.evidence?.storage_key ?? null,
    driverId: t.driver_id,
    verifiedByUserId: actor.userId,
  });
  if (to === 'failed') await core.releaseDriver(tx, t.driver_id);
  await core.emit(
    tx,
    actor,
    'trip.delivery_failed',
    after,
    {
      failure_reason: input.reason,
      note: input.note ?? null,
      policy: input.policy,
      recorded_by: input.by,
      evidence: input.evidence ? { type: input.evidence.type, storage_key: input.evidence.storage_key } : null,
      delivery_fee: after.delivery_fee,
      driver_earning: after.driver_earning,
    },
    'all',
  );
  return after;
}

/** returning → returned (driver with the pickup PIN, or dispatch once the merchant confirms): frees the driver's capacity, emits trip.returned. */
export async function recordReturn(core: CoreMoves, tx: Tx, actor: Actor, t: TripRow, by: 'driver' | 'dispatch') {
  const after = await core.move(tx, t, 'returned');
  await core.releaseDriver(tx, t.driver_id);
  await core.emit(tx, actor, 'trip.returned', after, { failure_reason: t.failure_reason, recorded_by: by }, 'all');
  return after;
}

/**
 * The failed-delivery outcome. The driver, at the dropoff with the goods (`in_transit`), reports why he could not hand
 * them over; the organization's `failed_delivery_policy` decides what follows:
 * - `return_to_merchant` (default): the trip goes to `returning` (it still occupies the driver) and ends as `returned`
 *   when the driver hands the goods back and proves it with the pickup PIN the merchant gives him;
 * - `close`: the trip ends as `failed` at once.
 * Events trip.delivery_failed and trip.returned; orders, express requests and money follow them (commerce hooks).
 */
export function createFailedDelivery(
  ctx: LogisticsContext,
  core: TripCore,
  assignment: Assignment,
  exceptions: Pick<Exceptions, 'pinLocked'>,
) {
  async function fail(tx: Tx, actor: Actor, driver: DriverRow, tripId: string, input: FailDeliveryInput) {
    const t = await assignment.ownTrip(tx, driver, tripId);
    const policy = (await getSettings(tx, t.organization_id)).failed_delivery_policy;
    const to = policy === 'close' ? 'failed' : 'returning';
    if (t.status !== 'in_transit') throw AppError.invalidTransition('Trip', t.status, to);
    if (input.evidence) {
      await assertObjectLink(ctx, tx, actor, input.evidence.storage_key, ['delivery_evidence'], {
        tripId: t.id,
        stage: 'delivery',
        proofType: input.evidence.type,
      });
    }
    return recordFailure(core, tx, actor, t, to, { ...input, by: 'driver', policy });
  }

  /**
   * returning → returned: the driver hands the goods back at the pickup and proves it with the pickup PIN (the merchant
   * gives it, as at pickup). Wrong PINs count against the pickup PIN's attempts (423 PIN_LOCKED after 5, dispatch resets
   * the `pickup` lock); the error is returned so the attempt is committed.
   */
  async function confirmReturn(tx: Tx, actor: Actor, driver: DriverRow, tripId: string, pin: string): Promise<VerifyOutcome> {
    const t = await assignment.ownTrip(tx, driver, tripId);
    if (t.status !== 'returning') throw AppError.invalidTransition('Trip', t.status, 'returned');
    const locked = () =>
      new AppError(
        423,
        'PIN_LOCKED',
        `The pickup PIN is locked after ${PIN_MAX_ATTEMPTS} wrong attempts; dispatch must reset it`,
        undefined,
        { attempts_remaining: 0 },
      );
    if (t.pickup_pin_attempts >= PIN_MAX_ATTEMPTS) throw locked();
    if (!safeEqual(pin, t.pickup_pin)) {
      const left = PIN_MAX_ATTEMPTS - (await countWrongPin(tx, t.id, 'pickup'));
      if (left === 0) await exceptions.pinLocked(tx, actor, t, 'pickup');
      return {
        ok: false,
        error: left <= 0 ? locked() : new AppError(422, 'INVALID_PIN', 'The pickup PIN is wrong', undefined, { attempts_remaining: left }),
      };
    }
    return { ok: true, trip: await recordReturn(core, tx, actor, t, 'driver') };
  }

  return { fail, confirmReturn };
}

export type FailedDelivery = ReturnType<typeof createFailedDelivery>;
