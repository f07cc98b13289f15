import type { LogisticsContext } from '../context.js';
import { createCache } from '../../../platform/cache.js';
import type { Tx } from '../../../platform/db/index.js';
import { AppError } from '../../../platform/errors.js';
import type { LonLat } from '../../../platform/geo.js';
import { hourOfWeek, learnSpeeds, promiseAt, travelSeconds, type SpeedModel } from './eta-model.js';
import { speedSamples } from '../repo/eta.js';
import { type LogisticsSettings } from '../repo/settings.js';
import { settingsOf } from './settings.js';
import { LOAD_LIMITS } from '../schemas.js';

/** Completed trips of the last 8 weeks teach the speeds; at most this many (newest first). */
const LEARN_WINDOW_MS = 56 * 24 * 3600_000;
const LEARN_LIMIT = 20_000;
/** The learned speeds of an organization are recomputed at most this often (the GPS path reads them from memory). */
const SPEEDS_TTL_MS = 10 * 60_000;

export interface OrgSpeeds {
  model: SpeedModel;
  timeZone: string;
}

/**
 * A delivery window as given (ISO strings or dates, either may be absent): it must end after it starts and end in the
 * future, else 422 (WINDOW_INVALID, PROMISE_IN_PAST) before anything is written.
 */
export function validateWindow(
  after: Date | string | null,
  before: Date | string | null,
  now: Date,
): { after: Date | null; before: Date | null } {
  const a = after === null ? null : new Date(after);
  const b = before === null ? null : new Date(before);
  if ((a && Number.isNaN(a.getTime())) || (b && Number.isNaN(b.getTime())))
    throw AppError.badRequest('deliver_after and deliver_before must be ISO 8601 timestamps');
  if (a && !b)
    throw AppError.unprocessable('A delivery window needs deliver_before', 'WINDOW_INVALID', [
      { field: 'deliver_before', message: 'required with deliver_after' },
    ]);
  if (a && b && b.getTime() <= a.getTime()) {
    throw AppError.unprocessable('The delivery window ends before it starts', 'WINDOW_INVALID', [
      { field: 'deliver_before', message: 'must be after deliver_after' },
    ]);
  }
  if (b && b.getTime() <= now.getTime())
    throw AppError.unprocessable('The promised time is in the past', 'PROMISE_IN_PAST', [
      { field: 'deliver_before', message: 'must be in the future' },
    ]);
  return { after: a, before: b };
}

/** A trip's pickup window and load as given; the delivery window is validateWindow's. */
export interface WindowsLoadInput {
  pickup_after?: Date | string | null;
  pickup_before?: Date | string | null;
  units?: number | null;
  weight_kg?: number | null;
  volume_l?: number | null;
  service_min?: number | null;
}

/**
 * The pickup window must end after it starts, in the future, and not after the delivery window ends (else 422
 * WINDOW_INVALID); the load and service time within LOAD_LIMITS (else 422 LOAD_INVALID), each with its field.
 * `now` null: the window was validated when it was given (an order's, at checkout), so one that has passed since is
 * kept as it is (a late order stays late).
 */
