import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import { actorOf } from '../../platform/auth.js';
import type { Api } from '../../platform/context.js';
import type { SubadminContext } from './index.js';
import { AppError } from '../../platform/errors.js';
import { Id, IdParams, Nullable, Page, PageQueryProps, Strict } from '../../platform/schemas.js';
import { CouponFields, CouponOut, OrderOut, OrderStatusSchema, TariffOut, type OrderReportRow } from '../commerce/index.js';
import { scopeOf } from './model.js';
import { buildWorkbook, periodOf, REPORT_MAX_ROWS, reportFileName, scopeLabel, XLSX_TYPE, type Column } from './reports.js';
import { sendWorkbook, Workbook } from './routes.js';
import type { Period } from '../logistics/index.js';

const READS_DOC = 'Administrators see the whole organization; sub-administrators only their territories.';
const PeriodQuery = {
  from: Type.Optional(Type.String({ format: 'date-time', description: 'created at or after (ISO 8601)' })),
  to: Type.Optional(Type.String({ format: 'date-time', description: 'created before (ISO 8601)' })),
};

const SALES_COLUMNS: Column<OrderReportRow>[] = [
  { header: 'Order', key: 'id', width: 38, value: (r) => r.id },
  { header: 'Created at', key: 'created_at', width: 20, type: 'date', value: (r) => r.created_at },
  { header: 'Status', key: 'status', width: 20, value: (r) => r.status },
  { header: 'Territory', key: 'territory', width: 20, value: (r) => r.territory_name },
  { header: 'Merchant', key: 'merchant', width: 24, value: (r) => r.merchant_name },
  { header: 'Payment', key: 'payment_destination', width: 16, value: (r) => r.payment_destination },
  { header: 'Payment status', key: 'payment_status', width: 16, value: (r) => r.payment_status },
  { header: 'Coupon', key: 'coupon_code', width: 12, value: (r) => r.coupon_code },
  { header: 'Subtotal', key: 'subtotal', width: 14, type: 'money', value: (r) => r.subtotal },
  { header: 'Discount', key: 'discount_total', width: 14, type: 'money', value: (r) => r.discount_total },
  { header: 'Delivery fee', key: 'delivery_fee', width: 14, type: 'money', value: (r) => r.delivery_fee },
  { header: 'Total', key: 'total', width: 14, type: 'money', value: (r) => r.total },
  { header: 'Currency', key: 'currency', width: 10, value: (r) => r.currency },
];

/**
 * Sales: the first sheet and its totals are the delivered orders only (the business done); cancelled orders are listed
 * apart on their own sheet, and orders still open on a third, each with its own totals, never added to the sales.
 */
export async function salesWorkbook(rows: OrderReportRow[], period: Period, scope: string): Promise<Buffer> {
  const part = (sheet: string, title: string, of: OrderReportRow[]) => ({ sheet, title, period, scope, rows: of, totalsLabelKey: 'id', countKey: 'status', columns: SALES_COLUMNS });
  return buildWorkbook<OrderReportRow>(
    part('Sales', 'Sales report (delivered orders)', rows.filter((r) => r.status === 'delivered')),
    part('Cancelled', 'Cancelled orders (not counted)', rows.filter((r) => r.status === 'cancelled')),
    part('Open', 'Open orders (not counted yet)', rows.filter((r) => r.status !== 'delivered' && r.status !== 'cancelled')),
  );
}

