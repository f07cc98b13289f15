import type { Actor } from '../../platform/auth.js';
import { withDeps, type Api, type AppContext } from '../../platform/context.js';
import type { Tx } from '../../platform/db/index.js';
import type { CollectedBy, ExpressMoneyFacts, OrderMoneyFacts, PaymentDestination } from '../commerce/index.js';
import type { ObjectReadGrant } from '../storage/index.js';
import { scopeOf } from '../../platform/scope.js';
import type { MoneyContext } from './context.js';
import { debtRoutes } from './routes/debt.js';
import { driverSettlementRoutes } from './routes/driver-settlements.js';
import { SettlementOut } from './schemas.js';
import { financeRoutes } from './routes/finance.js';
import { merchantMoneyRoutes } from './routes/merchant-money.js';
import { walletSummary, type WalletSummary } from './service/ledger.js';
import { findSettlement, pendingDriverSettlements } from './repo/driver-settlements.js';
import { directPaymentEnabled, isEnabledProfileQr, paymentOptions } from './repo/profiles.js';
import { findReview, pendingReviewCount, reviewCountsByStatus, reviewsWithProof } from './repo/reviews.js';
import { debtTotals } from './repo/wallet.js';
import { orderPaymentRoutes } from './routes/order-payments.js';
import { paymentProfileRoutes } from './routes/payment-profile.js';
import { createReviewService, type ReviewFilter, type ReviewRow } from './service/reviews.js';
import { ReviewOut } from './schemas.js';
import { reviewRoutes } from './routes/reviews.js';
export {
  CashEntryOut,
  ChargeOut,
  EntryOut,
  HeldCashOut,
  LedgerOut,
  MerchantSettlementOut,
  ReviewOut,
  ReviewStatusSchema,
  SettlementOut,
  WalletOut,
} from './schemas.js';
export type { ReviewFilter, ReviewRow } from './service/reviews.js';
import { settlementRuleRoutes } from './routes/settlement-rules.js';
import { merchantSettlementWorker, runMerchantSettlements } from './worker.js';
import { createWalletService } from './service/wallet.js';
import { createCashService, type CashService } from './service/cash.js';
import { cashRoutes } from './routes/cash.js';

/** What money does when orders and express deliveries move (commerce and logistics fire them; the composition root subscribes). */
export interface MoneyHooks {
  /** The order was delivered: wallet entries per payment destination (idempotent per order). */
  orderDelivered(tx: Tx, actor: Actor, facts: OrderMoneyFacts): Promise<void>;
  /** The order was cancelled: a pending payment review becomes `cancelled`; the payment status follows (pending_review | authorized → failed, received → refunded). */
  orderCancelled(tx: Tx, actor: Actor, facts: OrderMoneyFacts): Promise<void>;
  /** The payment destinations a merchant accepts now: platform and cash always; merchant_direct only with direct payment enabled in his profile. */
  paymentDestinations(tx: Tx, merchantId: string): Promise<PaymentDestination[]>;
  /** The destinations (as paymentDestinations) and who collects a cash order of this merchant, in one read. */
  paymentOptions(tx: Tx, merchantId: string): Promise<{ destinations: PaymentDestination[]; cashCollectedBy: CollectedBy }>;
  /** A delivery_express trip was completed: its delivery-fee entry (idempotent per trip). */
  expressDelivered(tx: Tx, actor: Actor, facts: ExpressMoneyFacts): Promise<void>;
  /**
   * A delivery failed at the recipient's door: the merchant pays the attempt's delivery fee (idempotent per order and
   * trip), no sale is credited, and an order's payment status follows as for a cancellation.
   */
  deliveryFailed(tx: Tx, actor: Actor, facts: { order: OrderMoneyFacts } | { express: ExpressMoneyFacts }): Promise<void>;
}

/** What other modules may call besides the MoneyHooks (every function takes the caller's transaction). */
export interface MoneyApi extends MoneyHooks {
  /** The derived wallet of a merchant (balance, debt, credit, payable). */
  walletSummary(tx: Tx, merchantId: string): Promise<WalletSummary>;
  /** The payment reviews the actor may see (sub-administrators: their territories), newest first; own transaction. */
  listPaymentReviews(actor: Actor, q: ReviewFilter): Promise<{ data: ReviewRow[]; next_cursor: string | null }>;
  /** Payment reviews per status in the territories (null = organization). */
  paymentReviewCounts(tx: Tx, territoryIds: string[] | null): Promise<Record<string, number>>;
  /** Cash in hand per driver (cash on delivery); drivers holding nothing are absent. */
  cashInHandOf(tx: Tx, driverIds: string[]): Promise<Map<string, string>>;
  /** Cash reconciliation rows per driver and day (own transaction; sub-administrators: their territories). */
  cashReconciliation: CashService['reconciliation'];
}

