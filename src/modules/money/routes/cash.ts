import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import { actorOf } from '../../../platform/auth.js';
import type { Api } from '../../../platform/context.js';
import { validateIdempotencyKey } from '../../../platform/idempotency.js';
import { Id, IdParams, Literals, Money, Nullable, PageQueryProps, ShortText, Strict } from '../../../platform/schemas.js';
import { LANGUAGES, type Language } from '../../messages/index.js';
import { sendWorkbook, WorkbookResponse, XLSX_TYPE } from '../../../platform/workbook.js';
import type { MoneyContext } from '../context.js';
import {
  CASHIER_REMITTANCE_METHODS,
  CashEntryOut,
  CashPage,
  CashSummaryOut,
  EntryOut,
  ReconciliationOut,
  ReconciliationQuery,
  SHORTFALL_CHARGED_TO,
} from '../schemas.js';
import { reconciliationFileName, reconciliationWorkbook } from '../service/cash-report.js';
import type { CashService, ReconciliationFilter, RemittanceInput, ShortfallInput } from '../service/cash.js';

const LEDGER_DOC =
  "The driver's cash ledger (cash on delivery), append-only and audited: `cash_collected` (+, recorded at the door when he delivers a cash order he collects), " +
  "`cash_remitted` (−, handed in to a cashier, or netted from his earnings by a driver settlement), `cash_adjustment` (±, an administrator's correction with its reason). " +
  '`cash_in_hand` is always the sum of the entries. Entries newest first.';

const RECONCILIATION_DOC =
  "Days in [from, to) in the organization's time zone (at most 93 days: 422 PERIOD_TOO_LONG; without them: the organization's today). Collections count under the trip's territory, remittances and adjustments " +
  "under the driver's territory. Sub-administrators need the `reports` permission and see only their territories (a territory_id outside them is 404).";