export function validateWindowsLoad(
  input: WindowsLoadInput,
  deliverBefore: Date | null,
  now: Date | null,
): {
  pickupAfter: Date | null;
  pickupBefore: Date | null;
  units: number;
  weightKg: number | null;
  volumeL: number | null;
  serviceMin: number | null;
} {
  const at = (v: Date | string | null | undefined, field: string) => {
    if (v === null || v === undefined) return null;
    const d = new Date(v);
    if (Number.isNaN(d.getTime())) throw AppError.badRequest(`${field} must be an ISO 8601 timestamp`, [{ field, message: 'invalid' }]);
    return d;
  };
  const pickupAfter = at(input.pickup_after, 'pickup_after');
  const pickupBefore = at(input.pickup_before, 'pickup_before');
  const bad = (field: string, message: string) =>
    AppError.unprocessable(`The pickup window is invalid: ${field} ${message}`, 'WINDOW_INVALID', [{ field, message }]);
  if (pickupAfter && pickupBefore && pickupBefore.getTime() <= pickupAfter.getTime())
    throw bad('pickup_before', 'must be after pickup_after');
  if (pickupBefore && now && pickupBefore.getTime() <= now.getTime()) throw bad('pickup_before', 'must be in the future');
  if (pickupBefore && deliverBefore && pickupBefore.getTime() > deliverBefore.getTime())
    throw bad('pickup_before', 'must not be after deliver_before');
  if (pickupAfter && deliverBefore && pickupAfter.getTime() >= deliverBefore.getTime())
    throw bad('pickup_after', 'must be before deliver_before');
  const load = (field: string, v: number | null | undefined, min: number, max: number, exclusiveMin: boolean) => {
    if (v === null || v === undefined) return null;
    if (!Number.isFinite(v) || v > max || (exclusiveMin ? v <= min : v < min))
      throw AppError.unprocessable(`${field} is out of range`, 'LOAD_INVALID', [
        { field, message: `must be ${exclusiveMin ? '>' : '>='} ${min} and <= ${max}` },
      ]);
    return v;
  };
  return {
    pickupAfter,
    pickupBefore,
    units: load('units', input.units, 1, LOAD_LIMITS.units, false) ?? 1,
    weightKg: load('weight_kg', input.weight_kg, 0, LOAD_LIMITS.weight_kg, true),
    volumeL: load('volume_l', input.volume_l, 0, LOAD_LIMITS.volume_l, true),
    serviceMin: load('service_min', input.service_min, 0, LOAD_LIMITS.service_min, false),
  };
}

/** A promise set by staff: in the future, and not outside its window. */
export function validatePromise(promisedAt: Date | string, now: Date): Date {
  const p = new Date(promisedAt);
  if (Number.isNaN(p.getTime())) throw AppError.badRequest('promised_at must be an ISO 8601 timestamp');
  if (p.getTime() <= now.getTime())
    throw AppError.unprocessable('The promised time is in the past', 'PROMISE_IN_PAST', [
      { field: 'promised_at', message: 'must be in the future' },
    ]);
  return p;
}

/**
 * Promises and the speeds behind them and behind the live ETAs: learned per organization from its completed trips
 * (`learnSpeeds`: median per territory and hour of the week, coarser levels below the minimum sample count, the
 * `average_speed_kmh` setting last), cached in memory so a GPS batch does not query them.
 */
export function createPromises(ctx: LogisticsContext) {
  const cache = createCache<string, OrgSpeeds>({ ttlMs: SPEEDS_TTL_MS });

  /** `settings`: the organization's logistics settings when the caller has read them already (one read, not two). */
  async function speeds(tx: Tx, organizationId: string, known?: LogisticsSettings): Promise<OrgSpeeds> {
    const settings = known ?? (await settingsOf(ctx, tx, organizationId));
    return cache.get(`${organizationId}|${settings.average_speed_kmh}`, async () => {
      const rows = await speedSamples(tx, new Date(Date.now() - LEARN_WINDOW_MS), LEARN_LIMIT);
      const timeZone = (await ctx.deps.organizations.settingsIn(tx)).timezone;
      const samples = rows.map((r) => ({
        territoryId: r.territory_id,
        hourOfWeek: hourOfWeek(new Date(r.picked_up_at), timeZone),
        speedMps: r.speed_mps,
      }));
      return { model: learnSpeeds(samples, settings.average_speed_kmh), timeZone };
    });
  }

  /** Forgets an organization's learned speeds (tests, after loading history). */
  const forget = () => cache.clear();

  /**
   * The promise of a delivery starting at `start`: + the branch's preparation + travel pickup → dropoff at the learned
   * speed + the organization's dispatch buffer.
   */
  async function estimate(
    tx: Tx,
    organizationId: string,
    q: { territoryId: string | null; pickup: LonLat; dropoff: LonLat; start: Date; preparationMin: number },
  ): Promise<Date> {
    const settings = await settingsOf(ctx, tx, organizationId);
    const s = await speeds(tx, organizationId, settings);
    const travelS = travelSeconds(q.pickup, q.dropoff, s.model, q.territoryId, q.start, s.timeZone);
    return promiseAt(q.start, { preparationMin: q.preparationMin, travelS, bufferMin: settings.dispatch_buffer_min });
  }

  return { speeds, estimate, forget };
}

export type Promises = ReturnType<typeof createPromises>;
