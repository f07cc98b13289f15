import { withRequestScope } from './platform/db/replica.js';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import cors from '@fastify/cors';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import client from 'prom-client';
import type { Config } from './config.js';
import type { Database } from './platform/db/index.js';
import type { AppContext } from './platform/context.js';
import { frameworkErrorHandler, registerErrorHandling } from './platform/http.js';
import { AppError } from './platform/errors.js';
import { accessDoc, registerAuthHook } from './platform/auth.js';
import { Problem, isDateTime } from './platform/schemas.js';
import { finishOpenApi } from './platform/openapi.js';
import { namedSchemas, tagDescriptions } from './modules/components.js';
import { addOrganizationId, fillOrganizationId } from './platform/tenant-fields.js';
import { newId } from './platform/ids.js';
import { createEventBus } from './platform/events.js';
import { composeModules, SECRET_COLUMNS, type Composition } from './modules/index.js';
import { prepareStoredSecrets } from './platform/secret-store.js';
import { healthRoutes } from './platform/health.js';
import { DOCS_CSP, corsOptions, edgeSettings, securityHeaders, serverOptions } from './platform/edge.js';
import { expensiveRouteGroups, registerExpensiveRouteLimits } from './platform/rate-limit.js';
import { registerWeb } from './platform/web.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

export interface BuildOptions {
  config: Config;
  db: Database;
  /** Where the request log goes (tests read it); stdout by default. */
  logStream?: { write(line: string): void };
}

/**
 * The URL as written to the request log: every query value is replaced, since query strings carry
 * credentials (SSE stream tokens, upload tokens) that must not land in log files.
 */
export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return url;
  const query = url
    .slice(q + 1)
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      return eq < 0 ? pair : `${pair.slice(0, eq)}=[redacted]`;
    })
    .join('&');
  return `${url.slice(0, q)}?${query}`;
}

export interface RouteInfo {
  method: string;
  url: string;
  operationId?: string;
  hasResponseSchema: boolean;
  isPublic: boolean;
  /** Who may call (from `config.auth.roles`); undefined = any authenticated user (or public). */
  roles?: string[];
  /** The sub-administrator permission key the route needs, if any. */
  permission?: string;
}

declare module 'fastify' {
  interface FastifyInstance {
    ctx: AppContext;
    routeTable: RouteInfo[];
    /** The modules as composed (src/modules/index.ts), in route order. */
    modules: Composition['modules'];
    /** The composed services, typed (seed, tests). */
    services: Composition['services'];
  }
}

function allowsNull(schema: unknown): boolean {
  const s = schema as { type?: unknown; anyOf?: unknown[]; oneOf?: unknown[] };
  return (
    s.type === 'null' || (Array.isArray(s.type) && s.type.includes('null')) || [...(s.anyOf ?? []), ...(s.oneOf ?? [])].some(allowsNull)
  );
}

/** A JSON object body with no required field: a POST may omit it (it counts as `{}`). */
export function emptyBodyAllowed(schema: unknown): boolean {
  const s = schema as { type?: unknown; required?: unknown[] } | undefined;
  return !!s && s.type === 'object' && !s.required?.length;
}

function ajvFor(coerce: boolean): Ajv {
  const ajv = new Ajv({
    allErrors: true,
    removeAdditional: false,
    useDefaults: true,
    coerceTypes: coerce ? 'array' : false,
    strict: false,
  });
  addFormats(ajv);
  // Stricter than RFC 3339's grammar alone: offsets beyond ±14:59 reach PostgreSQL as error 22009 (a 500 before).
  ajv.addFormat('date-time', { type: 'string', validate: isDateTime });
  // JSON Schema 2020-12 tuples (GeoJSON positions) in this draft-07 Ajv: each listed member checked by its schema.
  ajv.addKeyword({
    keyword: 'prefixItems',
    type: 'array',
    schemaType: 'array',
    compile: (schemas: object[]) => {
      const checks = schemas.map((s) => ajv.compile(s));
      return (data: unknown[]) => checks.every((check, i) => i >= data.length || check(data[i]));
    },
  });
  return ajv;
}

/** The body rule of routes with a body schema (added per route by the onRoute hook in buildApp). */
function bodyPresence(req: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void): void {
  const bodySchema = req.routeOptions.schema?.body;
  if (req.body === null && bodySchema && !allowsNull(bodySchema)) {
    return done(AppError.badRequest('The request body must be a JSON object, not null', [{ field: 'body', message: 'must not be null' }]));
  }
  if (req.body === undefined && req.method === 'POST' && emptyBodyAllowed(bodySchema)) req.body = {};
  done();
}

/** Trust the nearest `hops` proxies: proxy-addr calls this with the hop index, 0 = the socket peer. */
const trustHops = (hops: number) => (_addr: string, hop: number) => hop < hops;

/** The resources (named components) carry `organization_id`; geometry is not a resource. */
addOrganizationId(
  Object.entries(namedSchemas)
    .filter(([name]) => !['Position', 'GeoPoint', 'GeoArea'].includes(name))
    .map(([, schema]) => schema),
);

