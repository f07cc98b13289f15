import { type Static } from '@sinclair/typebox';
import { tenantOf, type Actor } from '../../../platform/auth.js';
import { AppError } from '../../../platform/errors.js';
import { newId, randomToken, safeEqual, sha256Hex } from '../../../platform/ids.js';
import { pageRequest, toPage } from '../../../platform/pagination.js';
import { recordAudit } from '../../../platform/audit.js';
import { enforceRateLimit } from '../../../platform/rate-limit.js';
import type { LogisticsContext } from '../context.js';
import type { LogisticsService } from './logistics.js';
import * as repo from '../repo/gps-devices.js';
import type { GpsDeviceOut, OsmandBody } from '../schemas.js';

/** OsmAnd sends speed in knots; the ingest takes metres per second. */
const KNOT_MPS = 0.514444;
const MAX_FUTURE_MS = 5 * 60_000;
const TOKEN_PREFIX = 'gpd_';

export function gpsDeviceOut(d: repo.GpsDeviceRecord): Static<typeof GpsDeviceOut> {
  return {
    id: d.id,
    organization_id: d.organizationId,
    driver_id: d.driverId,
    device_identifier: d.deviceIdentifier,
    created_by: d.createdBy,
    created_at: d.createdAt,
    last_seen_at: d.lastSeenAt,
    revoked_at: d.revokedAt,
  };
}

export type OsmandFields = Partial<Record<'id' | 'lat' | 'lon' | 'timestamp' | 'speed' | 'bearing' | 'accuracy' | 'batt', string>>;
/** A request's fields: the query string and a form body (OsmAnd), or the JSON body of newer Traccar Client versions. */
export type OsmandInput = OsmandFields & Pick<Static<typeof OsmandBody>, 'device_id' | 'location'>;

/** One fix as the ingest takes it. */
interface Fix {
  id: string | undefined;
  lat: number;
  lon: number;
  at: number;
  speedMps?: number;
  heading?: number;
  accuracy?: number;
}

const bad = (field: string, message: string) => AppError.badRequest(`Invalid OsmAnd field '${field}': ${message}`, [{ field, message }]);

function inRange(n: number | undefined, field: string, min: number, max: number): number | undefined {
  if (n === undefined) return undefined;
  if (!Number.isFinite(n) || n < min || n > max) throw bad(field, `a number from ${min} to ${max}`);
  return n;
}

function num(v: string | undefined, field: string, min: number, max: number): number | undefined {
  if (v === undefined || v === '') return undefined;
  if (!/^-?\d+(\.\d+)?$/.test(v.trim())) throw bad(field, `a number from ${min} to ${max}`);
  return inRange(Number(v), field, min, max);
}

/** `timestamp`: unix seconds (milliseconds when above 10^11), or ISO 8601; absent = now. */
export function osmandTime(v: string | undefined, now = Date.now()): number {
  if (v === undefined || v === '') return now;
  const t = /^\d+(\.\d+)?$/.test(v)
    ? Number(v) > 1e11
      ? Number(v)
      : Number(v) * 1000
    : /^\d{4}-\d{2}-\d{2}T/.test(v)
      ? Date.parse(v)
      : NaN;
  if (!Number.isFinite(t) || t > now + MAX_FUTURE_MS) throw bad('timestamp', 'unix seconds or an ISO 8601 time, not in the future');
  return Math.floor(t);
}

/** The OsmAnd fields (query string or form): speed in knots, battery in percent. */
function fixOfFields(f: OsmandFields): Fix {
  const lat = num(f.lat, 'lat', -90, 90);
  const lon = num(f.lon, 'lon', -180, 180);
  if (lat === undefined) throw bad('lat', 'required');
  if (lon === undefined) throw bad('lon', 'required');
  const at = osmandTime(f.timestamp);
  const knots = num(f.speed, 'speed', 0, 1000);
  const heading = num(f.bearing, 'bearing', 0, 360);
  const accuracy = num(f.accuracy, 'accuracy', 0, 100_000);
  num(f.batt, 'batt', 0, 100);
  return { id: f.id, lat, lon, at, speedMps: knots === undefined ? undefined : knots * KNOT_MPS, heading, accuracy };
}

/**
 * The JSON of newer Traccar Client versions: `device_id` and one `location` (ISO time, `coords` with speed in m/s,
 * `battery.level` 0-1). The phone reports an unknown speed, heading or battery level as a negative number: left out.
 */
function fixOfJson(body: OsmandInput, loc: NonNullable<OsmandInput['location']>): Fix {
  const known = (n: number | undefined) => (n === undefined || n < 0 ? undefined : n);
  const c = loc.coords;
  const lat = inRange(c.latitude, 'location.coords.latitude', -90, 90)!;
  const lon = inRange(c.longitude, 'location.coords.longitude', -180, 180)!;
  const ts = loc.timestamp;
  let at: number;
  try {
    at = osmandTime(ts === undefined ? undefined : String(ts));
  } catch {
    throw bad('location.timestamp', 'an ISO 8601 time (or unix seconds), not in the future');
  }
  const speedMps = inRange(known(c.speed), 'location.coords.speed', 0, 515);
  const heading = inRange(known(c.heading), 'location.coords.heading', 0, 360);
  const accuracy = inRange(c.accuracy, 'location.coords.accuracy', 0, 100_000);
  inRange(known(loc.battery?.level), 'location.battery.level', 0, 1);
  return { id: body.device_id ?? body.id, lat, lon, at, speedMps, heading, accuracy };
}

