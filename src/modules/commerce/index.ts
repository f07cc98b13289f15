import type { Actor } from '../../platform/auth.js';
import { withDeps, type Api, type AppContext, type DemoSeed } from '../../platform/context.js';
import type { Tx } from '../../platform/db/index.js';
import { hook } from '../../platform/hooks.js';
import { newId } from '../../platform/ids.js';
import { scopeOf } from '../../platform/scope.js';
import type { ObjectReadGrant } from '../storage/index.js';
import type { CommerceContext, CommerceDeps, CommerceHooks } from './context.js';
import { merchantsShowingImage } from './repo/catalog.js';
import { commerceStatusCounts, findOrder, type OrderRow } from './repo/orders.js';
import { insertTariff } from './repo/tariffs.js';
import { addressRoutes } from './routes/addresses.js';
import { branchRoutes } from './routes/branches.js';
import { catalogRoutes } from './routes/catalog.js';
import { checkoutRoutes } from './routes/checkout.js';
import { couponRoutes } from './routes/coupons.js';
import { customerTripRoutes } from './routes/customer-trips.js';
import { expressRoutes } from './routes/express.js';
import { marketplaceRoutes } from './routes/marketplace.js';
import { orderRoutes } from './routes/orders.js';
import { tariffRoutes } from './routes/tariffs.js';
import { OrderOut, type ServiceMode } from './schemas.js';
import { createAddress } from './service/addresses.js';
import { createBranch } from './service/branches.js';
import { createCatalogItem } from './service/catalog.js';
import { orderOut } from './service/common.js';
import { createCoupon } from './service/coupons.js';
import { createExpressApi } from './service/express.js';
import { createOrderService, type OrderService } from './service/orders.js';
import { createCommerceViews } from './service/staff-views.js';
import { registerCommerceSync } from './service/sync.js';
import { createTripFollower } from './service/trip-hooks.js';

export type {
  ChatOutboxPort,
  CommerceContext,
  CommerceDeps,
  CommerceHooks,
  MarketplaceBanner,
  MarketplaceBannerProvider,
  PaymentOptionsPort,
} from './context.js';
export type { CommerceViews } from './service/staff-views.js';
export type { OrderReportRow } from './repo/orders.js';
export {
  CouponFields,
  CollectedBySchema,
  CouponOut,
  OrderOut,
  OrderStatusSchema,
  TariffOut,
  type CollectedBy,
  type ExpressMoneyFacts,
  type OrderMoneyFacts,
  type PaymentDestination,
  type PaymentStatus,
} from './schemas.js';
export { ORDER_TRANSITIONS, MERCHANT_TRANSITIONS, type OrderPayments } from './service/orders.js';
export type { ExpressApi, ExpressInput, ExpressRevision } from './service/express.js';

export function createCommerceModule(base: AppContext, deps: CommerceDeps) {
  const hooks: CommerceHooks = { orderDelivered: hook(), orderCancelled: hook(), deliveryFailed: hook(), expressDelivered: hook() };
  const ctx: CommerceContext = withDeps(base, { ...deps, hooks });
  // A catalog photo is shown to the organization's customers while an item of an approved merchant uses it.
  const catalogPhotoReadGrant: ObjectReadGrant = async (tx, _actor, o) => {
    if (o.purpose !== 'other') return false;
    for (const merchantId of await merchantsShowingImage(tx, o.id))
      if ((await ctx.deps.logistics.getMerchant(tx, merchantId))?.status === 'approved') return true;
    return false;
  };
  const orders = createOrderService(ctx);
  registerCommerceSync(ctx);
  ctx.dashboard.set('commerce', (tx, actor) => commerceStatusCounts(tx, scopeOf(actor)));
  return {
    name: 'commerce',
    on: hooks,
    /** Express requests created, changed and cancelled by other modules (shop webhooks) as the merchant. */
    express: createExpressApi(ctx),
    /** Order facts and payment status, for logistics and money. */
    payments: orders.payments,
    /** Staff read views of commerce by territory, and coupon creation on behalf of a merchant (sub-administration). */
    views: createCommerceViews(ctx),
    /** Orders and express requests follow their trip: subscribed to the recorded events by the composition root. */
    followTrip: createTripFollower(ctx, orders),
    catalogPhotoReadGrant,
    /** Orders as the order GETs return them (outbound webhooks send them with each order event); null = none. */
    webhookResources: {
      order: {
        schema: OrderOut,
        read: async (tx: Tx, id: string, current?: unknown) => {
          // The order events carry the order as their transaction holds it (OrderService's announce).
          const o = (current as OrderRow | undefined) ?? (await findOrder(tx, id));
          return o ? orderOut(o) : null;
        },
      },
    },
    routes: (app: Api) => commerceRoutes(app, ctx, orders),
    seed: (demo: DemoSeed) => seedCommerce(ctx, demo),
  };
}

