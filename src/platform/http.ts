import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, TITLES, type FieldError } from './errors.js';

interface AjvErrorLike {
  instancePath: string;
  keyword: string;
  message?: string;
  params: Record<string, unknown>;
}

function fieldPath(part: string | undefined, e: AjvErrorLike): string {
  let path = e.instancePath
    .split('/')
    .filter(Boolean)
    .map((seg) => (/^\d+$/.test(seg) ? `[${seg}]` : `.${seg}`))
    .join('')
    .replace(/^\./, '');
  const extra = (e.params.missingProperty ?? e.params.additionalProperty) as string | undefined;
  if (extra) path = path ? `${path}.${extra}` : extra;
  const prefix = part && part !== 'body' ? `${part}.` : '';
  return `${prefix}${path || part || 'body'}`;
}

const showValue = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v));

function validationErrors(err: FastifyError): FieldError[] {
  const seen = new Set<string>();
  const out: FieldError[] = [];
  const errs = (err.validation ?? []) as AjvErrorLike[];
  // Enumerations (`enum`, or a union of literals: one `const` error per branch) list their allowed values, and so do
  // nullable ones (a `type: null` branch beside them).
  const allowed = new Map<string, unknown[]>();
  for (const e of errs) {
    const values = e.keyword === 'enum' ? (e.params.allowedValues as unknown[]) : e.keyword === 'const' ? [e.params.allowedValue] : null;
    if (!values) continue;
    const list = allowed.get(e.instancePath) ?? [];
    for (const v of values) if (!list.includes(v)) list.push(v);
    allowed.set(e.instancePath, list);
  }
  for (const e of errs) {
    const list = allowed.get(e.instancePath);
    if (list && e.keyword === 'type' && e.params.type === 'null' && !list.includes(null)) list.push(null);
  }
  for (const e of errs) {
    // anyOf/oneOf branches repeat themselves; keep the first message per field.
    const field = fieldPath(err.validationContext, e);
    const values = allowed.get(e.instancePath);
    // A literal also says its type (`{type: string, const}`): a number there is the same mistake, one message.
    const enumError = values && (e.keyword === 'enum' || e.keyword === 'const' || e.keyword === 'type');
    const message = enumError
      ? `must be one of: ${values.map(showValue).join(', ')}`
      : e.keyword === 'additionalProperties'
        ? 'unknown field'
        : (e.message ?? 'invalid');
    const k = `${field}:${message}`;
    if (seen.has(k) || e.keyword === 'anyOf' || e.keyword === 'oneOf') continue;
    seen.add(k);
    out.push({ field, message });
  }
  return out.slice(0, 50);
}

const PG_CODES: Record<string, [number, string, string]> = {
  '23505': [409, 'DUPLICATE', 'A record with the same unique value already exists'],
  '23503': [422, 'REFERENCE_NOT_FOUND', 'A referenced record does not exist'],
  '23514': [422, 'CONSTRAINT_VIOLATION', 'A value breaks a rule of this resource'],
  '23502': [400, 'VALIDATION_FAILED', 'A required value is missing'],
  '22P02': [400, 'INVALID_VALUE', 'A value has the wrong form'],
  '22003': [422, 'VALUE_OUT_OF_RANGE', 'A value is out of range'],
  '22001': [400, 'VALUE_TOO_LONG', 'A value is too long'],
  '22007': [400, 'INVALID_VALUE', 'A date or time has the wrong form'],
  '22008': [400, 'INVALID_VALUE', 'A date or time is out of range'],
  '54000': [400, 'INVALID_VALUE', 'A value is too large'],
  // NUL (\u0000) cannot be stored in PostgreSQL text (22021) or jsonb (22P05): the client sent it, so a 400.
  '22021': [400, 'INVALID_VALUE', 'A text value contains a character that cannot be stored (NUL)'],
  '22P05': [400, 'INVALID_VALUE', 'A text value contains a character that cannot be stored (NUL)'],
  '42501': [404, 'NOT_FOUND', 'Resource not found'],
};

