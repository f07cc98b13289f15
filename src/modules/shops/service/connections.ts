import type { Static } from '@sinclair/typebox';
import type { Actor } from '../../../platform/auth.js';
import { recordAudit } from '../../../platform/audit.js';
import type { Tx } from '../../../platform/db/index.js';
import { AppError } from '../../../platform/errors.js';
import { toGeoPoint } from '../../../platform/geo.js';
import { newId } from '../../../platform/ids.js';
import { pageRequest, toPage } from '../../../platform/pagination.js';
import { encryptSecret, requireKeyring, secretContext } from '../../../platform/secrets.js';
import type { ShopsContext } from '../context.js';
import * as repo from '../repo.js';
import type { CreateShopConnection, ShopConnectionOut, ShopOrderOut, ShopOrderStatus } from '../schemas.js';
import { SHOP_TOPICS } from './payloads.js';

/** A stored secret is bound to its connection (`organization_id`, `id`). */
export const secretContextOf = (organizationId: string, id: string) => secretContext(repo.SHOP_SECRET_COLUMN, [organizationId, id]);

export const webhookPath = (c: Pick<repo.ConnectionRecord, 'platform' | 'id'>) => `/api/v1/shops/${c.platform}/${c.id}`;

export function connectionOut(ctx: ShopsContext, c: repo.ConnectionRecord): Static<typeof ShopConnectionOut> {
  return {
    id: c.id,
    merchant_id: c.merchantId,
    platform: c.platform,
    shop_url: c.shopUrl,
    branch_id: c.branchId,
    webhook_url: `${ctx.config.publicBaseUrl}${webhookPath(c)}`,
    topics: Object.keys(SHOP_TOPICS[c.platform]),
    secret_set: c.secret !== null,
    secret_set_at: c.secretSetAt,
    created_by: c.createdBy,
    created_at: c.createdAt,
  };
}

export function shopOrderOut(o: repo.ShopOrderRecord): Static<typeof ShopOrderOut> {
  return {
    id: o.id,
    connection_id: o.connectionId,
    merchant_id: o.merchantId,
    shop_order_id: o.shopOrderId,
    shop_order_number: o.shopOrderNumber,
    status: o.status,
    customer_name: o.customerName,
    customer_phone: o.customerPhone,
    dropoff_address: o.dropoffAddress,
    dropoff_location: o.dropoffLocation ? toGeoPoint({ lon: o.dropoffLocation.x, lat: o.dropoffLocation.y }) : null,
    package_description: o.packageDescription,
    total: o.total,
    currency: o.currency,
    express_request_id: o.expressRequestId,
    note: o.note,
    shop_updated_at: o.shopUpdatedAt,
    created_at: o.createdAt,
    updated_at: o.updatedAt,
  };
}

/** `https://` is added to a bare host; the shop is kept as typed otherwise (it is a label and a check, never called). */
function normalizeShopUrl(url: string): string {
  const withScheme = /^https?:\/\//i.test(url) ? url : `https://${url}`;
  let u: URL;
  try {
    u = new URL(withScheme);
  } catch {
    throw AppError.badRequest('shop_url is not a URL', [{ field: 'shop_url', message: 'must be a URL or a host name' }]);
  }
  return `${u.protocol}//${u.host}${u.pathname.replace(/\/+$/, '')}`;
}

/**
 * Which merchant the caller acts for: a merchant user his own merchant (another merchant_id is 404), an
 * administrator the merchant named (required to create; a filter otherwise).
 */
async function merchantFor(ctx: ShopsContext, tx: Tx, actor: Actor, merchantId: string | undefined, required: boolean) {
  if (actor.kind === 'comercio') {
    const m = await ctx.deps.merchants.merchantOfUser(tx, actor.userId);
    if (!m) throw new AppError(404, 'MERCHANT_PROFILE_NOT_FOUND', 'You have no merchant profile');
    if (merchantId !== undefined && merchantId !== m.id) throw AppError.notFound('Merchant');
    return m.id;
  }
  if (merchantId === undefined) {
    if (required)
      throw AppError.unprocessable('An administrator names the merchant the shop belongs to', 'MERCHANT_REQUIRED', [
        { field: 'merchant_id', message: 'required for administrators' },
      ]);
    return null;
  }
  if (!(await ctx.deps.merchants.getMerchant(tx, merchantId))) throw AppError.notFound('Merchant');
  return merchantId;
}

