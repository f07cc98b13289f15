import type { Tx } from '../../../platform/db/index.js';
import { scopeSql, type TerritoryScope } from '../../../platform/scope.js';

export const ON_TIME_DIMENSIONS = ['territory', 'merchant', 'driver', 'hour'] as const;
export type OnTimeDimension = (typeof ON_TIME_DIMENSIONS)[number];

export interface OnTimeRow {
  key: string | null;
  name: string | null;
  deliveries: number;
  on_time: number;
  mean_late_s: number;
  p90_late_s: number;
}

const GROUP: Record<OnTimeDimension, { key: string; name: string; join: string }> = {
  territory: {
    key: 't.territory_id',
    name: 'tr.name',
    join: 'LEFT JOIN territory tr ON tr.organization_id = t.organization_id AND tr.id = t.territory_id',
  },
  merchant: {
    key: 't.merchant_id',
    name: 'm.name',
    join: 'LEFT JOIN merchant m ON m.organization_id = t.organization_id AND m.id = t.merchant_id',
  },
  driver: {
    key: 't.driver_id',
    name: 'u.display_name',
    join: 'LEFT JOIN driver d ON d.organization_id = t.organization_id AND d.id = t.driver_id LEFT JOIN user_contact u ON u.organization_id = d.organization_id AND u.id = d.user_id',
  },
  // The hour of the promise in the organization's time zone ($4).
  hour: {
    key: "lpad(extract(hour FROM t.promised_at AT TIME ZONE $4)::int::text, 2, '0')",
    name: "lpad(extract(hour FROM t.promised_at AT TIME ZONE $4)::int::text, 2, '0') || ':00'",
    join: '',
  },
};

/**
 * Completed trips with a promise, delivered in [from, to), in the scope ($1), per dimension: deliveries, on time
 * (completed at or before the promise), mean and p90 lateness in seconds (early deliveries count as 0 late).
 */
export async function onTimeRows(
  tx: Tx,
  dim: OnTimeDimension,
  q: { scope: TerritoryScope; from: string | null; to: string | null; timeZone: string },
): Promise<OnTimeRow[]> {
  const g = GROUP[dim];
  const late = 'GREATEST(0, extract(epoch FROM t.completed_at - t.promised_at))';
  const { rows } = await tx.query<OnTimeRow>(
    `SELECT ${g.key} AS key, max(${g.name}) AS name, count(*)::int AS deliveries, count(*) FILTER (WHERE t.completed_at <= t.promised_at)::int AS on_time,
            COALESCE(avg(${late}), 0)::float8 AS mean_late_s, COALESCE(percentile_cont(0.9) WITHIN GROUP (ORDER BY ${late}), 0)::float8 AS p90_late_s
       FROM trip t ${g.join}
      WHERE t.status = 'completed' AND t.promised_at IS NOT NULL AND ${scopeSql('t.territory_id', 1)}
        AND ($2::timestamptz IS NULL OR t.completed_at >= $2) AND ($3::timestamptz IS NULL OR t.completed_at < $3)
        AND $4::text IS NOT NULL
      GROUP BY 1 ORDER BY 1 NULLS LAST`,
    [q.scope, q.from, q.to, q.timeZone],
  );
  return rows;
}
