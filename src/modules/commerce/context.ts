import type { Actor } from '../../platform/auth.js';
import type { ModuleContext } from '../../platform/context.js';
import type { Tx } from '../../platform/db/index.js';
import type { LonLat } from '../../platform/geo.js';
import type { Hook } from '../../platform/hooks.js';
import type { ObjectLinker } from '../storage/index.js';
import type { LogisticsApi } from '../logistics/index.js';
import type { SyncRegistry } from '../mobile/index.js';
import type { OrganizationService } from '../organizations/index.js';
import type { CollectedBy, ExpressMoneyFacts, OrderMoneyFacts, PaymentDestination } from './schemas.js';

/**
 * Reactions commerce announces, in the transaction of the change; the composition root subscribes money to them.
 * (A paid order delivered, cancelled or failed at the door; a delivery_express trip completed.)
 */
export interface CommerceHooks {
  orderDelivered: Hook<[Tx, Actor, OrderMoneyFacts]>;
  orderCancelled: Hook<[Tx, Actor, OrderMoneyFacts]>;
  deliveryFailed: Hook<[Tx, Actor, { order: OrderMoneyFacts } | { express: ExpressMoneyFacts }]>;
  expressDelivered: Hook<[Tx, Actor, ExpressMoneyFacts]>;
}

/** What checkout asks of the payments side (money): which destinations a merchant accepts now. */
export interface PaymentOptionsPort {
  /** platform and cash always; merchant_direct only with direct payment enabled in the merchant's payment profile. */
  paymentDestinations(tx: Tx, merchantId: string): Promise<PaymentDestination[]>;
  /** The destinations (as paymentDestinations) and who collects a cash order of this merchant, in one read. */
  paymentOptions(tx: Tx, merchantId: string): Promise<{ destinations: PaymentDestination[]; cashCollectedBy: CollectedBy }>;
}

/** The chat outbox commerce writes to when an order or express request is created or changes state: `summary` is the human message text, `data` the structured order summary. */
export interface ChatOutboxPort {
  enqueueOrderCreated(
    tx: Tx,
    input: {
      organizationId: string;
      merchantId: string;
      orderId?: string;
      expressRequestId?: string;
      territoryId?: string | null;
      summary: string;
      data?: Record<string, unknown>;
    },
  ): Promise<string | null>;
  enqueueStatusChanged(
    tx: Tx,
    input: {
      organizationId: string;
      merchantId: string;
      orderId?: string;
      expressRequestId?: string;
      territoryId?: string | null;
      status: string;
      summary?: string;
      data?: Record<string, unknown>;
    },
  ): Promise<string | null>;
  cancelPendingForOrder(tx: Tx, orderId: string): Promise<number>;
}

/** A zone banner as the marketplace lists it. */
export interface MarketplaceBanner {
  id: string;
  title: string;
  image_object_id: string | null;
  target_url: string | null;
  territory_ids: string[];
}

/** Plugged in by the module that owns zone banners (sub-administration); the marketplace lists what it returns. */
export interface MarketplaceBannerProvider {
  activeBanners(tx: Tx, actor: Actor, where: { territoryIds: string[]; location: LonLat | null }): Promise<MarketplaceBanner[]>;
}

export interface CommerceDeps {
  logistics: LogisticsApi;
  organizations: OrganizationService;
  storage: ObjectLinker;
  chat: ChatOutboxPort;
  sync: SyncRegistry;
  /** The payment destinations a merchant accepts (money, built later: a forward reference). */
  payments: PaymentOptionsPort;
  /** Zone banners of the marketplace (sub-administration, built later: a forward reference). */
  banners: MarketplaceBannerProvider;
}

export type CommerceContext = ModuleContext<CommerceDeps & { hooks: CommerceHooks }>;
