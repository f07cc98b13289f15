import { Type } from '@sinclair/typebox';
import { actorOf } from '../../../platform/auth.js';
import type { Api } from '../../../platform/context.js';
import { READ_SCOPES, type ReadScope, scopeOf } from '../../../platform/scope.js';
import { Id, IdParams, Literals, Nullable, Page, PageQueryProps, Strict, Timestamp } from '../../../platform/schemas.js';
import { CouponFields, CouponOut, OrderOut, OrderStatusSchema, TariffOut } from '../../commerce/index.js';
import { MerchantOut, ServiceModeSchema, TripOutSchema, TripStatusSchema } from '../../logistics/index.js';
import { ReviewOut, ReviewStatusSchema } from '../../money/index.js';
import { periodOf } from '../../../platform/workbook.js';
import type { SubadminContext } from '../context.js';
import { Counts, Percent, PeriodQueryProps, READS_DOC } from '../schemas.js';
import {
  createMerchantCoupon,
  deliveriesStatus,
  listCoupons,
  listTariffs,
  liveMap,
  ordersStatus,
  paymentReviewCounts,
  setMerchantCommission,
} from '../service/console.js';

/** The console reads of the caller's territories (tracking, deliveries, orders, payment reviews, coupons, tariffs) and the merchant writes it allows. */
export function consoleRoutes(app: Api, ctx: SubadminContext) {
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
            scope: Literals(READ_SCOPES),
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
      const scope: ReadScope = actor.kind === 'subadmin' ? 'territories' : 'organization';
      return {
        generated_at: new Date(),
        scope,
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
        querystring: Strict({ ...PageQueryProps, status: Type.Optional(TripStatusSchema), ...PeriodQueryProps }),
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
          status: Type.Optional(ReviewStatusSchema),
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

  app.get(
    '/subadmin/orders/status',
    {
      config: { auth: { roles: ['administrator', 'subadmin'], permission: 'orders_status' } },
      schema: {
        operationId: 'getSubadminOrdersStatus',
        tags: ['subadmin'],
        summary: 'Merchant orders per status and the list of orders, newest first, optionally of one status, merchant and creation period',
        description:
          "counts ignore `status`, `merchant_id` and the cursor (they cover the period). An order's territory is its branch's, else its trip's. " +
          READS_DOC,
        querystring: Strict({
          ...PageQueryProps,
          status: Type.Optional(OrderStatusSchema),
          merchant_id: Type.Optional(Id),
          ...PeriodQueryProps,
        }),
        response: {
          200: Type.Object({
            counts: Counts,
            total: Type.Integer(),
            data: Type.Array(OrderOut),
            next_cursor: Nullable(Type.String()),
          }),
        },
      },
    },
    async (req) => {
      return ordersStatus(ctx, actorOf(req), periodOf(req.query), req.query);
    },
  );
  app.get(
    '/subadmin/coupons',
    {
      config: { auth: { roles: ['administrator', 'subadmin'], permission: 'coupons_view' } },
      schema: {
        operationId: 'listSubadminCoupons',
        tags: ['subadmin'],
        summary: "Coupons of the merchants in the caller's territories (a coupon belongs to its merchant's territory), newest first",
        description: READS_DOC,
        querystring: Strict({ ...PageQueryProps, merchant_id: Type.Optional(Id), active: Type.Optional(Type.Boolean()) }),
        response: { 200: Page(CouponOut) },
      },
    },
    async (req) => {
      return listCoupons(ctx, actorOf(req), req.query);
    },
  );
  app.post(
    '/subadmin/merchants/:id/coupons',
    {
      config: { auth: { roles: ['administrator', 'subadmin'], permission: 'coupons_manage' } },
      schema: {
        operationId: 'createSubadminMerchantCoupon',
        tags: ['subadmin'],
        summary: 'Create a coupon of a merchant on its behalf (same rules as POST /merchant/coupons); audited with the acting user',
        description:
          "A merchant outside the caller's territories (or unknown) is 404. Rule violations are 400; a code the merchant already uses is 409 COUPON_CODE_TAKEN.",
        params: IdParams,
        body: Strict(CouponFields),
        response: { 201: CouponOut },
      },
    },
    async (req, reply) => {
      return reply.code(201).send(await createMerchantCoupon(ctx, actorOf(req), req.params.id, req.body));
    },
  );
  app.get(
    '/subadmin/territory-tariffs',
    {
      config: { auth: { roles: ['administrator', 'subadmin'] } },
      schema: {
        operationId: 'listSubadminTerritoryTariffs',
        tags: ['subadmin'],
        summary:
          "Delivery tariffs (marketplace and delivery_express) of the caller's territories, newest first (read-only; administrators change them under /admin/territory-tariffs)",
        description: READS_DOC,
        querystring: Strict({
          ...PageQueryProps,
          territory_id: Type.Optional(Id),
          service_mode: Type.Optional(ServiceModeSchema),
          active: Type.Optional(Type.Boolean()),
        }),
        response: { 200: Page(TariffOut) },
      },
    },
    async (req) => {
      return listTariffs(ctx, actorOf(req), req.query);
    },
  );
}
