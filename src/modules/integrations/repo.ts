import { and, eq } from 'drizzle-orm';
import type { Tx } from '../../platform/db/index.js';
import { integrationWebhookEvent } from './tables.js';

/** The integrations module's SQL: connector callbacks as stored. */

export type WebhookEventRecord = typeof integrationWebhookEvent.$inferSelect;
export type NewWebhookEvent = Pick<
  WebhookEventRecord,
  'organizationId' | 'id' | 'connector' | 'eventId' | 'eventType' | 'payload' | 'bodySha256' | 'signedAt'
>;
export type StoredWebhookEvent = Pick<WebhookEventRecord, 'id' | 'status'>;

/**
 * Stores a callback once per (organization, connector, event id), acknowledged and not applied while the
 * connectors are not active; `null` when that event was already stored.
 */
export async function insertWebhookEvent(tx: Tx, e: NewWebhookEvent): Promise<StoredWebhookEvent | null> {
  const rows = await tx.orm
    .insert(integrationWebhookEvent)
    .values({ ...e, status: 'ignored', statusReason: 'connector not active' })
    .onConflictDoNothing({
      target: [integrationWebhookEvent.organizationId, integrationWebhookEvent.connector, integrationWebhookEvent.eventId],
    })
    .returning({ id: integrationWebhookEvent.id, status: integrationWebhookEvent.status });
  return rows[0] ?? null;
}

export async function findWebhookEvent(
  tx: Tx,
  organizationId: string,
  connector: WebhookEventRecord['connector'],
  eventId: string,
): Promise<StoredWebhookEvent> {
  const rows = await tx.orm
    .select({ id: integrationWebhookEvent.id, status: integrationWebhookEvent.status })
    .from(integrationWebhookEvent)
    .where(
      and(
        eq(integrationWebhookEvent.organizationId, organizationId),
        eq(integrationWebhookEvent.connector, connector),
        eq(integrationWebhookEvent.eventId, eventId),
      ),
    );
  return rows[0];
}
