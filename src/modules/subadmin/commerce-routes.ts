import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import { actorOf } from '../../platform/auth.js';
import type { Api } from '../../platform/context.js';
import type { SubadminContext } from './index.js';
import { Id, IdParams, Nullable, Page, PageQueryProps, Strict } from '../../platform/schemas.js';
import { CouponFields, CouponOut, OrderOut, OrderStatusSchema, TariffOut } from '../commerce/index.js';
import { createMerchantCoupon, listCoupons, listTariffs, ordersStatus, report } from './console.js';
import { periodOf, REPORT_MAX_ROWS, XLSX_TYPE } from './reports.js';
import { sendWorkbook, Workbook } from './routes.js';

const READS_DOC = 'Administrators see the whole organization; sub-administrators only their territories.';
const PeriodQuery = {
  from: Type.Optional(Type.String({ format: 'date-time', description: 'created at or after (ISO 8601)' })),
  to: Type.Optional(Type.String({ format: 'date-time', description: 'created before (ISO 8601)' })),
};

/** The sub-administration routes that read or write commerce (orders, coupons, tariffs, sales report). */
export function subadminCommerceRoutes(app: Api, ctx: SubadminContext) {
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
          ...PeriodQuery,
        }),
        response: {
          200: Type.Object({
            counts: Type.Record(Type.String(), Type.Integer()),
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
          service_mode: Type.Optional(Type.Union([Type.Literal('marketplace'), Type.Literal('delivery_express')])),
          active: Type.Optional(Type.Boolean()),
        }),
        response: { 200: Page(TariffOut) },
      },
    },
    async (req) => {
      return listTariffs(ctx, actorOf(req), req.query);
    },
  );

  app.get(
    '/subadmin/reports/sales.xls',
    {
      config: { auth: { roles: ['administrator', 'subadmin'], permission: 'sales_reports' } },
      schema: {
        operationId: 'getSalesReport',
        tags: ['subadmin'],
        summary: "Sales report: one row per merchant order created in [from, to) in the caller's territories, and a totals row",
        description:
          `An Office Open XML workbook (${XLSX_TYPE}) served under the .xls path, as an attachment named sales_<from>_<to>.xlsx. ` +
          'Dates are date cells, amounts number cells (2 decimals). The first sheet (Sales) lists the delivered orders and its totals row carries their count and SUM formulas ' +
          '(subtotal, discount, fee, total) with their values: cancelled orders are listed apart on the Cancelled sheet and open ones on the Open sheet, never in the sales totals. ' +
          'The scope line names the territories (not their ids). ' +
          `Sub-administrators also need the \`reports\` permission (403). More than ${REPORT_MAX_ROWS} rows is 422 REPORT_TOO_LARGE. ` +
          READS_DOC,
        querystring: Strict(PeriodQuery),
        response: { 200: Workbook },
      },
    },
    async (req, typedReply) => {
      const { file, name } = await report(ctx, actorOf(req), 'sales', periodOf(req.query));
      return sendWorkbook(typedReply as FastifyReply, file, name);
    },
  );
}