export function createMoneyModule(base: AppContext, deps: MoneyContext['deps']) {
  const ctx: MoneyContext = withDeps(base, deps);
  // Who else may download the files money links: the merchant of a review reads its proof; anyone in the
  // organization reads the QR of a profile with direct payment enabled (customers need it to pay).
  const readGrant: ObjectReadGrant = async (tx, actor, o) => {
    if (o.purpose === 'payment_proof') {
      // Whoever may decide the review reads its proof: the merchant, and a sub-administrator with payments_review_decide in its territory.
      for (const r of await reviewsWithProof(tx, o.id)) {
        if (actor.kind === 'subadmin') {
          const s = actor.subadmin;
          if (s?.active && s.permissions.payments_review_decide && r.territoryId && s.territoryIds.includes(r.territoryId)) return true;
        } else if ((await ctx.deps.logistics.getMerchant(tx, r.merchantId))?.owner_user_id === actor.userId) return true;
      }
    }
    if (o.purpose === 'merchant_payment_qr') {
      return isEnabledProfileQr(tx, o.id);
    }
    return false;
  };
  const reviews = createReviewService(ctx);
  const cash = createCashService(ctx);
  const wallet = createWalletService(ctx, reviews.cancelForOrder, cash);
  const api: MoneyApi = {
    orderDelivered: wallet.orderDelivered,
    orderCancelled: wallet.orderCancelled,
    expressDelivered: wallet.expressDelivered,
    deliveryFailed: wallet.deliveryFailed,
    async paymentDestinations(tx, merchantId) {
      return (await directPaymentEnabled(tx, merchantId)) ? ['platform', 'merchant_direct', 'cash'] : ['platform', 'cash'];
    },
    async paymentOptions(tx, merchantId) {
      const o = await paymentOptions(tx, merchantId);
      return {
        destinations: o.direct ? ['platform', 'merchant_direct', 'cash'] : ['platform', 'cash'],
        cashCollectedBy: o.cashCollectedBy,
      };
    },
    walletSummary: (tx, merchantId) => walletSummary(ctx, tx, merchantId),
    listPaymentReviews: reviews.list,
    paymentReviewCounts: (tx, territoryIds) => reviewCountsByStatus(tx, territoryIds),
    cashInHandOf: cash.cashInHandOf,
    cashReconciliation: cash.reconciliation,
  };
  ctx.workers.push(merchantSettlementWorker(ctx));
  ctx.dashboard.set('money', async (tx, actor) => {
    const scope = scopeOf(actor);
    const pendingReviews = await pendingReviewCount(tx, scope);
    const debt = await debtTotals(tx, scope);
    const pendingDriver = await pendingDriverSettlements(tx, scope);
    return {
      pending_payment_reviews: pendingReviews,
      total_merchant_debt: debt.total,
      merchants_in_debt: debt.merchants,
      pending_driver_settlements: pendingDriver.n,
      pending_driver_settlements_total: pendingDriver.total,
    };
  });
  return {
    name: 'money',
    api,
    readGrant,
    /** Payment reviews and driver settlements as their GETs return them (outbound webhooks send them with their events). */
    webhookResources: {
      payment_review: { schema: ReviewOut, read: (tx: Tx, id: string) => findReview(tx, id) },
      driver_settlement: { schema: SettlementOut, read: (tx: Tx, id: string) => findSettlement(tx, id) },
    },
    /** One round of the merchant settlement worker at a given time (tests and the least-privilege walk drive it). */
    runSettlements: (now?: Date, batch?: number) => runMerchantSettlements(ctx, now, batch),
    routes: (app: Api) => moneyRoutes(app, ctx, cash),
  };
}

function moneyRoutes(app: Api, ctx: MoneyContext, cash: CashService) {
  paymentProfileRoutes(app, ctx);
  reviewRoutes(app, ctx);
  debtRoutes(app, ctx);
  settlementRuleRoutes(app, ctx);
  driverSettlementRoutes(app, ctx, cash);
  cashRoutes(app, ctx, cash);
  financeRoutes(app, ctx);
  merchantMoneyRoutes(app, ctx);
  orderPaymentRoutes(app, ctx);
}
