import { GeoPoint } from '../../platform/geo.js';
import { Id, Literals, Money, NonNegativeMoney, Nullable, Phone, ShortText, Strict, Timestamp } from '../../platform/schemas.js';
import {
  AMOUNT_TYPES,
  COLLECTED_BY,
  EXPRESS_STATUSES,
  ORDER_SOURCES,
  ORDER_STATUSES,
  PAYMENT_DESTINATIONS,
  PAYMENT_STATUSES,
} from './tables.js';
import { Type, type Static } from '@sinclair/typebox';

/**
 * The pickup window and the load an order or express request may give its trip (optional; validated as a trip's: 422
 * WINDOW_INVALID or LOAD_INVALID naming the field, nothing written).
 */
export const WindowsLoadIn = {
  pickup_after: TripWindowsLoadIn.pickup_after,
  pickup_before: TripWindowsLoadIn.pickup_before,
  units: TripWindowsLoadIn.units,
  weight_kg: TripWindowsLoadIn.weight_kg,
  volume_l: TripWindowsLoadIn.volume_l,
};
/** What an order or express request answers of them (its trip carries the same). */
export const WindowsLoadOut = {
  pickup_after: Nullable(Timestamp),
  pickup_before: Nullable(Timestamp),
  units: Type.Integer({ description: 'load in units (default 1)' }),
  weight_kg: Nullable(Type.Number({ description: 'load in kilograms' })),
  volume_l: Nullable(Type.Number({ description: 'load in litres' })),
};

export const HHMM = '^([01]\\d|2[0-3]):[0-5]\\d$';

export const CouponCode = Type.String({
  pattern: '^[A-Za-z0-9_-]{3,32}$',
  description: '3-32 letters, digits, _ or -; unique per merchant, case-insensitive',
});

export const OrderStatusSchema = Literals(
  ORDER_STATUSES,
  'pending_confirmation → confirmed → preparing → ready → in_delivery → delivered; cancelled from any non-terminal state; ' +
    'a failed delivery: in_delivery → delivery_failed (→ returned when the goods are back at the merchant)',
);

export const PaymentDestinationSchema = Literals(PAYMENT_DESTINATIONS, 'platform (default), merchant_direct or cash');

export const PaymentStatusSchema = Literals(
  PAYMENT_STATUSES,
  'pending → pending_review (direct-payment proof) → paid | failed (failed → pending_review with a new proof); pending | authorized → paid when the platform ' +
    'records a platform payment as received (POST /admin/orders/{id}/payment-received), cash orders at delivery; paid → partially_refunded → refunded (refunds). ' +
    'A cancelled order: pending_review | authorized → failed, a received platform payment → refunded. A delivered platform order stays pending until received: its ' +
    'wallet entries are pending and no settlement pays them out.',
);

export const CollectedBySchema = Literals(
  COLLECTED_BY,
  "cash orders: who takes the cash at the door — `driver` (the platform's driver; the platform holds it once he remits it) or `merchant` (his own staff); null for other destinations",
);

export const OrderSourceSchema = Literals(ORDER_SOURCES);

/** How long an order takes to prepare, in minutes (an order when accepted, a branch's default). */
export const PreparationMinutes = Type.Integer({ minimum: 1, maximum: 240, description: 'minutes, 1 to 240' });

export const ExpressStatusSchema = Literals(
  EXPRESS_STATUSES,
  'requested → created (trip exists) → completed | cancelled | delivery_failed (→ returned), following the trip',
);

/** Tariffs are per service mode: the trip's, as logistics defines it. */
import { ServiceModeSchema, TripWindowsLoadIn, type ServiceMode } from '../logistics/index.js';
export { ServiceModeSchema, type ServiceMode };

export type OrderStatus = Static<typeof OrderStatusSchema>;
export type PaymentDestination = Static<typeof PaymentDestinationSchema>;
/** Cash orders: who takes the cash at the door (the platform's driver, or the merchant's own staff). */
export type CollectedBy = Static<typeof CollectedBySchema>;
export type PaymentStatus = Static<typeof PaymentStatusSchema>;
export type AmountType = (typeof AMOUNT_TYPES)[number];

/** An order as the payments side (wallet, reviews, cash) sees it, in the transaction of the change. */
export interface OrderMoneyFacts {
  orderId: string;
  merchantId: string;
  customerUserId: string;
  tripId: string | null;
  territoryId: string | null;
  paymentDestination: PaymentDestination;
  /** Cash orders only (null otherwise): who collected the cash. */
  collectedBy: CollectedBy | null;
  paymentStatus: PaymentStatus;
  status: string;
  subtotal: string;
  discountTotal: string;
  deliveryFee: string;
  total: string;
  currency: string;
}

