import type { Settings } from '../../../config.js';
import type { WebhooksContext } from '../context.js';
import { WEBHOOK_EVENT_TYPES } from '../schemas.js';
import type { Actor } from '../../../platform/auth.js';
import { tenantOf } from '../../../platform/auth.js';
import type { Tx } from '../../../platform/db/index.js';
import { AppError } from '../../../platform/errors.js';
import type { StoredEvent } from '../../../platform/events.js';
import { newId, randomToken } from '../../../platform/ids.js';
import { pageRequest, toPage } from '../../../platform/pagination.js';
import { recordAudit } from '../../../platform/audit.js';
import { countRequest } from '../../../platform/rate-limit.js';
import { createAnnouncedCache, type AnnouncedCache } from '../../../platform/cache.js';
import * as repo from '../repo.js';
import { checkTargetUrl, targetPolicy } from './sender.js';
import { encryptSecret, requireKeyring, secretContext } from '../../../platform/secrets.js';
import type { PermissionKey, SubadminScope } from '../../../platform/auth.js';

const KNOWN = new Set<string>(WEBHOOK_EVENT_TYPES);
/** Types only sent when named explicitly (not by `*`), and throttled per resource and subscription. */
export const OPT_IN_TYPES = new Set(['trip.location_updated']);
export const TEST_EVENT_TYPE = 'webhook.test';

/** Whose view of a resource a subscription receives: its owner's, as the API shows it to him. */
export interface ResourceViewer {
  userId: string;
  kind: Actor['kind'];
  organizationId: string;
}
/**
 * Renders a resource as the API returns it to the viewer, in the transaction of the event; null = gone. `current`: the
 * entity as the event's transaction holds it, when the event carries it (EventInput.current), so it is not read again.
 */
export type ResourceRenderer = (tx: Tx, id: string, viewer: ResourceViewer, current: unknown) => Promise<Record<string, unknown> | null>;

/** The resource family of an event type: the part before the dot (`trip`, `order`, `payment_review`, ...). */
export const resourceOf = (type: string) => type.slice(0, type.indexOf('.'));

/**
 * Who may follow which resource family, as the matching GET lets him read it: a scope not listed receives none of
 * its events; `permission` is what a sub-administrator needs (the GET's permission). Merchants receive the events
 * of their own records (matched by merchant and audience), administrators everything.
 */
const FAMILY_ACCESS: Record<string, { dispatch: boolean; permission: PermissionKey | null; merchant: boolean }> = {
  trip: { dispatch: true, permission: 'delivery_status', merchant: true },
  order: { dispatch: false, permission: 'orders_status', merchant: true },
  payment_review: { dispatch: false, permission: 'payments_review_view', merchant: true },
  driver_settlement: { dispatch: false, permission: null, merchant: false },
};

/** Whether a subscription of this scope (and, for `territories`, the owner's permissions) may receive this type. */
function typeInScope(type: string, scope: repo.SubscriptionRecord['scope'], permissions: SubadminScope['permissions'] | null): boolean {
  if (scope === 'organization') return true;
  const access = FAMILY_ACCESS[resourceOf(type)];
  if (!access) return false;
  if (scope === 'dispatch') return access.dispatch;
  if (scope === 'merchant') return access.merchant;
  return access.permission !== null && !!permissions?.[access.permission];
}

const SCOPE_OF: Partial<Record<Actor['kind'], repo.SubscriptionRecord['scope']>> = {
  administrator: 'organization',
  dispatch: 'dispatch',
  subadmin: 'territories',
  comercio: 'merchant',
};
const VIEWER_OF: Record<repo.SubscriptionRecord['scope'], Actor['kind']> = {
  organization: 'administrator',
  dispatch: 'dispatch',
  territories: 'subadmin',
  merchant: 'comercio',
};

export interface WebhookSettings {
  maxSubscriptions: number;
  locationIntervalMs: number;
  testPerMinute: number;
}

