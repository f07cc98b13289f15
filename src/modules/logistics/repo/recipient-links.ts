import { and, eq, isNull, sql } from 'drizzle-orm';
import type { Tx } from '../../../platform/db/index.js';
import { tripRecipientLink } from '../tables.js';
import { selectList, type SnakeRow } from '../../../platform/db/columns.js';

/** A recipient tracking link (derived from the table). */
export type RecipientLinkRow = SnakeRow<Omit<typeof tripRecipientLink.$inferSelect, 'createdByUserId'>>;

const LINK_COLUMNS = selectList(tripRecipientLink, 'trip_recipient_link', { omit: ['createdByUserId'] });

/** The live link of a trip. */
export async function liveLinkOfTrip(tx: Tx, tripId: string): Promise<RecipientLinkRow | null> {
  const { rows } = await tx.query<RecipientLinkRow>(
    `SELECT ${LINK_COLUMNS} FROM trip_recipient_link WHERE trip_id = $1 AND revoked_at IS NULL`,
    [tripId],
  );
  return rows[0] ?? null;
}

/** A link by id, unless revoked. */
export async function liveLink(tx: Tx, id: string): Promise<RecipientLinkRow | null> {
  const { rows } = await tx.query<RecipientLinkRow>(
    `SELECT ${LINK_COLUMNS} FROM trip_recipient_link WHERE id = $1 AND revoked_at IS NULL`,
    [id],
  );
  return rows[0] ?? null;
}

export async function insertLink(
  tx: Tx,
  v: Pick<
    typeof tripRecipientLink.$inferInsert,
    'organizationId' | 'id' | 'tripId' | 'recipientPhone' | 'recipientName' | 'createdByUserId' | 'tokenVersion'
  >,
): Promise<RecipientLinkRow> {
  const { rows } = await tx.query<RecipientLinkRow>(
    `INSERT INTO trip_recipient_link (organization_id, id, trip_id, recipient_phone, recipient_name, created_by_user_id, token_version) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${LINK_COLUMNS}`,
    [
      v.organizationId,
      v.id,
      v.tripId,
      v.recipientPhone ?? null,
      v.recipientName ?? null,
      v.createdByUserId ?? null,
      v.tokenVersion ?? null,
    ],
  );
  return rows[0]!;
}

/** The phone the recipient's messages go to, on a live link. */
export async function setLinkPhone(tx: Tx, id: string, recipientPhone: string): Promise<RecipientLinkRow> {
  const { rows } = await tx.query<RecipientLinkRow>(
    `UPDATE trip_recipient_link SET recipient_phone = $2 WHERE id = $1 RETURNING ${LINK_COLUMNS}`,
    [id, recipientPhone],
  );
  return rows[0]!;
}

export async function revokeLink(tx: Tx, id: string): Promise<void> {
  await tx.orm
    .update(tripRecipientLink)
    .set({ revokedAt: sql`now()` })
    .where(eq(tripRecipientLink.id, id));
}

/** Revokes the live link of a trip; false when there was none. */
export async function revokeLinksOfTrip(tx: Tx, tripId: string): Promise<boolean> {
  const revoked = await tx.orm
    .update(tripRecipientLink)
    .set({ revokedAt: sql`now()` })
    .where(and(eq(tripRecipientLink.tripId, tripId), isNull(tripRecipientLink.revokedAt)))
    .returning({ id: tripRecipientLink.id });
  return revoked.length > 0;
}
