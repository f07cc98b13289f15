import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../platform/errors.js';
import { tenantOf, type Actor } from '../../platform/auth.js';
import { EVENTS_CHANNEL, type StoredEvent } from '../../platform/events.js';
import type { AppContext } from '../../platform/context.js';
import { EventHub, sseFrame } from './hub.js';
import { SseConnection, replayFilter, type StreamFilter } from './connection.js';

const EVENT_COLUMNS = 'seq, id, organization_id, type, entity_type, entity_id, territory_id, actor_user_id, audience_user_ids, payload, created_at';
const REPLAY_PAGE = 500;

export interface RealtimeOptions {
  heartbeatMs: number;
  maxBufferBytes: number;
  maxParked: number;
  gapTimeoutMs: number;
  maxConnections: number;
  replayMax: number;
}

export function realtimeOptions(raw: Record<string, string | undefined>): RealtimeOptions {
  const n = (v: string | undefined, d: number) => (v && Number.isInteger(Number(v)) && Number(v) > 0 ? Number(v) : d);
  return {
    heartbeatMs: n(raw.REALTIME_HEARTBEAT_MS, 15_000),
    maxBufferBytes: n(raw.REALTIME_MAX_BUFFER_BYTES, 512 * 1024),
    maxParked: n(raw.REALTIME_MAX_PARKED, 5_000),
    gapTimeoutMs: n(raw.REALTIME_GAP_TIMEOUT_MS, 500),
    maxConnections: n(raw.REALTIME_MAX_CONNECTIONS, 20_000),
    replayMax: n(raw.REALTIME_REPLAY_MAX, 10_000),
  };
}

export function createRealtimeService(ctx: AppContext, opts: RealtimeOptions) {
  const { db } = ctx;
  const connections = new Set<SseConnection>();
  const hub = new EventHub(
    {
      // One round trip per organization (tenantRead); the sequences are validated integers, inlined.
      fetch: (organizationId, seqs) =>
        db.tenantRead<StoredEvent>({ organizationId, userId: null }, `SELECT ${EVENT_COLUMNS} FROM event WHERE seq IN (${seqs.map((s) => Math.trunc(s)).join(',')})`),
      maxSeq: () => db.withSystem(async (tx) => (await tx.query<{ m: number }>('SELECT coalesce(max(seq), 0)::int8 AS m FROM event')).rows[0].m),
    },
    { gapTimeoutMs: opts.gapTimeoutMs },
  );
  let heartbeat: NodeJS.Timeout | null = null;
  const unlisteners: (() => Promise<void>)[] = [];

  async function replay(conn: SseConnection, actor: Actor, filter: StreamFilter, from: number, upTo: number) {
    let cursor = from;
    let sent = 0;
    while (!conn.closed && cursor < upTo) {
      const f = replayFilter(filter, 3);
      const after = cursor;
      const { rows } = await db.withTenant(tenantOf(actor), (tx) =>
        tx.query<StoredEvent>(`SELECT ${EVENT_COLUMNS} FROM event WHERE seq > $1 AND seq <= $2 AND ${f.sql} ORDER BY seq LIMIT ${REPLAY_PAGE}`, [
          after,
          upTo,
          ...f.params,
        ]),
      );
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
        conn.write(`id: ${upTo}\nevent: stream.reset\ndata: ${JSON.stringify({ reason: 'too_many_missed_events', resume_from: upTo, resync: '/api/v1/mobile/sync/pull' })}\n\n`);
        return;
      }
    }
  }

  return {
    hub,
    get connectionCount() {
      return connections.size;
    },

    async start() {
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
    },

    async stop() {
      if (heartbeat) clearInterval(heartbeat);
      heartbeat = null;
      for (const c of [...connections]) c.close('server_shutdown');
      hub.close();
      for (const u of unlisteners.splice(0)) await u().catch(() => undefined);
    },

    /**
     * Opens an SSE stream: subscribe first (live events are parked), note the hub's watermark, replay
     * (Last-Event-ID, watermark] from the table, then release the parked events that were not replayed.
     * Nothing is lost between replay and live, and nothing is sent twice.
     */
    async open(req: FastifyRequest, reply: FastifyReply, actor: Actor, filter: StreamFilter, lastEventId: number | null) {
      if (connections.size >= opts.maxConnections) throw new AppError(503, 'TOO_MANY_STREAMS', 'This instance has reached its stream limit; retry shortly');
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