/** A completed delivery_express trip (commerce tells money in the trip's transaction). */
export interface ExpressMoneyFacts {
  expressRequestId: string;
  merchantId: string;
  tripId: string;
  driverId: string | null;
  territoryId: string | null;
  deliveryFee: string;
  driverEarning: string;
  currency: string;
}

export const PricedLineOut = Type.Object({
  catalog_item_id: Type.String(),
  name: Type.String(),
  unit_price: Money,
  quantity: Type.Integer(),
  line_total: Money,
});

export const OrderOut = Type.Object({
  id: Type.String(),
  status: OrderStatusSchema,
  merchant_id: Type.String(),
  branch_id: Type.String(),
  customer_user_id: Type.String(),
  address_id: Type.String(),
  dropoff_address: Type.String(),
  dropoff_location: GeoPoint,
  territory_id: Nullable(Type.String()),
  payment_destination: PaymentDestinationSchema,
  collected_by: Nullable(CollectedBySchema),
  payment_status: PaymentStatusSchema,
  payment_review_id: Nullable(Type.String()),
  order_source: OrderSourceSchema,
  coupon_id: Nullable(Type.String()),
  coupon_code: Nullable(Type.String()),
  items: Type.Array(PricedLineOut),
  subtotal: Money,
  discount_total: Money,
  delivery_fee: Money,
  total: Money,
  currency: Type.String(),
  quote_id: Nullable(Type.String()),
  trip_id: Nullable(Type.String()),
  notes: Nullable(Type.String()),
  status_reason: Nullable(Type.String()),
  promised_at: Type.Union([Timestamp, Type.Null()], {
    description:
      "when the delivery is promised: set at checkout (the branch's preparation + travel + dispatch buffer, or a scheduled window's end), moved when the merchant accepts with a preparation time; the trip inherits it",
  }),
  deliver_after: Type.Union([Timestamp, Type.Null()], { description: "a scheduled delivery window's start" }),
  deliver_before: Type.Union([Timestamp, Type.Null()], { description: "a scheduled delivery window's end (the promise)" }),
  ...WindowsLoadOut,
  preparation_min: Nullable(Type.Integer({ description: 'the preparation time the merchant gave when accepting (minutes); null before' })),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const AddressOut = Type.Object({
  id: Type.String(),
  label: Nullable(Type.String()),
  address: Type.String(),
  location: GeoPoint,
  notes: Nullable(Type.String()),
  created_at: Timestamp,
});

export const OpeningHours = Type.Array(
  Strict({
    day: Type.Integer({ minimum: 0, maximum: 6, description: '0 = Sunday' }),
    open: Type.String({ pattern: HHMM }),
    close: Type.String({ pattern: HHMM }),
  }),
  {
    maxItems: 50,
    description:
      'Opening intervals per weekday in the organization time zone. close after open: same day; close before open: runs past midnight into the next day (20:00-02:00); ' +
      'close equal to open: 24 hours. No intervals: no declared hours (always open). Orders and preflights outside them get 422 BRANCH_CLOSED with next_open_at.',
  },
);
export type OpeningHours = Static<typeof OpeningHours>;

export const BranchOut = Type.Object({
  id: Type.String(),
  merchant_id: Type.String(),
  name: Type.String(),
  address: Type.String(),
  location: GeoPoint,
  opening_hours: OpeningHours,
  phone: Nullable(Type.String()),
  active: Type.Boolean(),
  preparation_min: Type.Integer({
    description:
      "minutes the branch usually needs to prepare an order: checkout's promise counts them (the merchant may give another time when accepting)",
  }),
  territory_id: Nullable(Type.String()),
  created_at: Timestamp,
  updated_at: Timestamp,
});

/** A branch as its merchant sees it: with whether it is open now (its hours in the organization's time zone) and when it opens next. */
export const MerchantBranchOut = Type.Object({
  ...BranchOut.properties,
  open_now: Type.Boolean({
    description: 'open at the time of the response by its opening hours (no hours declared: always open); an inactive branch is never open',
  }),
  next_open_at: Nullable(Timestamp),
});

export const BranchFields = {
  name: ShortText(120),
  address: ShortText(300),
  location: GeoPoint,
  opening_hours: Type.Optional(OpeningHours),
  phone: Type.Optional(Phone),
  active: Type.Optional(Type.Boolean()),
  preparation_min: Type.Optional(PreparationMinutes),
};

export const CatalogItemOut = Type.Object({
  id: Type.String(),
  merchant_id: Type.String(),
  name: Type.String(),
  description: Nullable(Type.String()),
  price: Money,
  currency: Type.String(),
  available: Type.Boolean(),
  branch_ids: Type.Array(Type.String(), { description: 'branches offering the item; empty = every branch' }),
  image_object_id: Nullable(Type.String()),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const BranchIds = Type.Array(Id, { maxItems: 200, uniqueItems: true });

export const CartItems = Type.Array(Strict({ catalog_item_id: Id, quantity: Type.Integer({ minimum: 1, maximum: 999 }) }), {
  minItems: 1,
  maxItems: 50,
  description:
    'One line per catalog item, with its quantity: a `catalog_item_id` that appears twice is 400 VALIDATION_FAILED (`items[i].catalog_item_id`: duplicate).',
});

export const CouponResult = Nullable(
  Type.Object({
    code: Type.String(),
    coupon_id: Nullable(Type.String()),
    applied: Type.Boolean(),
    reason_code: Nullable(
      Type.String({
        description:
          'why it does not apply: COUPON_NOT_FOUND, COUPON_INACTIVE, COUPON_EXPIRED, COUPON_NOT_YET_VALID, COUPON_MINIMUM_NOT_MET, COUPON_USAGE_LIMIT_REACHED, COUPON_CUSTOMER_LIMIT_REACHED, COUPON_NOT_APPLICABLE',
      }),
    ),
    reason: Nullable(Type.String()),
  }),
);

export const QuoteOut = Type.Object({
  id: Type.String(),
  merchant_id: Type.String(),
  branch_id: Type.String(),
  address_id: Type.String(),
  payment_destination: PaymentDestinationSchema,
  payment_destinations: Type.Array(PaymentDestinationSchema, {
    description:
      'the destinations this merchant accepts now: platform and cash always, merchant_direct only while his direct payment is enabled',
  }),
  lines: Type.Array(PricedLineOut),
  subtotal: Money,
  coupon: CouponResult,
  coupon_id: Nullable(Type.String()),
  coupon_code: Nullable(Type.String()),
  discount_total: Money,
  delivery_fee: Money,
  total: Money,
  currency: Type.String(),
  payment_required: Type.Boolean({
    description: 'true when an order would be refused with 422 PAYMENT_REQUIRED (platform prepayment required and connector ready)',
  }),
  promised_at: Type.Unsafe<Date | string>({
    type: 'string',
    format: 'date-time',
    description:
      "when the delivery is promised: now + the branch's preparation_min + travel (the organization's learned speed) + dispatch_buffer_min, or deliver_before for a scheduled window; the order and its trip keep it",
  }),
  deliver_after: Nullable(Timestamp),
  deliver_before: Nullable(Timestamp),
  ...WindowsLoadOut,
  expires_at: Timestamp,
  created_at: Timestamp,
});

export const CartBodyProps = {
  branch_id: Id,
  address_id: Id,
  items: CartItems,
  coupon_code: Type.Optional(CouponCode),
  payment_destination: Type.Optional(PaymentDestinationSchema),
  deliver_after: Type.Optional(
    Type.String({ format: 'date-time', description: 'a scheduled delivery window start (needs deliver_before)' }),
  ),
  deliver_before: Type.Optional(
    Type.String({
      format: 'date-time',
      description:
        'a scheduled delivery window end, the promise: after deliver_after (422 WINDOW_INVALID) and in the future (422 PROMISE_IN_PAST); the quote keeps the window',
    }),
  ),
  ...WindowsLoadIn,
};

export const CouponOut = Type.Object({
  id: Type.String(),
  merchant_id: Type.String(),
  code: Type.String(),
  name: Type.String(),
  description: Nullable(Type.String()),
  discount_type: Literals(AMOUNT_TYPES),
  discount_value: Money,
  max_discount: Nullable(Money),
  minimum_order: Money,
  product_ids: Type.Array(Type.String()),
  branch_ids: Type.Array(Type.String()),
  valid_from: Nullable(Timestamp),
  valid_until: Nullable(Timestamp),
  usage_limit: Nullable(Type.Integer()),
  per_customer_limit: Type.Integer(),
  usage_count: Type.Integer(),
  active: Type.Boolean(),
  created_by_user_id: Nullable(Type.String()),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const CouponFields = {
  code: CouponCode,
  name: ShortText(120),
  description: Type.Optional(ShortText(1000)),
  discount_type: Literals(AMOUNT_TYPES, 'percent of the eligible subtotal, or a fixed amount'),
  discount_value: NonNegativeMoney,
  max_discount: Type.Optional(NonNegativeMoney),
  minimum_order: Type.Optional(NonNegativeMoney),
  product_ids: Type.Optional(Type.Array(Id, { maxItems: 500, uniqueItems: true })),
  branch_ids: Type.Optional(Type.Array(Id, { maxItems: 200, uniqueItems: true })),
  valid_from: Type.Optional(Type.String({ format: 'date-time' })),
  valid_until: Type.Optional(Type.String({ format: 'date-time' })),
  usage_limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000_000 })),
  per_customer_limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000_000 })),
  active: Type.Optional(Type.Boolean()),
};

