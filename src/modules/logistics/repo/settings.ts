import type { Tx } from '../../../platform/db/index.js';
import { logisticsSettings } from '../tables.js';
import type { SnakeRow } from '../../../platform/db/columns.js';

/** The organization's logistics settings (derived from the table; who changed them stays in the audit log). */
export type LogisticsSettings = SnakeRow<Omit<typeof logisticsSettings.$inferSelect, 'organizationId' | 'updatedByUserId'>>;
export type SettingsChange = Partial<Omit<LogisticsSettings, 'currency' | 'updated_at'>>;

const SETTINGS_COLUMNS =
  'auto_assign_radius_m, acceptance_timeout_s, acceptance_timeout_enabled, acceptance_max_offers, assignment_strategy, failed_delivery_policy, geofence_radius_m, average_speed_kmh, default_delivery_fee, driver_flat_fee, cash_limit, ' +
  'dispatch_buffer_min, delay_grace_min, location_stale_after_s, rejections_alert_threshold, ' +
  // One currency per organization: its settings' default_currency, read through the view organizations publishes.
  'COALESCE((SELECT c.default_currency FROM organization_currency c WHERE c.organization_id = logistics_settings.organization_id), currency) AS currency, updated_at';

/** The columns a change may set (the keys of `SettingsChange`; anything else never reaches the SQL text). */
const SETTABLE: Record<keyof SettingsChange, true> = {
  auto_assign_radius_m: true,
  acceptance_timeout_s: true,
  acceptance_timeout_enabled: true,
  acceptance_max_offers: true,
  assignment_strategy: true,
  failed_delivery_policy: true,
  geofence_radius_m: true,
  average_speed_kmh: true,
  default_delivery_fee: true,
  driver_flat_fee: true,
  dispatch_buffer_min: true,
  delay_grace_min: true,
  location_stale_after_s: true,
  rejections_alert_threshold: true,
  cash_limit: true,
};

/** The organization's logistics settings; the row is created with the defaults on first use. */
export async function getSettings(tx: Tx, organizationId: string): Promise<LogisticsSettings> {
  const found = await tx.query<LogisticsSettings>(`SELECT ${SETTINGS_COLUMNS} FROM logistics_settings WHERE organization_id = $1`, [
    organizationId,
  ]);
  if (found.rows[0]) return found.rows[0];
  await tx.query('INSERT INTO logistics_settings (organization_id) VALUES ($1) ON CONFLICT DO NOTHING', [organizationId]);
  return (
    await tx.query<LogisticsSettings>(`SELECT ${SETTINGS_COLUMNS} FROM logistics_settings WHERE organization_id = $1`, [organizationId])
  ).rows[0]!;
}

/**
 * The organization's average speed for straight-line ETAs, without writing (for reads, which may run on a replica):
 * the table's default until its settings row exists.
 */
export async function averageSpeedKmh(tx: Tx, organizationId: string): Promise<number> {
  const { rows } = await tx.query<{ average_speed_kmh: number }>(
    'SELECT average_speed_kmh FROM logistics_settings WHERE organization_id = $1',
    [organizationId],
  );
  return rows[0]?.average_speed_kmh ?? (logisticsSettings.averageSpeedKmh.default as number);
}

/** Writes a change of the (existing) settings row; returns the settings after it. */
export async function updateSettings(tx: Tx, organizationId: string, change: SettingsChange, byUserId: string): Promise<LogisticsSettings> {
  const keys = Object.keys(change).filter((k): k is keyof SettingsChange => k in SETTABLE);
  const sets = keys.map((k, i) => `${k} = $${i + 2}`).join(', ');
  const { rows } = await tx.query<LogisticsSettings>(
    `UPDATE logistics_settings SET ${sets}, updated_by_user_id = $${keys.length + 2}, updated_at = now() WHERE organization_id = $1 RETURNING ${SETTINGS_COLUMNS}`,
    [organizationId, ...keys.map((k) => change[k]), byUserId],
  );
  return rows[0]!;
}
