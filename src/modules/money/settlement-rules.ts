import { Type } from '@sinclair/typebox';
import { actorOf, tenantOf, type Actor } from '../../platform/auth.js';
import { recordAudit } from '../../platform/audit.js';
import type { Api } from '../../platform/context.js';
import type { MoneyContext } from './index.js';
import type { Tx } from '../../platform/db/index.js';
import { pageRequest, toPage } from '../../platform/pagination.js';
import { Money, NonNegativeMoney, Nullable, Page, PageQueryProps, Strict, Timestamp } from '../../platform/schemas.js';
import { DEBT_ENTRY_SQL, ownMerchant, PENDING_ENTRY_SQL, summarize, walletSummary } from './model.js';
import { WalletOut } from './debt.js';

export type Frequency = 'daily' | 'weekly' | 'monthly';

const RULE_COLUMNS = 'merchant_id, enabled, frequency, minimum_balance, net_debt_first, settled_through, updated_by_user_id, created_at, updated_at';

interface RuleRow {
  merchant_id: string;
  enabled: boolean;
  frequency: Frequency;
  minimum_balance: string;
  net_debt_first: boolean;
  settled_through: Date | null;
  updated_by_user_id: string | null;
  created_at: Date | null;
  updated_at: Date | null;
}

export interface RulePatch {
  enabled?: boolean;
  frequency?: Frequency;
  minimum_balance?: string;
  net_debt_first?: boolean;
}

const defaultRule = (merchantId: string): RuleRow => ({
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

async function loadRule(tx: Tx, merchantId: string): Promise<RuleRow | null> {
  const { rows } = await tx.query<RuleRow>(`SELECT ${RULE_COLUMNS} FROM merchant_settlement_rule WHERE merchant_id = $1`, [merchantId]);
  return rows[0] ?? null;
}

export function createSettlementRuleService(ctx: MoneyContext) {
  return {
    async getOwn(actor: Actor) {
      return ctx.db.withTenant(tenantOf(actor), async (tx) => {
        const m = await ownMerchant(ctx, tx, actor);
        return { ...((await loadRule(tx, m.id)) ?? defaultRule(m.id)), wallet: await walletSummary(tx, m.id) };
      });
    },

    async patchOwn(actor: Actor, patch: RulePatch) {
      return ctx.db.withTenant(tenantOf(actor), async (tx) => {
        const m = await ownMerchant(ctx, tx, actor);
        const before = (await loadRule(tx, m.id)) ?? defaultRule(m.id);
        const next = { ...before, ...Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)) } as RuleRow;
        const { rows } = await tx.query<RuleRow>(
          // A new rule starts with the current period: it never settles periods that ended before it existed.
          `INSERT INTO merchant_settlement_rule (organization_id, merchant_id, enabled, frequency, minimum_balance, net_debt_first, updated_by_user_id, settled_through)
           VALUES ($1, $2, $3, $4, $5, $6, $7, date_trunc(CASE $4::text WHEN 'daily' THEN 'day' WHEN 'weekly' THEN 'week' ELSE 'month' END, now(), 'UTC'))
           ON CONFLICT (organization_id, merchant_id) DO UPDATE SET enabled = EXCLUDED.enabled, frequency = EXCLUDED.frequency,
             minimum_balance = EXCLUDED.minimum_balance, net_debt_first = EXCLUDED.net_debt_first,
             updated_by_user_id = EXCLUDED.updated_by_user_id, updated_at = now()
           RETURNING ${RULE_COLUMNS}`,
          [actor.organizationId, m.id, next.enabled, next.frequency, next.minimum_balance, next.net_debt_first, actor.userId],
        );
        const view = (r: RuleRow) => ({ enabled: r.enabled, frequency: r.frequency, minimum_balance: r.minimum_balance, net_debt_first: r.net_debt_first });
        await recordAudit(tx, actor, { action: 'merchant_settlement_rule.updated', entityType: 'merchant_settlement_rule', entityId: m.id, before: view(before), after: view(rows[0]) });
        return { ...rows[0], wallet: await walletSummary(tx, m.id) };
      });
    },

    /** Every saved rule with the merchant's wallet (administrators). */
    async list(actor: Actor, q: { enabled?: boolean; limit?: number; cursor?: string }) {
      const page = pageRequest(q);
      return ctx.db.withTenant(tenantOf(actor), async (tx) => {
        const { rows } = await tx.query<RuleRow & { id: string; balance: string; debt_net: string; pending: string; currency: string | null }>(
          `SELECT r.merchant_id AS id, ${RULE_COLUMNS.split(', ').map((c) => `r.${c}`).join(', ')},
                  COALESCE(w.balance, 0)::numeric(14,2) AS balance, COALESCE(w.debt_net, 0)::numeric(14,2) AS debt_net,
                  COALESCE(w.pending, 0)::numeric(14,2) AS pending, w.currency
             FROM merchant_settlement_rule r
             LEFT JOIN LATERAL (
               SELECT sum(amount) AS balance, max(currency) AS currency,
                      sum(amount) FILTER (WHERE ${DEBT_ENTRY_SQL} OR entry_type = 'merchant_debt_payment') AS debt_net,
                      sum(amount) FILTER (WHERE ${PENDING_ENTRY_SQL}) AS pending
                 FROM merchant_wallet_entry WHERE merchant_wallet_entry.merchant_id = r.merchant_id) w ON true
            WHERE ($1::boolean IS NULL OR r.enabled = $1) AND ($2::text IS NULL OR r.merchant_id < $2)
            ORDER BY r.merchant_id DESC LIMIT $3`,
          [q.enabled ?? null, page.after, page.limit + 1],
        );
        return toPage(rows, page, ({ balance, debt_net, pending, currency, id: _id, ...r }) => ({ ...r, wallet: summarize(balance, debt_net, currency ?? 'BOB', pending) }));
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
const RuleOut = Type.Object(RuleFields);
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
      schema: { operationId: 'getMerchantSettlementRule', tags: ['payments'], summary: "The calling merchant's settlement rule (defaults when never saved) and wallet", description: RULE_DOC, response: { 200: RuleOut } },
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