/** A live connection the caller may see (another merchant's or organization's is 404). */
async function visibleConnection(ctx: ShopsContext, tx: Tx, actor: Actor, id: string) {
  const c = await repo.findConnection(tx, id);
  const own = actor.kind === 'comercio' ? await merchantFor(ctx, tx, actor, undefined, false) : null;
  if (!c || (own !== null && c.merchantId !== own)) throw AppError.notFound('Shop connection');
  return c;
}

export function createConnectionService(ctx: ShopsContext) {
  return {
    create(actor: Actor, body: CreateShopConnection) {
      const ring = requireKeyring(ctx.config.secrets);
      return ctx.db.withTenant(actor, async (tx) => {
        const merchantId = (await merchantFor(ctx, tx, actor, body.merchant_id, true))!;
        if (body.branch_id && !(await ctx.deps.express.ownsBranch(tx, merchantId, body.branch_id))) throw AppError.notFound('Branch');
        const id = newId();
        const c = await repo.insertConnection(tx, {
          organizationId: actor.organizationId,
          id,
          merchantId,
          platform: body.platform,
          shopUrl: normalizeShopUrl(body.shop_url),
          branchId: body.branch_id ?? null,
          secret: encryptSecret(ring, body.secret, secretContextOf(actor.organizationId, id)),
          createdBy: actor.userId,
        });
        await recordAudit(tx, actor, {
          action: 'shop_connection.created',
          entityType: 'shop_connection',
          entityId: id,
          before: null,
          after: { merchant_id: merchantId, platform: c.platform, shop_url: c.shopUrl, secret_set: true },
        });
        return connectionOut(ctx, c);
      });
    },

    list(actor: Actor, q: { merchant_id?: string; limit?: number; cursor?: string }) {
      const page = pageRequest(q);
      return ctx.db.withTenant(actor, async (tx) => {
        const merchantId = await merchantFor(ctx, tx, actor, q.merchant_id, false);
        const rows = await repo.listConnections(tx, { merchantId, after: page.after, limit: page.limit + 1 });
        return toPage(rows, page, (c) => connectionOut(ctx, c));
      });
    },

    get(actor: Actor, id: string) {
      return ctx.db.withTenant(actor, async (tx) => connectionOut(ctx, await visibleConnection(ctx, tx, actor, id)));
    },

    /** Its webhooks are refused from now on (404); its shop orders and their express requests stay. */
    remove(actor: Actor, id: string) {
      return ctx.db.withTenant(actor, async (tx) => {
        const c = await visibleConnection(ctx, tx, actor, id);
        await repo.deleteConnection(tx, c.id);
        await recordAudit(tx, actor, {
          action: 'shop_connection.deleted',
          entityType: 'shop_connection',
          entityId: c.id,
          before: { merchant_id: c.merchantId, platform: c.platform, shop_url: c.shopUrl, secret_set: true },
          after: null,
        });
      });
    },

    listOrders(actor: Actor, q: { status?: ShopOrderStatus; connection_id?: string; limit?: number; cursor?: string }) {
      const page = pageRequest(q);
      return ctx.db.withTenant(actor, async (tx) => {
        const merchantId = await merchantFor(ctx, tx, actor, undefined, false);
        const rows = await repo.listShopOrders(tx, {
          merchantId,
          connectionId: q.connection_id ?? null,
          status: q.status ?? null,
          after: page.after,
          limit: page.limit + 1,
        });
        return toPage(rows, page, shopOrderOut);
      });
    },

    async visibleOrder(tx: Tx, actor: Actor, id: string, lock = false) {
      const o = await repo.findShopOrder(tx, id, lock);
      const own = await merchantFor(ctx, tx, actor, undefined, false);
      if (!o || (own !== null && o.merchantId !== own)) throw AppError.notFound('Shop order');
      return o;
    },
  };
}
export type ConnectionService = ReturnType<typeof createConnectionService>;
