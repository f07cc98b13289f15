import { Type, type Static } from '@sinclair/typebox';
import { Id, Literals, Money, Nullable, PageQueryProps, Strict, Timestamp } from '../../platform/schemas.js';
import { CollectedBySchema as OrderCollectedBy, type PaymentStatus } from '../commerce/index.js';

export const WALLET_ENTRY_TYPES = [
  'sale_credit',
  'platform_commission',
  'delivery_fee_debit',
  'merchant_debt_payment',
  'adjustment',
  'refund',
  'settlement_debit',
] as const;

export const REVIEW_STATUSES = ['pending', 'approved', 'rejected', 'cancelled'] as const;

export const RECEIPT_METHODS = ['driver_cash', 'bank_transfer', 'card', 'other'] as const;

export const CASH_ENTRY_TYPES = ['cash_collected', 'cash_remitted', 'cash_adjustment'] as const;

/** How a driver handed cash in: at the cashier's desk, by transfer or deposit, or netted from his earnings by a driver settlement. */
export const REMITTANCE_METHODS = [
  'cash',
  'bank_transfer',
  'deposit',
  'settlement',
] as const; /** What a cashier may record: every method but `settlement`, which only a driver settlement writes. */
export type CashierRemittanceMethod = Exclude<RemittanceMethod, 'settlement'>;
export const CASHIER_REMITTANCE_METHODS = REMITTANCE_METHODS.filter(
  (m): m is CashierRemittanceMethod => m !== 'settlement',
) satisfies readonly RemittanceMethod[];

/** Who bears a short collection once staff resolve it. */
export const SHORTFALL_CHARGED_TO = ['driver', 'merchant'] as const;
export type ShortfallChargedTo = (typeof SHORTFALL_CHARGED_TO)[number];

export const SETTLEMENT_FREQUENCIES = ['daily', 'weekly', 'monthly'] as const;

/** What the settlement worker did for a rule's period: paid out, or nothing to pay. */
export const MERCHANT_SETTLEMENT_OUTCOMES = ['settled', 'skipped'] as const;
export type MerchantSettlementOutcome = (typeof MERCHANT_SETTLEMENT_OUTCOMES)[number];

export const DRIVER_SETTLEMENT_STATUSES = ['pending', 'paid'] as const;

export const CashEntryOut = Type.Object({
  id: Type.String(),
  driver_id: Type.String(),
  entry_type: Type.Union(
    CASH_ENTRY_TYPES.map((t) => Type.Literal(t)),
    {
      description:
        "cash_collected (+, at the door of a cash order), cash_remitted (−, handed in to a cashier or netted by a driver settlement), cash_adjustment (±, an administrator's correction)",
    },
  ),
  amount: Money,
  currency: Type.String(),
  order_id: Nullable(Type.String()),
  trip_id: Nullable(Type.String()),
  merchant_id: Nullable(Type.String()),
  territory_id: Nullable(Type.String()),
  expected_amount: Nullable(
    Type.String({
      description:
        'cash_collected only: the amount the order asked for when the driver collected a different one (a discrepancy for review)',
    }),
  ),
  method: Nullable(Type.Union(REMITTANCE_METHODS.map((m) => Type.Literal(m)))),
  reference: Nullable(Type.String()),
  proof_storage_object_id: Nullable(Type.String()),
  settlement_id: Nullable(Type.String()),
  note: Nullable(Type.String()),
  created_by_user_id: Nullable(Type.String()),
  created_at: Timestamp,
});

export const CashSummaryOut = Type.Object({
  driver_id: Type.String(),
  cash_in_hand: Type.String({ description: 'always the sum of the entries: collected − remitted ± adjustments' }),
  collected: Money,
  remitted: Money,
  adjusted: Type.String({ description: 'signed sum of the adjustments' }),
  discrepancies: Type.Integer({ description: "collections recorded with an amount different from the order's" }),
  open_shortfalls: Type.Integer({
    description:
      'short collections (less than the order asked for) staff have not resolved yet: their orders stay pending for the merchant',
  }),
  open_shortfall_amount: Money,
  cash_limit: Nullable(
    Type.String({ description: "the driver's own limit, else the organization's (logistics settings cash_limit); null = no limit" }),
  ),
  at_cash_limit: Type.Boolean({ description: 'cash_in_hand >= cash_limit: no cash order is offered to him (reason cash_limit)' }),
  currency: Type.String(),
});

export const CashPage = Type.Object({ ...CashSummaryOut.properties, data: Type.Array(CashEntryOut), next_cursor: Nullable(Type.String()) });

