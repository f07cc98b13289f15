import { Type } from '@sinclair/typebox';
import { actorOf } from '../../../platform/auth.js';
import { AppError } from '../../../platform/errors.js';
import { GeoArea } from '../../../platform/geo.js';
import { NonNegativeMoney, Page, PageQueryProps, ShortText, Strict } from '../../../platform/schemas.js';
import type { Api, AppContext } from '../../../platform/context.js';
import type { SettingsChange } from '../repo/settings.js';
import { FailedDeliveryPolicySchema, SettingsOut, StrategySchema, TerritoryOut } from '../schemas.js';
import { territoryRequests } from '../service/territories.js';

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
