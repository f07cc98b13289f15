import type { LonLat } from '../../../platform/geo.js';
import type { ShopPlatform } from '../schemas.js';

/**
 * The shops' order webhooks read into one shape (pure functions, tested without HTTP). Only what a delivery needs
 * is read: who receives it, where, what the package holds; everything else of the payload is ignored.
 */

export type ShopAction = 'upsert' | 'cancel' | 'ignore';

export interface ShopOrderFacts {
  shopOrderId: string;
  number: string | null;
  /** The shop says the order is cancelled (or deleted). */
  cancelled: boolean;
  /** Null: not a delivery (no shipping address), or a deletion that carries only the id. */
  delivery: {
    customerName: string;
    customerPhone: string | null;
    address: string;
    location: LonLat | null;
  } | null;
  packageDescription: string | null;
  total: string | null;
  currency: string | null;
  /** The shop's modification time of this version (orders out of order are told apart by it). */
  modifiedAt: Date | null;
}

/** The topics each shop is subscribed to, and what each one does. */
export const SHOP_TOPICS: Record<ShopPlatform, Record<string, ShopAction>> = {
  woocommerce: { 'order.created': 'upsert', 'order.updated': 'upsert', 'order.deleted': 'cancel', 'order.restored': 'upsert' },
  shopify: { 'orders/create': 'upsert', 'orders/updated': 'upsert', 'orders/cancelled': 'cancel', 'orders/delete': 'cancel' },
};

/** WooCommerce order statuses that end the order in the shop. */
const WOO_ENDED = new Set(['cancelled', 'refunded', 'failed', 'trash']);

type Json = Record<string, unknown>;
const obj = (v: unknown): Json | null => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : null);
const str = (v: unknown): string | null => {
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  if (typeof v !== 'string') return null;
  const t = v.trim();
  return t.length ? t : null;
};
const join = (parts: unknown[], sep = ', ') =>
  parts
    .map(str)
    .filter((p): p is string => p !== null)
    .join(sep) || null;

function date(v: unknown, utc = false): Date | null {
  const s = str(v);
  if (!s) return null;
  // WooCommerce's *_gmt fields are UTC without a zone designator.
  const d = new Date(utc && !/[zZ]|[+-]\d\d:?\d\d$/.test(s) ? `${s}Z` : s);
  return Number.isNaN(d.getTime()) ? null : d;
}

function items(lines: unknown, nameKeys: string[]): string | null {
  if (!Array.isArray(lines)) return null;
  const out: string[] = [];
  for (const l of lines.slice(0, 50)) {
    const line = obj(l);
    if (!line) continue;
    const name = nameKeys.map((k) => str(line[k])).find((n) => n !== null);
    if (!name) continue;
    const q = typeof line.quantity === 'number' ? line.quantity : 1;
    out.push(`${q} × ${name}`);
  }
  return out.length ? out.join(', ') : null;
}

function description(list: string | null, total: string | null, currency: string | null, number: string | null): string | null {
  const parts = [number ? `Pedido ${number}` : null, list, total ? `total ${total}${currency ? ` ${currency}` : ''}` : null].filter(
    Boolean,
  );
  return parts.length ? parts.join(' · ').slice(0, 1000) : null;
}

function lonLat(lat: unknown, lon: unknown): LonLat | null {
  const la = typeof lat === 'string' ? Number(lat) : lat;
  const lo = typeof lon === 'string' ? Number(lon) : lon;
  if (typeof la !== 'number' || typeof lo !== 'number' || !Number.isFinite(la) || !Number.isFinite(lo)) return null;
  if (Math.abs(la) > 90 || Math.abs(lo) > 180 || (la === 0 && lo === 0)) return null;
  return { lon: lo, lat: la };
}

/** A WooCommerce order (REST API v3 order JSON, as its webhooks send it). Null: no order id. */
export function readWooOrder(body: unknown): ShopOrderFacts | null {
  const o = obj(body);
  const id = o && str(o.id);
  if (!o || !id || !/^\d{1,20}$/.test(id)) return null;
  const shipping = obj(o.shipping) ?? {};
  const billing = obj(o.billing) ?? {};
  const address = join([shipping.address_1, shipping.address_2, shipping.city, shipping.state, shipping.postcode, shipping.country]);
  const name =
    join([shipping.first_name, shipping.last_name], ' ') ?? str(shipping.company) ?? join([billing.first_name, billing.last_name], ' ');
  const number = str(o.number) ?? id;
  const total = str(o.total);
  const currency = str(o.currency);
  return {
    shopOrderId: id,
    number: `#${number}`,
    cancelled: WOO_ENDED.has(String(o.status ?? '')),
    delivery:
      str(shipping.address_1) && name
        ? { customerName: name, customerPhone: str(shipping.phone) ?? str(billing.phone), address: address!, location: null }
        : null,
    packageDescription: description(items(o.line_items, ['name']), total, currency, `#${number}`),
    total,
    currency,
    modifiedAt: date(o.date_modified_gmt, true) ?? date(o.date_modified),
  };
}

/** A Shopify order (the REST order resource its order webhooks send). Null: no order id. */
export function readShopifyOrder(body: unknown): ShopOrderFacts | null {
  const o = obj(body);
  if (!o) return null;
  // Shopify ids exceed 2^53: the GraphQL id carries them exactly; the number is kept as the JSON text when it is safe.
  const gid = str(o.admin_graphql_api_id)?.match(/\/Order\/(\d{1,30})$/)?.[1] ?? null;
  const id = gid ?? (typeof o.id === 'number' && Number.isSafeInteger(o.id) ? String(o.id) : str(o.id));
  if (!id || !/^\d{1,30}$/.test(id)) return null;
  const ship = obj(o.shipping_address);
  const customer = obj(o.customer) ?? {};
  const name = ship ? (str(ship.name) ?? join([ship.first_name, ship.last_name], ' ')) : null;
  const address = ship ? join([ship.address1, ship.address2, ship.city, ship.province, ship.zip, ship.country]) : null;
  const number = str(o.name) ?? (str(o.order_number) ? `#${str(o.order_number)}` : null);
  const total = str(o.total_price);
  const currency = str(o.currency);
  return {
    shopOrderId: id,
    number,
    cancelled: str(o.cancelled_at) !== null,
    delivery:
      ship && str(ship.address1) && name
        ? {
            customerName: name,
            customerPhone: str(ship.phone) ?? str(o.phone) ?? str(customer.phone),
            address: address!,
            location: lonLat(ship.latitude, ship.longitude),
          }
        : null,
    packageDescription: description(items(o.line_items, ['title', 'name']), total, currency, number),
    total,
    currency,
    modifiedAt: date(o.updated_at),
  };
}

export const readShopOrder = (platform: ShopPlatform, body: unknown) =>
  platform === 'woocommerce' ? readWooOrder(body) : readShopifyOrder(body);
