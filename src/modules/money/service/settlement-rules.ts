import { recordAudit } from '../../../platform/audit.js';
import type { Actor } from '../../../platform/auth.js';
import { pageRequest, toPage } from '../../../platform/pagination.js';
import type { MoneyContext } from '../context.js';
import { type Frequency, listRulesWithSums, findRule as loadRule, type RuleView, upsertRule } from '../repo/settlement-rules.js';
import { ownMerchant, summarize, walletSummary } from './ledger.js';

export interface RulePatch {
  enabled?: boolean;
  frequency?: Frequency;
  minimum_balance?: string;
  net_debt_first?: boolean;
}

const defaultRule = (merchantId: string): RuleView => ({
  merchant_id: merchantId,
  enabled: false,
  frequency: 'weekly',
  minimum_balance: '0.00',
  net_debt_first: true,
  settled_through: null,
  updated_by_user_id: null,
  created_at: null,
  updated_at: null,
});

export function createSettlementRuleService(ctx: MoneyContext) {
  return {
    async getOwn(actor: Actor) {
      return ctx.db.withTenant(actor, async (tx) => {
        const m = await ownMerchant(ctx, tx, actor);
        return { ...((await loadRule(tx, m.id)) ?? defaultRule(m.id)), wallet: await walletSummary(ctx, tx, m.id) };
      });
    },

    async patchOwn(actor: Actor, patch: RulePatch) {
      return ctx.db.withTenant(actor, async (tx) => {
        const m = await ownMerchant(ctx, tx, actor);
        const before = (await loadRule(tx, m.id)) ?? defaultRule(m.id);
        const next = { ...before, ...Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)) } as RuleView;
        const saved = await upsertRule(tx, actor.organizationId, m.id, actor.userId, next);
        const view = (r: RuleView) => ({
          enabled: r.enabled,
          frequency: r.frequency,
          minimum_balance: r.minimum_balance,
          net_debt_first: r.net_debt_first,
        });
        await recordAudit(tx, actor, {
          action: 'merchant_settlement_rule.updated',
          entityType: 'merchant_settlement_rule',
          entityId: m.id,
          before: view(before),
          after: view(saved),
        });
        return { ...saved, wallet: await walletSummary(ctx, tx, m.id) };
      });
    },

    /** Every saved rule with the merchant's wallet (administrators). */
    async list(actor: Actor, q: { enabled?: boolean; limit?: number; cursor?: string }) {
      const page = pageRequest(q);
      return ctx.db.withTenant(actor, async (tx) => {
        const rows = await listRulesWithSums(tx, { enabled: q.enabled ?? null, after: page.after, limit: page.limit + 1 });
        return toPage(rows, page, ({ balance, debt_net, pending, currency, id: _id, ...r }) => ({
          ...r,
          wallet: summarize(balance, debt_net, currency ?? 'BOB', pending),
        }));
      });
    },
  };
}
