import type { Actor } from '../../platform/auth.js';
import type { ReadScope } from '../../platform/scope.js';
import { buildWorkbook } from '../../platform/workbook.js';
import type { OnTimeLine } from '../logistics/index.js';
import type { DashboardContext } from './context.js';

type Period = { from: string | null; to: string | null };

/**
 * GET /dashboard: one section per module (counts per state), computed in one tenant transaction.
 * Each contributor filters by `actor.subadmin.territoryIds` for sub-administrators.
 */
export function createDashboardService(ctx: DashboardContext) {
  const onTimeReport = (actor: Actor, period: Period) =>
    ctx.db.withTenant(actor, (tx) => ctx.deps.logistics.onTimeReport(tx, actor, period));
  return {
    async dashboard(actor: Actor) {
      const sections = await ctx.db.withTenant(actor, async (tx) => {
        const out: Record<string, unknown> = {};
        for (const [name, contribute] of ctx.dashboard) out[name] = await contribute(tx, actor);
        return out;
      });
      const scope: ReadScope = actor.subadmin ? 'territories' : 'organization';
      return {
        generated_at: new Date().toISOString(),
        scope,
        sections,
      };
    },

    async onTime(actor: Actor, period: Period) {
      return { ...period, ...(await onTimeReport(actor, period)) };
    },

    /** The on-time report as a workbook, one sheet per dimension. */
    async onTimeWorkbook(actor: Actor, period: Period): Promise<Buffer> {
      const report = await onTimeReport(actor, period);
      const columns = [
        { header: 'Key', key: 'key', width: 38, value: (r: OnTimeLine) => r.key },
        { header: 'Name', key: 'name', width: 28, value: (r: OnTimeLine) => r.name },
        { header: 'Deliveries', key: 'deliveries', width: 12, type: 'int' as const, value: (r: OnTimeLine) => r.deliveries },
        { header: 'On time', key: 'on_time', width: 10, type: 'int' as const, value: (r: OnTimeLine) => r.on_time },
        { header: 'On time %', key: 'on_time_pct', width: 10, value: (r: OnTimeLine) => r.on_time_pct },
        { header: 'Mean lateness (min)', key: 'mean_late_min', width: 20, value: (r: OnTimeLine) => r.mean_late_min },
        { header: 'P90 lateness (min)', key: 'p90_late_min', width: 20, value: (r: OnTimeLine) => r.p90_late_min },
      ];
      const scope: ReadScope = actor.subadmin ? 'territories' : 'organization';
      const sheets = (['territory', 'merchant', 'driver', 'hour'] as const).map((dim) => ({
        sheet: dim,
        title: `On-time deliveries by ${dim}`,
        period,
        scope,
        columns,
        rows: report[dim],
        totalsLabelKey: 'key',
      }));
      return buildWorkbook(sheets[0]!, ...sheets.slice(1));
    },
  };
}
export type DashboardService = ReturnType<typeof createDashboardService>;
