import { Type } from '@sinclair/typebox';
import { actorOf } from '../../platform/auth.js';
import type { AppContext, Module } from '../../platform/context.js';
import type { FastifyReply } from 'fastify';
import { Nullable, Strict } from '../../platform/schemas.js';
import type { LogisticsApi, OnTimeLine } from '../logistics/index.js';
import { buildWorkbook, reportFileName, sendWorkbook, WorkbookResponse as Workbook } from '../../platform/workbook.js';

const OnTimeLineOut = Type.Object({
  key: Nullable(
    Type.String({ description: 'territory, merchant or driver id, or the hour "HH" of the promise (organization time zone); null: none' }),
  ),
  name: Nullable(Type.String()),
  deliveries: Type.Integer({ description: 'completed trips with a promise' }),
  on_time: Type.Integer({ description: 'completed at or before promised_at' }),
  on_time_pct: Type.Number(),
  mean_late_min: Type.Number({ description: 'mean lateness in minutes (an early delivery counts 0)' }),
  p90_late_min: Type.Number(),
});
const OnTimeOut = Type.Object({
  from: Nullable(Type.String()),
  to: Nullable(Type.String()),
  territory: Type.Array(OnTimeLineOut),
  merchant: Type.Array(OnTimeLineOut),
  driver: Type.Array(OnTimeLineOut),
  hour: Type.Array(OnTimeLineOut),
});
const PeriodQuery = Strict({
  from: Type.Optional(Type.String({ format: 'date-time', description: 'completed at or after' })),
  to: Type.Optional(Type.String({ format: 'date-time', description: 'completed before' })),
});
const ON_TIME_DOC =
  'Completed trips with a promise (promised_at), delivered in [from, to): on-time % (completed at or before the promise), mean and p90 lateness in minutes, ' +
  'per territory, merchant, driver and hour of the promise. Sub-administrators see their territories only.';

/**
 * GET /dashboard: one section per module (counts per state), computed in one tenant transaction.
 * Each contributor filters by `actor.subadmin.territoryIds` for sub-administrators.
 */
export const createDashboardModule = (ctx: AppContext, deps: { logistics: Pick<LogisticsApi, 'onTimeReport'> }): Module => ({
  name: 'dashboard',
  routes(app) {
    app.get(
      '/dashboard',
      {
        config: { auth: { roles: ['administrator', 'dispatch', 'subadmin'] } },
        schema: {
          operationId: 'getDashboard',
          tags: ['dashboard'],
          response: {
            200: Type.Object({
              generated_at: Type.String({ format: 'date-time' }),
              scope: Type.Union([Type.Literal('organization'), Type.Literal('territories')]),
              sections: Type.Object({}, { additionalProperties: true }),
            }),
          },
        },
      },
      async (req) => {
        const actor = actorOf(req);
        const sections = await ctx.db.withTenant(actor, async (tx) => {
          const out: Record<string, unknown> = {};
          for (const [name, contribute] of ctx.dashboard) out[name] = await contribute(tx, actor);
          return out;
        });
        return {
          generated_at: new Date().toISOString(),
          scope: actor.subadmin ? ('territories' as const) : ('organization' as const),
          sections,
        };
      },
    );

    const onTime = (req: { query: unknown }) => {
      const q = req.query as { from?: string; to?: string };
      const period = { from: q.from ?? null, to: q.to ?? null };
      return {
        period,
        run: (actor: ReturnType<typeof actorOf>) => ctx.db.withTenant(actor, (tx) => deps.logistics.onTimeReport(tx, actor, period)),
      };
    };

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
      async (req) => {
        const { period, run } = onTime(req);
        return { ...period, ...(await run(actorOf(req))) };
      },
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
        const actor = actorOf(req);
        const { period, run } = onTime(req);
        const report = await run(actor);
        const columns = [
          { header: 'Key', key: 'key', width: 38, value: (r: OnTimeLine) => r.key },
          { header: 'Name', key: 'name', width: 28, value: (r: OnTimeLine) => r.name },
          { header: 'Deliveries', key: 'deliveries', width: 12, type: 'int' as const, value: (r: OnTimeLine) => r.deliveries },
          { header: 'On time', key: 'on_time', width: 10, type: 'int' as const, value: (r: OnTimeLine) => r.on_time },
          { header: 'On time %', key: 'on_time_pct', width: 10, value: (r: OnTimeLine) => r.on_time_pct },
          { header: 'Mean lateness (min)', key: 'mean_late_min', width: 20, value: (r: OnTimeLine) => r.mean_late_min },
          { header: 'P90 lateness (min)', key: 'p90_late_min', width: 20, value: (r: OnTimeLine) => r.p90_late_min },
        ];
        const scope = actor.subadmin ? 'territories' : 'organization';
        const sheets = (['territory', 'merchant', 'driver', 'hour'] as const).map((dim) => ({
          sheet: dim,
          title: `On-time deliveries by ${dim}`,
          period,
          scope,
          columns,
          rows: report[dim],
          totalsLabelKey: 'key',
        }));
        const file = await buildWorkbook(sheets[0]!, ...sheets.slice(1));
        return sendWorkbook(reply as unknown as FastifyReply, file, reportFileName('on-time', period));
      },
    );
  },
});
