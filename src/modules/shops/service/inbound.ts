import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Actor } from '../../../platform/auth.js';
import { recordAudit } from '../../../platform/audit.js';
import type { Tx } from '../../../platform/db/index.js';
import { AppError } from '../../../platform/errors.js';
import type { GeoPoint, LonLat } from '../../../platform/geo.js';
import { newId, sha256Hex } from '../../../platform/ids.js';
import { normalizePhones } from '../../../platform/phone.js';
import { countRequest } from '../../../platform/rate-limit.js';
import { decryptSecret, requireKeyring } from '../../../platform/secrets.js';
import type { ShopsContext } from '../context.js';
import * as repo from '../repo.js';
import type { ShopPlatform, WebhookOutcome, WebhookReceipt } from '../schemas.js';
import { secretContextOf, shopOrderOut, type ConnectionService } from './connections.js';
import { readShopOrder, SHOP_TOPICS, type ShopOrderFacts } from './payloads.js';

/** A delivery signed longer ago than this (or this far ahead) is refused: beyond the shops' retry span (Shopify: 4 hours). */
export const SHOP_WEBHOOK_MAX_AGE_SECONDS = 6 * 3600;
export const SHOP_WEBHOOK_FUTURE_SKEW_SECONDS = 300;
/** Deliveries per connection per minute (every instance counts together); beyond: 429 RATE_LIMITED, the shop retries. */
export const SHOP_WEBHOOK_PER_MINUTE = 300;

/** The headers each shop signs and names its deliveries with. */
export const SHOP_HEADERS: Record<ShopPlatform, { signature: string; topic: string; delivery: string; triggeredAt: string | null }> = {
  woocommerce: {
    signature: 'x-wc-webhook-signature',
    topic: 'x-wc-webhook-topic',
    delivery: 'x-wc-webhook-delivery-id',
    triggeredAt: null,
  },
  shopify: {
    signature: 'x-shopify-hmac-sha256',
    topic: 'x-shopify-topic',
    delivery: 'x-shopify-webhook-id',
    triggeredAt: 'x-shopify-triggered-at',
  },
};

type Headers = Record<string, string | string[] | undefined>;
const header = (h: Headers, name: string) => {
  const v = h[name];
  return typeof v === 'string' && v.length > 0 && v.length <= 512 ? v : null;
};

