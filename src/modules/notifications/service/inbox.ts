import { AppError } from '../../../platform/errors.js';
import { newId } from '../../../platform/ids.js';
import type { Actor, Principal } from '../../../platform/auth.js';
import { recordAudit } from '../../../platform/audit.js';
import { pageRequest, toPage } from '../../../platform/pagination.js';
import type { NotificationsContext, SyncWindow } from '../context.js';
import type { AppContext } from '../../../platform/context.js';
import type { Tx } from '../../../platform/db/index.js';
import type { EventInput, StoredEvent } from '../../../platform/events.js';
import { DEFAULT_TEMPLATES, type NotificationTemplate } from './templates.js';
import * as repo from '../repo.js';
import type { NotificationRow } from '../repo.js';
import type { PushTargets } from './push-targets.js';

export type { NotificationRow } from '../repo.js';

export interface NotifyInput {
  type: string;
  title: string;
  body: string;
  data?: Record<string, unknown>;
  entityType?: string | null;
  entityId?: string | null;
  /** The event that caused it: at most one notification per user and event. */
  eventSeq?: number | null;
  actorUserId?: string | null;
  userIds: string[];
  /** Of userIds, those who get no new notification while the last one of this type is unread (exception alerts). */
  coalesceUserIds?: string[];
}

export const NOTIFICATION_CREATED = 'notification.created';

export const publicNotification = (n: NotificationRow) => ({
  id: n.id,
  user_id: n.user_id,
  type: n.type,
  title: n.title,
  body: n.body,
  data: n.data,
  entity_type: n.entity_type,
  entity_id: n.entity_id,
  event_seq: n.event_seq,
  read: n.read_at !== null,
  read_at: n.read_at,
  created_at: n.created_at,
  updated_at: n.updated_at,
});

/** Resolves the users of a territory for `POST /admin/notifications`; set by the module that owns territory links. */
export type TerritoryAudience = (tx: Tx, territoryId: string) => Promise<string[]>;

export interface AdminNotificationInput {
  title: string;
  body: string;
  data?: Record<string, unknown>;
  role?: Principal;
  territory_id?: string;
  user_ids?: string[];
}

