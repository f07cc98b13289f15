import { Type } from '@sinclair/typebox';
import { actorOf, type Actor } from '../../platform/auth.js';
import { recordAudit } from '../../platform/audit.js';
import type { Api } from '../../platform/context.js';
import type { MoneyContext } from './index.js';
import { pageRequest, toPage } from '../../platform/pagination.js';
import { Money, NonNegativeMoney, Nullable, Page, PageQueryProps, Strict, Timestamp } from '../../platform/schemas.js';
import { ownMerchant, summarize, walletSummary } from './model.js';
import { findRule as loadRule, listRulesWithSums, upsertRule, type Frequency, type RuleView } from './repo/settlement-rules.js';
import { WalletOut } from './debt.js';

export type { Frequency };

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

const RuleFields = {
  merchant_id: Type.String(),
  enabled: Type.Boolean(),
  frequency: Type.Union([Type.Literal('daily'), Type.Literal('weekly'), Type.Literal('monthly')]),
  minimum_balance: Money,
  net_debt_first: Type.Boolean(),
  settled_through: Nullable(Timestamp),
  updated_by_user_id: Nullable(Type.String()),
  created_at: Nullable(Timestamp),
  updated_at: Nullable(Timestamp),
  wallet: WalletOut,
};
export const RuleOut = Type.Object(RuleFields);
const RULE_DOC =
  'Automatic settlement: when `enabled`, a worker settles each completed period (UTC days; ISO weeks from Monday; calendar months) exactly once, ' +
  'starting with the period in which the rule was first saved: ' +
  'if the payable (wallet entries created before the period end, outside debt and credit) is > 0 and >= `minimum_balance`, it writes a ' +
  '`settlement_debit` entry (−payable) and a settlement record; with `net_debt_first` the outstanding debt is first netted from it ' +
  '(a `merchant_debt_payment` entry of the netted amount; payout = payable − netted). Below the minimum the period is recorded as `skipped`.';

export function settlementRuleRoutes(app: Api, ctx: MoneyContext) {
  const svc = createSettlementRuleService(ctx);
  app.get(
    '/merchant/settlement-rule',
    {
      config: { auth: { roles: ['comercio'] } },
      schema: {
        operationId: 'getMerchantSettlementRule',
        tags: ['payments'],
        summary: "The calling merchant's settlement rule (defaults when never saved) and wallet",
        description: RULE_DOC,
        response: { 200: RuleOut },
      },
    },
    async (req) => svc.getOwn(actorOf(req)),
  );
  app.patch(
    '/merchant/settlement-rule',
    {
      config: { auth: { roles: ['comercio'] } },
      schema: {
        operationId: 'updateMerchantSettlementRule',
        tags: ['payments'],
        summary: 'Creates or updates the automatic settlement rule',
        description: RULE_DOC,
        body: Strict(
          {
            enabled: Type.Optional(Type.Boolean()),
            frequency: Type.Optional(RuleFields.frequency),
            minimum_balance: Type.Optional(NonNegativeMoney),
            net_debt_first: Type.Optional(Type.Boolean()),
          },
          { minProperties: 1 },
        ),
        response: { 200: RuleOut },
      },
    },
    async (req) => svc.patchOwn(actorOf(req), req.body as RulePatch),
  );
  app.get(
    '/admin/merchant-settlement-rules',
    {
      config: { auth: { roles: ['administrator'] } },
      schema: {
        operationId: 'listMerchantSettlementRules',
        tags: ['payments'],
        summary: "Saved settlement rules with each merchant's wallet",
        description: RULE_DOC,
        querystring: Strict({ ...PageQueryProps, enabled: Type.Optional(Type.Boolean()) }),
        response: { 200: Page(RuleOut) },
      },
    },
    async (req) => svc.list(actorOf(req), req.query as { enabled?: boolean }),
  );
}