/** Both shops sign the same way: base64 of HMAC-SHA256 over the raw body with the webhook secret. Compared in constant time. */
export function shopSignatureMatches(secret: string, rawBody: Buffer, signature: string): boolean {
  const expected = createHmac('sha256', secret).update(rawBody).digest();
  if (!/^[A-Za-z0-9+/]{43}=$/.test(signature.trim())) return false;
  const given = Buffer.from(signature.trim(), 'base64');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** The shop order's recipient phone in E.164, or none when the shop's text is not a phone (the order still counts). */
async function phoneOrNull(tx: Tx, organizationId: string, phone: string | null): Promise<string | null> {
  if (!phone) return null;
  try {
    return (await normalizePhones(tx, organizationId, { phone }, ['phone'])).phone;
  } catch {
    return null;
  }
}

const point = (l: LonLat): GeoPoint => ({ type: 'Point', coordinates: [l.lon, l.lat] });
const sameLocation = (a: { x: number; y: number } | null, b: LonLat | null) =>
  (a === null && b === null) || (a !== null && b !== null && a.x === b.lon && a.y === b.lat);

const PICKED_UP_NOTE = 'The shop changed or cancelled the order after the courier picked it up: not applied';
const NEEDS_LOCATION_NOTE = 'The shop changed the address without coordinates: place it again with its location';

export function createInboundService(ctx: ShopsContext, connections: ConnectionService) {
  const receipt = (outcome: WebhookOutcome, o: repo.ShopOrderRecord | null, duplicate = false): WebhookReceipt => ({
    received: true,
    duplicate,
    outcome,
    shop_order_id: o?.id ?? null,
    express_request_id: o?.expressRequestId ?? null,
  });

  /** Creates the express request of a shop order that has a location; its record becomes `placed`. */
  async function place(tx: Tx, actor: Actor, o: repo.ShopOrderRecord, location: LonLat): Promise<repo.ShopOrderRecord> {
    const conn = await repo.findConnectionRow(tx, o.connectionId);
    const express = await ctx.deps.express.request(
      tx,
      actor,
      {
        ...(conn?.branchId ? { branch_id: conn.branchId } : {}),
        customer_name: o.customerName,
        ...(o.customerPhone ? { customer_phone: o.customerPhone } : {}),
        dropoff_address: o.dropoffAddress,
        dropoff_location: point(location),
        ...(o.packageDescription ? { package_description: o.packageDescription } : {}),
      },
      'api',
    );
    return repo.updateShopOrder(tx, o.id, {
      status: 'placed',
      expressRequestId: express.id,
      dropoffLocation: { x: location.lon, y: location.lat },
      note: null,
    });
  }

  /** A change the express request refuses once picked up (409): noted on the shop order, acknowledged to the shop. */
  async function refusedAfterPickup<T>(work: () => Promise<T>): Promise<T | 'refused'> {
    try {
      return await work();
    } catch (err) {
      if (err instanceof AppError && err.code === 'EXPRESS_PICKED_UP') return 'refused';
      throw err;
    }
  }

  async function cancel(tx: Tx, actor: Actor, o: repo.ShopOrderRecord | null, facts: ShopOrderFacts) {
    if (!o) return receipt('ignored', null);
    if (o.status === 'cancelled') return receipt('unchanged', o);
    if (o.status === 'placed' && o.expressRequestId) {
      const done = await refusedAfterPickup(() =>
        ctx.deps.express.cancel(tx, actor, o.expressRequestId!, `cancelled in the shop (${o.shopOrderNumber ?? o.shopOrderId})`),
      );
      if (done === 'refused') return receipt('refused', await repo.updateShopOrder(tx, o.id, { note: PICKED_UP_NOTE }));
    }
    const after = await repo.updateShopOrder(tx, o.id, {
      status: 'cancelled',
      note: null,
      shopUpdatedAt: facts.modifiedAt ?? o.shopUpdatedAt,
    });
    return receipt('cancelled', after);
  }

  async function upsert(tx: Tx, actor: Actor, conn: repo.ConnectionRecord, existing: repo.ShopOrderRecord | null, facts: ShopOrderFacts) {
    const d = facts.delivery;
    if (!existing) {
      if (!d || facts.cancelled) return receipt('ignored', null);
      const inserted = await repo.insertShopOrder(tx, {
        organizationId: conn.organizationId,
        id: newId(),
        connectionId: conn.id,
        merchantId: conn.merchantId,
        shopOrderId: facts.shopOrderId,
        shopOrderNumber: facts.number,
        status: 'awaiting_location',
        customerName: d.customerName.slice(0, 120),
        customerPhone: await phoneOrNull(tx, conn.organizationId, d.customerPhone),
        dropoffAddress: d.address.slice(0, 300),
        dropoffLocation: null,
        packageDescription: facts.packageDescription,
        total: facts.total,
        currency: facts.currency,
        shopUpdatedAt: facts.modifiedAt,
      });
      // Another delivery of the same order got there first (it waited for it to commit): this one is an update.
      if (!inserted) return upsert(tx, actor, conn, await repo.lockShopOrderByShopId(tx, conn.id, facts.shopOrderId), facts);
      if (!d.location) return receipt('awaiting_location', inserted);
      return receipt('created', await place(tx, actor, inserted, d.location));
    }
    if (facts.modifiedAt && existing.shopUpdatedAt && facts.modifiedAt < existing.shopUpdatedAt) return receipt('stale', existing);
    if (facts.cancelled) return cancel(tx, actor, existing, facts);
    if (existing.status === 'cancelled' || !d) return receipt('unchanged', existing);
    const next = {
      customerName: d.customerName.slice(0, 120),
      customerPhone: await phoneOrNull(tx, conn.organizationId, d.customerPhone),
      dropoffAddress: d.address.slice(0, 300),
      packageDescription: facts.packageDescription,
    };
    const addressChanged = next.dropoffAddress !== existing.dropoffAddress;
    const locationChanged = d.location !== null && !sameLocation(existing.dropoffLocation, d.location);
    const changed =
      addressChanged ||
      locationChanged ||
      next.customerName !== existing.customerName ||
      next.customerPhone !== existing.customerPhone ||
      next.packageDescription !== existing.packageDescription;
    const version = { shopUpdatedAt: facts.modifiedAt ?? existing.shopUpdatedAt, total: facts.total, currency: facts.currency };
    if (!changed) return receipt('unchanged', await repo.updateShopOrder(tx, existing.id, version));
    if (existing.status === 'awaiting_location') {
      const o = await repo.updateShopOrder(tx, existing.id, { ...next, ...version });
      return d.location ? receipt('created', await place(tx, actor, o, d.location)) : receipt('updated', o);
    }
    // Placed: the express request follows while the package is not picked up. A new address without coordinates
    // cannot move the delivery point: the rest follows, and the merchant places the new address.
    const movable = !addressChanged || d.location !== null;
    const revised = await refusedAfterPickup(() =>
      ctx.deps.express.revise(tx, actor, existing.expressRequestId!, {
        customer_name: next.customerName,
        customer_phone: next.customerPhone,
        package_description: next.packageDescription,
        ...(movable && addressChanged ? { dropoff_address: next.dropoffAddress } : {}),
        ...(movable && d.location ? { dropoff_location: point(d.location) } : {}),
      }),
    );
    if (revised === 'refused') return receipt('refused', await repo.updateShopOrder(tx, existing.id, { note: PICKED_UP_NOTE }));
    const o = await repo.updateShopOrder(tx, existing.id, {
      ...next,
      ...version,
      ...(movable
        ? { note: null, ...(d.location ? { dropoffLocation: { x: d.location.lon, y: d.location.lat } } : {}) }
        : { dropoffLocation: null, note: NEEDS_LOCATION_NOTE }),
    });
    return receipt('updated', o);
  }

  return {
    /**
     * POST /shops/{platform}/{connection_id}: 404 for an unknown or deleted connection (or one of the other shop),
     * 401 unless signed with its secret over the raw body, 401 SHOP_WEBHOOK_STALE outside the time window; then once
     * per delivery id, in one transaction with everything it changes.
     */
    async receive(platform: ShopPlatform, connectionId: string, raw: Buffer, headers: Headers, ping: boolean): Promise<WebhookReceipt> {
      const { weighted, resetSeconds } = await countRequest(ctx.db, `shop-webhook:${connectionId}`);
      if (weighted > SHOP_WEBHOOK_PER_MINUTE) {
        throw new AppError(
          429,
          'RATE_LIMITED',
          `At most ${SHOP_WEBHOOK_PER_MINUTE} deliveries per minute per shop; retry in ${resetSeconds} s`,
          undefined,
          {
            retry_after: resetSeconds,
          },
        );
      }
      const conn = await ctx.db.withSystem((tx) => repo.findConnectionForWebhook(tx, connectionId));
      if (!conn || conn.platform !== platform || !conn.secret)
        throw new AppError(404, 'SHOP_CONNECTION_NOT_FOUND', 'No such shop connection');
      const h = SHOP_HEADERS[platform];
      const signature = header(headers, h.signature);
      // WooCommerce checks a new webhook's URL with an unsigned form post `webhook_id=<n>`: answered, nothing written.
      if (ping && !signature) return receipt('ping', null);
      if (!signature) throw AppError.unauthorized(`The ${h.signature} header is missing`, 'SHOP_SIGNATURE_MISSING');
      const secret = decryptSecret(requireKeyring(ctx.config.secrets), conn.secret, secretContextOf(conn.organizationId, conn.id));
      if (!shopSignatureMatches(secret, raw, signature))
        throw AppError.unauthorized('The signature does not match the body', 'SHOP_SIGNATURE_INVALID');
      let body: unknown;
      try {
        body = JSON.parse(raw.toString('utf8'));
      } catch {
        throw AppError.badRequest('The body is not valid JSON', undefined, 'MALFORMED_JSON');
      }
      const facts = readShopOrder(platform, body);
      if (!facts)
        throw AppError.badRequest(
          'The body is not an order of the shop (no order id)',
          [{ field: 'id', message: 'required' }],
          'SHOP_ORDER_INVALID',
        );
      // Checked after the signature, so that nothing about the window is learnt from an unsigned call.
      const signedAt = h.triggeredAt ? header(headers, h.triggeredAt) : null;
      const when = signedAt ? new Date(signedAt) : facts.modifiedAt;
      if (when && !Number.isNaN(when.getTime())) {
        const age = (Date.now() - when.getTime()) / 1000;
        if (age > SHOP_WEBHOOK_MAX_AGE_SECONDS || age < -SHOP_WEBHOOK_FUTURE_SKEW_SECONDS) {
          throw AppError.unauthorized(
            `The delivery is from ${when.toISOString()}, outside ${SHOP_WEBHOOK_MAX_AGE_SECONDS / 3600} hours of the server time: a replay is refused`,
            'SHOP_WEBHOOK_STALE',
          );
        }
      }
      const topic = header(headers, h.topic) ?? '';
      const action = SHOP_TOPICS[platform][topic];
      // Without a delivery id the body itself names the delivery: the same bytes twice are one delivery.
      const deliveryId = header(headers, h.delivery) ?? `sha256:${sha256Hex(raw)}`;
      return ctx.db.withTenant({ organizationId: conn.organizationId, userId: null }, async (tx) => {
        const claimed = await repo.claimDelivery(tx, {
          organizationId: conn.organizationId,
          connectionId: conn.id,
          deliveryId,
          topic: topic.slice(0, 100) || 'unknown',
          shopOrderId: facts.shopOrderId,
        });
        const existing = await repo.lockShopOrderByShopId(tx, conn.id, facts.shopOrderId);
        if (!claimed) {
          const seen = await repo.findDelivery(tx, conn.id, deliveryId);
          return receipt((seen?.outcome as WebhookOutcome | undefined) ?? 'unchanged', existing, true);
        }
        let out: WebhookReceipt;
        if (!action) out = receipt('ignored', existing);
        else {
          const merchant = await ctx.deps.merchants.getMerchant(tx, conn.merchantId);
          if (!merchant) throw new AppError(404, 'SHOP_CONNECTION_NOT_FOUND', 'No such shop connection');
          // The merchant connected his shop: its orders are his requests, made as his user.
          const actor: Actor = {
            userId: merchant.owner_user_id,
            organizationId: conn.organizationId,
            role: 'comercio',
            kind: 'comercio',
            sessionId: `shop:${conn.id}`,
            requestId: `shop:${conn.id}:${deliveryId}`.slice(0, 200),
            subadmin: null,
          };
          out = action === 'cancel' ? await cancel(tx, actor, existing, facts) : await upsert(tx, actor, conn, existing, facts);
        }
        await repo.setDeliveryOutcome(tx, conn.id, deliveryId, out.outcome);
        return out;
      });
    },

    /**
     * POST /shops/orders/{id}/place: the merchant gives the point of a shop order's address. Awaiting a location: its
     * express request is created; placed: its express request moves there (while not picked up).
     */
    placeOrder(actor: Actor, id: string, body: { dropoff_location: GeoPoint; dropoff_address?: string }) {
      return ctx.db.withTenant(actor, async (tx) => {
        const o = await connections.visibleOrder(tx, actor, id, true);
        const location = { lon: body.dropoff_location.coordinates[0], lat: body.dropoff_location.coordinates[1] };
        const base = body.dropoff_address ? await repo.updateShopOrder(tx, o.id, { dropoffAddress: body.dropoff_address }) : o;
        let after: repo.ShopOrderRecord;
        if (o.status === 'awaiting_location') after = await place(tx, actor, base, location);
        else if (o.status === 'placed' && o.expressRequestId) {
          await ctx.deps.express.revise(tx, actor, o.expressRequestId, {
            dropoff_address: base.dropoffAddress,
            dropoff_location: body.dropoff_location,
          });
          after = await repo.updateShopOrder(tx, o.id, { dropoffLocation: { x: location.lon, y: location.lat }, note: null });
        } else throw AppError.conflict('The shop order was cancelled', 'SHOP_ORDER_CANCELLED');
        await recordAudit(tx, actor, {
          action: 'shop_order.placed',
          entityType: 'shop_order',
          entityId: o.id,
          before: { status: o.status, dropoff_address: o.dropoffAddress, dropoff_location: o.dropoffLocation },
          after: { status: after.status, dropoff_address: after.dropoffAddress, dropoff_location: after.dropoffLocation },
        });
        return shopOrderOut(after);
      });
    },
  };
}
export type InboundService = ReturnType<typeof createInboundService>;
