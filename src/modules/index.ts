import { createActorResolver, type AccessClaims, type ActorResolver } from '../platform/auth.js';
import type { AppContext, Module } from '../platform/context.js';
import { assertProvided, forward } from '../platform/hooks.js';
import type { TripDirectory } from './storage/index.js';
import type { SecretColumn } from '../platform/secrets.js';
import { createIdentityModule, type OrganizationDirectory } from './identity/index.js';
import { createOrganizationsModule, type CurrencyUse } from './organizations/index.js';
import { createStorageModule } from './storage/index.js';
import { createDocumentsModule } from './documents/index.js';
import { createAuditModule } from './audit/index.js';
import { createDashboardModule } from './dashboard/index.js';
import { createLogisticsModule, type LogisticsApi } from './logistics/index.js';
import { createDispatchModule } from './dispatch/index.js';
import { createCommerceModule, type MarketplaceBannerProvider, type OrderPayments, type PaymentOptionsPort } from './commerce/index.js';
import { createMoneyModule, type MoneyApi } from './money/index.js';
import { createIntegrationsModule } from './integrations/index.js';
import { CHAT_TOKEN_COLUMN, createChatModule } from './chat/index.js';
import { createNotificationsModule } from './notifications/index.js';
import { createMobileModule, createSyncRegistry } from './mobile/index.js';
import { createRealtimeModule } from './realtime/index.js';
import { createScopeLoader, createSubadminModule, effectiveScope, type SubadminApi } from './subadmin/index.js';
import { createWebhooksModule, WEBHOOK_SECRET_COLUMNS } from './webhooks/index.js';
import { createMessagesModule } from './messages/index.js';
import { createApiKeysModule } from './apikeys/index.js';
import { createShopsModule, SHOP_SECRET_COLUMN } from './shops/index.js';
import { createImportsModule } from './imports/index.js';

/** Every column that holds a secret at rest: the start-up check and `npm run secrets:rotate` go through these. */
export const SECRET_COLUMNS: readonly SecretColumn[] = [CHAT_TOKEN_COLUMN, ...WEBHOOK_SECRET_COLUMNS, SHOP_SECRET_COLUMN];

/**
 * The composition root: every module is built here, in dependency order, from the services it declares it uses
 * (typed parameters; nothing is looked up at run time). Where two modules need each other, the later one is
 * reached through a forward reference provided below, and reactions across modules (hooks and recorded events)
 * are subscribed in one list at the end.
 */
