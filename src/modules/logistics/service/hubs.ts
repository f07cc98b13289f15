import type { Static } from '@sinclair/typebox';
import type { Actor } from '../../../platform/auth.js';
import { recordAudit } from '../../../platform/audit.js';
import type { Tx } from '../../../platform/db/index.js';
import { AppError } from '../../../platform/errors.js';
import { parsePoint, toGeoPoint, type GeoPoint, type LonLat } from '../../../platform/geo.js';
import { newId } from '../../../platform/ids.js';
import { pageRequest, toPage } from '../../../platform/pagination.js';
import { wallClock } from '../../../platform/wall-clock.js';
import type { LogisticsContext } from '../context.js';
import { scopeOf } from '../../../platform/scope.js';
import * as repo from '../repo/hubs.js';
import type { HubHours, HubOut } from '../schemas.js';
import { territoryForPoint } from './territories.js';

export interface HubInput {
  name: string;
  address: string;
  location: GeoPoint;
  opening_hours?: HubHours;
  active?: boolean;
}

export function hubOut(h: repo.HubRecord): Static<typeof HubOut> {
  return {
    id: h.id,
    organization_id: h.organizationId,
    name: h.name,
    address: h.address,
    location: toGeoPoint({ lon: h.location.x, lat: h.location.y })!,
    territory_id: h.territoryId,
    opening_hours: h.openingHours,
    active: h.active,
    created_at: h.createdAt,
    updated_at: h.updatedAt,
  };
}

const minutesOf = (hhmm: string) => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));

/** One interval a weekday, closing after it opens (the schema has checked the formats). */
export function validateHubHours(hours: HubHours): void {
  const seen = new Set<number>();
  hours.forEach((h, i) => {
    if (seen.has(h.day))
      throw AppError.unprocessable(`opening_hours names weekday ${h.day} twice`, 'HUB_HOURS_INVALID', [
        { field: `opening_hours[${i}].day`, message: 'one interval per weekday' },
      ]);
    seen.add(h.day);
    if (minutesOf(h.close) <= minutesOf(h.open))
      throw AppError.unprocessable(`The hub closes (${h.close}) before it opens (${h.open})`, 'HUB_HOURS_INVALID', [
        { field: `opening_hours[${i}].close`, message: 'must be after open' },
      ]);
  });
}

/** The instant of a wall-clock minute of a local date (a daylight-saving change that day settles on the later offset). */
function instantOf(day: { y: number; m: number; d: number }, minutes: number, timeZone: string): Date {
  const naive = Date.UTC(day.y, day.m - 1, day.d, 0, minutes);
  const offset = (t: number) => {
    const w = wallClock(new Date(t), timeZone);
    return Date.UTC(w.y, w.m - 1, w.d, w.h, w.min, w.s) - Math.floor(t / 1000) * 1000;
  };
  const first = naive - offset(naive);
  return new Date(naive - offset(first));
}

/**
 * A hub's hours on the local day of `at`: its opening and closing instants; `null` both when it declares no hours
 * (always open); `closed` when that weekday has no interval.
 */
export function hubDay(hours: HubHours, timeZone: string, at: Date): { opens_at: Date | null; closes_at: Date | null; closed: boolean } {
  if (hours.length === 0) return { opens_at: null, closes_at: null, closed: false };
  const today = wallClock(at, timeZone);
  const h = hours.find((x) => x.day === today.weekday);
  if (!h) return { opens_at: null, closes_at: null, closed: true };
  return {
    opens_at: instantOf(today, minutesOf(h.open), timeZone),
    closes_at: instantOf(today, minutesOf(h.close), timeZone),
    closed: false,
  };
}

/** What a plan needs of a hub on the day of `at`. */
export interface PlanningHub {
  id: string;
  name: string;
  position: LonLat;
  active: boolean;
  opens_at: Date | null;
  closes_at: Date | null;
  /** No opening hours that weekday. */
  closed: boolean;
}