export const CustomerTripOut = Type.Object({
  id: Type.String(),
  status: Type.String({ description: 'trip status: pending, assigned, accepted, picked_up, in_transit, completed, cancelled' }),
  order_id: Nullable(Type.String()),
  service_mode: Type.String(),
  pickup_location: GeoPoint,
  pickup_address: Type.String(),
  dropoff_location: GeoPoint,
  dropoff_address: Type.String(),
  delivery_fee: Money,
  currency: Type.String(),
  delivery_pin: Type.String({ description: 'the PIN the customer gives the driver at delivery; shown only to this customer' }),
  driver: Nullable(
    Type.Object(
      {
        id: Type.String(),
        display_name: Type.String(),
        phone: Nullable(Type.String()),
        location: Nullable(GeoPoint),
        location_at: Nullable(Timestamp),
      },
      { description: 'while a driver carries the trip (assigned .. in_transit)' },
    ),
  ),
  assigned_at: Nullable(Timestamp),
  picked_up_at: Nullable(Timestamp),
  completed_at: Nullable(Timestamp),
  cancelled_at: Nullable(Timestamp),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const ExpressOut = Type.Object({
  id: Type.String(),
  status: ExpressStatusSchema,
  territory_id: Nullable(Type.String()),
  merchant_id: Type.String(),
  branch_id: Nullable(Type.String()),
  requested_by_user_id: Nullable(Type.String()),
  customer_name: Type.String(),
  customer_phone: Nullable(Type.String()),
  pickup_address: Type.String(),
  dropoff_address: Type.String(),
  pickup_location: Nullable(GeoPoint),
  dropoff_location: Nullable(GeoPoint),
  package_description: Nullable(Type.String()),
  declared_value: Money,
  delivery_fee: Money,
  source_channel: Type.String(),
  trip_id: Nullable(Type.String()),
  deliver_after: Nullable(Timestamp),
  deliver_before: Nullable(Timestamp),
  ...WindowsLoadOut,
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const ExpressBody = Strict({
  branch_id: Type.Optional(Id),
  pickup_location: Type.Optional(GeoPoint),
  pickup_address: Type.Optional(ShortText(300)),
  customer_name: ShortText(120),
  customer_phone: Type.Optional(Phone),
  dropoff_address: ShortText(300),
  dropoff_location: GeoPoint,
  package_description: Type.Optional(ShortText(1000)),
  declared_value: Type.Optional(NonNegativeMoney),
  deliver_after: Type.Optional(
    Type.String({ format: 'date-time', description: 'delivery window start (needs deliver_before; a planned route waits)' }),
  ),
  deliver_before: Type.Optional(
    Type.String({
      format: 'date-time',
      description:
        'delivery window end, the promise of the trip: after deliver_after (422 WINDOW_INVALID) and in the future (422 PROMISE_IN_PAST)',
    }),
  ),
  ...WindowsLoadIn,
});

export const MarketBannerOut = Type.Object({
  id: Type.String(),
  title: Type.String(),
  image_object_id: Nullable(Type.String()),
  target_url: Nullable(Type.String()),
  territory_ids: Type.Array(Type.String()),
});

export const MarketItem = Type.Object({
  id: Type.String(),
  name: Type.String(),
  description: Nullable(Type.String()),
  price: Money,
  currency: Type.String(),
  branch_ids: Type.Array(Type.String()),
  image_object_id: Nullable(Type.String()),
});

export const MarketMerchant = Type.Object({
  id: Type.String(),
  name: Type.String(),
  phone: Nullable(Type.String()),
  territory_id: Nullable(Type.String()),
  branches: Type.Array(Type.Object({ ...BranchOut.properties, distance_m: Nullable(Type.Number()) })),
  items: Type.Array(MarketItem),
});

export const MarketplaceOut = Type.Object({
  data: Type.Array(MarketMerchant),
  next_cursor: Nullable(Type.String()),
  banners: Type.Array(MarketBannerOut),
});

export const ShareType = Literals(
  AMOUNT_TYPES,
  "driver's share of the delivery fee: a percent of it, or a fixed amount (capped at the fee)",
);

export const TariffOut = Type.Object({
  id: Type.String(),
  territory_id: Type.String(),
  service_mode: ServiceModeSchema,
  base_fee: Money,
  per_km_fee: Money,
  minimum_fee: Money,
  driver_share_type: ShareType,
  driver_share_value: Money,
  active: Type.Boolean(),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const TariffFieldProps = {
  base_fee: NonNegativeMoney,
  per_km_fee: NonNegativeMoney,
  minimum_fee: Type.Optional(NonNegativeMoney),
  driver_share_type: Type.Optional(ShareType),
  driver_share_value: Type.String({
    pattern: NonNegativeMoney.pattern,
    description: 'an amount, or for `percent` (the default type) a percentage: more than 100 is 400 VALIDATION_FAILED',
  }),
  active: Type.Optional(Type.Boolean()),
};