export function webhookSettings(settings: Settings): WebhookSettings {
  return {
    maxSubscriptions: settings.WEBHOOK_MAX_SUBSCRIPTIONS,
    locationIntervalMs: settings.WEBHOOK_LOCATION_INTERVAL_MS,
    testPerMinute: settings.WEBHOOK_TEST_PER_MINUTE,
  };
}

export interface SubscriptionInput {
  url: string;
  event_types: string[];
  description?: string | null;
  active?: boolean;
  /** The signing secret chosen by the caller (write-only); generated, and shown in that response only, when absent. */
  secret?: string;
}

const newSecret = () => `whsec_${randomToken(32)}`;

/** The signing secret as stored: encrypted, bound to the subscription (`organization_id`, `id`). */
export const secretContextOf = (organizationId: string, id: string) => secretContext(repo.WEBHOOK_SECRET_COLUMNS[0], [organizationId, id]);

export function subscriptionOut(s: repo.SubscriptionRecord) {
  return {
    id: s.id,
    organization_id: s.organizationId,
    scope: s.scope,
    owner_user_id: s.ownerUserId,
    merchant_id: s.merchantId,
    url: s.url,
    description: s.description,
    event_types: s.eventTypes,
    active: s.active,
    failing_since: s.failingSince,
    disabled_at: s.disabledAt,
    disabled_reason: s.disabledReason,
    secret_set: true as const,
    secret_set_at: s.secretSetAt,
    previous_secret_expires_at: s.previousSecret ? s.previousSecretExpiresAt : null,
    created_at: s.createdAt,
    updated_at: s.updatedAt,
  };
}

export function deliveryOut(d: repo.DeliveryRecord) {
  return {
    id: d.id,
    organization_id: d.organizationId,
    subscription_id: d.subscriptionId,
    event_id: d.eventId,
    event_type: d.eventType,
    status: d.status,
    attempts: d.attempts,
    next_attempt_at: d.status === 'pending' ? d.nextAttemptAt : null,
    last_status_code: d.lastStatusCode,
    last_error: d.lastError,
    delivered_at: d.deliveredAt,
    redelivery_of: d.redeliveryOf,
    created_at: d.createdAt,
    updated_at: d.updatedAt,
  };
}

export function attemptOut(a: repo.AttemptRecord) {
  return {
    attempt: a.attempt,
    url: a.url,
    started_at: a.startedAt,
    duration_ms: a.durationMs,
    status_code: a.statusCode,
    error: a.error,
    response_excerpt: a.responseExcerpt,
    outcome: a.outcome,
  };
}

/**
 * Per organization, its active subscriptions as matching reads them, cached on each instance: loaded in the
 * transaction of the event that misses, forgotten on every instance when a change commits. Every write of a
 * subscription's matching data (created, changed, deleted, disabled) calls `changed(tx, organizationId)`.
 */
export type SubscriptionCache = AnnouncedCache<repo.ActiveSubscription[]>;
export const createSubscriptionCache = (ctx: WebhooksContext): SubscriptionCache =>
  createAnnouncedCache<repo.ActiveSubscription[]>(ctx, 'webhook_subscriptions_changed');

/** Whether a subscription's event types take this type (`*` takes every type that is not opt-in). */
const wantsType = (s: repo.ActiveSubscription, type: string, optIn: boolean) =>
  s.eventTypes.includes(type) || (!optIn && s.eventTypes.includes('*'));

