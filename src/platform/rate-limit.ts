import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from './errors.js';
import type { Database } from './db/index.js';
import type { Settings } from '../config.js';
import { countInWindow } from './repo.js';

/**
 * Per-user request rate limits on expensive routes, counted in PostgreSQL (`rate_limit_bucket`, the
 * table login throttling uses) so every instance shares them: a sliding one-minute window (this minute
 * plus the weighted previous one). Over the limit: 429 RATE_LIMITED with Retry-After.
 */
export interface ExpensiveRouteGroup {
  name: string;
  /** Matches `METHOD /route/pattern` (the route's declared URL, not the request path). */
  pattern: RegExp;
  perMinute: number;
  setting: string;
}

export function expensiveRouteGroups(raw: Settings): ExpensiveRouteGroup[] {
  const n = (name: 'RATE_LIMIT_ORDERS_PER_MINUTE' | 'RATE_LIMIT_PLANS_PER_MINUTE' | 'RATE_LIMIT_REPORTS_PER_MINUTE', _fallback: number) =>
    raw[name];
  return [
    {
      name: 'orders',
      pattern: /^POST \/api\/v1\/[a-z]+\/orders$/,
      perMinute: n('RATE_LIMIT_ORDERS_PER_MINUTE', 60),
      setting: 'RATE_LIMIT_ORDERS_PER_MINUTE',
    },
    {
      name: 'plans',
      pattern: /^POST \/api\/v1\/[a-z]+\/dispatch-batches\/optimize$/,
      perMinute: n('RATE_LIMIT_PLANS_PER_MINUTE', 20),
      setting: 'RATE_LIMIT_PLANS_PER_MINUTE',
    },
    {
      name: 'reports',
      pattern: /^GET \/api\/v1\/.*\/reports\//,
      perMinute: n('RATE_LIMIT_REPORTS_PER_MINUTE', 20),
      setting: 'RATE_LIMIT_REPORTS_PER_MINUTE',
    },
  ].filter((g) => g.perMinute > 0);
}

/** Counts one request for `key`; returns the weighted count of the last minute and the seconds until the current window ends. */
export async function countRequest(db: Database, key: string): Promise<{ weighted: number; resetSeconds: number }> {
  return db.withSystem(async (tx) => {
    const row = await countInWindow(tx, key);
    return { weighted: Number(row.weighted), resetSeconds: Math.max(1, Number(row.reset)) };
  });
}

/**
 * Counts one request for `key` and refuses it beyond `perMinute`: 429 RATE_LIMITED with Retry-After (the caller's
 * own budget: an API key, a GPS device). `what` names the unit in the message ("requests per API key").
 */
export async function enforceRateLimit(db: Database, key: string, perMinute: number, what: string): Promise<void> {
  const { weighted, resetSeconds } = await countRequest(db, key);
  if (weighted > perMinute) {
    throw new AppError(429, 'RATE_LIMITED', `At most ${perMinute} ${what} per minute; retry in ${resetSeconds} s`, undefined, {
      retry_after: resetSeconds,
      limit: perMinute,
    });
  }
}

/** A preHandler on each route of an expensive group (after authentication, before the handler); other routes carry none. */
export function registerExpensiveRouteLimits(app: FastifyInstance, db: Database, groups: ExpensiveRouteGroup[]) {
  const limit = (g: ExpensiveRouteGroup) =>
    async function rateLimit(req: FastifyRequest) {
      if (!req.actor) return;
      const { weighted, resetSeconds } = await countRequest(db, `user:${req.actor.organizationId}:${req.actor.userId}:${g.name}`);
      if (weighted > g.perMinute) {
        throw new AppError(
          429,
          'RATE_LIMITED',
          `At most ${g.perMinute} ${g.name} requests per minute per user; retry in ${resetSeconds} s`,
          undefined,
          {
            retry_after: resetSeconds,
            limit: g.perMinute,
            limit_group: g.name,
          },
        );
      }
    };
  // Documented on each limited route in the OpenAPI document.
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const g = groups.find((x) => methods.some((m) => x.pattern.test(`${m} ${route.url}`)));
    if (!g) return;
    const schema = (route.schema ??= {}) as { description?: string };
    const note = `Rate limited per user: at most ${g.perMinute} requests per minute in the \`${g.name}\` group (\`${g.setting}\`, shared by every instance); beyond it 429 RATE_LIMITED with Retry-After.`;
    schema.description = schema.description ? `${schema.description} ${note}` : note;
    const own = route.preHandler ? (Array.isArray(route.preHandler) ? route.preHandler : [route.preHandler]) : [];
    route.preHandler = [limit(g), ...own] as typeof route.preHandler;
  });
}
