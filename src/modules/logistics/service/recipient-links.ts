import { normalizePhones } from '../../../platform/phone.js';
import { hook } from '../../../platform/hooks.js';
import { toGeoPoint } from '../../../platform/geo.js';
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Actor } from '../../../platform/auth.js';
import type { LogisticsContext } from '../context.js';
import type { Tx } from '../../../platform/db/index.js';
import { newId } from '../../../platform/ids.js';
import { recordAudit } from '../../../platform/audit.js';
import type { TripRow } from '../repo/trips.js';
import * as repo from '../repo/recipient-links.js';
import type { RecipientLinkRow } from '../repo/recipient-links.js';
import type { SigningKeys } from '../../../platform/keys.js';
import { tracking } from './trip-queries.js';
import type { TripCore } from './trips.js';

/** How long a recipient link keeps answering after its trip ended (completed or cancelled). */
export const LINK_HOURS_AFTER_END = 6;
const ACTIVE = new Set(['assigned', 'accepted', 'picked_up', 'in_transit']);

export type { RecipientLinkRow } from '../repo/recipient-links.js';

/** The `token_version` of links issued now: the MAC is under the derived recipient-link key. */
const TOKEN_VERSION = 2;

/**
 * The token names the organization and the link and carries an HMAC of both under the recipient-link key:
 * unguessable, checked without a cross-tenant lookup, and derivable again to show it to the merchant. Links
 * issued before keys were derived per purpose (`token_version` null) keep their MAC under the raw secret, so a
 * link already sent keeps working while its trip lasts.
 */
function macOf(key: Uint8Array, organizationId: string, linkId: string): string {
  return createHmac('sha256', key).update(`recipient-link:${organizationId}:${linkId}`).digest('base64url').slice(0, 24);
}

function tokenOf(keys: SigningKeys, row: Pick<RecipientLinkRow, 'organization_id' | 'id' | 'token_version'>): string {
  const key = row.token_version === null ? keys.legacyRecipientLink : keys.recipientLink;
  return `${compact(row.organization_id)}.${compact(row.id)}.${macOf(key, row.organization_id, row.id)}`;
}

/** Ids are UUIDs: 32 hex digits in the token keep the link short (under the 100-character path parameter limit). */
const compact = (uuid: string) => uuid.replace(/-/g, '');
const expand = (hex: string) =>
  /^[0-9a-f]{32}$/.test(hex) ? `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}` : null;

const sameMac = (given: string, expected: string) => {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
};

/** The ids a token names and the key version its MAC verified under (the link row must carry the same), or null. */
function parseToken(keys: SigningKeys, token: string): { organizationId: string; linkId: string; version: number | null } | null {
  const parts = token.split('.');
  if (parts.length !== 3) return null;
  const organizationId = expand(parts[0]!);
  const linkId = expand(parts[1]!);
  if (!organizationId || !linkId) return null;
  if (sameMac(parts[2]!, macOf(keys.recipientLink, organizationId, linkId))) return { organizationId, linkId, version: TOKEN_VERSION };
  if (sameMac(parts[2]!, macOf(keys.legacyRecipientLink, organizationId, linkId))) return { organizationId, linkId, version: null };
  return null;
}

/** When a link stops answering: some hours after its trip ended (for the recipient a failed delivery ends it); null while the trip runs. */
export function linkExpiry(t: Pick<TripRow, 'completed_at' | 'cancelled_at' | 'failed_at'>): Date | null {
  const ended = t.completed_at ?? t.cancelled_at ?? t.failed_at;
  return ended ? new Date(new Date(ended).getTime() + LINK_HOURS_AFTER_END * 3600_000) : null;
}

/** What a trip's recipient without an account is reached at, for the messages he gets. */
export interface RecipientContact {
  phone: string | null;
  name: string | null;
  url: string;
}

