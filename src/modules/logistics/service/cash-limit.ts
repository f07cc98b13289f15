import type { Tx } from '../../../platform/db/index.js';
import { money } from '../../../platform/money.js';
import type { LogisticsContext } from '../context.js';
import { settingsOf } from './settings.js';

/**
 * Cash on delivery: the drivers, of these, whose cash in hand (money's cash ledger) is at or over their cash limit (their own
 * `cash_limit`, else the organization's logistics setting). They are offered no cash order: automatic assignment, offers and
 * plans skip them (reason cash_limit / CASH_LIMIT); a dispatcher assigns one only with an explicit, audited override.
 */
export async function driversAtCashLimit(
  ctx: LogisticsContext,
  tx: Tx,
  organizationId: string,
  drivers: { id: string; cash_limit: string | null }[],
): Promise<Set<string>> {
  if (drivers.length === 0) return new Set();
  const orgLimit = (await settingsOf(ctx, tx, organizationId)).cash_limit;
  const limited = drivers
    .map((d) => ({ id: d.id, limit: d.cash_limit ?? orgLimit }))
    .filter((d): d is { id: string; limit: string } => d.limit !== null);
  if (limited.length === 0) return new Set();
  const held = await ctx.deps.cash.cashInHandOf(
    tx,
    limited.map((d) => d.id),
  );
  return new Set(limited.filter((d) => money(held.get(d.id) ?? '0').gte(money(d.limit))).map((d) => d.id));
}

/** Whether a trip makes its driver collect cash. */
export const collectsCash = (t: { cash_to_collect: string }): boolean => money(t.cash_to_collect).gt(0);