const FASTIFY_CODES: Record<number, string> = {
  400: 'MALFORMED_REQUEST',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  406: 'NOT_ACCEPTABLE',
  411: 'LENGTH_REQUIRED',
  413: 'PAYLOAD_TOO_LARGE',
  414: 'URI_TOO_LONG',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  429: 'RATE_LIMITED',
};

/** Seconds a client should wait before retrying when the database is unavailable. */
export const DATABASE_RETRY_AFTER_SECONDS = 5;

const UNAVAILABLE_SYSCALL = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);
const UNAVAILABLE_MESSAGE =
  /Connection terminated|connection error|not queryable|timeout exceeded when trying to connect|Connection ended|terminating connection|the database system is (starting up|shutting down|in recovery)/i;

/**
 * The database cannot be reached or is going away (not a fault of the request): connection refused or
 * reset, admin/crash shutdown (57P01/57P02), starting up (57P03), too many connections (53300),
 * connection exceptions (class 08), or the pool's wait for a connection timing out.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown } | null;
  if (!e || typeof e !== 'object') return false;
  const code = typeof e.code === 'string' ? e.code : '';
  if (['57P01', '57P02', '57P03', '53300'].includes(code) || /^08/.test(code) || UNAVAILABLE_SYSCALL.has(code)) return true;
  if (err instanceof AggregateError) return err.errors.some(isDatabaseUnavailable);
  return typeof e.message === 'string' && UNAVAILABLE_MESSAGE.test(e.message) && !(err instanceof AppError);
}

export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: string;
  request_id: string;
  errors?: FieldError[];
  [k: string]: unknown;
}

export function toProblem(err: unknown, requestId: string): ProblemBody {
  let status = 500;
  let code = 'INTERNAL_ERROR';
  let detail = 'An unexpected error occurred';
  let errors: FieldError[] | undefined;
  let extra: Record<string, unknown> | undefined;
  const e = err as FastifyError & { code?: string };
  if (err instanceof AppError) {
    ({ status, code } = err);
    detail = err.message;
    errors = err.errors;
    extra = err.extra;
  } else if (e?.validation) {
    status = 400;
    code = 'VALIDATION_FAILED';
    errors = validationErrors(e);
    detail = `The request is invalid: ${errors.map((x) => `${x.field} ${x.message}`).join('; ')}`.slice(0, 500);
  } else if (isDatabaseUnavailable(err)) {
    status = 503;
    code = 'DATABASE_UNAVAILABLE';
    detail = 'The database is unavailable for the moment; retry shortly';
    extra = { retry_after: DATABASE_RETRY_AFTER_SECONDS };
  } else if (typeof e?.code === 'string' && PG_CODES[e.code]) {
    [status, code, detail] = PG_CODES[e.code];
  } else if (typeof e?.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500) {
    status = e.statusCode;
    code = FASTIFY_CODES[status] ?? 'BAD_REQUEST';
    if (e.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || e.code === 'FST_ERR_CTP_EMPTY_JSON_BODY' || /JSON/.test(e.message ?? ''))
      code = 'MALFORMED_JSON';
    detail = e.message?.replace(/^FST_\w+: /, '') || TITLES[status] || 'Bad request';
  }
  const body: ProblemBody = {
    type: status >= 500 ? 'about:blank' : `https://errors.delivery.example/${code.toLowerCase().replace(/_/g, '-')}`,
    title: TITLES[status] ?? 'Error',
    status,
    detail,
    code,
    request_id: requestId,
  };
  if (errors?.length) body.errors = errors;
  if (extra) Object.assign(body, extra);
  return body;
}

export function sendProblem(reply: FastifyReply, problem: ProblemBody) {
  return reply.code(problem.status).type('application/problem+json').send(problem);
}

/**
 * Errors the router raises before any route or hook runs (FST_ERR_BAD_URL for malformed percent-encoding,
 * FST_ERR_MAX_PARAM_LENGTH for oversized path parameters): a problem response like every other error.
 * Passed to Fastify as the `frameworkErrors` option.
 */