export function createRecipientLinks(ctx: LogisticsContext, core: TripCore) {
  /** Fired in the transaction that issued a link (first issue or reissue). */
  const on = { recipientLinkIssued: hook<[tx: Tx, issued: { organizationId: string; tripId: string; reissued: boolean }]>() };
  const urlOf = (row: RecipientLinkRow) => `${ctx.config.publicBaseUrl}/api/v1/public/tracking/${tokenOf(ctx.config.keys, row)}`;

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

  /**
   * The trip's live link, created when there is none; an existing one is kept (the link already sent goes on
   * working) unless `reissue` is asked, which revokes it and issues a new one. A different `recipientPhone` on a
   * kept link updates the phone the messages go to. `created` says whether a new link was made.
   */
  async function ensure(
    tx: Tx,
    actor: Pick<Actor, 'userId' | 'organizationId' | 'requestId'>,
    t: TripRow,
    recipientPhone: string | null,
    reissue: boolean,
  ): Promise<{ link: RecipientLinkRow; created: boolean }> {
    const existing = reissue ? null : await current(tx, t.id);
    if (!existing) return { link: await issue(tx, actor, t, recipientPhone), created: true };
    if (recipientPhone)
      recipientPhone = (await normalizePhones(tx, t.organization_id, { recipient_phone: recipientPhone }, ['recipient_phone']))
        .recipient_phone;
    if (!recipientPhone || recipientPhone === existing.recipient_phone) return { link: existing, created: false };
    const link = await repo.setLinkPhone(tx, existing.id, recipientPhone);
    await recordAudit(tx, actor, {
      action: 'trip.recipient_link_phone_changed',
      entityType: 'trip',
      entityId: t.id,
      before: { link_id: existing.id, recipient_phone: existing.recipient_phone },
      after: { link_id: link.id, recipient_phone: link.recipient_phone },
    });
    return { link, created: false };
  }

  /**
   * A new live link for the trip (the previous one, if any, is revoked), in the caller's transaction; the
   * `recipientLinkIssued` hook then runs (recipient messages: the confirmation with the link).
   */
  async function issue(
    tx: Tx,
    actor: Pick<Actor, 'userId' | 'organizationId' | 'requestId'>,
    t: TripRow,
    recipientPhone: string | null,
    recipientName: string | null = null,
  ): Promise<RecipientLinkRow> {
    // Stored in E.164 (the organization's default country for a national number): the outbox sends to it.
    if (recipientPhone)
      recipientPhone = (await normalizePhones(tx, t.organization_id, { recipient_phone: recipientPhone }, ['recipient_phone']))
        .recipient_phone;
    const previous = await current(tx, t.id);
    if (previous) await repo.revokeLink(tx, previous.id);
    const link = await repo.insertLink(tx, {
      organizationId: t.organization_id,
      id: newId(),
      tripId: t.id,
      recipientPhone: recipientPhone ?? previous?.recipient_phone ?? null,
      recipientName: recipientName ?? previous?.recipient_name ?? null,
      createdByUserId: actor.userId ?? null,
      tokenVersion: TOKEN_VERSION,
    });
    await recordAudit(tx, actor, {
      action: previous ? 'trip.recipient_link_reissued' : 'trip.recipient_link_issued',
      entityType: 'trip',
      entityId: t.id,
      after: { link_id: link.id },
    });
    await on.recipientLinkIssued.run(tx, { organizationId: t.organization_id, tripId: t.id, reissued: previous !== null });
    return link;
  }

  async function revoke(tx: Tx, actor: Actor, t: TripRow): Promise<boolean> {
    const revoked = await repo.revokeLinksOfTrip(tx, t.id);
    if (revoked) await recordAudit(tx, actor, { action: 'trip.recipient_link_revoked', entityType: 'trip', entityId: t.id });
    return revoked;
  }

  /** The live link's phone, name and address of a trip, or null (no link: the recipient has an account, or it was revoked). */
  async function contact(tx: Tx, tripId: string): Promise<RecipientContact | null> {
    const link = await current(tx, tripId);
    return link ? { phone: link.recipient_phone, name: link.recipient_name, url: urlOf(link) } : null;
  }

  /**
   * The organization, trip and phone of a valid live link's token (the recipient acting from his link), or null,
   * in a transaction of its own under the token's organization.
   */
  async function resolve(
    token: string,
    now = new Date(),
  ): Promise<{ organizationId: string; tripId: string; phone: string | null } | null> {
    const parsed = parseToken(ctx.config.keys, token);
    if (!parsed) return null;
    return ctx.db.withTenant({ organizationId: parsed.organizationId, userId: null }, async (tx) => {
      const link = await repo.liveLink(tx, parsed.linkId);
      if (!link || link.token_version !== parsed.version) return null;
      const t = await core.load(tx, link.trip_id);
      const expiry = t ? linkExpiry(t) : null;
      if (!t || (expiry && expiry <= now)) return null;
      return { organizationId: parsed.organizationId, tripId: t.id, phone: link.recipient_phone };
    });
  }

  /**
   * What the recipient sees, or null (unknown, forged, revoked or expired token: one answer for all):
   * status and times, ETA and the driver's position while the trip is active, the delivery PIN until it ends.
   */
  /** The link a token names when its MAC is ours (whatever the link's state now); null for a forged or garbled token. No database. */
  function linkIdOf(token: string): string | null {
    return parseToken(ctx.config.keys, token)?.linkId ?? null;
  }

  async function publicView(token: string, now = new Date()) {
    const parsed = parseToken(ctx.config.keys, token);
    if (!parsed) return null;
    // A read (on the replica when there is one): the recipient writes nothing this view shows.
    const reader = { organizationId: parsed.organizationId, userId: null, reader: `link:${parsed.linkId}` };
    return ctx.db.readTenant(reader, async (tx) => {
      const link = await repo.liveLink(tx, parsed.linkId);
      // A MAC under the raw secret is honoured only for the links issued with it.
      if (!link || link.token_version !== parsed.version) return null;
      const t = await core.load(tx, link.trip_id);
      if (!t) return null;
      const expiry = linkExpiry(t);
      if (expiry && expiry <= now) return null;
      const live = ACTIVE.has(t.status);
      const track = await tracking(tx, t);
      const org = await ctx.deps.organizations.branding(tx);
      return {
        trip_id: t.id,
        status: t.status,
        organization_name: org?.name ?? null,
        dropoff_address: t.dropoff_address,
        dropoff_location: toGeoPoint({ lon: t.dropoff_lon, lat: t.dropoff_lat })!,
        promised_at: t.promised_at,
        eta_dropoff_at: live ? t.eta_dropoff_at : null,
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

  return { on, current, ensure, issue, revoke, publicView, linkIdOf, linkOut, contact, resolve };
}

export type RecipientLinks = ReturnType<typeof createRecipientLinks>;
