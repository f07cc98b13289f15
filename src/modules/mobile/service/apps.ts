import type { Actor, AppRole } from '../../../platform/auth.js';
import type { MobileContext } from '../context.js';
import type { Tx } from '../../../platform/db/index.js';
import { newId } from '../../../platform/ids.js';
import { insertBuild, listBuilds, type AppBuildRow } from '../repo.js';

export type { AppBuildRow } from '../repo.js';

/** The four apps. Organizations without published builds get these (the V0.7.2 production release). */
export const DEFAULT_APPS: Record<AppRole, { name: string; package_name: string }> = {
  administrator: { name: 'Administrator', package_name: 'com.deliveryplatform.admin' },
  comercio: { name: 'Comercio', package_name: 'com.deliveryplatform.comercio' },
  delivery: { name: 'Delivery', package_name: 'com.deliveryplatform.delivery' },
  repartidor: { name: 'Repartidor', package_name: 'com.deliveryplatform.repartidor' },
};
const DEFAULT_BUILD = { version_name: '0.7.2', build_number: 702, min_supported_build: 601, channel: 'production' };

export function defaultBuilds(): AppBuildRow[] {
  const rows: AppBuildRow[] = [];
  for (const [role, app] of Object.entries(DEFAULT_APPS) as [AppRole, (typeof DEFAULT_APPS)[AppRole]][]) {
    for (const platform of ['android', 'ios'] as const) {
      rows.push({
        id: `default-${role}-${platform}`,
        app_role: role,
        platform,
        package_name: app.package_name,
        ...DEFAULT_BUILD,
        released_at: new Date('2026-01-01T00:00:00Z'),
      });
    }
  }
  return rows;
}

const API = '/api/v1';
const COMMON_FEATURES = {
  offline_sync: true,
  push_notifications: true,
  realtime_streams: true,
  notification_inbox: true,
  platform_payments: false,
};
const ROLE_FEATURES: Record<AppRole, Record<string, boolean>> = {
  administrator: {
    dispatch_console: true,
    optimized_dispatch: true,
    subadministration: true,
    territory_tariffs: true,
    reports: true,
    audit: true,
  },
  comercio: {
    branches: true,
    catalog: true,
    orders: true,
    coupons: true,
    direct_payments: true,
    delivery_express: true,
    chat_channel: true,
    settlement_rule: true,
  },
  delivery: { marketplace: true, addresses: true, orders: true, coupons: true, direct_payments: true, trip_tracking: true },
  repartidor: { trips: true, gps_batch: true, proof_of_delivery: true, earnings: true, settlements: true, availability: true },
};

const COMMON_ENDPOINTS = {
  login: `${API}/auth/login`,
  refresh: `${API}/auth/refresh`,
  logout: `${API}/auth/logout`,
  revoke: `${API}/auth/mobile/revoke`,
  me: `${API}/me`,
  bootstrap: `${API}/mobile/bootstrap`,
  contract: `${API}/mobile/contract`,
  brand_assets: `${API}/mobile/brand-assets`,
  devices: `${API}/mobile/devices`,
  heartbeat: `${API}/mobile/heartbeat`,
  notifications: `${API}/notifications`,
  sync_pull: `${API}/mobile/sync/pull`,
  sync_push: `${API}/mobile/sync/push`,
  stream_tokens: `${API}/realtime/tokens`,
  my_stream: `${API}/realtime/me/stream`,
  trip_stream: `${API}/realtime/trips/{id}/stream`,
  storage_object: `${API}/storage/objects/{id}`,
};
const ROLE_ENDPOINTS: Record<AppRole, Record<string, string>> = {
  administrator: {
    dashboard: `${API}/dashboard`,
    trips: `${API}/trips`,
    dispatch: `${API}/admin/dispatch`,
    live_map: `${API}/admin/live-map`,
    organization_stream: `${API}/realtime/organization/stream`,
    territories_stream: `${API}/realtime/territories/stream`,
    mobile_health: `${API}/admin/mobile-health`,
    admin_notifications: `${API}/admin/notifications`,
  },
  comercio: {
    branches: `${API}/merchant/branches`,
    catalog: `${API}/merchant/catalog`,
    orders: `${API}/merchant/orders`,
    coupons: `${API}/merchant/coupons`,
    payment_reviews: `${API}/merchant/payment-reviews`,
    delivery_express: `${API}/merchant/delivery-express`,
  },
  delivery: {
    marketplace: `${API}/customer/marketplace`,
    addresses: `${API}/customer/addresses`,
    orders: `${API}/customer/orders`,
    trips: `${API}/customer/trips`,
    checkout_preflight: `${API}/customer/checkout/preflight`,
  },
  repartidor: {
    driver_me: `${API}/driver/me`,
    trips: `${API}/driver/trips`,
    availability: `${API}/driver/availability`,
    location: `${API}/driver/location`,
    locations_batch: `${API}/driver/locations/batch`,
    earnings: `${API}/driver/earnings`,
    evidence_uploads: `${API}/storage/evidence/uploads`,
  },
};

