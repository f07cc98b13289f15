import { Type } from '@sinclair/typebox';
import { actorOf } from '../../../platform/auth.js';
import type { Api } from '../../../platform/context.js';
import { Id, IdParams, Money, Nullable, PageQueryProps, ShortText, Strict } from '../../../platform/schemas.js';
import type { MoneyContext } from '../context.js';
import type { DriverSettlementStatus } from '../repo/driver-settlements.js';
import { SettlementOut, DriverSettlementStatusSchema } from '../schemas.js';
import type { CashService } from '../service/cash.js';
import { createDriverSettlementService } from '../service/driver-settlements.js';

export function driverSettlementRoutes(app: Api, ctx: MoneyContext, cash: Pick<CashService, 'netForSettlement'>) {
  const svc = createDriverSettlementService(ctx, cash);
  app.post(
    '/admin/drivers/:driverId/settlements',
    {
      config: { auth: { roles: ['administrator'] } },
      schema: {
        operationId: 'createDriverSettlement',
        tags: ['settlements'],
        summary: "Settles all of a driver's unsettled earnings up to a cut-off (default now)",
        description:
          "Earnings are completed trips' `driver_earning`. A trip's earning is settled at most once, also when two requests race (the later one keeps " +
          'only what is left, or gets 422 NOTHING_TO_SETTLE). The settlement starts `pending`; `POST /admin/settlements/:id/paid` moves it to `paid`. ' +
          'Cash on delivery: the cash the driver holds is netted first (`cash_netted` = min(amount, cash in hand), recorded as his remittance), so the settlement ' +
          'pays `payout_amount` = amount − cash_netted; when he holds more than his earnings it pays nothing and `driver_owes` says how much cash he still owes.',
        params: Strict({ driverId: Id }),
        body: Strict({ up_to: Type.Optional(Type.String({ format: 'date-time' })), note: Type.Optional(ShortText(500)) }),
        response: { 201: SettlementOut },
      },
    },
    async (req, reply) =>
      reply.code(201).send(await svc.create(actorOf(req), req.params.driverId, (req.body ?? {}) as { up_to?: string; note?: string })),
  );
  app.post(
    '/admin/settlements/:id/paid',
    {
      config: { auth: { roles: ['administrator'] } },
      schema: {
        operationId: 'markDriverSettlementPaid',
        tags: ['settlements'],
        summary: 'Marks a driver settlement paid: `pending → paid`; any other state is 409 INVALID_TRANSITION',
        params: IdParams,
        body: Strict({ payment_reference: Type.Optional(ShortText(200)) }),
        response: { 200: SettlementOut },
      },
    },
    async (req) => svc.markPaid(actorOf(req), req.params.id, (req.body ?? {}) as { payment_reference?: string }),
  );
  app.get(
    '/driver/settlements',
    {
      config: { auth: { roles: ['repartidor'] } },
      schema: {
        operationId: 'listMySettlements',
        tags: ['driver'],
        summary:
          "The calling driver's settlements, newest first, with totals pending and paid (of payout_amount: what the platform pays him after netting his cash)",
        querystring: Strict({ ...PageQueryProps, status: Type.Optional(DriverSettlementStatusSchema) }),
        response: {
          200: Type.Object({
            data: Type.Array(SettlementOut),
            next_cursor: Nullable(Type.String()),
            totals: Type.Object({ pending: Money, paid: Money }),
          }),
        },
      },
    },
    async (req) => svc.listOwn(actorOf(req), req.query as { status?: DriverSettlementStatus }),
  );
}
