import { Type } from '@sinclair/typebox';
import { actorOf } from '../../platform/auth.js';
import { Id, IdParams, Nullable, OneOf, PageQueryProps, ShortText, Strict } from '../../platform/schemas.js';
import type { Api, AppContext } from '../../platform/context.js';
import { publicDevice, type DeviceService } from './service/devices.js';
import type { NotificationService } from './service/inbox.js';
import { DeviceOut, HeartbeatProps, NotificationOut, Platform, TargetRole, adminMessage } from './schemas.js';

export function notificationRoutes(app: Api, ctx: AppContext, svc: NotificationService, devices: DeviceService) {
  app.get(
    '/notifications',
    {
      schema: {
        operationId: 'listNotifications',
        tags: ['notifications'],
        summary: "The caller's durable inbox, newest first",
        description:
          "`unread=true` lists only unread items. `unread_count` counts all unread items of the caller. The staff's exception alerts (trip.delayed, trip.location_stale, trip.rejected_repeatedly, trip.pin_locked, trip.delivery_failed, trip.returned) are not repeated while their last one of the same type is unread: read it to be alerted again; GET /exceptions lists every open one. A trip's merchant, customer and driver get each of theirs.",
        querystring: Strict({ ...PageQueryProps, unread: Type.Optional(Type.Boolean()) }),
        response: {
          200: Type.Object({ data: Type.Array(NotificationOut), next_cursor: Nullable(Type.String()), unread_count: Type.Integer() }),
        },
      },
    },
    async (req) => svc.list(actorOf(req), req.query),
  );

  app.post(
    '/notifications/:id/read',
    {
      schema: {
        operationId: 'markNotificationRead',
        tags: ['notifications'],
        summary: 'Mark one of my notifications read (idempotent: a repeat keeps the first read_at)',
        description: "Another user's notification is 404.",
        params: IdParams,
        response: { 200: NotificationOut },
      },
    },
    async (req) => svc.markRead(actorOf(req), req.params.id),
  );

  app.post(
    '/notifications/test',
    {
      schema: {
        operationId: 'sendTestNotification',
        tags: ['notifications'],
        summary: 'Send a test notification to myself (inbox, my stream and a push to each of my devices)',
        body: Strict({ title: Type.Optional(ShortText(120)), body: Type.Optional(ShortText(500)) }),
        response: { 201: NotificationOut },
      },
    },
    async (req, reply) => reply.code(201).send(await svc.sendTest(actorOf(req), req.body ?? {})),
  );

  app.post(
    '/admin/notifications',
    {
      config: { auth: { roles: ['administrator'] } },
      schema: {
        operationId: 'sendAdminNotification',
        tags: ['notifications'],
        summary: 'Send a notification to a role, a territory or listed users (administrators)',
        description:
          'Exactly one target: `role` (all active users of that kind), `territory_id` (users linked to the territory; 422 TERRITORY_TARGETING_UNAVAILABLE when no module resolves territories), or `user_ids` (an unknown or foreign id is 404). Audited.',
        body: OneOf(
          [
            Strict({ ...adminMessage, role: TargetRole }, { title: 'NotifyRole' }),
            Strict({ ...adminMessage, territory_id: Id }, { title: 'NotifyTerritory' }),
            Strict({ ...adminMessage, user_ids: Type.Array(Id, { minItems: 1, maxItems: 500 }) }, { title: 'NotifyUsers' }),
          ],
          { description: 'the message and exactly one target: `role`, `territory_id` or `user_ids`' },
        ),
        response: { 201: Type.Object({ recipients: Type.Integer(), notification_ids: Type.Array(Type.String()) }) },
      },
    },
    async (req, reply) => reply.code(201).send(await svc.sendAdmin(actorOf(req), req.body as any)),
  );

  app.get(
    '/mobile/devices',
    {
      schema: {
        operationId: 'listDevices',
        tags: ['devices'],
        summary: 'My registered devices (administrators may pass user_id)',
        querystring: Strict({ user_id: Type.Optional(Id) }),
        response: { 200: Type.Object({ data: Type.Array(DeviceOut) }) },
      },
    },
    async (req) => devices.list(actorOf(req), req.query),
  );

  app.post(
    '/mobile/devices',
    {
      schema: {
        operationId: 'registerDevice',
        tags: ['devices'],
        summary: 'Register this install for push (201 new, 200 when the push token was known: updated, never duplicated)',
        description:
          "The push token is unique per organization; registering it again moves it to the caller and revives a removed device. `app_role` is the caller's app role.",
        body: Strict({
          platform: Platform,
          push_token: Type.String({ minLength: 8, maxLength: 4096 }),
          app_version: Type.Optional(ShortText(40)),
          build_number: Type.Optional(Type.Integer({ minimum: 0, maximum: 2_000_000_000 })),
          device_model: Type.Optional(ShortText(100)),
          os_version: Type.Optional(ShortText(40)),
        }),
        response: { 200: DeviceOut, 201: DeviceOut },
      },
    },
    async (req, reply) => {
      const { device, created } = await devices.register(actorOf(req), req.body);
      return reply.code(created ? 201 : 200).send(publicDevice(device));
    },
  );

  app.delete(
    '/mobile/devices/:id',
    {
      schema: {
        operationId: 'deleteDevice',
        tags: ['devices'],
        summary: 'Unregister a device (mine; administrators: any); its queued pushes are cancelled',
        params: IdParams,
        response: { 204: Type.Null() },
      },
    },
    async (req, reply) => {
      await devices.remove(actorOf(req), req.params.id);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/mobile/heartbeat',
    {
      schema: {
        operationId: 'deviceHeartbeat',
        tags: ['devices'],
        summary: 'Report that a device is alive: last seen, app version, battery, network (feeds mobile health)',
        description:
          '404 for a device that is not mine; 409 STALE_HEARTBEAT when `recorded_at` is older than the last recorded heartbeat (compared to the millisecond; `last_seen_at` never moves back; a `recorded_at` in the future counts as now).',
        body: Strict(HeartbeatProps),
        response: { 200: DeviceOut },
      },
    },
    async (req) => devices.heartbeat(actorOf(req), req.body),
  );
}
