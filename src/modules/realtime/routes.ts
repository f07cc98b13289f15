import type { FastifyReply, FastifyRequest } from 'fastify';
import { actorOf, type Actor, type RouteAuth } from '../../platform/auth.js';
import { IdParams } from '../../platform/schemas.js';
import type { Api } from '../../platform/context.js';
import type { RealtimeContext } from './context.js';
import type { RealtimeService, ResumeFrom } from './service/streams.js';
import { STREAM_TOKEN_TTL_SECONDS, signStreamToken, streamActor } from './service/stream-auth.js';
import { SseResponse, StreamQuery, StreamTokenBody, StreamTokenOut, type StreamKind } from './schemas.js';
import type { StreamFilter } from './service/connection.js';

/** An API key streams with this scope, as its owner would (and what he may see narrows it further). */
const STREAM_KEY_SCOPE = 'events:read' as const;

const STREAM_DOC =
  'Authenticate with `Authorization: Bearer` (an access token, or an API key with the `events:read` scope) or `?stream_token=`. Resume with the `Last-Event-ID` header or `?last_event_id=`: missed events are replayed from the event table, then live events follow, none twice. An unknown or expired `Last-Event-ID` (garbage, beyond the newest event, older than the oldest kept, or more missed events than the replay limit) is not an error and never silently drops events: the stream sends a `stream.reset` frame telling the client to refetch state, then the live stream. A client that does not read fast enough is disconnected and resumes. A stream is authorized when it opens: it stays open past the expiry of the access token or stream token that opened it, for as long as that session lives; signing out, a revoked session or a deactivated user closes it on every instance (at once through a notification, and in any case at the next periodic session check, REALTIME_SESSION_CHECK_MS).';

/**
 * The resume point the client sent: a sequence, `{ unknown }` when it is not one this server could have
 * sent (garbage, too large), or null when the client sent none. Unknown ids are not refused: EventSource
 * resends whatever it last saw, so the stream answers with `stream.reset` (refetch state) and goes live.
 */
function lastEventIdOf(req: FastifyRequest<{ Querystring: { last_event_id?: string } }>): ResumeFrom {
  const header = req.headers['last-event-id'];
  const raw = typeof header === 'string' && header.trim() !== '' ? header.trim() : req.query.last_event_id;
  if (raw === undefined) return null;
  if (!/^[0-9]{1,15}$/.test(raw)) return { unknown: raw.slice(0, 64) };
  return Number(raw);
}

export function realtimeRoutes(app: Api, ctx: RealtimeContext, svc: RealtimeService) {
  const stream = (
    path: string,
    operationId: string,
    summary: string,
    kind: StreamKind,
    auth: RouteAuth,
    filterOf: (actor: Actor, req: FastifyRequest) => Promise<StreamFilter>,
  ) =>
    app.get(
      path,
      {
        // Public to the platform hook: EventSource cannot send headers, so streamActor accepts a stream token too.
        config: { auth: 'public', documentedAuth: auth },
        schema: {
          operationId,
          tags: ['realtime'],
          summary,
          description: STREAM_DOC,
          querystring: StreamQuery,
          ...(kind === 'trip' ? { params: IdParams } : {}),
          security: [{ bearerAuth: [] }, { apiKey: [STREAM_KEY_SCOPE] }],
          'x-api-key-scope': STREAM_KEY_SCOPE,
          response: SseResponse,
        },
      },
      async (
        req: FastifyRequest<{ Querystring: { stream_token?: string; last_event_id?: string }; Params: { id?: string } }>,
        reply: FastifyReply,
      ) => {
        const lastEventId = lastEventIdOf(req);
        const actor = await streamActor(ctx, req, req.query.stream_token, { stream: kind, tripId: req.params.id, auth });
        const filter = await filterOf(actor, req);
        await svc.open(req, reply, actor, filter, lastEventId);
      },
    );

  stream(
    '/realtime/me/stream',
    'streamMyEvents',
    "The caller's events (audience includes me) and my notifications",
    'me',
    { apiKeyScope: STREAM_KEY_SCOPE },
    async (a) => ({ kind: 'me', userId: a.userId }),
  );
  stream(
    '/realtime/organization/stream',
    'streamOrganizationEvents',
    "The organization's events (dispatch and administrators; personal notification.created events excluded)",
    'organization',
    { roles: ['administrator', 'dispatch'], apiKeyScope: STREAM_KEY_SCOPE },
    async () => ({ kind: 'organization' }),
  );
  stream(
    '/realtime/trips/:id/stream',
    'streamTripEvents',
    "One trip's events: its driver, merchant and customer, dispatch, administrators, and sub-administrators of its territory (others: 404)",
    'trip',
    { permission: 'tracking', apiKeyScope: STREAM_KEY_SCOPE },
    (a, req) => svc.tripFilter(a, (req.params as { id: string }).id),
  );
  stream(
    '/realtime/territories/stream',
    'streamTerritoryEvents',
    "Events of the sub-administrator's territories (needs the `tracking` permission)",
    'territories',
    { roles: ['subadmin'], permission: 'tracking', apiKeyScope: STREAM_KEY_SCOPE },
    async (a) => ({ kind: 'territories', territoryIds: a.subadmin?.territoryIds ?? [] }),
  );

  app.post(
    '/realtime/tokens',
    {
      schema: {
        operationId: 'createStreamToken',
        tags: ['realtime'],
        summary: 'Issue a stream token (60 s, opens streams only) for clients that cannot send headers',
        description:
          "Use as `?stream_token=` on a stream route. It is valid for opening streams only (refused as an access token), for 60 seconds, for the caller's session; `stream` and `trip_id` optionally restrict it to one stream. Reconnecting after it expired needs a new token.",
        body: StreamTokenBody,
        response: { 201: StreamTokenOut },
      },
    },
    async (req, reply) => {
      const actor = actorOf(req);
      const scope = req.body ?? {};
      const token = await signStreamToken(
        ctx.config.keys.streamToken,
        { sub: actor.userId, org: actor.organizationId, role: actor.role, kind: actor.kind, sid: actor.sessionId },
        scope,
      );
      return reply.code(201).send({
        stream_token: token,
        token_type: 'stream' as const,
        expires_in: STREAM_TOKEN_TTL_SECONDS,
        expires_at: new Date(Date.now() + STREAM_TOKEN_TTL_SECONDS * 1000),
      });
    },
  );
}
