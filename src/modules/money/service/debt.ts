import type { Actor } from '../../../platform/auth.js';
import type { Tx } from '../../../platform/db/index.js';
import { AppError } from '../../../platform/errors.js';
import { once, requestHash } from '../../../platform/idempotency.js';
import { formatMoney, money } from '../../../platform/money.js';
import type { MoneyContext } from '../context.js';
import { debtCoverage, lockMerchantWallet } from '../repo/wallet.js';
import { appendEntry, walletSummary } from './ledger.js';

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
