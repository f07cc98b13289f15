import { Type } from '@sinclair/typebox';
import { actorOf, type Actor } from '../../platform/auth.js';
import { recordAudit } from '../../platform/audit.js';
import { AppError } from '../../platform/errors.js';
import { areaGeoJson, GeoArea, parseArea, pointSql, polygonSql, type LonLat } from '../../platform/geo.js';
import { newId } from '../../platform/ids.js';
import { pageRequest, toPage } from '../../platform/pagination.js';
import { NonNegativeMoney, Page, PageQueryProps, ShortText, Strict } from '../../platform/schemas.js';
import type { Api, AppContext } from '../../platform/context.js';
import type { Tx } from '../../platform/db/index.js';
import { scopeOf } from './model.js';
import { getSettings, updateSettings, type SettingsChange } from './repo/settings.js';
import * as repo from './repo/territories.js';
import type { TerritoryRow } from './repo/territories.js';
import { FailedDeliveryPolicySchema, SettingsOut, StrategySchema, TerritoryOut } from './schemas.js';

export { getSettings, type LogisticsSettings } from './repo/settings.js';
export type { TerritoryRow } from './repo/territories.js';

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
      ctx.db.withTenant(actor, (tx) => createTerritory(tx, actor, input)),
  };
}

export function territoryRoutes(app: Api, ctx: AppContext) {
  const territories = territoryRequests(ctx);

  app.get(
    '/logistics/settings',
    {
      config: { auth: { roles: ['administrator', 'dispatch', 'subadmin'] } },
      schema: {
        operationId: 'getLogisticsSettings',
        tags: ['logistics'],
        summary: 'Dispatch settings (radius, acceptance timeout, strategy, geofence, flat driver fee)',
        response: { 200: SettingsOut },
      },
    },
    async (req) => {
      const actor = actorOf(req);
      return territories.settings(actor);
    },
  );

  app.patch(
    '/logistics/settings',
    {
      config: { auth: { roles: ['administrator'] } },
      schema: {
        operationId: 'updateLogisticsSettings',
        tags: ['logistics'],
        summary: 'Change dispatch settings (administrators); audited',
        body: Strict(
          {
            auto_assign_radius_m: Type.Optional(Type.Integer({ minimum: 100, maximum: 100_000 })),
            acceptance_timeout_s: Type.Optional(Type.Integer({ minimum: 10, maximum: 3600 })),
            acceptance_timeout_enabled: Type.Optional(
              Type.Boolean({
                description:
                  'When on, an assigned trip not accepted within acceptance_timeout_s is withdrawn from its driver and offered to the next candidate',
              }),
            ),
            acceptance_max_offers: Type.Optional(
              Type.Integer({
                minimum: 1,
                maximum: 20,
                description: 'Automatic offers of one trip before it goes back to the dispatch queue (pending) for a person to decide',
              }),
            ),
            assignment_strategy: Type.Optional(StrategySchema),
            failed_delivery_policy: Type.Optional(FailedDeliveryPolicySchema),
            geofence_radius_m: Type.Optional(Type.Integer({ minimum: 10, maximum: 5000 })),
            average_speed_kmh: Type.Optional(Type.Integer({ minimum: 1, maximum: 200 })),
            default_delivery_fee: Type.Optional(NonNegativeMoney),
            driver_flat_fee: Type.Optional(NonNegativeMoney),
            dispatch_buffer_min: Type.Optional(
              Type.Integer({ minimum: 0, maximum: 240, description: 'minutes added to preparation and travel in a delivery promise' }),
            ),
            delay_grace_min: Type.Optional(
              Type.Integer({ minimum: 0, maximum: 240, description: 'trip.delayed once the ETA passes the promise by more than this' }),
            ),
            location_stale_after_s: Type.Optional(
              Type.Integer({
                minimum: 30,
                maximum: 86_400,
                description: "trip.location_stale once an on-duty driver's last fix is older than this",
              }),
            ),
            rejections_alert_threshold: Type.Optional(
              Type.Integer({ minimum: 1, maximum: 50, description: 'rejections of one trip that raise trip.rejected_repeatedly' }),
            ),
            cash_limit: Type.Optional(
              Type.Union([NonNegativeMoney, Type.Null()], {
                description:
                  'Cash on delivery: a driver whose cash in hand is at or over this limit is offered no cash order (automatic assignment, offers and plans skip him, reason cash_limit); ' +
                  "a dispatcher's manual assignment over it needs `cash_limit_override` with a reason. null = no limit. A driver's own cash_limit (PATCH /drivers/{id}) overrides it.",
              }),
            ),
          },
          { minProperties: 1 },
        ),
        response: { 200: SettingsOut },
      },
    },
    async (req) => {
      const actor = actorOf(req);
      const body = req.body as Record<string, unknown>;
      for (const k of ['default_delivery_fee', 'driver_flat_fee']) {
        if (typeof body[k] === 'string' && (body[k] as string).startsWith('-'))
          throw AppError.badRequest(`${k} must be >= 0`, [{ field: k, message: 'must be >= 0' }]);
      }
      return territories.updateSettings(actor, req.body as SettingsChange);
    },
  );

  app.get(
    '/territories',
    {
      config: { auth: { roles: ['administrator', 'dispatch', 'subadmin'] } },
      schema: {
        operationId: 'listTerritories',
        tags: ['logistics'],
        summary: 'Territories (sub-administrators see only theirs)',
        querystring: Strict({ ...PageQueryProps, active: Type.Optional(Type.Boolean()) }),
        response: { 200: Page(TerritoryOut) },
      },
    },
    async (req) => {
      const actor = actorOf(req);
      return territories.list(actor, req.query);
    },
  );

  app.post(
    '/territories',
    {
      config: { auth: { roles: ['administrator'] } },
      schema: {
        operationId: 'createTerritory',
        tags: ['logistics'],
        summary: 'Create a territory from a GeoJSON Polygon or MultiPolygon',
        description:
          'Rings must be closed with at least 4 positions, [lon, lat] in range (else 400). Trips and merchants without a territory ' +
          'are then given the oldest active territory whose polygon covers their pickup point / location (the same rule applies at creation).',
        body: Strict({ name: ShortText(120), geometry: GeoArea, active: Type.Optional(Type.Boolean()) }),
        response: {
          201: Type.Object({
            ...TerritoryOut.properties,
            backfilled: Type.Integer({ description: 'records that received this or an older territory' }),
          }),
        },
      },
    },
    async (req, reply) => {
      const actor = actorOf(req);
      return reply.code(201).send(await territories.create(actor, req.body));
    },
  );
}
