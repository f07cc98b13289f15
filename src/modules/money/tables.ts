import { sql } from 'drizzle-orm';
import {
  boolean,
  check,
  foreignKey,
  index,
  integer,
  numeric,
  pgTable,
  primaryKey,
  text,
  timestamp,
  unique,
  uniqueIndex,
} from 'drizzle-orm/pg-core';
import { merchant, driver } from '../logistics/tables.js';
import { COLLECTED_BY, PAYMENT_DESTINATIONS } from '../commerce/tables.js';
import {
  WALLET_ENTRY_TYPES,
  REVIEW_STATUSES,
  RECEIPT_METHODS,
  CASH_ENTRY_TYPES,
  REMITTANCE_METHODS,
  SETTLEMENT_FREQUENCIES,
  MERCHANT_SETTLEMENT_OUTCOMES,
  DRIVER_SETTLEMENT_STATUSES,
} from './schemas.js';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });
const moneyCol = (name: string) => numeric(name, { precision: 12, scale: 2 });

/** One per merchant (SPEC): how customers pay a merchant directly. The account number is stored masked only. */
export const merchantPaymentProfile = pgTable(
  'merchant_payment_profile',
  {
    organizationId: text('organization_id').notNull(),
    merchantId: text('merchant_id').notNull(),
    directPaymentEnabled: boolean('direct_payment_enabled').notNull().default(false),
    instructions: text('instructions'),
    qrStorageObjectId: text('qr_storage_object_id'),
    accountHolder: text('account_holder'),
    bankName: text('bank_name'),
    accountNumberMasked: text('account_number_masked'),
    paymentReferenceHint: text('payment_reference_hint'),
    /** Cash orders of this merchant: collected at the door by the platform's driver (default) or by the merchant's own staff. */
    cashCollectedBy: text('cash_collected_by', { enum: COLLECTED_BY }).notNull().default('driver'),
    updatedByUserId: text('updated_by_user_id'),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.merchantId] }),
    foreignKey({ columns: [t.organizationId, t.merchantId], foreignColumns: [merchant.organizationId, merchant.id] }),
    check(
      'merchant_payment_profile_masked_ck',
      sql`${t.accountNumberMasked} IS NULL OR ${t.accountNumberMasked} ~ '^\\*{4}[A-Za-z0-9]{1,4}$'`,
    ),
  ],
);

/** One review per order (SPEC); commerce owns the order, so order_id is a reference without a foreign key. */
export const merchantPaymentReview = pgTable(
  'merchant_payment_review',
  {
    organizationId: text('organization_id').notNull(),
    id: text('id').notNull(),
    territoryId: text('territory_id'),
    orderId: text('order_id').notNull(),
    merchantId: text('merchant_id').notNull(),
    customerId: text('customer_id').notNull(),
    amount: moneyCol('amount').notNull(),
    currency: text('currency').notNull().default('BOB'),
    proofStorageObjectId: text('proof_storage_object_id'),
    customerReference: text('customer_reference'),
    status: text('status', { enum: REVIEW_STATUSES }).notNull().default('pending'),
    reviewNotes: text('review_notes'),
    /** How many times the customer submitted a proof (1 + re-submissions after a rejection). */
    submissions: integer('submissions').notNull().default(1),
    submittedAt: ts('submitted_at').notNull().defaultNow(),
    reviewedByUserId: text('reviewed_by_user_id'),
    reviewedAt: ts('reviewed_at'),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.id] }),
    unique('merchant_payment_review_order_uq').on(t.organizationId, t.orderId),
    foreignKey({ columns: [t.organizationId, t.merchantId], foreignColumns: [merchant.organizationId, merchant.id] }),
    index('merchant_payment_review_merchant_idx').on(t.organizationId, t.merchantId, t.status, t.id),
    index('merchant_payment_review_status_idx').on(t.organizationId, t.status, t.id),
    check('merchant_payment_review_amount_ck', sql`${t.amount} >= 0`),
  ],
);

/**
 * The merchant wallet: append-only (db/tenancy.sql revokes UPDATE/DELETE from the tenant role).
 * The balance is always SUM(amount); nothing stores it. `payment_destination` marks which
 * commission / delivery-fee entries are merchant debt (merchant_direct, cash).
 */
