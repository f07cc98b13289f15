import { Type } from '@sinclair/typebox';
import { actorOf, tenantOf, type Actor } from '../../platform/auth.js';
import { recordAudit } from '../../platform/audit.js';
import { AppError } from '../../platform/errors.js';
import { areaGeoJson, GeoArea, parseArea, pointSql, polygonSql, type LonLat } from '../../platform/geo.js';
import { newId } from '../../platform/ids.js';
import { pageRequest, toPage } from '../../platform/pagination.js';
import { NonNegativeMoney, Page, PageQueryProps, ShortText, Strict } from '../../platform/schemas.js';
import type { Api, AppContext } from '../../platform/context.js';
import type { Tx } from '../../platform/db/index.js';
import { scopeOf } from './model.js';
import { FailedDeliveryPolicySchema, SettingsOut, StrategySchema, TerritoryOut } from './schemas.js';

export interface LogisticsSettings {
  auto_assign_radius_m: number;
  acceptance_timeout_s: number;
  acceptance_timeout_enabled: boolean;
  acceptance_max_offers: number;
  assignment_strategy: 'nearest' | 'least_loaded';
  failed_delivery_policy: 'return_to_merchant' | 'close';
  geofence_radius_m: number;
  average_speed_kmh: number;
  default_delivery_fee: string;
  driver_flat_fee: string;
  currency: string;
  updated_at: Date;
}

const SETTINGS_COLUMNS =
  'auto_assign_radius_m, acceptance_timeout_s, acceptance_timeout_enabled, acceptance_max_offers, assignment_strategy, failed_delivery_policy, geofence_radius_m, average_speed_kmh, default_delivery_fee, driver_flat_fee, ' +
  // One currency per organization: the organization settings' default_currency (money issue 16).
  'COALESCE((SELECT s.default_currency FROM organization_settings s WHERE s.organization_id = logistics_settings.organization_id), currency) AS currency, updated_at';

/** The organization's logistics settings; the row is created with the defaults on first use. */
export async function getSettings(tx: Tx, organizationId: string): Promise<LogisticsSettings> {
  const found = await tx.query<LogisticsSettings>(`SELECT ${SETTINGS_COLUMNS} FROM logistics_settings WHERE organization_id = $1`, [organizationId]);
  if (found.rows[0]) return found.rows[0];
  await tx.query('INSERT INTO logistics_settings (organization_id) VALUES ($1) ON CONFLICT DO NOTHING', [organizationId]);
  return (await tx.query<LogisticsSettings>(`SELECT ${SETTINGS_COLUMNS} FROM logistics_settings WHERE organization_id = $1`, [organizationId])).rows[0];
}

export interface TerritoryRow {
  id: string;
  name: string;
  active: boolean;
  geometry: GeoArea;
  created_at: Date;
  updated_at: Date;
}

/** The oldest active territory whose polygon covers the point (the same SQL function the backfill uses). */
export async function territoryForPoint(tx: Tx, p: LonLat): Promise<string | null> {
  const { rows } = await tx.query<{ id: string | null }>(`SELECT logistics_territory_for_point(current_setting('app.organization_id', true), $1::point) AS id`, [pointSql(p)]);
  return rows[0]?.id ?? null;
}

export async function getTerritory(tx: Tx, id: string): Promise<TerritoryRow | null> {
  const { rows } = await tx.query<TerritoryRow>('SELECT id, name, active, geometry, created_at, updated_at FROM territory WHERE id = $1', [id]);
  return rows[0] ?? null;
}

/** Territory ids that exist (and, for sub-administrators, are theirs); anything else is 422. */
export async function assertTerritories(tx: Tx, actor: Actor, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  const scope = scopeOf(actor);
  const { rows } = await tx.query<{ id: string }>('SELECT id FROM territory WHERE id = ANY($1::text[])', [ids]);
  const known = new Set(rows.map((r) => r.id));
  const bad = ids.filter((id) => !known.has(id) || (scope && !scope.includes(id)));
  if (bad.length) throw AppError.unprocessable('Unknown territory', 'TERRITORY_NOT_FOUND', bad.map((id) => ({ field: 'territory_id', message: `unknown territory ${id}` })));
}

