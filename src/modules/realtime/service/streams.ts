import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../../platform/errors.js';
import type { Actor } from '../../../platform/auth.js';
import { EVENTS_CHANNEL } from '../../../platform/events.js';
import type { RealtimeContext } from '../context.js';
import { EventHub, sseFrame } from './hub.js';
import { SseConnection, type StreamFilter } from './connection.js';
import type { Settings } from '../../../config.js';
import { eventSeqBounds, eventsBySeq, eventsSince, maxEventSeq, replayPage } from '../repo.js';

const REPLAY_PAGE = 500;

/** A client's resume point: a sequence, an id that cannot be one (garbage), or none. */
export type ResumeFrom = number | { unknown: string } | null;
export type ResetReason = 'unknown_event_id' | 'expired_event_id' | 'too_many_missed_events';

/**
 * The frame telling a client that events after its Last-Event-ID will not come: refetch state, then keep
 * reading (live events follow). Its `id:` moves the client's Last-Event-ID to `resumeFrom`.
 */
export function resetFrame(reason: ResetReason, lastEventId: string | null, resumeFrom: number): string {
  const data = {
    type: 'stream.reset',
    reason,
    last_event_id: lastEventId,
    resume_from: resumeFrom,
    refetch: true,
    resync: '/api/v1/mobile/sync/pull',
  };
  return `id: ${resumeFrom}\nevent: stream.reset\ndata: ${JSON.stringify(data)}\n\n`;
}

export interface RealtimeOptions {
  heartbeatMs: number;
  maxBufferBytes: number;
  maxParked: number;
  gapTimeoutMs: number;
  maxConnections: number;
  replayMax: number;
  /** Open streams one user may hold on this instance; one more is refused with 429. */
  maxStreamsPerUser: number;
  /** How often open streams re-check their session (revocation closes them even if its NOTIFY was missed). */
  sessionCheckMs: number;
}

export function realtimeOptions(s: Settings): RealtimeOptions {
  return {
    heartbeatMs: s.REALTIME_HEARTBEAT_MS,
    maxBufferBytes: s.REALTIME_MAX_BUFFER_BYTES,
    maxParked: s.REALTIME_MAX_PARKED,
    gapTimeoutMs: s.REALTIME_GAP_TIMEOUT_MS,
    maxConnections: s.REALTIME_MAX_CONNECTIONS,
    replayMax: s.REALTIME_REPLAY_MAX,
    maxStreamsPerUser: s.REALTIME_MAX_STREAMS_PER_USER,
    sessionCheckMs: s.REALTIME_SESSION_CHECK_MS,
  };
}

