import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import { actorOf, SUBADMIN_PERMISSION_KEYS } from '../../platform/auth.js';
import type { Api } from '../../platform/context.js';
import type { SubadminContext } from './index.js';
import { Email, Id, IdParams, Nullable, Page, PageQueryProps, Phone, ShortText, Strict, Timestamp } from '../../platform/schemas.js';
import { MerchantOut, TripOutSchema, TripStatusSchema } from '../logistics/schemas.js';
import { ReviewOut } from '../money/index.js';
import type { BannerService } from './banners.js';
import { PercentPattern, scopeOf } from './model.js';
import type { ProfileService } from './profiles.js';
import { periodOf, REPORT_MAX_ROWS, sendWorkbook, WorkbookResponse as Workbook, XLSX_TYPE } from './reports.js';
import { deliveriesStatus, liveMap, paymentReviewCounts, report, setMerchantCommission } from './console.js';

const Percent = Type.String({ pattern: PercentPattern, description: 'percentage 0..100 with at most 2 decimals, e.g. "12.50"' });
const PermissionsIn = Strict(Object.fromEntries(SUBADMIN_PERMISSION_KEYS.map((k) => [k, Type.Optional(Type.Boolean())])));
const PermissionsOut = Type.Object(Object.fromEntries(SUBADMIN_PERMISSION_KEYS.map((k) => [k, Type.Boolean()])));
const TerritoryIds = Type.Array(Id, { minItems: 1, maxItems: 100, uniqueItems: true });

const ProfileOut = Type.Object({
  user_id: Type.String(),
  email: Nullable(Type.String()),
  phone: Nullable(Type.String()),
  display_name: Type.String(),
  active: Type.Boolean(),
  permissions: PermissionsOut,
  territory_ids: Type.Array(Type.String()),
  parent_subadmin_user_id: Nullable(Type.String()),
  created_by_user_id: Nullable(Type.String()),
  commission_min_percent: Nullable(Type.String()),
  commission_max_percent: Nullable(Type.String()),
  created_at: Timestamp,
  updated_at: Timestamp,
});

const ProfileCreateProps = {
  email: Type.Optional(Email),
  phone: Type.Optional(Phone),
  password: Type.String({ minLength: 10, maxLength: 200 }),
  display_name: ShortText(120),
  territory_ids: TerritoryIds,
  permissions: Type.Optional(PermissionsIn),
  commission_min_percent: Type.Optional(Nullable(Percent)),
  commission_max_percent: Type.Optional(Nullable(Percent)),
  active: Type.Optional(Type.Boolean()),
};

const PROFILE_RULES =
  'Permission keys missing from `permissions` take the SPEC defaults (every key true except `payments_review_decide` and `cash_remittances_record`). ' +
  'commission_min_percent and commission_max_percent both or neither, min ≤ max within 0..100 (else 422 COMMISSION_BOUNDS_INVALID); without bounds the sub-administrator cannot change commissions. ' +
  "Territories must exist in the organization (422 TERRITORY_NOT_FOUND). Under a parent, territories, permissions and bounds must lie within the parent's (422 EXCEEDS_PARENT_SCOPE), " +
  'and the loader also narrows a sub-user to his ancestors at every request. Audited.';

const READS_DOC = 'Administrators see the whole organization; sub-administrators only their territories.';

const Period = {
  from: Type.Optional(Type.String({ format: 'date-time', description: 'created at or after (ISO 8601)' })),
  to: Type.Optional(Type.String({ format: 'date-time', description: 'created before (ISO 8601)' })),
};

const BannerStateSchema = Type.Union([Type.Literal('live'), Type.Literal('scheduled'), Type.Literal('expired'), Type.Literal('inactive')], {
  description: 'live = active and now within [valid_from, valid_until); scheduled = not started; expired; inactive',
});
export const BannerOut = Type.Object({
  id: Type.String(),
  title: Type.String(),
  body: Nullable(Type.String()),
  image_storage_object_id: Nullable(Type.String()),
  link_url: Nullable(Type.String()),
  valid_from: Timestamp,
  valid_until: Nullable(Timestamp),
  active: Type.Boolean(),
  state: BannerStateSchema,
  territory_ids: Type.Array(Type.String(), { description: 'sub-administrators see only their own territories here' }),
  created_by_user_id: Type.String(),
  created_at: Timestamp,
  updated_at: Timestamp,
});

const Counts = Type.Record(Type.String(), Type.Integer());
export { WorkbookResponse as Workbook, sendWorkbook } from './reports.js';