export function createNotificationService(
  ctx: AppContext,
  opts: { gatewayConfigured: boolean; identity: NotificationsContext['deps']['identity']; pushTargets: PushTargets },
) {
  const templates = new Map<string, NotificationTemplate>(Object.entries(DEFAULT_TEMPLATES));
  let territoryAudience: TerritoryAudience | null = null;

  /**
   * Creates inbox rows for the users, queues a push per registered device, and records one
   * `notification.created` event per row for the user's personal stream; all in the caller's transaction.
   */
  async function notifyIn(tx: Tx, organizationId: string, input: NotifyInput): Promise<NotificationRow[]> {
    const userIds = [...new Set(input.userIds)];
    if (userIds.length === 0) return [];
    const ids = userIds.map(() => newId());
    const rows = await repo.insertNotifications(tx, organizationId, {
      ids,
      userIds,
      type: input.type,
      title: input.title,
      body: input.body,
      data: input.data ?? {},
      entityType: input.entityType ?? null,
      entityId: input.entityId ?? null,
      eventSeq: input.eventSeq ?? null,
      coalesceUserIds: input.coalesceUserIds ?? [],
    });
    if (rows.length === 0) return rows;
    await queuePushes(tx, organizationId, rows);
    // One event per recipient, all in one statement.
    await ctx.events.recordMany(
      tx,
      organizationId,
      rows.map((n) => ({
        type: NOTIFICATION_CREATED,
        entityType: 'notification',
        entityId: n.id,
        actorUserId: input.actorUserId ?? null,
        audienceUserIds: [n.user_id],
        payload: { notification: publicNotification(n) },
      })),
    );
    return rows;
  }

  async function queuePushes(tx: Tx, organizationId: string, rows: NotificationRow[]) {
    const devices = await opts.pushTargets.of(
      tx,
      organizationId,
      rows.map((n) => n.user_id),
    );
    if (devices.length === 0) return;
    const byUser = new Map(rows.map((n) => [n.user_id, n]));
    const out = devices.map((d) => {
      const n = byUser.get(d.user_id)!;
      return {
        id: newId(),
        notification_id: n.id,
        device_id: d.id,
        user_id: d.user_id,
        platform: d.platform,
        push_token: d.push_token,
        payload: JSON.stringify({
          notification_id: n.id,
          type: n.type,
          title: n.title,
          body: n.body,
          data: { ...n.data, entity_type: n.entity_type, entity_id: n.entity_id },
        }),
      };
    });
    await repo.queuePushRows(tx, organizationId, out, opts.gatewayConfigured ? null : 'NO_GATEWAY');
  }

  /**
   * The event hook: the audience of a known event type (minus whoever caused it) gets an inbox row; the users the event
   * alerts (`alertUserIds`: the staff told of an exception) only when the last one of its type was read. A lunch peak
   * can make hundreds of trips late in minutes: one unread "Trip late" says what a dispatcher must know, GET
   * /exceptions lists them all, and the event still reaches the streams and webhooks once per trip.
   */
  async function onEvent(tx: Tx, ev: StoredEvent, { alertUserIds }: Pick<EventInput, 'alertUserIds'> = {}) {
    if (ev.type === NOTIFICATION_CREATED || ev.audience_user_ids.length === 0) return;
    const template = templates.get(ev.type);
    const text = template?.(ev);
    if (!text) return;
    const userIds = ev.audience_user_ids.filter((u) => u !== ev.actor_user_id);
    await notifyIn(tx, ev.organization_id, {
      type: ev.type,
      title: text.title,
      body: text.body,
      data: { event_id: ev.id },
      entityType: ev.entity_type,
      entityId: ev.entity_id,
      eventSeq: ev.seq,
      actorUserId: ev.actor_user_id,
      userIds,
      coalesceUserIds: alertUserIds ?? [],
    });
  }

  async function markReadIn(tx: Tx, actor: Actor, notificationId: string): Promise<NotificationRow> {
    const n = await repo.markNotificationRead(tx, actor.organizationId, actor.userId, notificationId);
    if (!n) throw AppError.notFound('Notification');
    return n;
  }

  async function recipientsOf(tx: Tx, input: AdminNotificationInput): Promise<string[]> {
    const targets = [input.role, input.territory_id, input.user_ids].filter((x) => x !== undefined);
    if (targets.length !== 1) {
      throw AppError.badRequest('Give exactly one of role, territory_id, user_ids', [
        { field: 'role', message: 'exactly one target is required' },
      ]);
    }
    if (input.role) return opts.identity.userIdsByKind(tx, [input.role]);
    if (input.territory_id) {
      if (!territoryAudience)
        throw AppError.unprocessable('Territory targeting is not available in this deployment', 'TERRITORY_TARGETING_UNAVAILABLE');
      return territoryAudience(tx, input.territory_id);
    }
    const ids = [...new Set(input.user_ids!)];
    for (const id of ids) if (!(await opts.identity.userExists(tx, id))) throw AppError.notFound('User');
    return ids;
  }

  return {
    /** The user's inbox rows in an offline sync window (mobile's sync pull). */
    changedIn: (tx: Tx, userId: string, w: SyncWindow) => repo.notificationsChangedIn(tx, userId, w),

    notifyIn,
    markReadIn,
    onEvent,

    /** Other modules add inbox text for their own event types (e.g. `order.created`). */
    registerTemplate(type: string, template: NotificationTemplate) {
      templates.set(type, template);
    },
    setTerritoryAudience(fn: TerritoryAudience) {
      territoryAudience = fn;
    },

    async list(actor: Actor, q: { unread?: boolean; limit?: number; cursor?: string }) {
      const page = pageRequest(q);
      return ctx.db.withTenant(actor, async (tx) => {
        const rows = await repo.listNotifications(tx, actor.userId, { unread: q.unread ?? null, after: page.after, limit: page.limit + 1 });
        const unread = await repo.unreadCount(tx, actor.userId);
        return { ...toPage(rows, page, publicNotification), unread_count: unread };
      });
    },

    async markRead(actor: Actor, id: string) {
      return publicNotification(await ctx.db.withTenant(actor, (tx) => markReadIn(tx, actor, id)));
    },

    async sendTest(actor: Actor, input: { title?: string; body?: string }) {
      const rows = await ctx.db.withTenant(actor, (tx) =>
        notifyIn(tx, actor.organizationId, {
          type: 'test',
          title: input.title ?? 'Test notification',
          body: input.body ?? 'Notifications reach this account.',
          actorUserId: actor.userId,
          userIds: [actor.userId],
        }),
      );
      return publicNotification(rows[0]);
    },

    async sendAdmin(actor: Actor, input: AdminNotificationInput) {
      return ctx.db.withTenant(actor, async (tx) => {
        const recipients = await recipientsOf(tx, input);
        const rows = await notifyIn(tx, actor.organizationId, {
          type: 'admin.message',
          title: input.title,
          body: input.body,
          data: input.data ?? {},
          actorUserId: actor.userId,
          userIds: recipients,
        });
        const target = input.role
          ? { role: input.role }
          : input.territory_id
            ? { territory_id: input.territory_id }
            : { user_ids: input.user_ids };
        await recordAudit(tx, actor, {
          action: 'notification.broadcast',
          entityType: 'notification',
          entityId: rows[0]?.id ?? 'none',
          after: { ...target, title: input.title, recipients: rows.length },
        });
        return { recipients: rows.length, notification_ids: rows.map((r) => r.id) };
      });
    },

    /** Push outbox figures of the caller's organization (mobile health). */
    async pushHealth(tx: Tx) {
      const { byStatus, failedLast24h } = await repo.pushOutboxFigures(tx);
      const by = Object.fromEntries(byStatus.map((r) => [r.status, r]));
      const pending = by.pending?.n ?? 0;
      const sending = by.sending?.n ?? 0;
      return {
        gateway: opts.gatewayConfigured ? 'configured' : 'not_configured',
        backlog: pending + sending,
        pending,
        sending,
        waiting_for_gateway: by.pending?.no_gateway ?? 0,
        sent: by.sent?.n ?? 0,
        failed: by.failed?.n ?? 0,
        failed_last_24h: failedLast24h,
        oldest_pending_at: by.pending?.oldest ?? null,
      };
    },
  };
}

export type NotificationService = ReturnType<typeof createNotificationService>;
