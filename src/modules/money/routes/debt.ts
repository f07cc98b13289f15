import { Type } from '@sinclair/typebox';
import { actorOf } from '../../../platform/auth.js';
import type { Api } from '../../../platform/context.js';
import { AppError } from '../../../platform/errors.js';
import { validateIdempotencyKey } from '../../../platform/idempotency.js';
import { money } from '../../../platform/money.js';
import { IdParams, Money, Nullable, ShortText, Strict } from '../../../platform/schemas.js';
import type { MoneyContext } from '../context.js';
import { EntryOut, WalletOut } from '../schemas.js';
import { createDebtService, type DebtPaymentInput } from '../service/debt.js';

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