export async function createTerritory(tx: Tx, actor: Actor, input: { name: string; geometry: unknown; active?: boolean }): Promise<TerritoryRow & { backfilled: number }> {
  const polygons = parseArea(input.geometry);
  // Stored without altitudes: positions come back as [lon, lat].
  const geometry = areaGeoJson((input.geometry as GeoArea).type, polygons);
  const id = newId();
  const { rows } = await tx.query<TerritoryRow>(
    `INSERT INTO territory (organization_id, id, name, geometry, active, created_by_user_id) VALUES ($1, $2, $3, $4, $5, $6)
     RETURNING id, name, active, geometry, created_at, updated_at`,
    [actor.organizationId, id, input.name, JSON.stringify(geometry), input.active ?? true, actor.userId],
  );
  const parts: string[] = [];
  const params: unknown[] = [actor.organizationId, id];
  polygons.forEach((rings, pi) =>
    rings.forEach((ring, ri) => {
      params.push(pi, ri, polygonSql(ring));
      const n = params.length;
      parts.push(`($1, $2, $${n - 2}::int, $${n - 1}::int, $${n}::polygon)`);
    }),
  );
  await tx.query(`INSERT INTO territory_ring (organization_id, territory_id, part_no, ring_no, ring) VALUES ${parts.join(', ')}`, params);
  // Trips and merchants that had no territory get the oldest active one covering them (possibly this one).
  const backfilled = (await tx.query<{ n: number }>('SELECT logistics_backfill_territories($1) AS n', [actor.organizationId])).rows[0].n;
  await recordAudit(tx, actor, { action: 'territory.created', entityType: 'territory', entityId: id, after: { name: input.name, active: input.active ?? true, backfilled } });
  return { ...rows[0], backfilled };
}

export function territoryRoutes(app: Api, ctx: AppContext) {
  const inTx = <T>(actor: Actor, fn: (tx: Tx) => Promise<T>) => ctx.db.withTenant(tenantOf(actor), fn);

  app.get(
    '/logistics/settings',
    {
      config: { auth: { roles: ['administrator', 'dispatch', 'subadmin'] } },
      schema: { operationId: 'getLogisticsSettings', tags: ['logistics'], summary: 'Dispatch settings (radius, acceptance timeout, strategy, geofence, flat driver fee)', response: { 200: SettingsOut } },
    },
    async (req) => {
      const actor = actorOf(req);
      return inTx(actor, (tx) => getSettings(tx, actor.organizationId));
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
              Type.Boolean({ description: 'When on, an assigned trip not accepted within acceptance_timeout_s is withdrawn from its driver and offered to the next candidate' }),
            ),
            acceptance_max_offers: Type.Optional(
              Type.Integer({ minimum: 1, maximum: 20, description: 'Automatic offers of one trip before it goes back to the dispatch queue (pending) for a person to decide' }),
            ),
            assignment_strategy: Type.Optional(StrategySchema),
            failed_delivery_policy: Type.Optional(FailedDeliveryPolicySchema),
            geofence_radius_m: Type.Optional(Type.Integer({ minimum: 10, maximum: 5000 })),
            average_speed_kmh: Type.Optional(Type.Integer({ minimum: 1, maximum: 200 })),
            default_delivery_fee: Type.Optional(NonNegativeMoney),
            driver_flat_fee: Type.Optional(NonNegativeMoney),
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
        if (typeof body[k] === 'string' && (body[k] as string).startsWith('-')) throw AppError.badRequest(`${k} must be >= 0`, [{ field: k, message: 'must be >= 0' }]);
      }
      return inTx(actor, async (tx) => {
        const before = await getSettings(tx, actor.organizationId);
        const keys = Object.keys(body);
        const sets = keys.map((k, i) => `${k} = $${i + 2}`).join(', ');
        const { rows } = await tx.query<LogisticsSettings>(
          `UPDATE logistics_settings SET ${sets}, updated_by_user_id = $${keys.length + 2}, updated_at = now() WHERE organization_id = $1 RETURNING ${SETTINGS_COLUMNS}`,
          [actor.organizationId, ...keys.map((k) => body[k]), actor.userId],
        );
        await recordAudit(tx, actor, { action: 'logistics_settings.updated', entityType: 'logistics_settings', entityId: actor.organizationId, before: { ...before }, after: { ...rows[0] } });
        return rows[0];
      });
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
      const page = pageRequest(req.query);
      return inTx(actor, async (tx) => {
        const { rows } = await tx.query<TerritoryRow>(
          `SELECT id, name, active, geometry, created_at, updated_at FROM territory
            WHERE ($1::boolean IS NULL OR active = $1) AND ($2::text[] IS NULL OR id = ANY($2)) AND ($3::text IS NULL OR id < $3)
            ORDER BY id DESC LIMIT $4`,
          [req.query.active ?? null, scopeOf(actor), page.after, page.limit + 1],
        );
        return toPage(rows, page);
      });
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
        response: { 201: Type.Object({ ...TerritoryOut.properties, backfilled: Type.Integer({ description: 'records that received this or an older territory' }) }) },
      },
    },
    async (req, reply) => {
      const actor = actorOf(req);
      return reply.code(201).send(await inTx(actor, (tx) => createTerritory(tx, actor, req.body)));
    },
  );
}