export const merchantWalletEntry = pgTable(
  'merchant_wallet_entry',
  {
    organizationId: text('organization_id').notNull(),
    id: text('id').notNull(),
    merchantId: text('merchant_id').notNull(),
    orderId: text('order_id'),
    tripId: text('trip_id'),
    /** The trip's driver when known (finance filters by driver). */
    driverId: text('driver_id'),
    settlementId: text('settlement_id'),
    entryType: text('entry_type', { enum: WALLET_ENTRY_TYPES }).notNull(),
    paymentDestination: text('payment_destination', { enum: PAYMENT_DESTINATIONS }),
    /** A cash order's entries: who collected the cash (driver: the platform holds it once remitted; merchant: he holds it, commission and fee are debt). */
    collectedBy: text('collected_by', { enum: COLLECTED_BY }),
    amount: moneyCol('amount').notNull(),
    currency: text('currency').notNull().default('BOB'),
    territoryId: text('territory_id'),
    note: text('note'),
    createdByUserId: text('created_by_user_id'),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.id] }),
    foreignKey({ columns: [t.organizationId, t.merchantId], foreignColumns: [merchant.organizationId, merchant.id] }),
    index('merchant_wallet_entry_merchant_idx').on(t.organizationId, t.merchantId, t.createdAt, t.id),
    index('merchant_wallet_entry_type_idx').on(t.organizationId, t.entryType, t.id),
    index('merchant_wallet_entry_order_idx').on(t.organizationId, t.orderId),
    uniqueIndex('merchant_wallet_entry_fee_order_uq')
      .on(t.organizationId, t.orderId)
      .where(sql`entry_type = 'delivery_fee_debit'`),
    uniqueIndex('merchant_wallet_entry_fee_trip_uq')
      .on(t.organizationId, t.tripId)
      .where(sql`entry_type = 'delivery_fee_debit'`),
    // The sign of each entry type is fixed: credits to the merchant are positive, charges negative.
    check(
      'merchant_wallet_entry_sign_ck',
      sql`(entry_type IN ('sale_credit', 'merchant_debt_payment') AND amount >= 0)
        OR (entry_type IN ('platform_commission', 'delivery_fee_debit', 'refund', 'settlement_debit') AND amount <= 0)
        OR entry_type = 'adjustment'`,
    ),
  ],
);

/** One row per delivered order that money has posted: the idempotency anchor of orderDelivered. */
export const merchantOrderPosting = pgTable(
  'merchant_order_posting',
  {
    organizationId: text('organization_id').notNull(),
    orderId: text('order_id').notNull(),
    merchantId: text('merchant_id').notNull(),
    paymentDestination: text('payment_destination', { enum: PAYMENT_DESTINATIONS }).notNull(),
    /** Sum of refund entries so far (refunds never exceed the order total). */
    refundedTotal: moneyCol('refunded_total').notNull().default('0'),
    orderTotal: moneyCol('order_total').notNull(),
    postedAt: ts('posted_at').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.orderId] }),
    check('merchant_order_posting_refund_ck', sql`${t.refundedTotal} >= 0 AND ${t.refundedTotal} <= ${t.orderTotal}`),
  ],
);

export const merchantSettlementRule = pgTable(
  'merchant_settlement_rule',
  {
    organizationId: text('organization_id').notNull(),
    merchantId: text('merchant_id').notNull(),
    enabled: boolean('enabled').notNull().default(false),
    frequency: text('frequency', { enum: SETTLEMENT_FREQUENCIES }).notNull().default('weekly'),
    minimumBalance: moneyCol('minimum_balance').notNull().default('0'),
    netDebtFirst: boolean('net_debt_first').notNull().default(true),
    /** End of the last period the worker handled (settled or skipped). */
    settledThrough: ts('settled_through'),
    updatedByUserId: text('updated_by_user_id'),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.merchantId] }),
    foreignKey({ columns: [t.organizationId, t.merchantId], foreignColumns: [merchant.organizationId, merchant.id] }),
    index('merchant_settlement_rule_due_idx').on(t.enabled, t.settledThrough),
    check('merchant_settlement_rule_min_ck', sql`${t.minimumBalance} >= 0`),
  ],
);

/** One per merchant and period (exactly once), written by the settlement worker. */
export const merchantSettlement = pgTable(
  'merchant_settlement',
  {
    organizationId: text('organization_id').notNull(),
    id: text('id').notNull(),
    merchantId: text('merchant_id').notNull(),
    periodStart: ts('period_start').notNull(),
    periodEnd: ts('period_end').notNull(),
    status: text('status', { enum: MERCHANT_SETTLEMENT_OUTCOMES }).notNull(),
    grossAmount: moneyCol('gross_amount').notNull(),
    debtNetted: moneyCol('debt_netted').notNull().default('0'),
    payoutAmount: moneyCol('payout_amount').notNull(),
    currency: text('currency').notNull().default('BOB'),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.id] }),
    unique('merchant_settlement_period_uq').on(t.organizationId, t.merchantId, t.periodStart),
    foreignKey({ columns: [t.organizationId, t.merchantId], foreignColumns: [merchant.organizationId, merchant.id] }),
  ],
);