function commerceRoutes(app: Api, ctx: CommerceContext, orders: OrderService) {
  branchRoutes(app, ctx);
  catalogRoutes(app, ctx);
  couponRoutes(app, ctx);
  orderRoutes(app, ctx, orders);
  expressRoutes(app, ctx);
  tariffRoutes(app, ctx);
  addressRoutes(app, ctx);
  marketplaceRoutes(app, ctx);
  checkoutRoutes(app, ctx);
  customerTripRoutes(app, ctx);
}

/** Demo: a La Paz branch of the demo store with 5 items, both tariffs of the demo territory, coupon DEMO10, an address for the demo customer. */
async function seedCommerce(ctx: CommerceContext, demo: DemoSeed) {
  const as = (userId: string, kind: Actor['kind'], role: Actor['role']): Actor => ({
    userId,
    organizationId: demo.organizationId,
    role,
    kind,
    sessionId: 'seed',
    requestId: 'seed',
    subadmin: null,
  });
  const merchant = as(demo.users.merchant, 'comercio', 'comercio');
  await ctx.db.withTenant({ organizationId: demo.organizationId, userId: demo.users.merchant }, async (tx) => {
    if (!(await ctx.deps.logistics.merchantOfUser(tx, demo.users.merchant))) return;
    const branch = await createBranch(ctx, tx, merchant, {
      name: 'Demo Store Centro',
      address: 'Av. 16 de Julio 1490, La Paz',
      location: { type: 'Point', coordinates: [-68.1335, -16.499] },
      // Open around the clock, so the demo (and anyone trying it at night) can always order.
      opening_hours: [0, 1, 2, 3, 4, 5, 6].map((day) => ({ day, open: '00:00', close: '00:00' })),
    });
    const items = [
      ['Salteña de pollo', '8.50'],
      ['Api morado con pastel', '12.00'],
      ['Sandwich de chola', '15.00'],
      ['Anticucho (porción)', '25.00'],
      ['Jugo de tumbo 500 ml', '9.90'],
    ];
    for (const [name, price] of items) await createCatalogItem(ctx, tx, merchant, { name, price, description: `${name} (demo)` });
    await createCoupon(ctx, tx, merchant, {
      code: 'DEMO10',
      name: '10% off (demo)',
      discount_type: 'percent',
      discount_value: '10',
      max_discount: '20.00',
      minimum_order: '30.00',
      per_customer_limit: 5,
    });
    if (branch.territory_id) {
      for (const [mode, base, perKm, min, share] of [
        ['marketplace', '8.00', '2.50', '10.00', '70'],
        ['delivery_express', '12.00', '3.00', '15.00', '75'],
      ]) {
        await insertTariff(tx, demo.organizationId, demo.users.admin, {
          id: newId(),
          territory_id: branch.territory_id,
          service_mode: mode as ServiceMode,
          base_fee: base,
          per_km_fee: perKm,
          minimum_fee: min,
          driver_share_type: 'percent',
          driver_share_value: share,
          active: true,
        });
      }
    }
  });
  const customer = as(demo.users.customer, 'delivery', 'delivery');
  await ctx.db.withTenant({ organizationId: demo.organizationId, userId: demo.users.customer }, (tx) =>
    createAddress(tx, customer, {
      label: 'Casa',
      address: 'Calle Belisario Salinas 520, Sopocachi, La Paz',
      location: { type: 'Point', coordinates: [-68.1265, -16.5105] },
    }),
  );
}