export const ReconciliationRowOut = Type.Object({
  day: Type.String({ format: 'date', description: "the day in the organization's time zone" }),
  driver_id: Type.String(),
  driver_name: Nullable(Type.String()),
  territory_id: Nullable(Type.String()),
  territory_name: Nullable(Type.String()),
  currency: Type.String(),
  collected: Money,
  remitted: Money,
  adjusted: Type.String({ description: 'signed' }),
  net: Type.String({ description: 'collected − remitted ± adjusted that day' }),
  outstanding: Type.String({ description: 'what the driver still held at the end of the day (his entries in the scope up to then)' }),
  collections: Type.Integer(),
  discrepancies: Type.Integer({ description: 'collections of a different amount than the order asked for' }),
  discrepancy_amount: Type.String({ description: 'sum of (expected − collected) of those discrepancies: positive = missing' }),
});

export const ReconciliationQuery = Strict({
  from: Type.Optional(
    Type.String({ format: 'date', description: "first day (organization time zone), inclusive; default: the organization's today" }),
  ),
  to: Type.Optional(Type.String({ format: 'date', description: 'last day, exclusive; default: the day after from' })),
  territory_id: Type.Optional(Id),
  driver_id: Type.Optional(Id),
});

export const ReconciliationOut = Type.Object({
  timezone: Type.String(),
  from: Type.String({ format: 'date' }),
  to: Type.String({ format: 'date' }),
  scope: Type.Union([Type.Array(Type.String()), Type.Null()], {
    description: "a sub-administrator's territory names; null = the whole organization",
  }),
  data: Type.Array(ReconciliationRowOut),
});

export type RemittanceMethod = (typeof REMITTANCE_METHODS)[number];

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

export const DriverSettlementStatusSchema = Type.Union(DRIVER_SETTLEMENT_STATUSES.map((s) => Type.Literal(s)));