export const driverSettlement = pgTable(
  'driver_settlement',
  {
    organizationId: text('organization_id').notNull(),
    id: text('id').notNull(),
    driverId: text('driver_id').notNull(),
    status: text('status', { enum: DRIVER_SETTLEMENT_STATUSES }).notNull().default('pending'),
    cutoffAt: ts('cutoff_at').notNull(),
    /** The earnings settled (sum of the items). */
    amount: moneyCol('amount').notNull(),
    /** Cash in hand netted against the earnings (a `cash_remitted` entry of method `settlement`): min(earnings, cash in hand). */
    cashNetted: moneyCol('cash_netted').notNull().default('0'),
    /** What the platform pays the driver: amount − cash_netted. */
    payoutAmount: moneyCol('payout_amount').notNull().default('0'),
    /** Cash the driver still holds after the netting (he owes it to the platform; 0 when his earnings covered it). */
    driverOwes: moneyCol('driver_owes').notNull().default('0'),
    tripCount: integer('trip_count').notNull(),
    currency: text('currency').notNull().default('BOB'),
    note: text('note'),
    paymentReference: text('payment_reference'),
    createdByUserId: text('created_by_user_id'),
    paidByUserId: text('paid_by_user_id'),
    paidAt: ts('paid_at'),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.id] }),
    foreignKey({ columns: [t.organizationId, t.driverId], foreignColumns: [driver.organizationId, driver.id] }),
    index('driver_settlement_driver_idx').on(t.organizationId, t.driverId, t.id),
    check('driver_settlement_amount_ck', sql`${t.amount} >= 0`),
    check('driver_settlement_cash_ck', sql`${t.cashNetted} >= 0 AND ${t.payoutAmount} >= 0 AND ${t.driverOwes} >= 0`),
  ],
);

/** A trip's earning is settled at most once: the primary key is the trip. */
export const driverSettlementItem = pgTable(
  'driver_settlement_item',
  {
    organizationId: text('organization_id').notNull(),
    tripId: text('trip_id').notNull(),
    settlementId: text('settlement_id').notNull(),
    amount: moneyCol('amount').notNull(),
    completedAt: ts('completed_at').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.tripId] }),
    foreignKey({ columns: [t.organizationId, t.settlementId], foreignColumns: [driverSettlement.organizationId, driverSettlement.id] }),
    index('driver_settlement_item_settlement_idx').on(t.organizationId, t.settlementId),
  ],
);

/**
 * The platform recorded a platform-destination order's payment as received (the payment connector is not
 * active): an administrator records the money the platform collected, e.g. the cash the driver brought back
 * or a bank transfer. Until a receipt exists, the order's wallet entries are `pending`, never paid out.
 */
export const merchantPaymentReceipt = pgTable(
  'merchant_payment_receipt',
  {
    organizationId: text('organization_id').notNull(),
    orderId: text('order_id').notNull(),
    merchantId: text('merchant_id').notNull(),
    amount: moneyCol('amount').notNull(),
    currency: text('currency').notNull(),
    method: text('method', { enum: RECEIPT_METHODS }).notNull(),
    reference: text('reference'),
    note: text('note'),
    recordedByUserId: text('recorded_by_user_id'),
    receivedAt: ts('received_at').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.orderId] }),
    index('merchant_payment_receipt_merchant_idx').on(t.organizationId, t.merchantId),
    check('merchant_payment_receipt_amount_ck', sql`${t.amount} > 0`),
  ],
);

/**
 * The driver's cash ledger (cash on delivery): append-only (db/tenancy.sql revokes UPDATE/DELETE from the tenant and
 * worker roles), every entry audited. Cash in hand is always SUM(amount); nothing stores it.
 * - cash_collected (+): the cash a driver recorded at the door of a cash order he collects (one per trip);
 * - cash_remitted (−): cash handed in to a cashier (method, reference, optional proof) or netted by a driver settlement;
 * - cash_adjustment (±): an administrator's correction with its reason.
 */
export const driverCashEntry = pgTable(
  'driver_cash_entry',
  {
    organizationId: text('organization_id').notNull(),
    id: text('id').notNull(),
    driverId: text('driver_id').notNull(),
    entryType: text('entry_type', { enum: CASH_ENTRY_TYPES }).notNull(),
    amount: moneyCol('amount').notNull(),
    currency: text('currency').notNull(),
    orderId: text('order_id'),
    tripId: text('trip_id'),
    merchantId: text('merchant_id'),
    /** The trip's territory (collections) or the driver's first territory (remittances, adjustments): reconciliation by territory. */
    territoryId: text('territory_id'),
    /** cash_collected: the amount the order asked for, when the driver collected a different amount (a discrepancy for review). */
    expectedAmount: moneyCol('expected_amount'),
    method: text('method', { enum: REMITTANCE_METHODS }),
    reference: text('reference'),
    proofStorageObjectId: text('proof_storage_object_id'),
    settlementId: text('settlement_id'),
    note: text('note'),
    createdByUserId: text('created_by_user_id'),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.id] }),
    foreignKey({ columns: [t.organizationId, t.driverId], foreignColumns: [driver.organizationId, driver.id] }),
    index('driver_cash_entry_driver_idx').on(t.organizationId, t.driverId, t.createdAt, t.id),
    index('driver_cash_entry_territory_idx').on(t.organizationId, t.territoryId, t.createdAt),
    uniqueIndex('driver_cash_entry_trip_uq')
      .on(t.organizationId, t.tripId)
      .where(sql`entry_type = 'cash_collected'`),
    check(
      'driver_cash_entry_sign_ck',
      sql`(entry_type = 'cash_collected' AND amount >= 0) OR (entry_type = 'cash_remitted' AND amount < 0) OR (entry_type = 'cash_adjustment' AND amount <> 0)`,
    ),
  ],
);
