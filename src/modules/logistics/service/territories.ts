import { type Actor } from '../../../platform/auth.js';
import { recordAudit } from '../../../platform/audit.js';
import { AppError } from '../../../platform/errors.js';
import { areaGeoJson, GeoArea, parseArea, pointSql, polygonSql, type LonLat } from '../../../platform/geo.js';
import { newId } from '../../../platform/ids.js';
import { pageRequest, toPage } from '../../../platform/pagination.js';
import type { AppContext } from '../../../platform/context.js';
import type { Tx } from '../../../platform/db/index.js';
import { scopeOf } from '../../../platform/scope.js';
import { getSettings, updateSettings, type SettingsChange } from '../repo/settings.js';
import { settingsChanged } from './settings.js';
import { merchantsChanged } from './merchant-cache.js';
import * as repo from '../repo/territories.js';
import type { TerritoryRow } from '../repo/territories.js';

export { getSettings, type LogisticsSettings } from '../repo/settings.js';
export type { TerritoryRow } from '../repo/territories.js';

/** The oldest active territory whose polygon covers the point (the same SQL function the backfill uses). */
export const territoryForPoint = (tx: Tx, p: LonLat): Promise<string | null> => repo.territoryForPoint(tx, pointSql(p));

export const getTerritory = (tx: Tx, id: string): Promise<TerritoryRow | null> => repo.findTerritory(tx, id);

/** Territory ids that exist (and, for sub-administrators, are theirs); anything else is 422. */
export async function assertTerritories(tx: Tx, actor: Actor, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  const scope = scopeOf(actor);
  const known = await repo.existingTerritoryIds(tx, ids);
  const bad = ids.filter((id) => !known.has(id) || (scope && !scope.includes(id)));
  if (bad.length)
    throw AppError.unprocessable(
      'Unknown territory',
      'TERRITORY_NOT_FOUND',
      bad.map((id) => ({ field: 'territory_id', message: `unknown territory ${id}` })),
    );
}

export async function createTerritory(
  ctx: Pick<AppContext, 'db' | 'onClose'>,
  tx: Tx,
  actor: Actor,
  input: { name: string; geometry: unknown; active?: boolean },
): Promise<TerritoryRow & { backfilled: number }> {
  const polygons = parseArea(input.geometry);
  // Stored without altitudes: positions come back as [lon, lat].
  const geometry = areaGeoJson((input.geometry as GeoArea).type, polygons);
  const id = newId();
  const row = await repo.insertTerritory(
    tx,
    { organizationId: actor.organizationId, id, name: input.name, geometry, active: input.active ?? true, createdByUserId: actor.userId },
    polygons.map((rings) => rings.map(polygonSql)),
  );
  // Trips and merchants that had no territory get the oldest active one covering them (possibly this one).
  const backfilled = await repo.backfillTerritories(tx, actor.organizationId);
  // Every instance forgets the merchants it cached (their territory may be among the changes).
  if (backfilled > 0) await merchantsChanged(ctx, tx);
  await recordAudit(tx, actor, {
    action: 'territory.created',
    entityType: 'territory',
    entityId: id,
    after: { name: input.name, active: input.active ?? true, backfilled },
  });
  return { ...row, backfilled };
}

/** What the settings and territory routes ask for, each in the caller's tenant transaction. */
export function territoryRequests(ctx: AppContext) {
  return {
    settings: (actor: Actor) => ctx.db.withTenant(actor, (tx) => getSettings(tx, actor.organizationId)),
    /** Audited with the settings before and after. */
    updateSettings: (actor: Actor, change: SettingsChange) =>
      ctx.db.withTenant(actor, async (tx) => {
        const before = await getSettings(tx, actor.organizationId);
        const after = await updateSettings(tx, actor.organizationId, change, actor.userId);
        await settingsChanged(ctx, tx, actor.organizationId);
        await recordAudit(tx, actor, {
          action: 'logistics_settings.updated',
          entityType: 'logistics_settings',
          entityId: actor.organizationId,
          before: { ...before },
          after: { ...after },
        });
        return after;
      }),
    list: (actor: Actor, q: { active?: boolean; limit?: number; cursor?: string }) =>
      ctx.db.withTenant(actor, async (tx) => {
        const page = pageRequest(q);
        const rows = await repo.listTerritories(tx, {
          active: q.active ?? null,
          scope: scopeOf(actor),
          after: page.after,
          limit: page.limit + 1,
        });
        return toPage(rows, page);
      }),
    create: (actor: Actor, input: { name: string; geometry: unknown; active?: boolean }) =>
      ctx.db.withTenant(actor, (tx) => createTerritory(ctx, tx, actor, input)),
  };
}
