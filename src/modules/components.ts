import type { TSchema } from '@sinclair/typebox';
import { GeoArea, GeoPoint, Position } from '../platform/geo.js';
import { UserOut } from './identity/index.js';
import {
  DriverOut,
  GpsDeviceOut,
  LinkOut,
  MerchantOut,
  NearbyDriverOut,
  ProofOut,
  SettingsOut,
  TerritoryOut,
  TripOutSchema,
} from './logistics/schemas.js';
import {
  AddressOut,
  CatalogItemOut,
  CouponOut,
  CustomerTripOut,
  ExpressOut,
  MarketMerchant,
  MerchantBranchOut,
  OrderOut,
  PricedLineOut,
  QuoteOut,
  TariffOut,
} from './commerce/schemas.js';
import { DeviceOut, NotificationOut } from './notifications/schemas.js';
import { AuditOut } from './audit/index.js';
import { DocumentOut } from './documents/index.js';
import {
  CashEntryOut,
  ChargeOut,
  EntryOut,
  HeldCashOut,
  LedgerOut,
  MerchantSettlementOut,
  ReviewOut,
  SettlementOut,
  WalletOut,
} from './money/index.js';
import { DispatchSettingsOut, PlanOut } from './dispatch/schemas.js';
import { PreferenceOut } from './messages/schemas.js';
import { ObjectOut } from './storage/schemas.js';
import { OperatorOut } from './organizations/index.js';
import { BannerOut } from './subadmin/index.js';
import { AppBuildOut } from './mobile/schemas.js';
import { WebhookDeliveryOut, WebhookSubscriptionOut } from './webhooks/schemas.js';
import { ApiKeyOut } from './apikeys/schemas.js';
import { ImportOut } from './imports/index.js';
import { ShopConnectionOut, ShopOrderOut } from './shops/index.js';

/**
 * The resources a generated client imports by name: `finishOpenApi` (src/platform/openapi.ts) hoists each of these
 * schemas into `components.schemas` under its name and references it wherever it occurs. A module adds its resource
 * here; a schema derived from one (Partial, Omit, extra fields) stays inline.
 */
export const namedSchemas: Record<string, TSchema> = {
  Position,
  GeoPoint,
  GeoArea,
  User: UserOut,
  Trip: TripOutSchema,
  Driver: DriverOut,
  NearbyDriver: NearbyDriverOut,
  Merchant: MerchantOut,
  Territory: TerritoryOut,
  Proof: ProofOut,
  LogisticsSettings: SettingsOut,
  Order: OrderOut,
  OrderLine: PricedLineOut,
  Quote: QuoteOut,
  CatalogItem: CatalogItemOut,
  CustomerTrip: CustomerTripOut,
  Branch: MerchantBranchOut,
  Coupon: CouponOut,
  Address: AddressOut,
  Tariff: TariffOut,
  ExpressDelivery: ExpressOut,
  Wallet: WalletOut,
  WalletEntry: EntryOut,
  PaymentReview: ReviewOut,
  Notification: NotificationOut,
  Device: DeviceOut,
  AuditEntry: AuditOut,
  Document: DocumentOut,
  DispatchPlan: PlanOut,
  DispatchSettings: DispatchSettingsOut,
  DriverSettlement: SettlementOut,
  StorageObject: ObjectOut,
  Operator: OperatorOut,
  RecipientLink: LinkOut,
  MarketplaceMerchant: MarketMerchant,
  ZoneBanner: BannerOut,
  AppBuild: AppBuildOut,
  FinanceCharge: ChargeOut,
  LedgerLine: LedgerOut,
  WebhookSubscription: WebhookSubscriptionOut,
  ApiKey: ApiKeyOut,
  Import: ImportOut,
  GpsDevice: GpsDeviceOut,
  ShopConnection: ShopConnectionOut,
  ShopOrder: ShopOrderOut,
  WebhookDelivery: WebhookDeliveryOut,
  DriverCashEntry: CashEntryOut,
  MerchantSettlement: MerchantSettlementOut,
  MerchantHeldCash: HeldCashOut,
  RecipientPreference: PreferenceOut,
};

export const tagDescriptions: Record<string, string> = {
  auth: 'Login, refresh, logout and the current user',
  trips: 'Delivery trips: creation, assignment, status, tracking, proofs',
  customer: 'Customer app: marketplace, cart, orders, addresses',
  merchant: 'Merchant app: catalog, branches, orders',
  driver: 'Driver app',
  system: 'Health and contracts',
  webhooks: 'Outbound webhooks: subscriptions, signed deliveries, the delivery log',
  'api-keys': 'API keys for integrations: created with scopes, shown once, revoked',
  shops: 'Online shops (WooCommerce, Shopify): connections, and their signed order webhooks becoming express requests',
  imports: 'Spreadsheet imports of trips and express requests (CSV, XLSX): templates, dry runs, row-by-row reports',
  'recipient-messages':
    "What a trip's recipient is told (order confirmed, driver assigned, arriving soon, delivered, failed): templates, previews, opt-outs",
};