export async function buildApp(opts: BuildOptions): Promise<FastifyInstance> {
  const { config, db } = opts;
  const app = Fastify({
    logger: {
      level: config.logLevel,
      redact: {
        paths: [
          'req.headers.authorization',
          'req.headers["x-upload-token"]',
          'req.headers.cookie',
          '*.password',
          '*.refresh_token',
          '*.pin',
        ],
        censor: '[redacted]',
      },
      serializers: {
        req: (req: { method: string; url: string; host?: string; ip?: string; socket?: { remotePort?: number } }) => ({
          method: req.method,
          url: redactUrl(req.url),
          host: req.host,
          remoteAddress: req.ip,
          remotePort: req.socket?.remotePort,
        }),
      },
      ...(opts.logStream ? { stream: opts.logStream } : {}),
    },
    bodyLimit: config.bodyLimitBytes,
    // Plugin registration compiles every route schema; on a loaded 2-core machine that can pass the 10 s default.
    pluginTimeout: 120_000,
    // X-Forwarded-For is believed only from the proxies TRUST_PROXY names (none by default).
    trustProxy: typeof config.trustProxy === 'number' ? trustHops(config.trustProxy) : config.trustProxy,
    genReqId: (req) => {
      const incoming = req.headers['x-request-id'];
      return typeof incoming === 'string' && /^[A-Za-z0-9._-]{8,64}$/.test(incoming) ? incoming : newId();
    },
    ajv: undefined,
    frameworkErrors: frameworkErrorHandler,
    // Timeouts, header size, parser errors as problem+json (src/platform/edge.ts).
    ...serverOptions(edgeSettings(config.settings)),
  }).withTypeProvider<TypeBoxTypeProvider>();

  // Bodies are validated strictly (no coercion: "5" is not 5); query strings, params and headers are text and coerced.
  const strictAjv = ajvFor(false);
  const coercingAjv = ajvFor(true);
  app.setValidatorCompiler(({ schema, httpPart }) => (httpPart === 'body' ? strictAjv : coercingAjv).compile(schema));

  const ctx: AppContext = { config, db, events: createEventBus(), dashboard: new Map(), workers: [], onClose: [], readiness: new Map() };
  app.decorate('ctx', ctx);
  app.decorate('routeTable', [] as RouteInfo[]);

  const unrouted = registerErrorHandling(app);
  // The request id on every response, errors included (set first: nothing later clears it).
  app.addHook('onRequest', (req, reply, done) => {
    reply.header('x-request-id', String(req.id));
    // The rest of the request runs in its scope: the reads of a GET may go to the replica (src/platform/db/replica.ts).
    withRequestScope(req.method, done);
  });
  // organization_id on every resource returned (src/platform/tenant-fields.ts): the caller's organization.
  app.addHook('preSerialization', (req, reply, payload, done) => {
    const orgId = req.actor?.organizationId;
    if (orgId && reply.statusCode < 300 && payload && typeof payload === 'object') {
      const responses = req.routeOptions.schema?.response as Record<string, unknown> | undefined;
      fillOrganizationId(responses?.[String(reply.statusCode)] ?? responses?.['2xx'], payload, orgId);
    }
    done(null, payload);
  });

  const SECURITY_HEADERS = securityHeaders();
  app.addHook('onRequest', (_req, reply, done) => {
    reply.headers(SECURITY_HEADERS);
    done();
  });
  await app.register(cors, corsOptions(config.corsOrigins));
  unrouted.answerUnroutedEarly();

  // Every route: problem responses documented, security declared, and listed for the route-table tests.
  app.addHook('onRoute', (route) => {
    if (route.url.startsWith('/docs')) route.config = { ...(route.config ?? {}), auth: 'public' };
    const isPublic = route.config?.auth === 'public';
    const schema = (route.schema ??= {}) as Record<string, any>;
    const response = (schema.response ??= {});
    if (!response['4xx']) response['4xx'] = Problem;
    if (!response['5xx']) response['5xx'] = Problem;
    const keyScope = typeof route.config?.auth === 'object' ? route.config.auth.apiKeyScope : undefined;
    if (!isPublic && !schema.security) schema.security = keyScope ? [{ bearerAuth: [] }, { apiKey: [keyScope] }] : [{ bearerAuth: [] }];
    if (keyScope) schema['x-api-key-scope'] = keyScope;
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    // Action routes (POST, body fields all optional) take a missing body as `{}` (the preValidation hook above):
    // the document says the body is optional. A JSON `null` is still refused.
    if (methods.includes('POST') && emptyBodyAllowed(schema.body)) schema['x-body-optional'] = true;
    // A route with a body schema needs a JSON value of that schema: `null` is refused before any route-level hook
    // could take it for a missing body; an action route (a POST whose body has no required field) takes a missing
    // body as `{}`. Only routes with a body carry this hook.
    if (schema.body) {
      const own = route.preValidation ? (Array.isArray(route.preValidation) ? route.preValidation : [route.preValidation]) : [];
      route.preValidation = [bodyPresence, ...own] as typeof route.preValidation;
    }
    // Who may call, in the document (finishOpenApi writes the sentence), from the same declaration the auth hook enforces.
    const access = accessDoc(route.config?.auth, route.config?.documentedAuth);
    schema['x-roles'] = access.roles;
    if (access.permission) schema['x-permission'] = access.permission;
    schema['x-access'] = access.text;
    for (const method of methods) {
      app.routeTable.push({
        method,
        url: route.url,
        operationId: schema.operationId,
        hasResponseSchema: Object.keys(response).some((k) => /^[23]/.test(k)),
        isPublic,
        roles: typeof route.config?.auth === 'object' ? route.config.auth.roles : undefined,
        permission: typeof route.config?.auth === 'object' ? route.config.auth.permission : undefined,
      });
    }
  });

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Delivery Logistics Platform API',
        version: '0.7.2',
        description:
          'Multi-tenant delivery and logistics backend. Errors are RFC 9457 problem details with a stable `code`.\n\n' +
          '**API keys** (`apiKey` scheme): created with POST /api-keys, sent as `Authorization: Bearer dlk_…`. A key acts as its owner ' +
          '(refused once he is deactivated) with only its scopes. An operation keys may call lists the `apiKey` scheme with its scope ' +
          '(also `x-api-key-scope`); any other operation refuses keys with 403 API_KEY_SCOPE, as does an operation whose scope the key lacks. ' +
          'An unknown or revoked key is 401 INVALID_API_KEY; each key is rate limited (API_KEY_RATE_LIMIT_PER_MINUTE, 429 RATE_LIMITED).',
      },
      servers: [{ url: '/' }],
      components: {
        securitySchemes: {
          bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
          apiKey: {
            type: 'http',
            scheme: 'bearer',
            bearerFormat: 'dlk_<id>_<secret>',
            description: 'An API key (POST /api-keys); the operation names the scope it needs.',
          },
        },
      },
    },
    transformObject: (d) =>
      finishOpenApi((d as { openapiObject: Record<string, any> }).openapiObject, { named: namedSchemas, tags: tagDescriptions }),
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
  });
  await app.register(swaggerUi, { routePrefix: '/docs', staticCSP: DOCS_CSP });

  // Metrics: per-route rates and latencies in a registry of this app instance.
  const registry = new client.Registry();
  const httpDuration = new client.Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request latency by route',
    labelNames: ['method', 'route', 'status'],
    buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  });
  new client.Gauge({
    name: 'db_pool_connections',
    help: 'Connections of the primary pool in use and idle; requests waiting for one (PostgreSQL)',
    labelNames: ['state'],
    registers: [registry],
    collect() {
      const p = db.poolStatus?.();
      if (!p) return;
      this.set({ state: 'in_use' }, p.in_use);
      this.set({ state: 'idle' }, p.open - p.in_use);
      this.set({ state: 'waiting' }, p.waiting);
    },
  });
  app.decorate('metrics', registry);
  app.addHook('onResponse', (req, reply, done) => {
    httpDuration.observe(
      { method: req.method, route: req.routeOptions.url ?? 'unmatched', status: String(reply.statusCode) },
      reply.elapsedTime / 1000,
    );
    done();
  });

  // The stored secrets read with the configured keys (else one `config:` line); plain-text ones are encrypted now.
  const secrets = await prepareStoredSecrets(db, config.secrets, SECRET_COLUMNS, { reencryptPrevious: !config.databaseUrl });
  if (secrets.encrypted || secrets.reencrypted)
    app.log.info({ encrypted: secrets.encrypted, reencrypted: secrets.reencrypted }, 'stored secrets written under the current key');

  const composed = composeModules(ctx);
  app.decorate('modules', composed.modules);
  app.decorate('services', composed.services);

  registerAuthHook(app, config.keys.accessToken, composed.resolveActor);

  registerExpensiveRouteLimits(app, db, expensiveRouteGroups(config.settings));

  await app.register(
    async (api) => {
      healthRoutes(api as any, ctx);
      for (const m of composed.modules) await m.routes?.(api as any);
      api.get(
        '/openapi.json',
        {
          config: { auth: 'public' },
          schema: { hide: true, operationId: 'getOpenApi', response: { 200: { type: 'object', additionalProperties: true } } },
        },
        async () => app.swagger(),
      );
    },
    { prefix: '/api/v1' },
  );

  app.get(
    '/metrics',
    { config: { auth: 'public' }, schema: { hide: true, operationId: 'getMetrics', response: { 200: { type: 'string' } } } },
    async (req, reply) => {
      const token = config.metricsToken;
      if (!token || req.headers.authorization !== `Bearer ${token}`) return reply.callNotFound();
      reply.type(registry.contentType);
      return registry.metrics();
    },
  );

  await registerWeb(app, config.settings); // the console and tracking pages (src/platform/web.ts)

  app.addHook('onClose', async () => {
    for (const fn of ctx.onClose) await fn();
  });
  return app;
}

declare module 'fastify' {
  interface FastifyInstance {
    metrics: client.Registry;
  }
}