export function cashRoutes(app: Api, _ctx: MoneyContext, svc: CashService) {
  app.get(
    '/driver/cash',
    {
      config: { auth: { roles: ['repartidor'] } },
      schema: {
        operationId: 'getMyCash',
        tags: ['driver-app'],
        summary: "The calling driver's cash in hand (cash on delivery), his cash limit and his cash entries",
        description: LEDGER_DOC + ' 404 DRIVER_PROFILE_NOT_FOUND without a driver profile.',
        querystring: Strict({ ...PageQueryProps }),
        response: { 200: CashPage },
      },
    },
    async (req) => svc.own(actorOf(req), req.query),
  );

  app.get(
    '/drivers/:id/cash',
    {
      config: { auth: { roles: ['administrator', 'dispatch', 'subadmin'], permission: 'drivers_view' } },
      schema: {
        operationId: 'getDriverCash',
        tags: ['drivers'],
        summary: "A driver's cash in hand (cash on delivery), cash limit and cash entries",
        description:
          LEDGER_DOC +
          " Sub-administrators see only drivers linked to their territories (404 otherwise, as for another organization's driver).",
        params: IdParams,
        querystring: Strict({ ...PageQueryProps }),
        response: { 200: CashPage },
      },
    },
    async (req) => svc.ofDriver(actorOf(req), req.params.id, req.query),
  );

  app.post(
    '/drivers/:id/cash-remittances',
    {
      config: { auth: { roles: ['administrator', 'dispatch', 'subadmin'], permission: 'cash_remittances_record' } },
      schema: {
        operationId: 'recordDriverCashRemittance',
        tags: ['drivers'],
        summary: 'A cashier records cash a driver handed in: a `cash_remitted` entry (−amount); the oldest collected cash is covered first',
        description:
          "The amount must be > 0 with at most 2 decimals (400) and at most the driver's cash in hand (422 REMITTANCE_EXCEEDS_CASH_IN_HAND). " +
          'Each cash order whose collected cash the remittances now cover in full (oldest collected first) counts as received by the platform: ' +
          "its merchant's net moves from pending to available (`covered_orders`). Optional proof: a private storage object of purpose payment_proof or document " +
          'uploaded by the caller (422 otherwise). Honors `Idempotency-Key` (a repeat with the same body returns the first result; another body is ' +
          '422 IDEMPOTENCY_KEY_REUSED). Sub-administrators need the `cash_remittances_record` permission (default off) and reach only drivers of their ' +
          "territories; another organization's driver is 404. Audited; event driver_cash.remitted to the driver.",
        params: IdParams,
        body: Strict({
          amount: Type.String({ pattern: '^\\d{1,10}(\\.\\d{1,2})?$', description: 'decimal string > 0, at most 2 decimals' }),
          method: Literals(CASHIER_REMITTANCE_METHODS),
          reference: Type.Optional(ShortText(200)),
          proof_storage_object_id: Type.Optional(Id),
          note: Type.Optional(ShortText(500)),
        }),
        response: {
          201: Type.Object({
            entry: CashEntryOut,
            covered_orders: Type.Array(Type.Object({ order_id: Type.String(), merchant_id: Type.String(), amount: Money })),
            cash: CashSummaryOut,
          }),
        },
      },
    },
    async (req, reply) => {
      const key = validateIdempotencyKey(req.headers['idempotency-key']);
      const out = await svc.remit(actorOf(req), req.params.id, req.body as RemittanceInput, key);
      if (out.replayed) reply.header('idempotent-replayed', 'true');
      return reply.code(201).send(out.body);
    },
  );

  app.post(
    '/drivers/:id/cash-adjustments',
    {
      config: { auth: { roles: ['administrator'] } },
      schema: {
        operationId: 'adjustDriverCash',
        tags: ['drivers'],
        summary: "An administrator's signed correction of a driver's cash in hand (a `cash_adjustment` entry) with its reason; audited",
        description:
          'Positive: the driver holds more than the ledger says; negative: less (e.g. a loss written off). 400 for zero or more than 2 decimals; ' +
          "422 ADJUSTMENT_EXCEEDS_CASH_IN_HAND when it would leave negative cash in hand. An adjustment covers no order: merchants' nets stay pending until remitted.",
        params: IdParams,
        body: Strict({
          amount: Type.String({ pattern: '^-?\\d{1,10}(\\.\\d{1,2})?$', description: 'signed decimal string, not zero' }),
          reason: ShortText(500),
        }),
        response: { 201: Type.Object({ entry: CashEntryOut, cash: CashSummaryOut }) },
      },
    },
    async (req, reply) =>
      reply.code(201).send(await svc.adjust(actorOf(req), req.params.id, req.body as { amount: string; reason: string })),
  );

  app.post(
    '/drivers/:id/cash-entries/:entryId/shortfall-resolution',
    {
      config: { auth: { roles: ['administrator'] } },
      schema: {
        operationId: 'resolveDriverCashShortfall',
        tags: ['drivers'],
        summary:
          'Resolves a short collection (the driver collected less than the order asked for): the shortfall is charged to the driver or to the merchant',
        description:
          "Until resolved, the order's net stays pending for the merchant even once the collected cash is remitted (the platform never makes available cash it did not get). " +
          '`charge_to: driver`: a `cash_adjustment` +shortfall on his cash (carrying the order and trip): he owes it, and the order counts as received once his remittances cover it too. ' +
          '`charge_to: merchant`: a wallet `adjustment` −shortfall on the merchant (carrying the order and trip): the customer paid less, and the order counts as received with the ' +
          'collected cash once that is remitted. `received_order` names the order when that happens now. 404 for an entry that is not a collection of this driver (or another ' +
          "organization's), 422 NOT_A_SHORTFALL when the collection is not short, 409 SHORTFALL_ALREADY_RESOLVED the second time. Administrators only; audited.",
        params: Strict({ id: Id, entryId: Id }),
        body: Strict({ charge_to: Literals(SHORTFALL_CHARGED_TO), reason: ShortText(500) }),
        response: {
          201: Type.Object({
            collection: CashEntryOut,
            charge_to: Literals(SHORTFALL_CHARGED_TO),
            shortfall: Money,
            cash_entry: Nullable(CashEntryOut),
            wallet_entry: Nullable(EntryOut),
            received_order: Nullable(Type.Object({ order_id: Type.String(), merchant_id: Type.String(), amount: Money })),
            cash: CashSummaryOut,
          }),
        },
      },
    },
    async (req, reply) => {
      const p = req.params as { id: string; entryId: string };
      return reply.code(201).send(await svc.resolveShortfall(actorOf(req), p.id, p.entryId, req.body as ShortfallInput));
    },
  );

  app.get(
    '/admin/cash-reconciliation',
    {
      config: { auth: { roles: ['administrator', 'dispatch', 'subadmin'], permission: 'reports' } },
      schema: {
        operationId: 'getCashReconciliation',
        tags: ['drivers'],
        summary: 'Cash on delivery per driver and day: collected, remitted, adjusted, outstanding, discrepancies, by territory',
        description: `${RECONCILIATION_DOC} The same rows as a workbook: GET /admin/cash-reconciliation.xlsx.`,
        querystring: ReconciliationQuery,
        response: { 200: ReconciliationOut },
      },
    },
    async (req) => {
      return svc.reconciliation(actorOf(req), req.query as ReconciliationFilter);
    },
  );

  app.get(
    '/admin/cash-reconciliation.xlsx',
    {
      config: { auth: { roles: ['administrator', 'dispatch', 'subadmin'], permission: 'reports' } },
      schema: {
        operationId: 'getCashReconciliationWorkbook',
        tags: ['drivers'],
        summary: 'The cash reconciliation (per driver and day) as a spreadsheet',
        description:
          `${RECONCILIATION_DOC} An Office Open XML workbook (${XLSX_TYPE}), attachment cash-reconciliation_<from>_<to>.xlsx: one row per driver, territory and day, money as ` +
          'number cells, a totals row summing collected, remitted, adjustments, net and missing (never the outstanding balance). Headers in Spanish (`lang=es`, the default) or English.',
        querystring: Strict({
          ...ReconciliationQuery.properties,
          lang: Type.Optional(Literals(LANGUAGES)),
        }),
        response: { 200: WorkbookResponse },
      },
    },
    async (req, reply) => {
      const { lang, ...q } = req.query as ReconciliationFilter & { lang?: Language };
      const r = await svc.reconciliation(actorOf(req), q);
      return sendWorkbook(reply as unknown as FastifyReply, await reconciliationWorkbook(r, lang ?? 'es'), reconciliationFileName(r));
    },
  );
}
