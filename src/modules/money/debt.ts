import { Type } from '@sinclair/typebox';
import { actorOf, type Actor } from '../../platform/auth.js';
import type { Api } from '../../platform/context.js';
import type { MoneyContext } from './index.js';
import type { Tx } from '../../platform/db/index.js';
import { AppError } from '../../platform/errors.js';
import { once, requestHash, validateIdempotencyKey } from '../../platform/idempotency.js';
import { formatMoney, money } from '../../platform/money.js';
import { IdParams, Money, Nullable, ShortText, Strict, Timestamp } from '../../platform/schemas.js';
import { walletSummary } from './model.js';
import { debtCoverage, lockMerchantWallet } from './repo/wallet.js';
import { appendEntry } from './wallet.js';

export interface DebtPaymentInput {
  amount: string;
  as_credit?: boolean;
  note?: string;
}

/** The debt entries a payment of `amount` newly covers, oldest first (see debtCoverage). */
async function coverage(tx: Tx, merchantId: string, amount: string) {
  const rows = await debtCoverage(tx, merchantId, amount);
  return rows.map((r) => ({
    entry_id: r.id,
    order_id: r.order_id,
    entry_type: r.entry_type,
    owed: formatMoney(r.owed),
    covered: formatMoney(r.covered),
  }));
}

export function createDebtService(ctx: MoneyContext) {
  async function recordPayment(tx: Tx, actor: Actor, merchantId: string, input: DebtPaymentInput) {
    const merchant = await ctx.deps.logistics.getMerchant(tx, merchantId);
    if (!merchant) throw AppError.notFound('Merchant');
    await lockMerchantWallet(tx, actor.organizationId, merchantId);
    const before = await walletSummary(ctx, tx, merchantId);
    if (money(input.amount).gt(money(before.debt)) && !input.as_credit) {
      throw AppError.unprocessable(
        `The payment exceeds the debt of ${before.debt}; send as_credit: true to keep the rest as credit`,
        'PAYMENT_EXCEEDS_DEBT',
        [{ field: 'amount', message: `at most ${before.debt}` }],
      );
    }
    const appliedTo = await coverage(tx, merchantId, input.amount);
    const entry = await appendEntry(tx, actor, {
      merchantId,
      entryType: 'merchant_debt_payment',
      amount: formatMoney(money(input.amount)),
      currency: before.currency,
      territoryId: merchant.territory_id,
      note: input.note ?? null,
    });
    const after = await walletSummary(ctx, tx, merchantId);
    return { entry, applied_to: appliedTo, debt_before: before.debt, wallet: after };
  }

  return {
    async record(actor: Actor, merchantId: string, input: DebtPaymentInput, idempotencyKey: string | null) {
      return ctx.db.withTenant(actor, async (tx) => {
        if (!idempotencyKey) return { status: 201, body: await recordPayment(tx, actor, merchantId, input), replayed: false };
        return once(
          tx,
          { organizationId: actor.organizationId, scope: `debt-payment:${merchantId}`, key: idempotencyKey, hash: requestHash(input) },
          async () => ({
            status: 201,
            body: await recordPayment(tx, actor, merchantId, input),
          }),
        );
      });
    },
  };
}

export const EntryOut = Type.Object({
  id: Type.String(),
  merchant_id: Type.String(),
  order_id: Nullable(Type.String()),
  trip_id: Nullable(Type.String()),
  driver_id: Nullable(Type.String()),
  settlement_id: Nullable(Type.String()),
  entry_type: Type.String(),
  payment_destination: Nullable(Type.String()),
  amount: Money,
  currency: Type.String(),
  territory_id: Nullable(Type.String()),
  note: Nullable(Type.String()),
  created_by_user_id: Nullable(Type.String()),
  created_at: Timestamp,
});

export const WalletOut = Type.Object(
  {
    balance: Money,
    pending: Money,
    available: Money,
    debt: Money,
    credit: Money,
    payable: Money,
    currency: Type.String(),
  },
  {
    description:
      'Derived from the wallet entries: balance = SUM(amount) = available + pending − debt + credit. pending = the entries of platform-paid orders whose payment ' +
      'the platform has not recorded as received (POST /admin/orders/{id}/payment-received): shown, never paid out by a settlement nor used to cover debt. ' +
      'debt = commission and delivery-fee entries of merchant_direct/cash orders not covered by debt payments, plus any shortfall when refunds or charges exceed ' +
      'what was available; credit = debt payments beyond the debt; available (= payable) = what a settlement would pay out, never below zero.',
  },
);

export function debtRoutes(app: Api, ctx: MoneyContext) {
  const svc = createDebtService(ctx);
  app.post(
    '/admin/merchants/:id/debt-payments',
    {
      config: { auth: { roles: ['administrator'] } },
      schema: {
        operationId: 'recordMerchantDebtPayment',
        tags: ['payments'],
        summary: 'Records a merchant payment against commission and delivery-fee debt, oldest first',
        description:
          'Writes a `merchant_debt_payment` wallet entry (+amount) and an audit row. The amount may not exceed the current debt (422 PAYMENT_EXCEEDS_DEBT) ' +
          'unless `as_credit: true`, which keeps the rest as credit against future debt. `applied_to` lists the debt entries this payment covers, oldest first. ' +
          'Honors `Idempotency-Key` (a repeat returns the first result).',
        params: IdParams,
        body: Strict({
          amount: Type.String({ pattern: '^\\d{1,10}(\\.\\d{1,2})?$', description: 'decimal string > 0' }),
          as_credit: Type.Optional(Type.Boolean({ default: false })),
          note: Type.Optional(ShortText(500)),
        }),
        response: {
          201: Type.Object({
            entry: EntryOut,
            applied_to: Type.Array(
              Type.Object({
                entry_id: Type.String(),
                order_id: Nullable(Type.String()),
                entry_type: Type.String(),
                owed: Money,
                covered: Money,
              }),
            ),
            debt_before: Money,
            wallet: WalletOut,
          }),
        },
      },
    },
    async (req, reply) => {
      const body = req.body as DebtPaymentInput;
      if (!money(body.amount).gt(0))
        throw AppError.badRequest('amount must be greater than 0', [{ field: 'amount', message: 'must be > 0' }]);
      const key = validateIdempotencyKey(req.headers['idempotency-key']);
      const out = await svc.record(actorOf(req), req.params.id, body, key);
      if (out.replayed) reply.header('idempotent-replayed', 'true');
      return reply.code(201).send(out.body);
    },
  );
}