export function createHubService(ctx: LogisticsContext) {
  const { db } = ctx;

  /** The territory the point lies in (for a sub-administrator, one of his): else 422 HUB_OUTSIDE_TERRITORY naming `location`. */
  async function territoryOf(tx: Tx, actor: Actor, location: GeoPoint): Promise<{ point: LonLat; territoryId: string }> {
    const point = parsePoint(location);
    const territoryId = await territoryForPoint(tx, point);
    const scope = scopeOf(actor);
    if (!territoryId || (scope && !scope.includes(territoryId)))
      throw AppError.unprocessable(
        scope ? 'The hub must lie inside one of your territories' : "The hub must lie inside one of the organization's territories",
        'HUB_OUTSIDE_TERRITORY',
        [{ field: 'location', message: 'outside every territory' }],
      );
    return { point, territoryId };
  }

  async function get(tx: Tx, actor: Actor, id: string, lock = false): Promise<repo.HubRecord> {
    const h = await repo.findHub(tx, id, scopeOf(actor), lock);
    if (!h) throw AppError.notFound('Hub');
    return h;
  }

  async function forPlanning(tx: Tx, actor: Actor, id: string, at: Date): Promise<PlanningHub | null> {
    const h = await repo.findHub(tx, id, scopeOf(actor));
    if (!h) return null;
    const { timezone } = await ctx.deps.organizations.settingsIn(tx);
    return {
      id: h.id,
      name: h.name,
      position: { lon: h.location.x, lat: h.location.y },
      active: h.active,
      ...hubDay(h.openingHours, timezone, at),
    };
  }

  const requests = {
    list: (actor: Actor, q: { active?: boolean; territory_id?: string; limit?: number; cursor?: string }) =>
      db.readTenant(actor, async (tx) => {
        const page = pageRequest(q);
        const rows = await repo.listHubs(tx, {
          scope: scopeOf(actor),
          active: q.active ?? null,
          territoryId: q.territory_id ?? null,
          after: page.after,
          limit: page.limit,
        });
        return toPage(rows, page, hubOut);
      }),
    get: (actor: Actor, id: string) => db.readTenant(actor, async (tx) => hubOut(await get(tx, actor, id))),
    create: (actor: Actor, input: HubInput) =>
      db.withTenant(actor, async (tx) => {
        const hours = input.opening_hours ?? [];
        validateHubHours(hours);
        const { point, territoryId } = await territoryOf(tx, actor, input.location);
        const row = await repo.insertHub(tx, {
          organizationId: actor.organizationId,
          id: newId(),
          name: input.name,
          address: input.address,
          location: { x: point.lon, y: point.lat },
          territoryId,
          openingHours: hours,
          active: input.active ?? true,
          createdByUserId: actor.userId,
        });
        const out = hubOut(row);
        await recordAudit(tx, actor, { action: 'hub.created', entityType: 'hub', entityId: row.id, after: { ...out } });
        return out;
      }),
    update: (actor: Actor, id: string, change: Partial<HubInput>) =>
      db.withTenant(actor, async (tx) => {
        const before = await get(tx, actor, id, true);
        if (change.opening_hours) validateHubHours(change.opening_hours);
        const placed = change.location ? await territoryOf(tx, actor, change.location) : null;
        const row = await repo.updateHub(tx, id, {
          name: change.name,
          address: change.address,
          openingHours: change.opening_hours,
          active: change.active,
          ...(placed ? { location: { x: placed.point.lon, y: placed.point.lat }, territoryId: placed.territoryId } : {}),
        });
        const out = hubOut(row);
        await recordAudit(tx, actor, {
          action: 'hub.updated',
          entityType: 'hub',
          entityId: id,
          before: { ...hubOut(before) },
          after: { ...out },
        });
        return out;
      }),
    remove: (actor: Actor, id: string) =>
      db.withTenant(actor, async (tx) => {
        const before = await get(tx, actor, id, true);
        await repo.deleteHub(tx, id);
        await recordAudit(tx, actor, { action: 'hub.deleted', entityType: 'hub', entityId: id, before: { ...hubOut(before) } });
      }),
  };

  return { forPlanning, requests };
}

export type HubService = ReturnType<typeof createHubService>;
