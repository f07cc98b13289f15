import type { FastifyReply } from 'fastify';
import { actorOf } from '../../../platform/auth.js';
import type { Api } from '../../../platform/context.js';
import { Strict } from '../../../platform/schemas.js';
import { periodOf, REPORT_MAX_ROWS, sendWorkbook, WorkbookResponse as Workbook, XLSX_TYPE } from '../../../platform/workbook.js';
import type { SubadminContext } from '../context.js';
import { PeriodQueryProps, READS_DOC } from '../schemas.js';
import { report } from '../service/console.js';

/** The deliveries and sales reports of the caller's territories, as workbooks. */
export function reportRoutes(app: Api, ctx: SubadminContext) {
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
        querystring: Strict(PeriodQueryProps),
        response: { 200: Workbook },
      },
    },
    async (req, typedReply) => {
      const { file, name } = await report(ctx, actorOf(req), 'deliveries', periodOf(req.query));
      return sendWorkbook(typedReply as FastifyReply, file, name);
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
        querystring: Strict(PeriodQueryProps),
        response: { 200: Workbook },
      },
    },
    async (req, typedReply) => {
      const { file, name } = await report(ctx, actorOf(req), 'sales', periodOf(req.query));
      return sendWorkbook(typedReply as FastifyReply, file, name);
    },
  );
}
