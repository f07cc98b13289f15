import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import { MIGRATIONS_DIR } from './db/migrate.js';
import { DATABASE_RETRY_AFTER_SECONDS } from './http.js';
import { Timestamp } from './schemas.js';
import type { Api, AppContext, ReadinessCheck } from './context.js';
export type { ReadinessCheck } from './context.js';
import { appliedMigrations, ping } from './repo.js';

const DB_CHECK_TIMEOUT_MS = 2_000;

async function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      p,
      new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms))),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

let journal: Promise<string[]> | null = null;
function expectedMigrations(): Promise<string[]> {
  journal ??= readFile(path.join(MIGRATIONS_DIR, 'meta/_journal.json'), 'utf8').then((t) =>
    (JSON.parse(t) as { entries: { tag: string }[] }).entries.map((e) => e.tag),
  );
  return journal;
}

const Check = Type.Object({ ok: Type.Boolean() }, { additionalProperties: true });
const Health = Type.Object({
  status: Type.Literal('ok'),
  database: Type.Union([Type.Literal('ok'), Type.Literal('unavailable')]),
  database_kind: Type.String(),
  time: Timestamp,
  uptime_seconds: Type.Number(),
  realtime: Type.Optional(
    Type.Object(
      { listener: Type.String(), hub: Type.String() },
      { description: 'listener: idle | connected | reconnecting; hub: starting | live | paused | catching_up' },
    ),
  ),
  replica: Type.Optional(
    Type.Object(
      {
        state: Type.Union([Type.Literal('following'), Type.Literal('behind'), Type.Literal('unreachable')]),
        lag_ms: Type.Union([Type.Integer(), Type.Null()]),
        reads_on_replica: Type.Integer(),
        reads_on_primary: Type.Integer(),
      },
      {
        description:
          "Only with DATABASE_REPLICA_URL. following: GET reads may use it; behind (more than REPLICA_MAX_LAG_MS) or unreachable: every read goes to the primary. reads_on_replica / reads_on_primary: the users' reads this instance served from the replica / from the primary (not in a GET, not yet covering the user's write, or the replica behind or unreachable) since it started",
      },
    ),
  ),
});
const Ready = Type.Object({
  status: Type.Union([Type.Literal('ready'), Type.Literal('not_ready')]),
  checks: Type.Record(Type.String(), Check),
  time: Timestamp,
});

function replicaOf(ctx: AppContext) {
  const r = ctx.db.replicaStatus?.();
  if (!r || r.state === 'off') return {};
  return {
    replica: {
      state: r.state,
      lag_ms: r.lag_ms === null ? null : Math.round(r.lag_ms),
      reads_on_replica: r.reads_on_replica,
      reads_on_primary: r.reads_on_primary,
    },
  };
}

/** GET /health (liveness) and GET /health/ready (readiness), both public. */
export function healthRoutes(app: Api, ctx: AppContext) {
  app.get(
    '/health',
    {
      config: { auth: 'public' },
      schema: {
        operationId: 'getHealth',
        tags: ['system'],
        summary: 'Liveness: the process answers (always 200 while it runs)',
        description:
          'For a liveness probe: 200 as long as the process serves HTTP, even when the database is down (restarting the process would not help). `database` tells whether a trivial query answered within 2 s. Use `/health/ready` to route traffic.',
        response: { 200: Health },
      },
    },
    async () => {
      let database: 'ok' | 'unavailable' = 'ok';
      try {
        await withTimeout(
          ctx.db.withSystem((tx) => ping(tx)),
          DB_CHECK_TIMEOUT_MS,
        );
      } catch {
        database = 'unavailable';
      }
      const rt = ctx.readiness.get('realtime');
      const st = rt ? ((await rt()) as { listener?: { state: string }; hub?: { state: string } }) : null;
      const realtime = st?.listener && st.hub ? { listener: st.listener.state, hub: st.hub.state } : undefined;
      return {
        status: 'ok' as const,
        database,
        database_kind: ctx.db.kind,
        time: new Date(),
        uptime_seconds: Math.round(process.uptime()),
        realtime,
        ...replicaOf(ctx),
      };
    },
  );

  app.get(
    '/health/ready',
    {
      config: { auth: 'public' },
      schema: {
        operationId: 'getReadiness',
        tags: ['system'],
        summary: 'Readiness: database reachable, migrations applied, realtime listener live',
        description:
          'For a readiness probe or load balancer: 200 `ready` when every check passes, else 503 `not_ready` with `Retry-After` and the failing checks. `database`: a query answered within 2 s; `migrations`: every migration of this build is recorded (`missing` lists the others); `realtime`: the LISTEN connection is up and the event hub live (`reconnecting`/`catching_up` after a database blip; streams stay open and receive the missed events once it recovers); `workers`: whether this instance runs the outbox workers (informational).',
        response: { 200: Ready, 503: Ready },
      },
    },
    async (_req, reply: FastifyReply) => {
      const checks: Record<string, ReadinessCheck> = {};
      try {
        const [applied, expected] = await Promise.all([
          withTimeout(
            ctx.db.withSystem((tx) => appliedMigrations(tx)),
            DB_CHECK_TIMEOUT_MS,
          ),
          expectedMigrations(),
        ]);
        checks.database = { ok: true, kind: ctx.db.kind };
        const missing = expected.filter((t) => !applied.includes(t));
        checks.migrations = { ok: missing.length === 0, applied: applied.length, missing };
      } catch (err) {
        checks.database = { ok: false, kind: ctx.db.kind, error: err instanceof Error ? err.message : String(err) };
        checks.migrations = { ok: false, error: 'unknown while the database is unavailable' };
      }
      for (const [name, fn] of ctx.readiness) {
        try {
          checks[name] = await fn();
        } catch (err) {
          checks[name] = { ok: false, error: err instanceof Error ? err.message : String(err) };
        }
      }
      checks.workers = { ok: true, enabled: ctx.config.workers, count: ctx.workers.length };
      const ready = Object.values(checks).every((c) => c.ok);
      if (!ready) reply.code(503).header('retry-after', String(DATABASE_RETRY_AFTER_SECONDS));
      return { status: ready ? ('ready' as const) : ('not_ready' as const), checks, time: new Date() };
    },
  );
}