export function composeModules(ctx: AppContext) {
  // Cycles, provided once the later module exists (assertProvided refuses to start otherwise).
  const trips = forward<TripDirectory>('logistics.directory (for storage)');
  const orderFacts = forward<OrderPayments>('commerce.payments (for logistics)');
  const cashInHand = forward<Pick<MoneyApi, 'cashInHandOf'>>('money.api (for logistics: cash limits)');
  const territorySubadmins = forward<Pick<SubadminApi, 'subadminUserIdsOfTerritory'>>(
    'subadmin.api (for logistics: exceptions of a territory)',
  );
  const paymentDestinations = forward<PaymentOptionsPort>('money.api (for commerce)');
  const marketplaceBanners = forward<MarketplaceBannerProvider>('subadmin.marketplaceBanners (for commerce)');
  const tripCounts = forward<Pick<LogisticsApi, 'tripStatusCounts'>>('logistics.api (for organizations: currency in use)');
  const commerceCurrency = forward<CurrencyUse>('commerce.views (for organizations: currency in use)');
  const organizationDirectory = forward<OrganizationDirectory>('organizations.directory (for identity: names, phone countries)');

  const sync = createSyncRegistry();
  const identity = createIdentityModule(ctx, { organizations: organizationDirectory.ref });
  const storage = createStorageModule(ctx, { trips: trips.ref });
  const organizations = createOrganizationsModule(ctx, {
    identity: identity.service,
    storage: storage.linker,
    logistics: tripCounts.ref,
    commerceViews: commerceCurrency.ref,
  });
  const logistics = createLogisticsModule(ctx, {
    identity: identity.service,
    organizations: organizations.service,
    storage: storage.linker,
    orders: orderFacts.ref,
    sync,
    cash: cashInHand.ref,
    subadmins: territorySubadmins.ref,
  });
  const documents = createDocumentsModule(ctx, { identity: identity.service, logistics: logistics.api, storage: storage.linker });
  const dispatch = createDispatchModule(ctx, { logistics: logistics.api });
  const chat = createChatModule(ctx, { merchantOfUser: logistics.api.merchantOfUser, getMerchant: logistics.api.getMerchant });
  const commerce = createCommerceModule(ctx, {
    logistics: logistics.api,
    organizations: organizations.service,
    storage: storage.linker,
    chat: chat.service,
    sync,
    payments: paymentDestinations.ref,
    banners: marketplaceBanners.ref,
  });
  const money = createMoneyModule(ctx, {
    logistics: logistics.api,
    orders: commerce.payments,
    storage: storage.linker,
    organizations: organizations.service,
  });
  const integrations = createIntegrationsModule(ctx, { organizations: organizations.service });
  const notifications = createNotificationsModule(ctx, { identity: identity.service });
  const messages = createMessagesModule(ctx, {
    logistics: logistics.api,
    chat: chat.service,
    notifications: notifications.service,
    organizations: organizations.service,
    identity: identity.service,
  });
  const subadminScope = createScopeLoader(ctx);
  const subadmin = createSubadminModule(ctx, {
    logistics: logistics.api,
    identity: identity.service,
    money: money.api,
    commerceViews: commerce.views,
    storage: storage.linker,
    scope: subadminScope,
  });
  const apikeys = createApiKeysModule(ctx, { identity: identity.service });
  const shops = createShopsModule(ctx, { express: commerce.express, merchants: logistics.api });
  // No geocoder in this deployment: imported rows carry their coordinates (docs/IMPORTS.md, "Geocoding hook").
  const imports = createImportsModule(ctx, { trips: logistics.api, express: commerce.express, merchants: logistics.api, geocoder: null });
  // One actor resolver for the HTTP hook (app.ts) and the SSE streams.
  const resolveActor: ActorResolver = createActorResolver({
    sessionState: async (claims: AccessClaims) => {
      // An API key's claims were checked against its row (live, owner active) as they were made.
      const [active, operatorApproved] = await Promise.all([
        claims.key ? true : identity.service.sessionActive(claims),
        organizations.service.operatorApproved(claims.org),
      ]);
      return { active, operatorApproved };
    },
    loadSubadmin: (claims) => subadminScope.load(claims),
    apiKeyClaims: (token) => apikeys.service.claims(token),
  });
  const realtime = createRealtimeModule(ctx, {
    resolveActor,
    trips: logistics.directory,
    // A stream opened with an API key lives as long as the key (and its owner): its session is `api-key:<id>`.
    sessions: {
      aliveSessions: async (tx, sids) =>
        new Set([...(await identity.service.aliveSessions(tx, sids)), ...(await apikeys.service.aliveKeySessions(tx, sids))]),
    },
  });
  const mobile = createMobileModule(ctx, {
    organizations: organizations.service,
    sync,
    devices: notifications.devices,
    notifications: notifications.service,
    pushGateway: notifications.pushGateway,
    realtime: realtime.service,
  });
  const webhooks = createWebhooksModule(ctx, {
    logistics: logistics.api,
    notifications: notifications.service,
    subadminScope: effectiveScope,
    resources: { ...commerce.webhookResources, ...money.webhookResources },
  });
  const audit = createAuditModule(ctx);
  const dashboard = createDashboardModule(ctx, { logistics: logistics.api });

  trips.provide(logistics.directory);
  orderFacts.provide(commerce.payments);
  paymentDestinations.provide(money.api);
  cashInHand.provide(money.api);
  marketplaceBanners.provide(subadmin.marketplaceBanners);
  territorySubadmins.provide(subadmin.api);
  tripCounts.provide(logistics.api);
  commerceCurrency.provide(commerce.views);
  organizationDirectory.provide(organizations.directory);
  assertProvided(
    trips,
    orderFacts,
    paymentDestinations,
    cashInHand,
    territorySubadmins,
    marketplaceBanners,
    tripCounts,
    commerceCurrency,
    organizationDirectory,
  );

  // Reactions across modules, all of them (each runs in the transaction of the change that fires it):
  // a deactivated user's driver profile goes off duty and gives back its trips;
  identity.on.userDeactivated.subscribe(logistics.api.userDeactivated);
  // the ledger follows orders and express deliveries;
  commerce.on.orderDelivered.subscribe(money.api.orderDelivered);
  commerce.on.orderCancelled.subscribe(money.api.orderCancelled);
  commerce.on.deliveryFailed.subscribe(money.api.deliveryFailed);
  commerce.on.expressDelivered.subscribe(money.api.expressDelivered);
  // recorded events: orders and express requests follow their trip (and tell money and the chat outbox), then the
  // notification inbox and push outbox get their rows;
  ctx.events.onRecorded(commerce.followTrip);
  ctx.events.onRecorded(notifications.service.onEvent);
  // the recipient is told: his first tracking link brings the order confirmation, trip events the rest;
  logistics.on.recipientLinkIssued.subscribe(messages.service.linkIssued);
  logistics.on.etaUpdated.subscribe(messages.service.etaUpdated);
  ctx.events.onRecorded(messages.service.onEvent);
  // extension points: territory audiences of admin notifications, mobile health sections, who may read stored objects.
  notifications.service.setTerritoryAudience(subadmin.territoryAudience);
  mobile.service.registerHealthSection('storage', storage.health);
  for (const grant of [organizations.logoReadGrant, commerce.catalogPhotoReadGrant, money.readGrant, subadmin.bannerReadGrant])
    storage.addReadGrant(grant);

  /** Every module, in the order routes are registered (the OpenAPI document lists them so) and demo data is seeded. */
  const modules: Module[] = [
    identity,
    organizations,
    storage,
    documents,
    audit,
    dashboard,
    logistics,
    dispatch,
    commerce,
    money,
    integrations,
    chat,
    notifications,
    messages,
    mobile,
    realtime,
    subadmin,
    webhooks,
    apikeys,
    shops,
    imports,
  ];
  return {
    modules,
    resolveActor,
    /** The services, typed, for the server (seed) and tests. */
    services: {
      identity: identity.service,
      organizations: organizations.service,
      storage: storage.linker,
      logistics: logistics.service,
      orders: commerce.payments,
      money: money.api,
      settlements: money.runSettlements,
      chat: chat.service,
      messages: messages.service,
      integrations: integrations.service,
      notifications: notifications.service,
      pushGateway: notifications.pushGateway,
      realtime: realtime.service,
      subadminScope,
      webhooks,
    },
  };
}

export type Composition = ReturnType<typeof composeModules>;