export function createRealtimeService(ctx: RealtimeContext, opts: RealtimeOptions) {
  const { db } = ctx;
  const connections = new Set<SseConnection>();
  let log: FastifyBaseLogger | null = null;
  const hub = new EventHub(
    {
      fetch: (organizationId, seqs) => eventsBySeq(db, organizationId, seqs),
      maxSeq: () => db.withSystem(maxEventSeq),
      since: (after, also, limit) => db.withSystem((tx) => eventsSince(tx, after, also, limit)),
    },
    { gapTimeoutMs: opts.gapTimeoutMs },
    (err) => log?.warn({ err }, 'realtime hub: reading events failed, retrying'),
  );
  let heartbeat: NodeJS.Timeout | null = null;
  let sessionCheck: NodeJS.Timeout | null = null;
  let checking = false;

  /** Closes the streams whose session was revoked (or user deactivated): one query for every open session. */
  async function recheckSessions() {
    if (checking || connections.size === 0) return;
    checking = true;
    try {
      const open = [...connections];
      const sids = [...new Set(open.map((c) => c.sessionId))];
      const alive = await db.withSystem((tx) => ctx.deps.sessions.aliveSessions(tx, sids));
      for (const c of open) if (!alive.has(`${c.organizationId}:${c.sessionId}`)) c.close('session_revoked');
    } catch {
      // The database does not answer: the next round tries again.
    } finally {
      checking = false;
    }
  }
  const unlisteners: (() => Promise<void>)[] = [];

  async function replay(conn: SseConnection, actor: Actor, filter: StreamFilter, from: number, upTo: number) {
    let cursor = from;
    let sent = 0;
    while (!conn.closed && cursor < upTo) {
      const after = cursor;
      const rows = await db.withTenant(actor, (tx) => replayPage(tx, filter, after, upTo, REPLAY_PAGE));
      for (const ev of rows) {
        conn.replay(ev, sseFrame(ev));
        if (conn.needsDrain) await conn.drained();
        if (conn.closed) return;
      }
      if (rows.length < REPLAY_PAGE) return;
      cursor = rows[rows.length - 1].seq;
      sent += rows.length;
      if (sent >= opts.replayMax) {
        // Too far behind to replay: move the client's Last-Event-ID forward and tell it to resynchronize.
        conn.write(resetFrame('too_many_missed_events', String(from), upTo));
        return;
      }
    }
  }

  return {
    /** The filter of a trip's stream, for staff, the sub-administrator of its territory and its participants; anyone else 404. */
    async tripFilter(actor: Actor, tripId: string): Promise<StreamFilter> {
      const staff = actor.kind === 'administrator' || actor.kind === 'dispatch';
      const trip = await db.withTenant(actor, (tx) => ctx.deps.trips.tripParticipants(tx, tripId));
      if (!trip) throw AppError.notFound('Trip');
      if (staff) return { kind: 'trip', tripId };
      if (actor.kind === 'subadmin' && trip.territory_id && actor.subadmin?.territoryIds.includes(trip.territory_id))
        return { kind: 'trip', tripId };
      if ([trip.driver_user_id, trip.merchant_user_id, trip.customer_user_id].includes(actor.userId)) return { kind: 'trip', tripId };
      throw AppError.notFound('Trip');
    },
    hub,
    get connectionCount() {
      return connections.size;
    },
    /** For /health/ready and metrics: the listener and the hub. */
    status() {
      return { listener: db.listenerStatus(), hub: hub.status() };
    },
    recheckSessions,

    async start(logger?: FastifyBaseLogger) {
      log = logger ?? null;
      // Lost listener: hold the hub (nothing skipped); listening again: catch up from the event log and
      // re-check sessions at once (a revocation's NOTIFY may have been missed meanwhile).
      const offChange = db.onListenerChange((change) => {
        log?.warn({ change, listener: db.listenerStatus() }, `realtime: listening connection ${change}`);
        if (change === 'lost') hub.listenerLost();
        else {
          void hub.catchUp();
          void recheckSessions();
        }
      });
      unlisteners.push(async () => offChange());
      unlisteners.push(await db.listen(EVENTS_CHANNEL, (p) => hub.onNotify(p)));
      // A revoked session loses its open streams at once (on every instance: the NOTIFY reaches all).
      unlisteners.push(
        await db.listen('session_revoked', (sid) => {
          for (const c of connections) if (c.sessionId === sid) c.close('session_revoked');
        }),
      );
      await hub.start();
      heartbeat = setInterval(() => {
        for (const c of connections) c.write(': heartbeat\n\n');
      }, opts.heartbeatMs);
      heartbeat.unref();
      sessionCheck = setInterval(() => void recheckSessions(), opts.sessionCheckMs);
      sessionCheck.unref();
    },

    async stop() {
      if (heartbeat) clearInterval(heartbeat);
      if (sessionCheck) clearInterval(sessionCheck);
      heartbeat = null;
      sessionCheck = null;
      for (const c of [...connections]) c.close('server_shutdown');
      hub.close();
      for (const u of unlisteners.splice(0)) await u().catch(() => undefined);
    },

    /**
     * Opens an SSE stream: subscribe first (live events are parked), note the hub's watermark, replay
     * (Last-Event-ID, watermark] from the table, then release the parked events that were not replayed.
     * Nothing is lost between replay and live, and nothing is sent twice.
     */
    async open(req: FastifyRequest, reply: FastifyReply, actor: Actor, filter: StreamFilter, resume: ResumeFrom) {
      if (connections.size >= opts.maxConnections)
        throw new AppError(503, 'TOO_MANY_STREAMS', 'This instance has reached its stream limit; retry shortly', undefined, {
          retry_after: 5,
        });
      let mine = 0;
      for (const c of connections) if (c.userId === actor.userId && c.organizationId === actor.organizationId) mine++;
      if (mine >= opts.maxStreamsPerUser) {
        throw new AppError(
          429,
          'STREAM_LIMIT_PER_USER',
          `At most ${opts.maxStreamsPerUser} open streams per user; close one first`,
          undefined,
          {
            limit: opts.maxStreamsPerUser,
            retry_after: 5,
          },
        );
      }
      // A resume point this server never issued (beyond the newest event, or older than the oldest kept):
      // checked against the log, not only the hub, whose watermark may trail another instance's.
      let reset: ResetReason | null = resume !== null && typeof resume === 'object' ? 'unknown_event_id' : null;
      if (typeof resume === 'number') {
        const { lo, hi } = await db.withSystem(eventSeqBounds);
        if (resume > Number(hi) && resume > hub.watermark) reset = 'unknown_event_id';
        else if (lo !== null && resume < Number(lo) - 1) reset = 'expired_event_id';
      }
      const lastEventId = typeof resume === 'number' && !reset ? resume : null;
      reply.hijack();
      const res = reply.raw;
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(reply.getHeaders())) if (v !== undefined) headers[k] = String(v);
      // The body ends when the connection does (RFC 9112 §6.3): no chunked framing on every frame.
      res.useChunkedEncodingByDefault = false;
      res.shouldKeepAlive = false;
      res.writeHead(200, {
        ...headers,
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache, no-transform',
        connection: 'close',
        'x-accel-buffering': 'no',
        'x-request-id': String(req.id),
      });
      req.raw.socket?.setNoDelay(true);
      res.write('retry: 3000\n: connected\n\n');
      let unsubscribe: () => void = () => undefined;
      const conn = new SseConnection(res, {
        organizationId: actor.organizationId,
        userId: actor.userId,
        sessionId: actor.sessionId,
        filter,
        maxBufferBytes: opts.maxBufferBytes,
        maxParked: opts.maxParked,
        resumeFrom: lastEventId,
        onClose: () => {
          unsubscribe();
          connections.delete(conn);
        },
      });
      connections.add(conn);
      res.on('close', () => conn.close('client_closed'));
      res.on('error', () => conn.close('socket_error'));
      unsubscribe = hub.subscribe(conn);
      const upTo = hub.watermark;
      if (reset) {
        // Nothing before `upTo` will be replayed: the client refetches, and the live stream follows.
        conn.write(resetFrame(reset, typeof resume === 'object' && resume !== null ? resume.unknown : String(resume), upTo));
      }
      try {
        if (lastEventId !== null && lastEventId < upTo) await replay(conn, actor, filter, lastEventId, upTo);
        conn.goLive();
      } catch (err) {
        req.log.error({ err }, 'stream replay failed');
        conn.close('replay_failed');
      }
    },
  };
}

export type RealtimeService = ReturnType<typeof createRealtimeService>;
