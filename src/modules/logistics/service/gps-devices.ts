import { type Static } from '@sinclair/typebox';
import { tenantOf, type Actor } from '../../../platform/auth.js';
import { AppError } from '../../../platform/errors.js';
import { newId, randomToken, safeEqual, sha256Hex } from '../../../platform/ids.js';
import { pageRequest, toPage } from '../../../platform/pagination.js';
import { recordAudit } from '../../../platform/audit.js';
import type { LogisticsContext } from '../context.js';
import type { LogisticsService } from './logistics.js';
import * as repo from '../repo/gps-devices.js';
import type { GpsDeviceOut } from '../schemas.js';

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

const bad = (field: string, message: string) => AppError.badRequest(`Invalid OsmAnd field '${field}': ${message}`, [{ field, message }]);

function num(v: string | undefined, field: string, min: number, max: number): number | undefined {
  if (v === undefined || v === '') return undefined;
  const n = Number(v);
  if (!/^-?\d+(\.\d+)?$/.test(v.trim()) || !Number.isFinite(n) || n < min || n > max) throw bad(field, `a number from ${min} to ${max}`);
  return n;
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

  /** One OsmAnd fix: checked, then stored through the driver's location ingest (idempotent per device and fix time). */
  async function receive(token: string, f: OsmandFields, requestId: string) {
    const m = /^gpd_([0-9a-f-]{36})_([A-Za-z0-9_-]{43})$/.exec(token);
    if (!m) throw AppError.unauthorized('The GPS device token is invalid or revoked', 'INVALID_GPS_TOKEN');
    const dev = await db.withSystem((tx) => repo.liveGpsDevice(tx, m[1]));
    if (!dev || !safeEqual(sha256Hex(m[2]), dev.tokenHash))
      throw AppError.unauthorized('The GPS device token is invalid or revoked', 'INVALID_GPS_TOKEN');
    if (!f.id) throw bad('id', 'required: the device identifier');
    if (f.id !== dev.deviceIdentifier)
      throw new AppError(404, 'GPS_DEVICE_UNKNOWN', 'No device with this identifier is bound to this token');
    const lat = num(f.lat, 'lat', -90, 90);
    const lon = num(f.lon, 'lon', -180, 180);
    if (lat === undefined) throw bad('lat', 'required');
    if (lon === undefined) throw bad('lon', 'required');
    const at = osmandTime(f.timestamp);
    const speed = num(f.speed, 'speed', 0, 1000);
    const heading = num(f.bearing, 'bearing', 0, 360);
    const accuracy = num(f.accuracy, 'accuracy', 0, 100_000);
    num(f.batt, 'batt', 0, 100);
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
      const r = await svc.locations.ingest(tx, actor, d, [
        {
          client_point_id: `osmand:${dev.id}:${at}`,
          location: { type: 'Point', coordinates: [lon, lat] },
          recorded_at: new Date(at).toISOString(),
          ...(accuracy !== undefined ? { accuracy_m: accuracy } : {}),
          ...(speed !== undefined ? { speed_mps: Math.round(speed * KNOT_MPS * 1000) / 1000 } : {}),
          ...(heading !== undefined ? { heading: heading === 360 ? 0 : heading } : {}),
        },
      ]);
      await repo.touchGpsDevice(tx, dev.id);
      return { accepted: r.accepted, duplicates: r.duplicates };
    });
  }

  return { bind, list, revoke, receive };
}