export function subadminRoutes(app: Api, ctx: SubadminContext, deps: { profiles: ProfileService; banners: BannerService }) {
  const { profiles, banners } = deps;

  // ---- Administration of sub-administrators ----

  app.get(
    '/admin/subadmins',
    {
      config: { auth: { roles: ['administrator'] } },
      schema: {
        operationId: 'listSubadmins',
        tags: ['subadmin'],
        summary: 'Sub-administrators of the organization, newest first',
        querystring: Strict({
          ...PageQueryProps,
          active: Type.Optional(Type.Boolean()),
          territory_id: Type.Optional(Id),
          parent_subadmin_user_id: Type.Optional(Id),
        }),
        response: { 200: Page(ProfileOut) },
      },
    },
    async (req) => profiles.list(actorOf(req), req.query),
  );

  app.post(
    '/admin/subadmins',
    {
      config: { auth: { roles: ['administrator'] } },
      schema: {
        operationId: 'createSubadmin',
        tags: ['subadmin'],
        summary:
          'Create a sub-administrator: a new administrator-console user (subadmin) with territories, permission keys and commission bounds',
        description: 'email or phone is required; a duplicate is 409 DUPLICATE_USER; a weak password 400 WEAK_PASSWORD. ' + PROFILE_RULES,
        body: Strict({ ...ProfileCreateProps, parent_subadmin_user_id: Type.Optional(Nullable(Id)) }),
        response: { 201: ProfileOut },
      },
    },
    async (req, reply) => reply.code(201).send(await profiles.create(actorOf(req), req.body)),
  );

  app.patch(
    '/admin/subadmins/:id',
    {
      config: { auth: { roles: ['administrator', 'subadmin'], permission: 'subusers_manage' } },
      schema: {
        operationId: 'updateSubadmin',
        tags: ['subadmin'],
        summary:
          'Change a sub-administrator: display name, active, territories (replaced), permission keys (merged), commission bounds, parent',
        description:
          'Administrators change any profile; a sub-administrator with `subusers_manage` only his sub-users (others are 404), never their parent (403 FIELD_NOT_ALLOWED), ' +
          'and never beyond his own scope. A parent that would create a cycle is 422 PARENT_CYCLE. updated_at is refreshed. ' +
          PROFILE_RULES,
        params: IdParams,
        body: Strict(
          {
            display_name: Type.Optional(ShortText(120)),
            active: Type.Optional(Type.Boolean()),
            territory_ids: Type.Optional(TerritoryIds),
            permissions: Type.Optional(PermissionsIn),
            commission_min_percent: Type.Optional(Nullable(Percent)),
            commission_max_percent: Type.Optional(Nullable(Percent)),
            parent_subadmin_user_id: Type.Optional(Nullable(Id)),
          },
          { minProperties: 1 },
        ),
        response: { 200: ProfileOut },
      },
    },
    async (req) => profiles.update(actorOf(req), req.params.id, req.body),
  );

  // ---- The sub-administrator himself ----

  app.get(
    '/subadmin/me',
    {
      config: { auth: { roles: ['subadmin'] } },
      schema: {
        operationId: 'getSubadminMe',
        tags: ['subadmin'],
        summary: "The caller's profile and his effective scope (his own narrowed by his ancestors')",
        response: {
          200: Type.Object({
            profile: ProfileOut,
            effective: Type.Object({
              active: Type.Boolean(),
              territory_ids: Type.Array(Type.String()),
              territories: Type.Array(Type.Object({ id: Type.String(), name: Type.String(), active: Type.Boolean() })),
              permissions: PermissionsOut,
              commission_min_percent: Nullable(Type.String()),
              commission_max_percent: Nullable(Type.String()),
            }),
          }),
        },
      },
    },
    async (req) => profiles.me(actorOf(req)),
  );

  app.get(
    '/subadmin/profiles',
    {
      config: { auth: { roles: ['subadmin'], permission: 'subusers_manage' } },
      schema: {
        operationId: 'listSubadminProfiles',
        tags: ['subadmin'],
        summary: "The caller's sub-users (every level below him), newest first",
        querystring: Strict({ ...PageQueryProps, active: Type.Optional(Type.Boolean()), territory_id: Type.Optional(Id) }),
        response: { 200: Page(ProfileOut) },
      },
    },
    async (req) => profiles.list(actorOf(req), req.query),
  );

  app.post(
    '/subadmin/profiles',
    {
      config: { auth: { roles: ['subadmin'], permission: 'subusers_manage' } },
      schema: {
        operationId: 'createSubadminProfile',
        tags: ['subadmin'],
        summary: 'Create a sub-user under the caller (parent = the caller), confined to a subset of his territories and permissions',
        description:
          "A territory, permission or commission bound beyond the caller's is 422 EXCEEDS_PARENT_SCOPE. Missing permission keys default to the SPEC default " +
          "and never to more than the caller holds; bounds default to the caller's. " +
          PROFILE_RULES,
        body: Strict(ProfileCreateProps),
        response: { 201: ProfileOut },
      },
    },
    async (req, reply) => reply.code(201).send(await profiles.create(actorOf(req), req.body)),
  );

  // ---- Console reads ----

  app.get(
    '/subadmin/tracking',
    {
      config: { auth: { roles: ['administrator', 'subadmin'], permission: 'tracking' } },
      schema: {
        operationId: 'getSubadminTracking',
        tags: ['subadmin'],
        summary:
          "Live positions of approved drivers linked to the caller's territories and the active trips there, as a GeoJSON FeatureCollection",
        description:
          'Features: kind=driver (Point, last position) and kind=trip (LineString pickup → dropoff, trips pending..in_transit). ' +
          READS_DOC,
        response: {
          200: Type.Object({
            generated_at: Timestamp,
            scope: Type.Union([Type.Literal('organization'), Type.Literal('territories')]),
            territory_ids: Nullable(Type.Array(Type.String())),
            counts: Type.Object({ drivers: Type.Integer(), drivers_available: Type.Integer(), active_trips: Type.Integer() }),
            type: Type.Literal('FeatureCollection'),
            features: Type.Array(
              Type.Object({
                type: Type.Literal('Feature'),
                id: Type.String(),
                geometry: Type.Object({}, { additionalProperties: true }),
                properties: Type.Object({}, { additionalProperties: true }),
              }),
            ),
          }),
        },
      },
    },
    async (req) => {
      const actor = actorOf(req);
      const map = await liveMap(ctx, actor);
      const drivers = map.features.filter((f) => f.properties.kind === 'driver');
      return {
        generated_at: new Date(),
        scope: actor.kind === 'subadmin' ? ('territories' as const) : ('organization' as const),
        territory_ids: scopeOf(actor),
        counts: {
          drivers: drivers.length,
          drivers_available: drivers.filter((f) => 'available' in f.properties && f.properties.available).length,
          active_trips: map.features.length - drivers.length,
        },
        ...map,
      };
    },
  );

  app.get(
    '/subadmin/deliveries/status',
    {
      config: { auth: { roles: ['administrator', 'subadmin'], permission: 'delivery_status' } },
      schema: {
        operationId: 'getSubadminDeliveriesStatus',
        tags: ['subadmin'],
        summary: 'Deliveries (trips) per status and the list of trips, newest first, optionally of one status and a creation period',
        description: 'counts ignore `status` and the cursor (they cover the period). ' + READS_DOC,
        querystring: Strict({ ...PageQueryProps, status: Type.Optional(TripStatusSchema), ...Period }),
        response: {
          200: Type.Object({
            counts: Counts,
            total: Type.Integer(),
            data: Type.Array(TripOutSchema),
            next_cursor: Nullable(Type.String()),
          }),
        },
      },
    },
    async (req) => {
      return deliveriesStatus(ctx, actorOf(req), periodOf(req.query), req.query);
    },
  );

  app.get(
    '/subadmin/payments/review',
    {
      config: { auth: { roles: ['administrator', 'subadmin'], permission: 'payments_review_view' } },
      schema: {
        operationId: 'getSubadminPaymentReviews',
        tags: ['subadmin'],
        summary: 'Direct-payment reviews per status and their list, newest first',
        description:
          'Deciding needs `payments_review_decide` (default false) on POST /merchant/payment-reviews/:id/approve|reject. ' + READS_DOC,
        querystring: Strict({
          ...PageQueryProps,
          status: Type.Optional(Type.Union(['pending', 'approved', 'rejected', 'cancelled'].map((s) => Type.Literal(s)))),
          merchant_id: Type.Optional(Id),
        }),
        response: { 200: Type.Object({ counts: Counts, data: Type.Array(ReviewOut), next_cursor: Nullable(Type.String()) }) },
      },
    },
    async (req) => {
      const actor = actorOf(req);
      const counts = await paymentReviewCounts(ctx, actor);
      const page = await ctx.deps.money.listPaymentReviews(actor, req.query as { status?: 'pending'; merchant_id?: string });
      return { counts, ...page };
    },
  );

  app.patch(
    '/subadmin/merchants/:id/commission',
    {
      config: { auth: { roles: ['administrator', 'subadmin'], permission: 'merchant_commission_manage' } },
      schema: {
        operationId: 'setSubadminMerchantCommission',
        tags: ['subadmin'],
        summary: "Set a merchant's platform commission; a sub-administrator only within his commission_min_percent..commission_max_percent",
        description:
          'Outside the bounds (or when the sub-administrator has none) 422 COMMISSION_OUT_OF_BOUNDS. A merchant outside his territories is 404. ' +
          'Administrators may set any value in 0..100. Audited (merchant.commission_updated).',
        params: IdParams,
        body: Strict({ commission_percent: Percent }),
        response: { 200: MerchantOut },
      },
    },
    async (req) => {
      return setMerchantCommission(ctx, actorOf(req), req.params.id, req.body.commission_percent);
    },
  );

  // ---- Zone banners ----

  app.get(
    '/subadmin/banners',
    {
      config: { auth: { roles: ['administrator', 'subadmin'], permission: 'banners_manage' } },
      schema: {
        operationId: 'listZoneBanners',
        tags: ['subadmin'],
        summary: "Zone banners linked to the caller's territories, newest first",
        description: READS_DOC,
        querystring: Strict({ ...PageQueryProps, territory_id: Type.Optional(Id), state: Type.Optional(BannerStateSchema) }),
        response: { 200: Page(BannerOut) },
      },
    },
    async (req) => banners.list(actorOf(req), req.query),
  );

  app.post(
    '/subadmin/banners',
    {
      config: { auth: { roles: ['administrator', 'subadmin'], permission: 'banners_manage' } },
      schema: {
        operationId: 'createZoneBanner',
        tags: ['subadmin'],
        summary: 'Create a zone banner shown in the customer marketplace of its territories while active and valid',
        description:
          'territory_ids must exist and, for a sub-administrator, be his (422 TERRITORY_NOT_FOUND). The image is a storage object of purpose `coupon_asset` or `other` ' +
          'uploaded by the caller (422 STORAGE_OBJECT_*). valid_until must be after valid_from (422 INVALID_VALIDITY); valid_from defaults to now. Audited.',
        body: Strict({
          title: ShortText(120),
          body: Type.Optional(ShortText(1000)),
          image_storage_object_id: Type.Optional(Id),
          link_url: Type.Optional(Type.String({ format: 'uri', maxLength: 500, pattern: '^https?://' })),
          valid_from: Type.Optional(Type.String({ format: 'date-time' })),
          valid_until: Type.Optional(Type.String({ format: 'date-time' })),
          active: Type.Optional(Type.Boolean()),
          territory_ids: TerritoryIds,
        }),
        response: { 201: BannerOut },
      },
    },
    async (req, reply) => reply.code(201).send(await banners.create(actorOf(req), req.body)),
  );

  // ---- Reports ----

  app.get(
    '/subadmin/reports/deliveries.xls',
    {
      config: { auth: { roles: ['administrator', 'subadmin'], permission: 'delivery_reports' } },
      schema: {
        operationId: 'getDeliveriesReport',
        tags: ['subadmin'],
        summary: "Deliveries report: one row per trip created in [from, to) in the caller's territories, and a totals row",
        description:
          `An Office Open XML workbook (${XLSX_TYPE}) served under the .xls path, as an attachment named deliveries_<from>_<to>.xlsx. ` +
          'Dates are date cells, fees number cells (2 decimals). The first sheet (Deliveries) lists completed trips and its totals row carries their count and SUM ' +
          'formulas with their values; cancelled trips are listed apart (Cancelled sheet) and open ones on the Open sheet, never in the totals. The scope line names the territories. ' +
          `Sub-administrators also need the \`reports\` permission (403). More than ${REPORT_MAX_ROWS} rows is 422 REPORT_TOO_LARGE. ` +
          READS_DOC,
        querystring: Strict(Period),
        response: { 200: Workbook },
      },
    },
    async (req, typedReply) => {
      const { file, name } = await report(ctx, actorOf(req), 'deliveries', periodOf(req.query));
      return sendWorkbook(typedReply as FastifyReply, file, name);
    },
  );
}
