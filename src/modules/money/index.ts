import type { Actor } from '../../platform/auth.js';
import { withDeps, type Api, type AppContext, type ModuleContext } from '../../platform/context.js';
import type { Tx } from '../../platform/db/index.js';
import type { MoneyHooks, OrderPayments } from '../../platform/order-contracts.js';
import type { ObjectLinker, ObjectReadGrant } from '../../platform/storage-links.js';
import type { LogisticsApi } from '../logistics/index.js';
import { debtRoutes } from './debt.js';
import { driverSettlementRoutes } from './driver-settlements.js';
import { financeRoutes } from './finance.js';
import { DEBT_ENTRY_SQL, scopeOf, walletSummary, type WalletSummary } from './model.js';
import { orderPaymentRoutes } from './order-payments.js';
import { paymentProfileRoutes } from './payment-profile.js';
import { createReviewService, reviewRoutes, type ReviewFilter, type ReviewRow } from './reviews.js';
export { ReviewOut } from './reviews.js';
export type { ReviewFilter, ReviewRow } from './reviews.js';
import { settlementRuleRoutes } from './settlement-rules.js';
import { merchantSettlementWorker } from './settlement-worker.js';
import { createWalletService } from './wallet.js';

/** What other modules may call besides the MoneyHooks (every function takes the caller's transaction). */
export interface MoneyApi extends MoneyHooks {
  /** The derived wallet of a merchant (balance, debt, credit, payable). */
  walletSummary(tx: Tx, merchantId: string): Promise<WalletSummary>;
  /** The payment reviews the actor may see (sub-administrators: their territories), newest first; own transaction. */
  listPaymentReviews(actor: Actor, q: ReviewFilter): Promise<{ data: ReviewRow[]; next_cursor: string | null }>;
  /** Payment reviews per status in the territories (null = organization). */
  paymentReviewCounts(tx: Tx, territoryIds: string[] | null): Promise<Record<string, number>>;
}

export type MoneyContext = ModuleContext<{ logistics: LogisticsApi; orders: OrderPayments; storage: ObjectLinker }>;

export function createMoneyModule(base: AppContext, deps: MoneyContext['deps']) {
  const ctx: MoneyContext = withDeps(base, deps);
  // Who else may download the files money links: the merchant of a review reads its proof; anyone in the
  // organization reads the QR of a profile with direct payment enabled (customers need it to pay).
  const readGrant: ObjectReadGrant = async (tx, actor, o) => {
    if (o.purpose === 'payment_proof') {
      // Whoever may decide the review reads its proof: the merchant, and a sub-administrator with payments_review_decide in its territory.
      const { rows } = await tx.query<{ merchant_id: string; territory_id: string | null }>(
        'SELECT merchant_id, territory_id FROM merchant_payment_review WHERE proof_storage_object_id = $1',
        [o.id],
      );
      for (const r of rows) {
        if (actor.kind === 'subadmin') {
          const s = actor.subadmin;
          if (s?.active && s.permissions.payments_review_decide && r.territory_id && s.territoryIds.includes(r.territory_id)) return true;
        } else if ((await ctx.deps.logistics.getMerchant(tx, r.merchant_id))?.owner_user_id === actor.userId) return true;
      }
    }
    if (o.purpose === 'merchant_payment_qr') {
      const { rowCount } = await tx.query('SELECT 1 FROM merchant_payment_profile WHERE qr_storage_object_id = $1 AND direct_payment_enabled', [o.id]);
      return rowCount > 0;
    }
    return false;
  };
  const reviews = createReviewService(ctx);
  const wallet = createWalletService(ctx, reviews.cancelForOrder);
  const api: MoneyApi = {
    orderDelivered: wallet.orderDelivered,
    orderCancelled: wallet.orderCancelled,
    expressDelivered: wallet.expressDelivered,
    deliveryFailed: wallet.deliveryFailed,
    async paymentDestinations(tx, merchantId) {
      const { rowCount } = await tx.query('SELECT 1 FROM merchant_payment_profile WHERE merchant_id = $1 AND direct_payment_enabled', [merchantId]);
      return rowCount ? ['platform', 'merchant_direct', 'cash'] : ['platform', 'cash'];
    },
    walletSummary: (tx, merchantId) => walletSummary(tx, merchantId),
    listPaymentReviews: reviews.list,
    async paymentReviewCounts(tx, territoryIds) {
      const { rows } = await tx.query<{ status: string; n: number }>(
        'SELECT status, count(*)::int AS n FROM merchant_payment_review WHERE ($1::text[] IS NULL OR territory_id = ANY($1)) GROUP BY status',
        [territoryIds],
      );
      return Object.fromEntries(rows.map((r) => [r.status, r.n]));
    },
  };
  ctx.workers.push(merchantSettlementWorker(ctx));
  ctx.dashboard.set('money', async (tx, actor) => {
    const scope = scopeOf(actor);
    const reviews = await tx.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM merchant_payment_review WHERE status = 'pending' AND ($1::text[] IS NULL OR territory_id = ANY($1))`,
      [scope],
    );
    // Debt per merchant (never below zero: one merchant's credit does not hide another's debt).
    const debt = await tx.query<{ total: string; merchants: number }>(
      `SELECT COALESCE(sum(d), 0)::numeric(14,2) AS total, count(*) FILTER (WHERE d > 0)::int AS merchants FROM (
         SELECT GREATEST(0, -sum(amount)) AS d FROM merchant_wallet_entry
          WHERE (${DEBT_ENTRY_SQL} OR entry_type = 'merchant_debt_payment') AND ($1::text[] IS NULL OR territory_id = ANY($1))
          GROUP BY merchant_id) x`,
      [scope],
    );
    const pendingDriver = await tx.query<{ total: string; n: number }>(
      `SELECT COALESCE(sum(amount), 0)::numeric(14,2) AS total, count(*)::int AS n FROM driver_settlement WHERE status = 'pending' AND $1::text[] IS NULL`,
      [scope],
    );
    return {
      pending_payment_reviews: reviews.rows[0].n,
      total_merchant_debt: debt.rows[0].total,
      merchants_in_debt: debt.rows[0].merchants,
      pending_driver_settlements: pendingDriver.rows[0].n,
      pending_driver_settlements_total: pendingDriver.rows[0].total,
    };
  });
  return { name: 'money', api, readGrant, routes: (app: Api) => moneyRoutes(app, ctx) };
}

function moneyRoutes(app: Api, ctx: MoneyContext) {
  paymentProfileRoutes(app, ctx);
  reviewRoutes(app, ctx);
  debtRoutes(app, ctx);
  settlementRuleRoutes(app, ctx);
  driverSettlementRoutes(app, ctx);
  financeRoutes(app, ctx);
  orderPaymentRoutes(app, ctx);
}
