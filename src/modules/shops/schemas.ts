import { Type, type Static } from '@sinclair/typebox';
import { GeoPoint } from '../../platform/geo.js';
import { SecretInput } from '../../platform/secrets.js';
import { Id, Nullable, PageQueryProps, ShortText, Strict, Timestamp } from '../../platform/schemas.js';
import { SHOP_ORDER_STATUSES, SHOP_PLATFORMS } from './tables.js';

export { SHOP_PLATFORMS };

export const ShopPlatform = Type.Union(
  SHOP_PLATFORMS.map((p) => Type.Literal(p)),
  { description: '`woocommerce` or `shopify`' },
);
export type ShopPlatform = Static<typeof ShopPlatform>;

export const ShopOrderStatus = Type.Union(
  SHOP_ORDER_STATUSES.map((s) => Type.Literal(s)),
  {
    description:
      '`awaiting_location`: the shop sent no coordinates, the merchant places it (POST /shops/orders/{shop_order_id}/place); ' +
      '`placed`: an express request exists (its own status follows its trip); `cancelled`: cancelled in the shop before it was placed or picked up',
  },
);
export type ShopOrderStatus = Static<typeof ShopOrderStatus>;

export const ShopConnectionOut = Type.Object({
  id: Type.String(),
  merchant_id: Type.String(),
  platform: ShopPlatform,
  shop_url: Type.String(),
  webhook_url: Type.String({ description: 'the delivery URL to paste into the shop (absolute when PUBLIC_BASE_URL is set)' }),
  topics: Type.Array(Type.String(), { description: 'the webhook topics to subscribe in the shop' }),
  branch_id: Nullable(Type.String({ description: "the merchant's branch the courier picks up at; null: the merchant's own location" })),
  secret_set: Type.Boolean({ description: 'the signing secret is stored (encrypted); it is never returned' }),
  secret_set_at: Timestamp,
  created_by: Type.String(),
  created_at: Timestamp,
});

export const CreateShopConnectionBody = Strict({
  merchant_id: Type.Optional(Id),
  platform: ShopPlatform,
  shop_url: Type.String({
    minLength: 4,
    maxLength: 300,
    pattern:
      '^([Hh][Tt][Tt][Pp][Ss]?://)?[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*(:[0-9]{1,4})?(/[A-Za-z0-9._~/-]*)?$',
    description: 'the shop: `https://tienda.example.com` (WooCommerce) or `mi-tienda.myshopify.com` (Shopify)',
  }),
  branch_id: Type.Optional(Id),
  secret: SecretInput(
    8,
    200,
    "The shop's webhook signing secret: the Secret of the WooCommerce webhook, or the Shopify webhook signing key (Settings → Notifications → Webhooks) or app client secret.",
  ),
});
export type CreateShopConnection = Static<typeof CreateShopConnectionBody>;

export const ConnectionListQuery = Strict({ ...PageQueryProps, merchant_id: Type.Optional(Id) });
export const ConnectionParams = Strict({ connection_id: Id });
export const ShopOrderParams = Strict({ shop_order_id: Id });

export const ShopOrderOut = Type.Object({
  id: Type.String(),
  connection_id: Type.String(),
  merchant_id: Type.String(),
  shop_order_id: Type.String({ description: "the shop's own order id" }),
  shop_order_number: Nullable(Type.String()),
  status: ShopOrderStatus,
  customer_name: Type.String(),
  customer_phone: Nullable(Type.String()),
  dropoff_address: Type.String(),
  dropoff_location: Nullable(GeoPoint),
  package_description: Nullable(Type.String()),
  total: Nullable(Type.String({ description: "the order total as the shop wrote it, in the shop's currency" })),
  currency: Nullable(Type.String()),
  express_request_id: Nullable(Type.String()),
  note: Nullable(
    Type.String({ description: 'why the last change from the shop was not applied (e.g. the package was already picked up)' }),
  ),
  shop_updated_at: Nullable(Timestamp),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const ShopOrderListQuery = Strict({ ...PageQueryProps, status: Type.Optional(ShopOrderStatus), connection_id: Type.Optional(Id) });

export const PlaceShopOrderBody = Strict({
  dropoff_location: GeoPoint,
  dropoff_address: Type.Optional(ShortText(300)),
});

export const WebhookOutcome = Type.Union(
  ['created', 'awaiting_location', 'updated', 'unchanged', 'cancelled', 'refused', 'stale', 'ignored', 'ping'].map((s) => Type.Literal(s)),
  {
    description:
      '`created`: an express request; `awaiting_location`: recorded, no coordinates; `updated` / `cancelled`: the record followed; ' +
      '`unchanged`: nothing to change; `refused`: the change came after pickup (see the shop order note); `stale`: older than the ' +
      'version applied; `ignored`: not a delivery (no shipping address) or a topic we do not act on; `ping`: WooCommerce ping',
  },
);
export type WebhookOutcome = Static<typeof WebhookOutcome>;

export const WebhookReceiptOut = Type.Object({
  received: Type.Literal(true),
  duplicate: Type.Boolean({ description: 'this delivery id was already received: nothing was written again' }),
  outcome: WebhookOutcome,
  shop_order_id: Nullable(Type.String({ description: 'our shop order record' })),
  express_request_id: Nullable(Type.String()),
});
export type WebhookReceipt = Static<typeof WebhookReceiptOut>;
