import { normalizePhones } from '../../platform/phone.js';
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Actor } from '../../platform/auth.js';
import type { LogisticsContext } from './index.js';
import type { Tx } from '../../platform/db/index.js';
import { newId } from '../../platform/ids.js';
import { recordAudit } from '../../platform/audit.js';
import type { TripRow } from './model.js';
import * as repo from './repo/recipient-links.js';
import type { RecipientLinkRow } from './repo/recipient-links.js';
import { tracking } from './trips-query.js';
import type { TripCore } from './trips-service.js';

/** How long a recipient link keeps answering after its trip ended (completed or cancelled). */
export const LINK_HOURS_AFTER_END = 6;
const ACTIVE = new Set(['assigned', 'accepted', 'picked_up', 'in_transit']);

export type { RecipientLinkRow } from './repo/recipient-links.js';

/**
 * The token names the organization and the link and carries an HMAC of both under the service secret:
 * unguessable, checked without a cross-tenant lookup, and derivable again to show it to the merchant.
 */
function tokenOf(secret: Uint8Array, organizationId: string, linkId: string): string {
  const mac = createHmac('sha256', secret).update(`recipient-link:${organizationId}:${linkId}`).digest('base64url').slice(0, 24);
  return `${compact(organizationId)}.${compact(linkId)}.${mac}`;
}

/** Ids are UUIDs: 32 hex digits in the token keep the link short (under the 100-character path parameter limit). */
const compact = (uuid: string) => uuid.replace(/-/g, '');
const expand = (hex: string) => (/^[0-9a-f]{32}$/.test(hex) ? `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}` : null);

function parseToken(secret: Uint8Array, token: string): { organizationId: string; linkId: string } | null {
  const parts = token.split('.');
  if (parts.length !== 3) return null;
  const organizationId = expand(parts[0]!);
  const linkId = expand(parts[1]!);
  if (!organizationId || !linkId) return null;
  const expected = Buffer.from(tokenOf(secret, organizationId, linkId).split('.')[2]!);
  const given = Buffer.from(parts[2]!);
  return given.length === expected.length && timingSafeEqual(given, expected) ? { organizationId, linkId } : null;
}

/** When a link stops answering: some hours after its trip ended (for the recipient a failed delivery ends it); null while the trip runs. */
export function linkExpiry(t: Pick<TripRow, 'completed_at' | 'cancelled_at' | 'failed_at'>): Date | null {
  const ended = t.completed_at ?? t.cancelled_at ?? t.failed_at;
  return ended ? new Date(new Date(ended).getTime() + LINK_HOURS_AFTER_END * 3600_000) : null;
}

export function createRecipientLinks(ctx: LogisticsContext, core: TripCore) {
  const urlOf = (row: RecipientLinkRow) => `${ctx.config.publicBaseUrl}/api/v1/public/tracking/${tokenOf(ctx.config.jwtSecret, row.organization_id, row.id)}`;

  const linkOut = (row: RecipientLinkRow, t: TripRow) => ({
    id: row.id,
    trip_id: row.trip_id,
    url: urlOf(row),
    recipient_phone: row.recipient_phone,
    created_at: row.created_at,
    expires_at: linkExpiry(t),
    revoked_at: row.revoked_at,
  });

  const current = (tx: Tx, tripId: string): Promise<RecipientLinkRow | null> => repo.liveLinkOfTrip(tx, tripId);

  /** A new live link for the trip (the previous one, if any, is revoked), in the caller's transaction. */
  async function issue(tx: Tx, actor: Pick<Actor, 'userId' | 'organizationId' | 'requestId'>, t: TripRow, recipientPhone: string | null): Promise<RecipientLinkRow> {
    // Stored in E.164 (the organization's default country for a national number): the outbox sends to it.
    if (recipientPhone) recipientPhone = (await normalizePhones(tx, t.organization_id, { recipient_phone: recipientPhone }, ['recipient_phone'])).recipient_phone;
    const previous = await current(tx, t.id);
    if (previous) await repo.revokeLink(tx, previous.id);
    const link = await repo.insertLink(tx, {
      organizationId: t.organization_id,
      id: newId(),
      tripId: t.id,
      recipientPhone: recipientPhone ?? previous?.recipient_phone ?? null,
      createdByUserId: actor.userId ?? null,
    });
    await recordAudit(tx, actor, { action: previous ? 'trip.recipient_link_reissued' : 'trip.recipient_link_issued', entityType: 'trip', entityId: t.id, after: { link_id: link.id } });
    return link;
  }

  async function revoke(tx: Tx, actor: Actor, t: TripRow): Promise<boolean> {
    const revoked = await repo.revokeLinksOfTrip(tx, t.id);
    if (revoked) await recordAudit(tx, actor, { action: 'trip.recipient_link_revoked', entityType: 'trip', entityId: t.id });
    return revoked;
  }

  /**
   * What the recipient sees, or null (unknown, forged, revoked or expired token: one answer for all):
   * status and times, ETA and the driver's position while the trip is active, the delivery PIN until it ends.
   */
  async function publicView(token: string, now = new Date()) {
    const parsed = parseToken(ctx.config.jwtSecret, token);
    if (!parsed) return null;
    return ctx.db.withTenant({ organizationId: parsed.organizationId, userId: null }, async (tx) => {
      const link = await repo.liveLink(tx, parsed.linkId);
      if (!link) return null;
      const t = await core.load(tx, link.trip_id);
      if (!t) return null;
      const expiry = linkExpiry(t);
      if (expiry && expiry <= now) return null;
      const live = ACTIVE.has(t.status);
      const track = await tracking(tx, t);
      const org = (await ctx.deps.organizations.branding(tx)) as { name: string } | undefined;
      return {
        trip_id: t.id,
        status: t.status,
        organization_name: org?.name ?? null,
        dropoff_address: t.dropoff_address,
        driver_location: live ? track.last_location : null,
        driver_location_at: live ? track.last_location_at : null,
        next_stop: track.next_stop,
        eta_seconds: track.eta_seconds,
        delivery_pin: t.completed_at || t.cancelled_at || t.failed_at ? null : t.delivery_pin,
        created_at: t.created_at,
        picked_up_at: t.picked_up_at,
        completed_at: t.completed_at,
        cancelled_at: t.cancelled_at,
        expires_at: expiry,
      };
    });
  }

  return { current, issue, revoke, publicView, linkOut };
}

export type RecipientLinks = ReturnType<typeof createRecipientLinks>;