export function createWebhookService(
  ctx: WebhooksContext,
  subscriptions: SubscriptionCache,
  settings: WebhookSettings = webhookSettings(ctx.config.settings),
) {
  const { db } = ctx;
  const renderers = new Map<string, ResourceRenderer>();

  function checkEventTypes(types: string[]) {
    const unknown = types.filter((t) => t !== '*' && !KNOWN.has(t));
    if (unknown.length > 0) {
      throw AppError.badRequest(`Unknown event types: ${unknown.join(', ')}`, [
        { field: 'event_types', message: `one of *, ${WEBHOOK_EVENT_TYPES.join(', ')}` },
      ]);
    }
    return [...new Set(types)];
  }

  /** A dispatcher or sub-administrator may only name the events his scope receives (`*` = all of those). */
  function checkScopeTypes(scope: repo.SubscriptionRecord['scope'], types: string[], actor: Actor) {
    if (scope !== 'dispatch' && scope !== 'territories') return;
    const permissions = scope === 'territories' ? (actor.subadmin?.permissions ?? null) : null;
    // An administrator editing a sub-administrator's subscription: the owner's permissions apply when events happen.
    if (scope === 'territories' && actor.kind !== 'subadmin') return;
    const outside = types.filter((t) => t !== '*' && !typeInScope(t, scope, permissions));
    if (outside.length) {
      throw AppError.unprocessable(`Event types outside the ${scope} scope: ${outside.join(', ')}`, 'WEBHOOK_EVENT_TYPE_OUT_OF_SCOPE', [
        { field: 'event_types', message: `not readable by the owner of a ${scope} subscription` },
      ]);
    }
  }

  function checkUrl(url: string) {
    const problem = checkTargetUrl(url, targetPolicy(ctx.config));
    if (problem)
      throw AppError.unprocessable(`The target URL is refused: ${problem}`, 'WEBHOOK_TARGET_REFUSED', [{ field: 'url', message: problem }]);
  }

  /** Administrators: every subscription of the organization; dispatchers, sub-administrators and merchants: their own. Anything else is 404. */
  async function visible(tx: Tx, actor: Actor, id: string, lock = false) {
    const s = await repo.getSubscription(tx, id, lock);
    if (!s || (actor.kind !== 'administrator' && s.ownerUserId !== actor.userId)) throw AppError.notFound('Webhook subscription');
    return s;
  }

  async function limitTests(actor: Actor) {
    const { weighted, resetSeconds } = await countRequest(db, `user:${actor.organizationId}:${actor.userId}:webhook-sends`);
    if (weighted > settings.testPerMinute) {
      throw new AppError(
        429,
        'RATE_LIMITED',
        `At most ${settings.testPerMinute} test events and redeliveries per minute per user; retry in ${resetSeconds} s`,
        undefined,
        {
          retry_after: resetSeconds,
          limit: settings.testPerMinute,
        },
      );
    }
  }

  /**
   * The outbox write, in the transaction of the event (an event rolled back leaves no delivery): one delivery per
   * matching subscription, with the resource rendered as the subscription owner reads it through the API (from the
   * entity the event carries, `current`, when it carries one).
   * The organization's active subscriptions come from the cache (no statement when cached; none written to when
   * there are none); the deliveries' insert checks each subscription again in the database.
   */
  async function onEvent(tx: Tx, ev: StoredEvent, current?: unknown): Promise<void> {
    if (!KNOWN.has(ev.type)) return;
    const active = await subscriptions.get(ev.organization_id, () => repo.activeSubscriptions(tx, ev.organization_id));
    if (active.length === 0) return;
    const optIn = OPT_IN_TYPES.has(ev.type);
    const merchantId = typeof ev.payload?.merchant_id === 'string' ? ev.payload.merchant_id : null;
    const audience = ev.audience_user_ids ?? [];
    // The type is listed (or `*`, which leaves out the opt-in types), and for the merchant scope the event is one of
    // the merchant's records (its merchant_id, or the merchant's owner among the event's audience, as on the
    // merchant's own stream).
    const candidates = active.filter(
      (s) =>
        wantsType(s, ev.type, optIn) &&
        (s.scope !== 'merchant' || (merchantId !== null && s.merchantId === merchantId) || audience.includes(s.ownerUserId)),
    );
    // Each subscription gets what its owner may read: a dispatcher the families dispatch reads; a sub-administrator
    // the events of the territories he holds now (his effective scope, narrowed by his parents), with the permission of the GET.
    let subs: typeof candidates = [];
    const scopes = new Map<string, SubadminScope | null>();
    for (const s of candidates) {
      if (s.scope === 'territories') {
        if (!scopes.has(s.ownerUserId)) scopes.set(s.ownerUserId, await ctx.deps.subadminScope(tx, ev.organization_id, s.ownerUserId));
        const scope = scopes.get(s.ownerUserId);
        if (
          !scope?.active ||
          !ev.territory_id ||
          !scope.territoryIds.includes(ev.territory_id) ||
          !typeInScope(ev.type, s.scope, scope.permissions)
        )
          continue;
      } else if (!typeInScope(ev.type, s.scope, null)) continue;
      subs.push(s);
    }
    if (subs.length === 0) return;
    const resourceKey = `${ev.entity_type}:${ev.entity_id}`;
    if (optIn && settings.locationIntervalMs > 0) {
      const recent = await repo.recentlySent(
        tx,
        ev.organization_id,
        subs.map((s) => s.id),
        ev.type,
        resourceKey,
        settings.locationIntervalMs,
      );
      subs = subs.filter((s) => !recent.has(s.id));
      if (subs.length === 0) return;
    }
    const render = renderers.get(resourceOf(ev.type));
    const rendered = new Map<string, Record<string, unknown> | null>();
    const rows: repo.EventDeliveryRow[] = [];
    for (const s of subs) {
      const viewer: ResourceViewer = { userId: s.ownerUserId, kind: VIEWER_OF[s.scope], organizationId: ev.organization_id };
      const key = `${viewer.kind}:${viewer.userId}`;
      if (!rendered.has(key)) rendered.set(key, render ? await render(tx, ev.entity_id, viewer, current) : null);
      rows.push({
        id: newId(),
        subscriptionId: s.id,
        body: {
          id: ev.id,
          type: ev.type,
          occurred_at: new Date(ev.created_at).toISOString(),
          organization_id: ev.organization_id,
          resource_type: ev.entity_type,
          resource_id: ev.entity_id,
          resource: rendered.get(key) ?? null,
          data: ev.payload ?? {},
        },
      });
    }
    await repo.insertEventDeliveries(
      tx,
      { organizationId: ev.organization_id, eventId: ev.id, eventSeq: Number(ev.seq), eventType: ev.type, resourceKey, optIn },
      rows,
    );
  }

  return {
    onEvent,
    /** How a resource family (`trip`, `order`, ... the event type before its dot) reads through the API. */
    registerResource(family: string, renderer: ResourceRenderer) {
      renderers.set(family, renderer);
    },
    /** Refuses to start when an event type's resource has no renderer (its deliveries would carry `resource: null`). */
    assertResources() {
      const missing = [...new Set(WEBHOOK_EVENT_TYPES.map(resourceOf))].filter((f) => !renderers.has(f));
      if (missing.length) throw new Error(`webhooks: no resource renderer for the event families ${missing.join(', ')} (registerResource)`);
    },

    async create(actor: Actor, input: SubscriptionInput) {
      const eventTypes = checkEventTypes(input.event_types);
      checkUrl(input.url);
      const scope = SCOPE_OF[actor.kind];
      if (!scope)
        throw AppError.forbidden('Only administrators, dispatchers, sub-administrators and merchant users manage webhook subscriptions');
      checkScopeTypes(scope, eventTypes, actor);
      return db.withTenant(tenantOf(actor), async (tx) => {
        let merchantId: string | null = null;
        if (scope === 'merchant') {
          const m = await ctx.deps.logistics.merchantOfUser(tx, actor.userId);
          if (!m)
            throw AppError.unprocessable('Only a user with a merchant profile may subscribe to webhooks', 'MERCHANT_PROFILE_REQUIRED');
          merchantId = m.id;
        }
        if ((await repo.countSubscriptions(tx, actor.organizationId)) >= settings.maxSubscriptions) {
          throw AppError.unprocessable(
            `At most ${settings.maxSubscriptions} webhook subscriptions per organization`,
            'WEBHOOK_SUBSCRIPTION_LIMIT',
          );
        }
        const ring = requireKeyring(ctx.config.secrets);
        const secret = input.secret ?? newSecret();
        const id = newId();
        const s = await repo.insertSubscription(tx, {
          organizationId: actor.organizationId,
          id,
          scope,
          ownerUserId: actor.userId,
          merchantId,
          url: input.url,
          description: input.description ?? null,
          eventTypes,
          secret: encryptSecret(ring, secret, secretContextOf(actor.organizationId, id)),
          active: input.active ?? true,
        });
        await subscriptions.changed(tx, actor.organizationId);
        await recordAudit(tx, actor, {
          action: 'webhook_subscription.created',
          entityType: 'webhook_subscription',
          entityId: s.id,
          after: { url: s.url, event_types: s.eventTypes, scope: s.scope, origin: input.secret ? 'chosen' : 'generated' },
        });
        // A secret the caller chose is never returned; one the server generated is in this response only.
        return input.secret ? subscriptionOut(s) : { ...subscriptionOut(s), secret };
      });
    },

    async list(actor: Actor, q: { limit?: number; cursor?: string }) {
      const page = pageRequest(q);
      return db.withTenant(tenantOf(actor), async (tx) => {
        const rows = await repo.listSubscriptions(tx, {
          ownerUserId: actor.kind === 'administrator' ? null : actor.userId,
          after: page.after,
          limit: page.limit,
        });
        return toPage(rows, page, subscriptionOut);
      });
    },

    async get(actor: Actor, id: string) {
      return db.withTenant(tenantOf(actor), async (tx) => subscriptionOut(await visible(tx, actor, id)));
    },

    /** Partial update; `active: true` on a disabled subscription enables it again (the failure streak starts over). */
    async update(actor: Actor, id: string, patch: Partial<SubscriptionInput>) {
      const eventTypes = patch.event_types ? checkEventTypes(patch.event_types) : undefined;
      if (patch.url !== undefined) checkUrl(patch.url);
      return db.withTenant(tenantOf(actor), async (tx) => {
        const before = await visible(tx, actor, id, true);
        if (eventTypes) checkScopeTypes(before.scope, eventTypes, actor);
        const set: Partial<repo.NewSubscription> = {};
        if (patch.url !== undefined) set.url = patch.url;
        if (eventTypes) set.eventTypes = eventTypes;
        if (patch.description !== undefined) set.description = patch.description;
        if (patch.active === true && !before.active)
          Object.assign(set, { active: true, failingSince: null, disabledAt: null, disabledReason: null });
        if (patch.active === false && before.active)
          Object.assign(set, { active: false, disabledAt: new Date(), disabledReason: 'deactivated' });
        const after = Object.keys(set).length ? await repo.updateSubscription(tx, id, set) : before;
        if (after !== before) await subscriptions.changed(tx, before.organizationId);
        if (before.active && !after.active) await repo.cancelPending(tx, id, 'SUBSCRIPTION_DEACTIVATED');
        const view = (s: repo.SubscriptionRecord) => ({
          url: s.url,
          event_types: s.eventTypes,
          description: s.description,
          active: s.active,
        });
        await recordAudit(tx, actor, {
          action: 'webhook_subscription.updated',
          entityType: 'webhook_subscription',
          entityId: id,
          before: view(before),
          after: view(after),
        });
        return subscriptionOut(after);
      });
    },

    async remove(actor: Actor, id: string) {
      await db.withTenant(tenantOf(actor), async (tx) => {
        const s = await visible(tx, actor, id, true);
        await repo.deleteSubscription(tx, id);
        await subscriptions.changed(tx, s.organizationId);
        await recordAudit(tx, actor, {
          action: 'webhook_subscription.deleted',
          entityType: 'webhook_subscription',
          entityId: id,
          before: { url: s.url, event_types: s.eventTypes },
        });
      });
    },

    /**
     * A new secret: the caller's (`chosen`, never returned) or a generated one (in this response only); the current
     * one keeps signing (a second `v1`) for `overlap_seconds`.
     */
    async rotateSecret(actor: Actor, id: string, overlapSeconds: number, chosen?: string) {
      return db.withTenant(tenantOf(actor), async (tx) => {
        const ring = requireKeyring(ctx.config.secrets);
        const before = await visible(tx, actor, id, true);
        const secret = chosen ?? newSecret();
        const s = await repo.updateSubscription(tx, id, {
          secret: encryptSecret(ring, secret, secretContextOf(before.organizationId, id)),
          secretSetAt: new Date(),
          // Still encrypted: the value is bound to the subscription, not to the column.
          previousSecret: overlapSeconds > 0 ? before.secret : null,
          previousSecretExpiresAt: overlapSeconds > 0 ? new Date(Date.now() + overlapSeconds * 1000) : null,
        });
        await recordAudit(tx, actor, {
          action: 'webhook_subscription.secret_rotated',
          entityType: 'webhook_subscription',
          entityId: id,
          after: { overlap_seconds: overlapSeconds, origin: chosen ? 'chosen' : 'generated' },
        });
        return chosen ? subscriptionOut(s) : { ...subscriptionOut(s), secret };
      });
    },

    /** Queues a `webhook.test` delivery to the subscription (delivered by the worker like any other). */
    async sendTest(actor: Actor, id: string) {
      await limitTests(actor);
      return db.withTenant(tenantOf(actor), async (tx) => {
        const s = await visible(tx, actor, id);
        if (!s.active) throw AppError.conflict('The subscription is not active; enable it first', 'WEBHOOK_SUBSCRIPTION_INACTIVE');
        const eventId = newId();
        const [d] = await repo.insertDeliveries(tx, [
          {
            organizationId: s.organizationId,
            id: newId(),
            subscriptionId: s.id,
            eventId,
            eventType: TEST_EVENT_TYPE,
            body: {
              id: eventId,
              type: TEST_EVENT_TYPE,
              occurred_at: new Date().toISOString(),
              organization_id: s.organizationId,
              resource_type: 'webhook_subscription',
              resource_id: s.id,
              resource: null,
              data: { message: 'A test event sent on request' },
            },
          },
        ]);
        return deliveryOut(d);
      });
    },

    /** Sends one delivery's event again, as a new delivery (same event id and body, newly signed), outside the resource order. */
    async redeliver(actor: Actor, deliveryId: string) {
      await limitTests(actor);
      return db.withTenant(tenantOf(actor), async (tx) => {
        const d = await repo.getDelivery(tx, deliveryId);
        if (!d) throw AppError.notFound('Webhook delivery');
        const s = await visible(tx, actor, d.subscriptionId).catch(() => {
          throw AppError.notFound('Webhook delivery');
        });
        if (!s.active) throw AppError.conflict('The subscription is not active; enable it first', 'WEBHOOK_SUBSCRIPTION_INACTIVE');
        const [copy] = await repo.insertDeliveries(tx, [
          {
            organizationId: d.organizationId,
            id: newId(),
            subscriptionId: d.subscriptionId,
            eventId: d.eventId,
            eventSeq: d.eventSeq,
            eventType: d.eventType,
            body: d.body,
            redeliveryOf: d.id,
          },
        ]);
        await recordAudit(tx, actor, {
          action: 'webhook_delivery.redelivered',
          entityType: 'webhook_delivery',
          entityId: d.id,
          after: { redelivery_id: copy.id },
        });
        return deliveryOut(copy);
      });
    },

    async listDeliveries(actor: Actor, subscriptionId: string, q: { limit?: number; cursor?: string; status?: repo.DeliveryStatus }) {
      const page = pageRequest(q);
      return db.withTenant(tenantOf(actor), async (tx) => {
        await visible(tx, actor, subscriptionId);
        const rows = await repo.listDeliveries(tx, { subscriptionId, status: q.status, after: page.after, limit: page.limit });
        return toPage(rows, page, deliveryOut);
      });
    },

    /** One delivery with its attempts (the delivery log) and the body sent. */
    async getDelivery(actor: Actor, id: string) {
      return db.withTenant(tenantOf(actor), async (tx) => {
        const d = await repo.getDelivery(tx, id);
        if (!d) throw AppError.notFound('Webhook delivery');
        await visible(tx, actor, d.subscriptionId).catch(() => {
          throw AppError.notFound('Webhook delivery');
        });
        const attempts = await repo.listAttempts(tx, id);
        return { ...deliveryOut(d), body: d.body as Record<string, unknown>, attempts_log: attempts.map(attemptOut) };
      });
    },
  };
}

export type WebhookService = ReturnType<typeof createWebhookService>;
