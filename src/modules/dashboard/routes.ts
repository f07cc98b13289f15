import type { FastifyReply } from 'fastify';
import { actorOf } from '../../platform/auth.js';
import type { Api } from '../../platform/context.js';
import { reportFileName, sendWorkbook, WorkbookResponse as Workbook } from '../../platform/workbook.js';
import { DashboardOut, OnTimeOut, PeriodQuery } from './schemas.js';
import type { DashboardService } from './service.js';

const ON_TIME_DOC =
  'Completed trips with a promise (promised_at), delivered in [from, to): on-time % (completed at or before the promise), mean and p90 lateness in minutes, ' +
  'per territory, merchant, driver and hour of the promise. Sub-administrators see their territories only.';

const periodOf = (q: { from?: string; to?: string }) => ({ from: q.from ?? null, to: q.to ?? null });

export function dashboardRoutes(app: Api, svc: DashboardService) {
  app.get(
    '/dashboard',
    {
      config: { auth: { roles: ['administrator', 'dispatch', 'subadmin'] } },
      schema: {
        operationId: 'getDashboard',
        tags: ['dashboard'],
        response: { 200: DashboardOut },
      },
    },
    async (req) => svc.dashboard(actorOf(req)),
  );

  app.get(
    '/dashboard/on-time',
    {
      config: { auth: { roles: ['administrator', 'dispatch', 'subadmin'] } },
      schema: {
        operationId: 'getOnTimeReport',
        tags: ['dashboard'],
        summary: 'On-time delivery report',
        description: ON_TIME_DOC,
        querystring: PeriodQuery,
        response: { 200: OnTimeOut },
      },
    },
    async (req) => svc.onTime(actorOf(req), periodOf(req.query)),
  );

  app.get(
    '/dashboard/on-time.xlsx',
    {
      config: { auth: { roles: ['administrator', 'dispatch', 'subadmin'] } },
      schema: {
        operationId: 'getOnTimeWorkbook',
        tags: ['dashboard'],
        summary: 'On-time delivery report as a spreadsheet (one sheet per dimension)',
        description: `${ON_TIME_DOC} An Office Open XML workbook, attachment on-time_<from>_<to>.xlsx.`,
        querystring: PeriodQuery,
        response: { 200: Workbook },
      },
    },
    async (req, reply) => {
      const period = periodOf(req.query);
      const file = await svc.onTimeWorkbook(actorOf(req), period);
      return sendWorkbook(reply as unknown as FastifyReply, file, reportFileName('on-time', period));
    },
  );
}
