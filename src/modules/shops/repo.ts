import { and, desc, eq, isNull, lt, sql } from 'drizzle-orm';
import type { Tx } from '../../platform/db/index.js';
import type { SecretColumn } from '../../platform/secrets.js';
import { shopConnection, shopDelivery, shopOrder } from './tables.js';

/** Every SQL statement of the shops module. Functions take the transaction first. */

export type ConnectionRecord = typeof shopConnection.$inferSelect;
export type ShopOrderRecord = typeof shopOrder.$inferSelect;
export type NewShopOrder = typeof shopOrder.$inferInsert;

/** The shops' webhook signing secrets, encrypted, bound to their connection. */
export const SHOP_SECRET_COLUMN: SecretColumn = {
  table: 'shop_connection',
  column: 'secret',
  keys: ['organization_id', 'id'],
  label: 'shop webhook secret',
};

// ---- connections ----

export async function insertConnection(tx: Tx, row: typeof shopConnection.$inferInsert): Promise<ConnectionRecord> {
  const [out] = await tx.orm.insert(shopConnection).values(row).returning();
  return out;
}

/** A live connection of the tenant (RLS), or null. */
export async function findConnection(tx: Tx, id: string): Promise<ConnectionRecord | null> {
  const [row] = await tx.orm
    .select()
    .from(shopConnection)
    .where(and(eq(shopConnection.id, id), isNull(shopConnection.deletedAt)));
  return row ?? null;
}

/** A connection, deleted or not (a shop order's pickup branch). */
export async function findConnectionRow(tx: Tx, id: string): Promise<ConnectionRecord | null> {
  const [row] = await tx.orm.select().from(shopConnection).where(eq(shopConnection.id, id));
  return row ?? null;
}

/** The live connection behind a webhook URL, whichever organization holds it (system transaction). */
export async function findConnectionForWebhook(tx: Tx, id: string): Promise<ConnectionRecord | null> {
  return findConnection(tx, id);
}

export async function listConnections(
  tx: Tx,
  f: { merchantId: string | null; after: string | null; limit: number },
): Promise<ConnectionRecord[]> {
  return tx.orm
    .select()
    .from(shopConnection)
    .where(
      and(
        isNull(shopConnection.deletedAt),
        f.merchantId ? eq(shopConnection.merchantId, f.merchantId) : undefined,
        f.after ? lt(shopConnection.id, f.after) : undefined,
      ),
    )
    .orderBy(desc(shopConnection.id))
    .limit(f.limit);
}

/** Deletes a connection: its secret is dropped, its row stays for its shop orders. */
export async function deleteConnection(tx: Tx, id: string): Promise<void> {
  await tx.orm
    .update(shopConnection)
    .set({ deletedAt: sql`now()`, secret: null })
    .where(and(eq(shopConnection.id, id), isNull(shopConnection.deletedAt)));
}

// ---- deliveries ----

/** Records a delivery id; false when it was already recorded (a concurrent same id waits for the first to commit). */
export async function claimDelivery(
  tx: Tx,
  d: { organizationId: string; connectionId: string; deliveryId: string; topic: string; shopOrderId: string | null },
): Promise<boolean> {
  const rows = await tx.orm
    .insert(shopDelivery)
    .values({ ...d, outcome: 'received' })
    .onConflictDoNothing()
    .returning({ id: shopDelivery.deliveryId });
  return rows.length > 0;
}

export async function setDeliveryOutcome(tx: Tx, connectionId: string, deliveryId: string, outcome: string): Promise<void> {
  await tx.orm
    .update(shopDelivery)
    .set({ outcome })
    .where(and(eq(shopDelivery.connectionId, connectionId), eq(shopDelivery.deliveryId, deliveryId)));
}

export async function findDelivery(tx: Tx, connectionId: string, deliveryId: string) {
  const [row] = await tx.orm
    .select()
    .from(shopDelivery)
    .where(and(eq(shopDelivery.connectionId, connectionId), eq(shopDelivery.deliveryId, deliveryId)));
  return row ?? null;
}

// ---- shop orders ----

/** Inserts the shop order unless the connection has it already (a concurrent insert waits, then does nothing); null then. */
export async function insertShopOrder(tx: Tx, row: NewShopOrder): Promise<ShopOrderRecord | null> {
  const [out] = await tx.orm.insert(shopOrder).values(row).onConflictDoNothing().returning();
  return out ?? null;
}

export async function lockShopOrderByShopId(tx: Tx, connectionId: string, shopOrderId: string): Promise<ShopOrderRecord | null> {
  const [row] = await tx.orm
    .select()
    .from(shopOrder)
    .where(and(eq(shopOrder.connectionId, connectionId), eq(shopOrder.shopOrderId, shopOrderId)))
    .for('update');
  return row ?? null;
}

export async function findShopOrder(tx: Tx, id: string, lock = false): Promise<ShopOrderRecord | null> {
  const q = tx.orm.select().from(shopOrder).where(eq(shopOrder.id, id));
  const [row] = lock ? await q.for('update') : await q;
  return row ?? null;
}

export async function updateShopOrder(tx: Tx, id: string, set: Partial<NewShopOrder>): Promise<ShopOrderRecord> {
  const [row] = await tx.orm
    .update(shopOrder)
    .set({ ...set, updatedAt: sql`now()` })
    .where(eq(shopOrder.id, id))
    .returning();
  return row;
}

export async function listShopOrders(
  tx: Tx,
  f: {
    merchantId: string | null;
    connectionId: string | null;
    status: ShopOrderRecord['status'] | null;
    after: string | null;
    limit: number;
  },
): Promise<ShopOrderRecord[]> {
  return tx.orm
    .select()
    .from(shopOrder)
    .where(
      and(
        f.merchantId ? eq(shopOrder.merchantId, f.merchantId) : undefined,
        f.connectionId ? eq(shopOrder.connectionId, f.connectionId) : undefined,
        f.status ? eq(shopOrder.status, f.status) : undefined,
        f.after ? lt(shopOrder.id, f.after) : undefined,
      ),
    )
    .orderBy(desc(shopOrder.id))
    .limit(f.limit);
}