export const EVENT_TYPES = [
  'trip.created',
  'trip.assigned',
  'trip.accepted',
  'trip.rejected',
  'trip.offer_expired',
  'trip.location_updated',
  'trip.geofence_entered',
  'trip.pickup_verified',
  'trip.on_the_way',
  'trip.delivery_verified',
  'trip.completed',
  'trip.cancelled',
  'trip.delivery_failed',
  'trip.returned',
  'trip.delayed',
  'trip.location_stale',
  'trip.rejected_repeatedly',
  'trip.pin_locked',
  'notification.created',
];

/** Sections of GET /admin/mobile-health contributed by other modules (storage usage, integration states). */
export type HealthSection = (tx: Tx, actor: Actor) => Promise<Record<string, unknown>>;

export function createMobileService(ctx: MobileContext) {
  const healthSections = new Map<string, HealthSection>();

  async function buildsIn(tx: Tx): Promise<AppBuildRow[]> {
    const rows = await listBuilds(tx);
    const published = new Set(rows.map((r) => r.app_role));
    return [...rows, ...defaultBuilds().filter((d) => !published.has(d.app_role))];
  }

  /** Latest build per platform of one app role. */
  const latestOf = (builds: AppBuildRow[], role: AppRole) => {
    const out: Record<string, AppBuildRow> = {};
    for (const b of builds) if (b.app_role === role && b.channel === 'production' && !out[b.platform]) out[b.platform] = b;
    return Object.values(out).map((b) => ({
      platform: b.platform,
      version_name: b.version_name,
      build_number: b.build_number,
      min_supported_build: b.min_supported_build,
      released_at: b.released_at,
    }));
  };

  async function brandIn(tx: Tx) {
    const b = await ctx.deps.organizations.branding(tx);
    const logo = b?.logo_object_id ? `${API}/storage/objects/${b.logo_object_id}` : null;
    return {
      organization_id: b?.id ?? null,
      name: b?.name ?? null,
      slug: b?.slug ?? null,
      primary_color: b?.primary_color ?? null,
      secondary_color: b?.secondary_color ?? null,
      logo_object_id: b?.logo_object_id ?? null,
      assets: { logo: logo, manifest: `${API}/mobile/brand-assets` },
    };
  }

  return {
    registerHealthSection(name: string, fn: HealthSection) {
      healthSections.set(name, fn);
    },

    async bootstrap(actor: Actor) {
      return ctx.db.withTenant(actor, async (tx) => {
        const [builds, brand] = [await buildsIn(tx), await brandIn(tx)];
        return {
          app_role: actor.role,
          principal: actor.kind,
          user_id: actor.userId,
          organization_id: actor.organizationId,
          app: {
            name: DEFAULT_APPS[actor.role].name,
            package_name: builds.find((b) => b.app_role === actor.role)?.package_name ?? DEFAULT_APPS[actor.role].package_name,
            builds: latestOf(builds, actor.role),
          },
          features: { ...COMMON_FEATURES, ...ROLE_FEATURES[actor.role] },
          endpoints: { ...COMMON_ENDPOINTS, ...ROLE_ENDPOINTS[actor.role] },
          brand_assets: brand,
          server_time: new Date(),
        };
      });
    },

    contract() {
      return {
        api_base: API,
        api_version: 'v1',
        release: '0.7.2',
        releases: ['0.6.1', '0.7.1', '0.7.2'],
        roles: Object.keys(DEFAULT_APPS),
        endpoints: { common: COMMON_ENDPOINTS, ...ROLE_ENDPOINTS },
        realtime: {
          transport: 'text/event-stream',
          frame: 'id: <event sequence>\\nevent: <type>\\ndata: <JSON>\\n\\n',
          heartbeat_seconds: 15,
          resume: 'Last-Event-ID header or last_event_id query parameter',
          auth: 'Authorization: Bearer, or ?stream_token= from POST /realtime/tokens (60 s)',
          event_types: EVENT_TYPES,
        },
        sync: {
          pull: 'GET /mobile/sync/pull?cursor=<cursor of the previous pull (opaque)>',
          push: 'POST /mobile/sync/push {operations:[{client_operation_id,type,payload}]}',
          entities: ctx.deps.sync.providers().map((p) => p.entity),
          operations: ctx.deps.sync.operationTypes(),
          result_statuses: ['applied', 'conflict', 'rejected', 'error'],
        },
        errors: 'application/problem+json (RFC 9457) with a stable `code`',
      };
    },

    async brandAssets(actor: Actor) {
      return ctx.db.withTenant(actor, brandIn);
    },

    async builds(actor: Actor, q: { app_role?: AppRole; platform?: string }) {
      const rows = await ctx.db.withTenant(actor, buildsIn);
      return { data: rows.filter((r) => (!q.app_role || r.app_role === q.app_role) && (!q.platform || r.platform === q.platform)) };
    },

    async apps(actor: Actor) {
      return ctx.db.withTenant(actor, async (tx) => {
        const builds = await buildsIn(tx);
        const rows = await ctx.deps.devices.countsByApp(tx);
        const counts = new Map(rows.map((r) => [r.app_role, r]));
        return {
          data: (Object.keys(DEFAULT_APPS) as AppRole[]).map((role) => ({
            app_role: role,
            name: DEFAULT_APPS[role].name,
            package_name: builds.find((b) => b.app_role === role)?.package_name ?? DEFAULT_APPS[role].package_name,
            latest: latestOf(builds, role),
            devices_registered: counts.get(role)?.registered ?? 0,
            devices_seen_last_hour: counts.get(role)?.seen ?? 0,
          })),
        };
      });
    },

    async health(actor: Actor) {
      return ctx.db.withTenant(actor, async (tx) => {
        const devices = await ctx.deps.devices.seenLastHour(tx);
        const push = await ctx.deps.notifications.pushHealth(tx);
        const builds = await buildsIn(tx);
        const extra: Record<string, Record<string, unknown>> = {};
        for (const [name, fn] of healthSections) extra[name] = await fn(tx, actor);
        const mem = process.memoryUsage();
        return {
          generated_at: new Date(),
          devices,
          push,
          storage: extra.storage ?? { status: 'not_reported' },
          builds: (Object.keys(DEFAULT_APPS) as AppRole[]).map((role) => ({ app_role: role, latest: latestOf(builds, role) })),
          integrations: {
            push_gateway: ctx.deps.pushGateway ? { state: 'active', kind: ctx.deps.pushGateway.name } : { state: 'not_configured' },
            ...((extra.integrations as Record<string, unknown>) ?? {}),
          },
          realtime: { sse_connections: ctx.deps.realtime.connectionCount },
          instance: {
            pid: process.pid,
            rss_bytes: mem.rss,
            heap_used_bytes: mem.heapUsed,
            uptime_seconds: Math.round(process.uptime()),
            database_pool: ctx.db.poolStatus?.() ?? null,
          },
        };
      });
    },

    /** Demo data: the default builds as published rows. */
    async seedBuilds(tx: Tx, organizationId: string) {
      for (const b of defaultBuilds()) {
        await insertBuild(tx, organizationId, newId(), b);
      }
    },
  };
}

export type MobileService = ReturnType<typeof createMobileService>;