export function createGpsDevices(ctx: LogisticsContext, svc: LogisticsService) {
  const { db } = ctx;

  async function bind(actor: Actor, driverId: string, deviceIdentifier: string) {
    return db.withTenant(tenantOf(actor), async (tx) => {
      const d = await svc.drivers.getScoped(tx, actor, driverId);
      const id = newId();
      const secret = randomToken(32);
      const row = await repo.insertGpsDevice(tx, {
        organizationId: actor.organizationId,
        id,
        driverId: d.id,
        deviceIdentifier,
        tokenHash: sha256Hex(secret),
        createdBy: actor.userId,
      });
      await recordAudit(tx, actor, {
        action: 'gps_device.bound',
        entityType: 'gps_device',
        entityId: id,
        after: { driver_id: d.id, device_identifier: deviceIdentifier },
      });
      const token = `${TOKEN_PREFIX}${id}_${secret}`;
      return { ...gpsDeviceOut(row), token, url_path: `/api/v1/gps/osmand/${token}` };
    });
  }

  async function list(actor: Actor, driverId: string, q: { limit?: number; cursor?: string }) {
    const page = pageRequest(q);
    return db.withTenant(tenantOf(actor), async (tx) => {
      const d = await svc.drivers.getScoped(tx, actor, driverId);
      return toPage(await repo.listGpsDevices(tx, d.id, page), page, gpsDeviceOut);
    });
  }

  async function revoke(actor: Actor, driverId: string, id: string) {
    await db.withTenant(tenantOf(actor), async (tx) => {
      const d = await svc.drivers.getScoped(tx, actor, driverId);
      const dev = await repo.getGpsDevice(tx, d.id, id);
      if (!dev) throw AppError.notFound('GPS device');
      if (dev.revokedAt) return;
      await repo.revokeGpsDevice(tx, id);
      await recordAudit(tx, actor, {
        action: 'gps_device.revoked',
        entityType: 'gps_device',
        entityId: id,
        before: { driver_id: d.id, device_identifier: dev.deviceIdentifier },
      });
    });
  }

  /**
   * One OsmAnd fix: the token, then the device's rate limit, then the fields are checked; then stored through the
   * driver's location ingest (idempotent per device and fix time). A refused fix writes nothing.
   */
  async function receive(token: string, input: OsmandInput, requestId: string) {
    const m = /^gpd_([0-9a-f-]{36})_([A-Za-z0-9_-]{43})$/.exec(token);
    if (!m) throw AppError.unauthorized('The GPS device token is invalid or revoked', 'INVALID_GPS_TOKEN');
    const dev = await db.withSystem((tx) => repo.liveGpsDevice(tx, m[1]));
    if (!dev || !safeEqual(sha256Hex(m[2]), dev.tokenHash))
      throw AppError.unauthorized('The GPS device token is invalid or revoked', 'INVALID_GPS_TOKEN');
    // Counted after the token is known good, so a stranger cannot spend a device's allowance.
    await enforceRateLimit(
      db,
      `gps-device:${dev.organizationId}:${dev.id}`,
      ctx.config.settings.GPS_DEVICE_RATE_LIMIT_PER_MINUTE,
      'fixes per GPS device',
    );
    const fix = input.location ? fixOfJson(input, input.location) : fixOfFields(input);
    if (!fix.id) throw bad(input.location ? 'device_id' : 'id', 'required: the device identifier');
    if (fix.id !== dev.deviceIdentifier)
      throw new AppError(404, 'GPS_DEVICE_UNKNOWN', 'No device with this identifier is bound to this token');
    const { lat, lon, at, speedMps, heading, accuracy } = fix;
    return db.withTenant({ organizationId: dev.organizationId, userId: dev.createdBy }, async (tx) => {
      const d = await svc.drivers.load(tx, dev.driverId);
      if (!d) throw new AppError(404, 'GPS_DEVICE_UNKNOWN', 'The driver of this device is gone');
      const actor: Actor = {
        userId: d.user_id,
        organizationId: dev.organizationId,
        role: 'repartidor',
        kind: 'repartidor',
        sessionId: `gps-device:${dev.id}`,
        requestId,
        subadmin: null,
      };
      const point = {
        client_point_id: `osmand:${dev.id}:${at}`,
        location: { type: 'Point' as const, coordinates: [lon, lat] as [number, number] },
        recorded_at: new Date(at).toISOString(),
        ...(accuracy !== undefined ? { accuracy_m: accuracy } : {}),
        ...(speedMps !== undefined ? { speed_mps: Math.round(speedMps * 1000) / 1000 } : {}),
        ...(heading !== undefined ? { heading: heading === 360 ? 0 : heading } : {}),
      };
      // The fix and the device's last-seen time only: the transaction commits asynchronously.
      const r = await svc.locations.ingest(tx, actor, d, [point], { gpsOnly: true });
      await repo.touchGpsDevice(tx, dev.id);
      return { accepted: r.accepted, duplicates: r.duplicates };
    });
  }

  return { bind, list, revoke, receive };
}