/** The sub-administration routes that read or write commerce (orders, coupons, tariffs, sales report). */
export function subadminCommerceRoutes(app: Api, ctx: SubadminContext) {
  const views = () => ctx.deps.commerceViews;

  app.get(
    '/subadmin/orders/status',
    {
      config: { auth: { roles: ['administrator', 'subadmin'], permission: 'orders_status' } },
      schema: {
        operationId: 'getSubadminOrdersStatus',
        tags: ['subadmin'],
        summary: 'Merchant orders per status and the list of orders, newest first, optionally of one status, merchant and creation period',
        description: 'counts ignore `status`, `merchant_id` and the cursor (they cover the period). An order\'s territory is its branch\'s, else its trip\'s. ' + READS_DOC,
        querystring: Strict({ ...PageQueryProps, status: Type.Optional(OrderStatusSchema), merchant_id: Type.Optional(Id), ...PeriodQuery }),
        response: { 200: Type.Object({ counts: Type.Record(Type.String(), Type.Integer()), total: Type.Integer(), data: Type.Array(OrderOut), next_cursor: Nullable(Type.String()) }) },
      },
    },
    async (req) => {
      const actor = actorOf(req);
      const period = periodOf(req.query);
      return ctx.db.withTenant(actor, async (tx) => {
        const counts = await views().orderStatusCounts(tx, scopeOf(actor), period);
        const page = await views().listOrders(tx, scopeOf(actor), { ...req.query, ...period });
        return { counts, total: Object.values(counts).reduce((a, b) => a + b, 0), ...page };
      });
    },
  );

  app.get(
    '/subadmin/coupons',
    {
      config: { auth: { roles: ['administrator', 'subadmin'], permission: 'coupons_view' } },
      schema: {
        operationId: 'listSubadminCoupons',
        tags: ['subadmin'],
        summary: 'Coupons of the merchants in the caller\'s territories (a coupon belongs to its merchant\'s territory), newest first',
        description: READS_DOC,
        querystring: Strict({ ...PageQueryProps, merchant_id: Type.Optional(Id), active: Type.Optional(Type.Boolean()) }),
        response: { 200: Page(CouponOut) },
      },
    },
    async (req) => {
      const actor = actorOf(req);
      return ctx.db.withTenant(actor, (tx) => views().listCoupons(tx, scopeOf(actor), req.query));
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
        description: 'A merchant outside the caller\'s territories (or unknown) is 404. Rule violations are 400; a code the merchant already uses is 409 COUPON_CODE_TAKEN.',
        params: IdParams,
        body: Strict(CouponFields),
        response: { 201: CouponOut },
      },
    },
    async (req, reply) => {
      const actor = actorOf(req);
      const coupon = await ctx.db.withTenant(actor, async (tx) => {
        const m = await ctx.deps.logistics.getMerchant(tx, req.params.id);
        const scope = scopeOf(actor);
        if (!m || (scope && (!m.territory_id || !scope.includes(m.territory_id)))) throw AppError.notFound('Merchant');
        return views().createCouponFor(tx, actor, m, req.body);
      });
      return reply.code(201).send(coupon);
    },
  );

  app.get(
    '/subadmin/territory-tariffs',
    {
      config: { auth: { roles: ['administrator', 'subadmin'] } },
      schema: {
        operationId: 'listSubadminTerritoryTariffs',
        tags: ['subadmin'],
        summary: 'Delivery tariffs (marketplace and delivery_express) of the caller\'s territories, newest first (read-only; administrators change them under /admin/territory-tariffs)',
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
      const actor = actorOf(req);
      return ctx.db.withTenant(actor, (tx) => views().listTariffs(tx, scopeOf(actor), req.query));
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
          `Sub-administrators also need the \`reports\` permission (403). More than ${REPORT_MAX_ROWS} rows is 422 REPORT_TOO_LARGE. ` + READS_DOC,
        querystring: Strict(PeriodQuery),
        response: { 200: Workbook },
      },
    },
    async (req, typedReply) => {
      const reply = typedReply as FastifyReply;
      const actor = actorOf(req);
      if (actor.kind === 'subadmin' && !actor.subadmin!.permissions.reports) throw AppError.forbidden("Missing permission 'reports'", 'PERMISSION_DENIED');
      const period = periodOf(req.query);
      const { rows, scope } = await ctx.db.withTenant(actor, async (tx) => ({
        rows: await views().orderReportRows(tx, scopeOf(actor), period, REPORT_MAX_ROWS + 1),
        scope: await scopeLabel(scopeOf(actor), async (id) => (await ctx.deps.logistics.getTerritory(tx, id))?.name ?? null),
      }));
      if (rows.length > REPORT_MAX_ROWS) throw AppError.unprocessable(`The report has more than ${REPORT_MAX_ROWS} rows; choose a shorter period`, 'REPORT_TOO_LARGE');
      return sendWorkbook(reply, await salesWorkbook(rows, period, scope), reportFileName('sales', period));
    },
  );
}
