import type { Actor } from '../../src/platform/auth.js';
import type { Tx } from '../../src/platform/db/index.js';
import { newId } from '../../src/platform/ids.js';
import { formatMoney, money } from '../../src/platform/money.js';
import type { OrderMoneyFacts, OrderPayments, PaymentDestination, PaymentStatus } from '../../src/platform/order-contracts.js';
import type { TestApp } from '../helpers.js';

/**
 * STAND-IN FOR COMMERCE (tests only). Commerce implements `OrderPayments` as `ctx.services.orders` on its own
 * branch; until it is merged these tests keep orders in a test-only table `test_orders`, created here with
 * plain SQL under the same tenancy rules (RLS on organization_id). The integrator switches these tests to real orders.
 */
export async function installOrderStandIn(t: TestApp): Promise<void> {
  await t.db.withSystem(async (tx) => {
    await tx.exec(`
      CREATE TABLE IF NOT EXISTS test_orders (
        organization_id text NOT NULL, id text NOT NULL, merchant_id text NOT NULL, customer_user_id text NOT NULL,
        trip_id text, territory_id text, payment_destination text NOT NULL, payment_status text NOT NULL DEFAULT 'pending',
        payment_review_id text, status text NOT NULL DEFAULT 'confirmed', subtotal numeric(12,2) NOT NULL,
        discount_total numeric(12,2) NOT NULL DEFAULT 0, delivery_fee numeric(12,2) NOT NULL, total numeric(12,2) NOT NULL,
        currency text NOT NULL DEFAULT 'BOB', PRIMARY KEY (organization_id, id));
      ALTER TABLE test_orders ENABLE ROW LEVEL SECURITY;
      ALTER TABLE test_orders FORCE ROW LEVEL SECURITY;
      DO $$ BEGIN
        IF NOT EXISTS (SELECT 1 FROM pg_policies WHERE tablename = 'test_orders') THEN
          CREATE POLICY tenant_isolation ON test_orders USING (organization_id = current_setting('app.organization_id', true))
            WITH CHECK (organization_id = current_setting('app.organization_id', true));
        END IF;
      END $$;
      GRANT SELECT, INSERT, UPDATE ON test_orders TO app_tenant;`);
  });
  const orders: OrderPayments = {
    async getOrderFacts(tx: Tx, orderId: string): Promise<OrderMoneyFacts | null> {
      const { rows } = await tx.query('SELECT * FROM test_orders WHERE id = $1', [orderId]);
      const o = rows[0];
      if (!o) return null;
      return {
        orderId: o.id,
        merchantId: o.merchant_id,
        customerUserId: o.customer_user_id,
        tripId: o.trip_id,
        territoryId: o.territory_id,
        paymentDestination: o.payment_destination,
        paymentStatus: o.payment_status,
        status: o.status,
        subtotal: o.subtotal,
        discountTotal: o.discount_total,
        deliveryFee: o.delivery_fee,
        total: o.total,
        currency: o.currency,
      };
    },
    async setPaymentStatus(tx: Tx, orderId: string, status: PaymentStatus, reviewId?: string | null) {
      await tx.query('UPDATE test_orders SET payment_status = $2, payment_review_id = COALESCE($3, payment_review_id) WHERE id = $1', [orderId, status, reviewId ?? null]);
    },
  };
  t.app.ctx.services.orders = orders;
}

export interface NewOrder {
  merchantId: string;
  customerUserId: string;
  destination: PaymentDestination;
  subtotal: string;
  discount?: string;
  fee: string;
  tripId?: string | null;
  territoryId?: string | null;
  organizationId?: string;
  paymentStatus?: PaymentStatus;
}

/** An order row of the stand-in (total = subtotal − discount + delivery fee, as commerce computes it). */
export async function newOrder(t: TestApp, o: NewOrder): Promise<string> {
  const id = newId();
  const total = formatMoney(money(o.subtotal).minus(o.discount ?? '0').plus(o.fee));
  await t.db.withSystem((tx) =>
    tx.query(
      `INSERT INTO test_orders (organization_id, id, merchant_id, customer_user_id, trip_id, territory_id, payment_destination, payment_status, subtotal, discount_total, delivery_fee, total)
       VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12)`,
      [o.organizationId ?? t.demo.organizationId, id, o.merchantId, o.customerUserId, o.tripId ?? null, o.territoryId ?? null, o.destination, o.paymentStatus ?? 'pending', o.subtotal, o.discount ?? '0', o.fee, total],
    ),
  );
  return id;
}

export async function orderRow(t: TestApp, id: string) {
  return (await t.db.withSystem((tx) => tx.query('SELECT * FROM test_orders WHERE id = $1', [id]))).rows[0];
}

export const adminActor = (t: TestApp, organizationId = t.demo.organizationId, userId = t.demo.users.admin): Actor => ({
  userId,
  organizationId,
  role: 'administrator',
  kind: 'administrator',
  sessionId: 'test',
  requestId: 'test',
  subadmin: null,
});

/** What commerce does at delivery: calls MoneyHooks.orderDelivered in its transaction. */
export async function deliver(t: TestApp, orderId: string, organizationId = t.demo.organizationId) {
  const actor = adminActor(t, organizationId);
  await t.db.withTenant({ organizationId, userId: actor.userId }, async (tx) => {
    const facts = (await t.app.ctx.services.orders!.getOrderFacts(tx, orderId))!;
    await t.app.ctx.services.money!.orderDelivered(tx, actor, facts);
  });
}

export async function demoMerchant(t: TestApp): Promise<{ id: string; territory_id: string | null; commission_percent: string }> {
  const { rows } = await t.db.withSystem((tx) => tx.query('SELECT id, territory_id, commission_percent FROM merchant WHERE owner_user_id = $1', [t.demo.users.merchant]));
  return rows[0];
}

export async function walletEntries(t: TestApp, where: { orderId?: string; merchantId?: string }) {
  const { rows } = await t.db.withSystem((tx) =>
    tx.query('SELECT entry_type, amount::text AS amount FROM merchant_wallet_entry WHERE ($1::text IS NULL OR order_id = $1) AND ($2::text IS NULL OR merchant_id = $2) ORDER BY created_at, id', [
      where.orderId ?? null,
      where.merchantId ?? null,
    ]),
  );
  return rows as { entry_type: string; amount: string }[];
}

export async function dbBalance(t: TestApp, merchantId: string): Promise<string> {
  const { rows } = await t.db.withSystem((tx) => tx.query('SELECT COALESCE(sum(amount), 0)::numeric(14,2)::text AS b FROM merchant_wallet_entry WHERE merchant_id = $1', [merchantId]));
  return rows[0].b;
}