export function frameworkErrorHandler(err: FastifyError, req: FastifyRequest, reply: FastifyReply) {
  const problem = toProblem(err, String(req.id));
  problem.detail = problem.detail.slice(0, 200);
  return sendProblem(reply, problem);
}

export function registerErrorHandling(app: FastifyInstance) {
  app.setErrorHandler((err, req: FastifyRequest, reply) => {
    const problem = toProblem(err, String(req.id));
    if (problem.status === 503 && problem.code === 'DATABASE_UNAVAILABLE')
      req.log.warn({ err: (err as Error).message }, 'database unavailable');
    else if (problem.status >= 500) req.log.error({ err }, 'request failed');
    else if (problem.status !== 401 && problem.status !== 404) req.log.info({ code: problem.code }, problem.detail);
    if ((problem.status === 429 || problem.status === 503) && problem.retry_after) reply.header('retry-after', String(problem.retry_after));
    return sendProblem(reply, problem);
  });
  let allowedMethods: ((path: string) => string[]) | null = null;
  const unrouted = (req: FastifyRequest, reply: FastifyReply) => {
    const path = req.url.split('?')[0];
    // A path that exists with other methods: 405 with `Allow` (RFC 9110 §15.5.6), not 404.
    allowedMethods ??= methodMatcher((app as FastifyInstance & { routeTable?: { method: string; url: string }[] }).routeTable ?? []);
    const allow = allowedMethods(path);
    if (allow.length > 0 && !allow.includes(req.method)) {
      reply.header('allow', allow.join(', '));
      return sendProblem(
        reply,
        toProblem(
          new AppError(405, 'METHOD_NOT_ALLOWED', `${req.method} is not allowed on ${path}; allowed: ${allow.join(', ')}`),
          String(req.id),
        ),
      );
    }
    return sendProblem(reply, toProblem(new AppError(404, 'NOT_FOUND', `No route ${req.method} ${path}`), String(req.id)));
  };
  app.setNotFoundHandler(unrouted);
  return {
    /**
     * Answers a request no route matches before its body is read: a method Fastify takes to carry a body
     * (QUERY, PROPFIND...) would otherwise be refused for its missing Content-Type (400) instead of 404/405.
     * Added by the app after the hooks that set the headers every response carries.
     */
    answerUnroutedEarly() {
      app.addHook('onRequest', (req, reply, done) => {
        if (req.is404) return unrouted(req, reply);
        done();
      });
    },
  };
}

/** Methods declared for a concrete path, from the route table (`:param` segments and a trailing `*`). */
export function methodMatcher(routes: { method: string; url: string }[]): (path: string) => string[] {
  const esc = (s: string) => s.replace(/[.+?^${}()|[\]\\]/g, '\\$&');
  const byPattern = new Map<string, { re: RegExp; methods: Set<string> }>();
  for (const r of routes) {
    // The CORS preflight route (`OPTIONS *`) answers every path; it says nothing about a path's methods.
    if (r.url === '*' || r.url === '/*' || r.method === 'OPTIONS') continue;
    let entry = byPattern.get(r.url);
    if (!entry) {
      const source = r.url
        .split('/')
        .map((seg) => (seg.startsWith(':') ? '[^/]+' : seg === '*' ? '.*' : esc(seg)))
        .join('/');
      entry = { re: new RegExp(`^${source}/?$`), methods: new Set() };
      byPattern.set(r.url, entry);
    }
    entry.methods.add(r.method);
  }
  const all = [...byPattern.values()];
  return (path) => {
    let decoded: string;
    try {
      decoded = decodeURI(path);
    } catch {
      return [];
    }
    const methods = new Set<string>();
    for (const e of all) if (e.re.test(decoded)) for (const m of e.methods) methods.add(m);
    return [...methods].sort();
  };
}
