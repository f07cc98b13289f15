import type { Actor } from '../../../platform/auth.js';
import type { LogisticsContext } from '../context.js';
import type { Tx } from '../../../platform/db/index.js';
import { AppError } from '../../../platform/errors.js';
import { safeEqual } from '../../../platform/ids.js';
import { assertObjectLink } from '../../storage/index.js';
import { PIN_MAX_ATTEMPTS } from './transitions.js';
import { type DriverRow } from '../repo/drivers.js';
import type { Assignment } from './assignment.js';
import type { VerifyOutcome } from './proofs.js';
import { settingsOf } from './settings.js';
import { countWrongPin } from '../repo/trips.js';
import { recordFailure, recordReturn, type FailDeliveryInput, type TripCore } from './trips.js';

export type { FailDeliveryInput } from './trips.js';
import type { Exceptions } from './exceptions.js';

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
    const policy = (await settingsOf(ctx, tx, t.organization_id)).failed_delivery_policy;
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
