import { Type } from '@sinclair/typebox';
import { actorOf } from '../../../platform/auth.js';
import type { Api } from '../../../platform/context.js';
import { NonNegativeMoney, Page, PageQueryProps, Strict } from '../../../platform/schemas.js';
import type { MoneyContext } from '../context.js';
import { RuleFields, RuleOut } from '../schemas.js';
import { createSettlementRuleService, type RulePatch } from '../service/settlement-rules.js';

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
