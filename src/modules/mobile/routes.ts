import { Type } from '@sinclair/typebox';
import { actorOf } from '../../platform/auth.js';
import { Nullable, Strict, Timestamp } from '../../platform/schemas.js';
import type { Api, AppContext } from '../../platform/context.js';
import type { MobileService } from './service/apps.js';
import type { SyncService } from './service/sync.js';
import { Platform } from '../notifications/index.js';
import { AppBuildOut, AppRoleT, Brand, BuildSummary, Changes, Obj, SyncResult } from './schemas.js';

export function mobileRoutes(app: Api, ctx: AppContext, svc: MobileService, sync: SyncService) {
  app.get(
    '/mobile/bootstrap',
    {
      schema: {
        operationId: 'mobileBootstrap',
        tags: ['mobile'],
        summary: "What the app needs at start: the caller's app role, package and builds, features, endpoint map and brand asset routes",
        response: {
          200: Type.Object({
            app_role: AppRoleT,
            principal: Type.String(),
            user_id: Type.String(),
            organization_id: Type.String(),
            app: Type.Object({ name: Type.String(), package_name: Type.String(), builds: Type.Array(BuildSummary) }),
            features: Type.Record(Type.String(), Type.Boolean()),
            endpoints: Type.Record(Type.String(), Type.String()),
            brand_assets: Brand,
            server_time: Timestamp,
          }),
        },
      },
    },
    async (req) => svc.bootstrap(actorOf(req)),
  );

  app.get(
    '/mobile/contract',
    {
      schema: {
        operationId: 'mobileContract',
        tags: ['mobile'],
        summary: 'The mobile API contract: release, endpoints per app, realtime framing and event types, sync entities and operations',
        response: { 200: Type.Object({}, { additionalProperties: true }) },
      },
    },
    async () => svc.contract(),
  );

  app.get(
    '/mobile/brand-assets',
    {
      schema: {
        operationId: 'mobileBrandAssets',
        tags: ['mobile'],
        summary: "The organization's official brand: name, colors and asset routes",
        response: { 200: Brand },
      },
    },
    async (req) => svc.brandAssets(actorOf(req)),
  );

  app.get(
    '/mobile/apps',
    {
      config: { auth: { roles: ['administrator', 'dispatch'] } },
      schema: {
        operationId: 'listMobileApps',
        tags: ['mobile'],
        summary: 'The four apps with their latest builds and device counts (administration)',
        response: {
          200: Type.Object({
            data: Type.Array(
              Type.Object({
                app_role: AppRoleT,
                name: Type.String(),
                package_name: Type.String(),
                latest: Type.Array(BuildSummary),
                devices_registered: Type.Integer(),
                devices_seen_last_hour: Type.Integer(),
              }),
            ),
          }),
        },
      },
    },
    async (req) => svc.apps(actorOf(req)),
  );

  app.get(
    '/app-builds',
    {
      schema: {
        operationId: 'listAppBuilds',
        tags: ['mobile'],
        summary: "Published builds of the organization's apps (defaults for apps without published builds)",
        querystring: Strict({
          app_role: Type.Optional(AppRoleT),
          platform: Type.Optional(Platform),
        }),
        response: { 200: Type.Object({ data: Type.Array(AppBuildOut) }) },
      },
    },
    async (req) => svc.builds(actorOf(req), req.query),
  );

  app.get(
    '/admin/mobile-health',
    {
      config: { auth: { roles: ['administrator'] } },
      schema: {
        operationId: 'mobileHealth',
        tags: ['mobile'],
        summary:
          'Operational health: devices seen in the last hour per app and version, push outbox backlog and failures, storage, builds, integrations',
        description:
          '`storage` and further `integrations` entries come from the modules that own them (`not_reported` otherwise). `instance` describes the answering API process: its pid, memory, uptime and `database_pool` (PostgreSQL: `max`, `open`, `in_use` connections and requests `waiting` for one, as this answer took its own; null for the embedded database).',
        response: {
          200: Type.Object({
            generated_at: Timestamp,
            devices: Obj,
            push: Obj,
            storage: Obj,
            builds: Type.Array(Obj),
            integrations: Obj,
            realtime: Obj,
            instance: Obj,
          }),
        },
      },
    },
    async (req) => svc.health(actorOf(req)),
  );

  app.get(
    '/mobile/sync/pull',
    {
      schema: {
        operationId: 'syncPull',
        tags: ['sync'],
        summary: 'Records I may see that changed since `cursor`, with tombstones, and the `cursor` for the next pull',
        description:
          'Without `cursor`: a first sync (current records, no tombstones). Pass the returned `cursor` (opaque) to the next pull: ' +
          'it returns every change committed since, exactly once, however long the transaction that made it ran (changes are read in ' +
          'commit order from database snapshots, not by timestamp); a record changed several times comes once, in its latest state. ' +
          '`has_more`: pull again at once with the returned cursor. `since` (a timestamp, from app versions before the cursor) ' +
          'gets every current record and every tombstone (a superset of the changes since then) and a cursor. A cursor that was not returned by this route: 400 `INVALID_CURSOR`.',
        querystring: Strict({
          cursor: Type.Optional(
            Type.String({
              minLength: 1,
              maxLength: 16384,
              pattern: '^[A-Za-z0-9_-]+$',
              description: 'Opaque: the `cursor` of the previous pull',
            }),
          ),
          since: Type.Optional(
            Type.String({
              format: 'date-time',
              deprecated: true,
              description: 'Deprecated (app versions before `cursor`): every current record and every tombstone, and a cursor',
            }),
          ),
        }),
        response: {
          200: Type.Object({
            cursor: Type.String({ description: 'Opaque: pass it as `cursor` to the next pull' }),
            since: Nullable(Timestamp),
            server_time: Timestamp,
            has_more: Type.Boolean(),
            entities: Type.Record(Type.String(), Changes),
          }),
        },
      },
    },
    async (req) => {
      // The deprecated `since`: everything current plus every tombstone, a superset of what changed since then.
      const legacy = !req.query.cursor && req.query.since !== undefined;
      return {
        ...(await sync.pull(actorOf(req), req.query.cursor ?? null, { tombstones: legacy })),
        since: req.query.since ? new Date(req.query.since) : null,
      };
    },
  );

  app.post(
    '/mobile/sync/push',
    {
      schema: {
        operationId: 'syncPush',
        tags: ['sync'],
        summary: 'Apply a batch of offline operations; each needs `client_operation_id` and is idempotent on it',
        description:
          'A batch with an operation lacking `client_operation_id` is refused whole (400, nothing applied). Each operation runs in its own transaction and gets its own result: `applied`, `conflict` (STALE_UPDATE: the server holds newer state, nothing applied; `server` carries it; for a trip action, INVALID_TRANSITION or TRIP_NOT_ASSIGNED_TO_YOU when the trip moved on), `rejected` (UNKNOWN_OPERATION, VALIDATION_FAILED, NOT_FOUND, CLIENT_OPERATION_ID_REUSED) or `error` (retry later). A repeated id returns the stored result with `replayed: true`. Operation types now: `notification.read` {notification_id}, `device.heartbeat` {device_id, recorded_at, battery_level?, network?, app_version?, build_number?, charging?}; for drivers `trip.accept` {trip_id}, `trip.reject` {trip_id, reason?}, `trip.verify_pickup` and `trip.verify_delivery` {trip_id, pin, evidence?} (a wrong PIN: rejected INVALID_PIN with `server.attempts_remaining`, and it counts towards the lock), `trip.start_delivery` {trip_id}, `trip.fail_delivery` {trip_id, reason, note?, evidence?}, `trip.return` {trip_id, pin}.',
        body: Strict({
          operations: Type.Array(
            Strict({
              client_operation_id: Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9._:-]+$' }),
              type: Type.String({ minLength: 1, maxLength: 60 }),
              payload: Type.Record(Type.String(), Type.Unknown()),
            }),
            { minItems: 1, maxItems: 100 },
          ),
        }),
        response: { 200: Type.Object({ results: Type.Array(SyncResult) }) },
      },
    },
    async (req) =>
      sync.push(actorOf(req), req.body.operations, (err, op) =>
        req.log.error({ err, client_operation_id: op.client_operation_id, type: op.type }, 'offline operation failed'),
      ),
  );
}