export const SettlementOut = Type.Object({
  id: Type.String(),
  driver_id: Type.String(),
  status: DriverSettlementStatusSchema,
  cutoff_at: Timestamp,
  amount: Type.String({ description: "the earnings settled (sum of the trips' driver_earning)" }),
  cash_netted: Type.String({
    description:
      'cash on delivery: the cash in hand netted against the earnings, min(amount, cash in hand) (a cash_remitted entry of method settlement)',
  }),
  payout_amount: Type.String({
    description: 'what the platform pays the driver: amount − cash_netted (0 when he held at least his earnings)',
  }),
  driver_owes: Type.String({
    description: 'cash the driver still holds after the netting and owes the platform (0 when his earnings covered it)',
  }),
  trip_count: Type.Integer(),
  currency: Type.String(),
  note: Nullable(Type.String()),
  payment_reference: Nullable(Type.String()),
  created_by_user_id: Nullable(Type.String()),
  paid_by_user_id: Nullable(Type.String()),
  paid_at: Nullable(Timestamp),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const FinanceQuery = (types: readonly string[]) =>
  Strict({
    ...PageQueryProps,
    merchant_id: Type.Optional(Id),
    driver_id: Type.Optional(Id),
    type: Type.Optional(Type.Union(types.map((t) => Type.Literal(t)))),
    from: Type.Optional(Type.String({ format: 'date-time', description: 'inclusive' })),
    to: Type.Optional(Type.String({ format: 'date-time', description: 'exclusive' })),
  });

export const ChargeOut = Type.Object({
  id: Type.String(),
  charge_type: Type.String(),
  merchant_id: Type.String(),
  driver_id: Nullable(Type.String()),
  order_id: Nullable(Type.String()),
  trip_id: Nullable(Type.String()),
  amount: Money,
  currency: Type.String(),
  territory_id: Nullable(Type.String()),
  collection: Type.Union([Type.Literal('deducted'), Type.Literal('debt')], {
    description: '`deducted` from a platform-paid sale, or `debt` the merchant owes (merchant_direct, cash)',
  }),
  payment_destination: Nullable(Type.String()),
  created_at: Timestamp,
});

export const LedgerOut = Type.Object({
  source: Type.Union([Type.Literal('merchant_wallet'), Type.Literal('driver_settlement')]),
  id: Type.String(),
  type: Type.String(),
  merchant_id: Nullable(Type.String()),
  driver_id: Nullable(Type.String()),
  order_id: Nullable(Type.String()),
  trip_id: Nullable(Type.String()),
  settlement_id: Nullable(Type.String()),
  amount: Money,
  currency: Type.String(),
  territory_id: Nullable(Type.String()),
  note: Nullable(Type.String()),
  status: Nullable(Type.String()),
  created_at: Timestamp,
});

export const MerchantSettlementOut = Type.Object({
  id: Type.String(),
  merchant_id: Type.String(),
  period_start: Timestamp,
  period_end: Timestamp,
  status: Literals(MERCHANT_SETTLEMENT_OUTCOMES, "`skipped`: the payable was below the rule's minimum (nothing paid)"),
  gross_amount: Money,
  debt_netted: Money,
  payout_amount: Money,
  currency: Type.String(),
  created_at: Timestamp,
});

export const HeldCashOut = Type.Object({
  id: Type.String({ description: "the driver's collection entry" }),
  organization_id: Type.String(),
  order_id: Type.String(),
  trip_id: Nullable(Type.String()),
  driver_id: Type.String(),
  amount: Money,
  currency: Type.String(),
  collected_at: Timestamp,
});

export type WalletEntryType = (typeof WALLET_ENTRY_TYPES)[number];

export type ReceiptMethod = (typeof RECEIPT_METHODS)[number];

export const ReceiptOut = Type.Object({
  order_id: Type.String(),
  merchant_id: Type.String(),
  amount: Money,
  currency: Type.String(),
  method: Type.String(),
  reference: Nullable(Type.String()),
  note: Nullable(Type.String()),
  recorded_by_user_id: Nullable(Type.String()),
  received_at: Timestamp,
});

/** The payment statuses a receipt or a refund leaves an order in: commerce's statuses, the subset checked by the compiler. */
const RECEIVED_PAYMENT_STATUSES = ['paid', 'partially_refunded', 'refunded'] as const satisfies readonly PaymentStatus[];
export const PaymentStatusOut = Literals(RECEIVED_PAYMENT_STATUSES);

/** Commerce's who-collects-the-cash, described as the merchant's payment profile setting. */
export const CollectedBySchema = Type.Union(OrderCollectedBy.anyOf, {
  description:
    "Who takes the cash of this merchant's cash orders at the door: `driver` (default: the platform's driver collects it, the merchant's net is pending until the driver remits the cash, then available) " +
    'or `merchant` (his own staff collect it: no sale credit, the commission and delivery fee are his debt). Applies to orders placed afterwards.',
});

const ProfileFields = {
  merchant_id: Type.String(),
  direct_payment_enabled: Type.Boolean(),
  instructions: Nullable(Type.String()),
  qr_storage_object_id: Nullable(Type.String({ description: 'private storage object of purpose `merchant_payment_qr`' })),
  account_holder: Nullable(Type.String()),
  bank_name: Nullable(Type.String()),
  account_number_masked: Nullable(Type.String({ description: 'masked only, e.g. `****1234`; the full number is never stored' })),
  payment_reference_hint: Nullable(Type.String()),
  cash_collected_by: CollectedBySchema,
};

export const ProfileOut = Type.Object({
  ...ProfileFields,
  updated_by_user_id: Nullable(Type.String()),
  created_at: Nullable(Timestamp),
  updated_at: Nullable(Timestamp),
});

export const CustomerProfileOut = Type.Object({ ...ProfileFields, merchant_name: Type.String() });

export const ReviewStatusSchema = Literals(REVIEW_STATUSES);
export type ReviewStatus = Static<typeof ReviewStatusSchema>;

export const ReviewOut = Type.Object({
  id: Type.String(),
  territory_id: Nullable(Type.String()),
  order_id: Type.String(),
  merchant_id: Type.String(),
  customer_id: Type.String(),
  amount: Money,
  currency: Type.String(),
  proof_storage_object_id: Nullable(Type.String()),
  customer_reference: Nullable(Type.String()),
  status: ReviewStatusSchema,
  review_notes: Nullable(Type.String()),
  submissions: Type.Integer(),
  submitted_at: Timestamp,
  reviewed_by_user_id: Nullable(Type.String()),
  reviewed_at: Nullable(Timestamp),
  updated_at: Timestamp,
});

export const ReviewListQuery = Strict({ ...PageQueryProps, status: Type.Optional(ReviewStatusSchema), order_id: Type.Optional(Id) });

export const RuleFields = {
  merchant_id: Type.String(),
  enabled: Type.Boolean(),
  frequency: Literals(SETTLEMENT_FREQUENCIES),
  minimum_balance: Money,
  net_debt_first: Type.Boolean(),
  settled_through: Nullable(Timestamp),
  updated_by_user_id: Nullable(Type.String()),
  created_at: Nullable(Timestamp),
  updated_at: Nullable(Timestamp),
  wallet: WalletOut,
};

export const RuleOut = Type.Object(RuleFields);
