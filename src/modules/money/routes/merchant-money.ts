import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import { actorOf } from '../../../platform/auth.js';
import type { Api } from '../../../platform/context.js';
import { DateTimeParam, Literals, Money, Nullable, Page, PageQueryProps, Strict } from '../../../platform/schemas.js';
import { LANGUAGES, type Language } from '../../messages/index.js';
import { REPORT_MAX_ROWS, sendWorkbook, WorkbookResponse } from '../../../platform/workbook.js';
import type { MoneyContext } from '../context.js';
import { HeldCashOut, LedgerOut, MerchantSettlementOut, type MerchantSettlementOutcome, WalletOut } from '../schemas.js';
import { createMerchantMoneyService, type OwnEntriesQuery } from '../service/merchant-money.js';
import { WALLET_ENTRY_TYPES } from '../schemas.js';

const merchantOnly = { auth: { roles: ['comercio' as const] } };

export function merchantMoneyRoutes(app: Api, ctx: MoneyContext) {
  const svc = createMerchantMoneyService(ctx);
  app.get(
    '/merchant/wallet',
    {
      config: merchantOnly,
      schema: {
        operationId: 'getMerchantWallet',
        tags: ['payments'],
        summary:
          "The calling merchant's wallet (available, pending, debt, credit) and its entries, newest first, with totals per type over the whole filter",
        description:
          'Entries are signed from the merchant side, as stored: sale_credit +, platform_commission and delivery_fee_debit −, merchant_debt_payment + (a debt payment the ' +
          'platform recorded), settlement_debit − (a settlement paid out to the merchant), adjustment and refund either way. `wallet` is the current wallet whatever the filter; ' +
          "`totals` are over every entry the filter matches (not only this page), so a period `from` (inclusive) .. `to` (exclusive) gives the period's figures. " +
          '404 for a merchant user without a merchant.',
        querystring: Strict({
          ...PageQueryProps,
          type: Type.Optional(Type.Union(WALLET_ENTRY_TYPES.map((t) => Type.Literal(t)))),
          from: Type.Optional(DateTimeParam('inclusive')),
          to: Type.Optional(DateTimeParam('exclusive')),
        }),
        response: {
          200: Type.Object({
            wallet: WalletOut,
            data: Type.Array(LedgerOut),
            next_cursor: Nullable(Type.String()),
            totals: Type.Object({ by_type: Type.Record(Type.String(), Money), net: Money, count: Type.Integer() }),
          }),
        },
      },
    },
    async (req) => svc.wallet(actorOf(req), req.query as OwnEntriesQuery),
  );
  app.get(
    '/merchant/settlements',
    {
      config: merchantOnly,
      schema: {
        operationId: 'listMerchantSettlements',
        tags: ['payments'],
        summary: "The settlements of the calling merchant's automatic settlement rule, newest first (payout = gross − debt netted)",
        querystring: Strict({ ...PageQueryProps, status: Type.Optional(MerchantSettlementOut.properties.status) }),
        response: { 200: Page(MerchantSettlementOut) },
      },
    },
    async (req) => svc.settlements(actorOf(req), req.query as { status?: MerchantSettlementOutcome }),
  );
  app.get(
    '/merchant/wallet.xlsx',
    {
      config: merchantOnly,
      schema: {
        operationId: 'getMerchantWalletWorkbook',
        tags: ['payments'],
        summary: "The calling merchant's wallet entries of a period as a spreadsheet (oldest first, a totals row)",
        description:
          'An Office Open XML workbook, attachment wallet_<from>_<to>.xlsx: one row per entry created in [from, to), dates as date cells, amounts as number cells ' +
          `(signed as in GET /merchant/wallet) with a SUM totals row; headers and entry types in \`lang\` (es by default). Only the caller's entries. from not before to is 400; ` +
          `more than ${REPORT_MAX_ROWS} entries is 422 REPORT_TOO_LARGE.`,
        querystring: Strict({
          from: DateTimeParam('inclusive'),
          to: DateTimeParam('exclusive'),
          lang: Type.Optional(Literals(LANGUAGES, 'the language of the headers and entry types (default es)')),
        }),
        response: { 200: WorkbookResponse },
      },
    },
    async (req, reply) => {
      const { file, name } = await svc.workbook(actorOf(req), req.query as { from: string; to: string; lang?: Language });
      return sendWorkbook(reply as unknown as FastifyReply, file, name);
    },
  );
  app.get(
    '/merchant/cash',
    {
      config: merchantOnly,
      schema: {
        operationId: 'listMerchantHeldCash',
        tags: ['payments'],
        summary:
          "Cash of the calling merchant's orders that the platform's drivers collected and the platform has not received yet, newest first",
        description:
          "Cash orders collected by the platform's driver that the platform has not received yet: the driver holds the cash until he hands it in (a remittance, or " +
          "netted by his settlement), and a short collection also waits until staff resolve its shortfall; until then the merchant's net of the order is pending in his wallet. " +
          '`total` and `count` are over every such collection (not only this page).',
        querystring: Strict(PageQueryProps),
        response: {
          200: Type.Object({
            total: Money,
            count: Type.Integer(),
            currency: Type.String(),
            data: Type.Array(HeldCashOut),
            next_cursor: Nullable(Type.String()),
          }),
        },
      },
    },
    async (req) => svc.heldCash(actorOf(req), req.query),
  );
}
