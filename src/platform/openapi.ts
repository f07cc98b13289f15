import type { TSchema } from '@sinclair/typebox';
import { DATE_TIME_PATTERN, Problem } from './schemas.js';
import { TITLES } from './errors.js';

/**
 * The last step of the OpenAPI document (the `transformObject` of @fastify/swagger), applied once to the whole
 * generated document so that route files stay as they are:
 * - errors: every 4XX/5XX response is `application/problem+json` with one shared `Problem` component, plus the
 *   statuses every operation can answer (400, 401, 403, 404, 429, 500) as shared `components.responses`;
 * - named component schemas: each schema of `named` (resources: `Trip`, `Order`, ...) is hoisted into
 *   `components.schemas` and referenced where it occurs; each JSON request body becomes `<OperationId>Request`;
 * - `date-time` strings carry the pattern the server enforces (offsets within ±14:59: PostgreSQL refuses more);
 * - `security: []` on public operations, a summary on every operation, tags declared, reserved operations
 *   (always 501) marked deprecated, license, and links for the main flows.
 */

type Json = Record<string, any>;

export interface FinishOptions {
  /** Component name → schema, for the resources a generated client should know by name. */
  named: Record<string, TSchema>;
  /** Tag descriptions. */
  tags?: Record<string, string>;
}

const REF = '#/components/schemas/';
const clone = <T>(v: T): T => JSON.parse(JSON.stringify(v));

/** @fastify/swagger writes `const: x` as `enum: [x]` and drops `$id`; compare schemas in that form, keys sorted. */
function normalize(v: any): any {
  if (Array.isArray(v)) return v.map(normalize);
  if (!v || typeof v !== 'object') return v;
  const out: Json = {};
  for (const [k, x] of Object.entries(v)) {
    if (k === '$id' || x === undefined || (k === 'pattern' && x === DATE_TIME_PATTERN)) continue;
    if (k === 'const') out.enum = [x];
    // Type.Record(Type.String(), X): swagger writes `additionalProperties: X`.
    else if (k === 'patternProperties' && Object.keys(x as object).join() === '^(.*)$')
      out.additionalProperties = normalize((x as Json)['^(.*)$']);
    else out[k] = normalize(x);
  }
  return out;
}
function canon(v: any): string {
  if (Array.isArray(v)) return `[${v.map(canon).join(',')}]`;
  if (v && typeof v === 'object')
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canon(v[k])}`)
      .join(',')}}`;
  return JSON.stringify(v);
}

const pascal = (s: string) => s.replace(/(^|[^A-Za-z0-9]+)([A-Za-z0-9])/g, (_, __, c: string) => c.toUpperCase());
const sentence = (opId: string) => {
  const words = opId.replace(/([a-z0-9])([A-Z])/g, '$1 $2').toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
};

/** Visits every Schema Object of the document (components, parameters, bodies, responses, headers). */
function eachSchemaSlot(doc: Json, fn: (holder: Json, key: string) => void) {
  const content = (c: Json | undefined) => {
    for (const media of Object.values<Json>(c ?? {})) if (media.schema) fn(media, 'schema');
  };
  for (const name of Object.keys(doc.components?.schemas ?? {})) fn(doc.components.schemas, name);
  for (const r of Object.values<Json>(doc.components?.responses ?? {})) content(r.content);
  for (const item of Object.values<Json>(doc.paths ?? {})) {
    for (const [method, op] of Object.entries<Json>(item)) {
      if (method === 'parameters' || typeof op !== 'object') continue;
      for (const p of op.parameters ?? []) if (p.schema) fn(p, 'schema');
      content(op.requestBody?.content);
      for (const r of Object.values<Json>(op.responses ?? {})) {
        content(r.content);
        for (const h of Object.values<Json>(r.headers ?? {})) if (h.schema) fn(h, 'schema');
      }
    }
  }
}

function eachRequestSchema(doc: Json, fn: (schema: Json) => void) {
  for (const item of Object.values<Json>(doc.paths ?? {})) {
    for (const [method, op] of Object.entries<Json>(item)) {
      if (method === 'parameters' || typeof op !== 'object') continue;
      for (const p of op.parameters ?? []) if (p.schema) fn(p.schema);
      for (const media of Object.values<Json>(op.requestBody?.content ?? {})) if (media.schema) fn(media.schema);
    }
  }
}

function walkSchema(s: any, fn: (node: Json) => void) {
  if (!s || typeof s !== 'object') return;
  if (Array.isArray(s)) return s.forEach((x) => walkSchema(x, fn));
  fn(s);
  for (const [k, v] of Object.entries(s)) if (k !== 'enum' && k !== 'examples' && k !== 'default' && k !== 'const') walkSchema(v, fn);
}

const PROBLEM_RESPONSES: Record<string, [string, string]> = {
  BadRequest: [
    '400',
    'The request is invalid (`VALIDATION_FAILED`, `MALFORMED_JSON`, `INVALID_VALUE`, `VALUE_TOO_LONG`); `errors` lists the fields.',
  ],
  Unauthorized: ['401', 'No valid access token (`UNAUTHORIZED`, `TOKEN_EXPIRED`, `SESSION_REVOKED`).'],
  Forbidden: ['403', "The caller's role, territory or permission does not allow this (`FORBIDDEN`)."],
  NotFound: ['404', 'The resource does not exist or is not visible to the caller (`NOT_FOUND`).'],
  Conflict: [
    '409',
    'The request conflicts with the current state (`CONFLICT`, `INVALID_TRANSITION` with `current_status`, `DUPLICATE`, `IDEMPOTENCY_KEY_REUSED`).',
  ],
  Unprocessable: [
    '422',
    'The request is well-formed but breaks a business rule (`UNPROCESSABLE`, `REFERENCE_NOT_FOUND`, `CONSTRAINT_VIOLATION`).',
  ],
  PayloadTooLarge: [
    '413',
    "The request body is larger than the body limit (`PAYLOAD_TOO_LARGE`; `BODY_LIMIT_BYTES`, 1 MiB by default; an upload PUT: its slot's declared size).",
  ],
  UriTooLong: [
    '414',
    'The request line (path and query string) is longer than the server reads (`URI_TOO_LONG`), answered before any route runs.',
  ],
  HeadersTooLarge: [
    '431',
    'The request head is larger than `HTTP_MAX_HEADER_BYTES` (16 KiB by default) (`HEADERS_TOO_LARGE`), answered before any route runs.',
  ],
  TooManyRequests: ['429', 'Rate limited (`RATE_LIMITED`); see the `Retry-After` header.'],
  ServerError: ['500', 'Unexpected server error (`INTERNAL_ERROR`); quote `request_id` when reporting it.'],
};

const PROBLEM_RESPONSES_BY_STATUS: Record<string, string> = Object.fromEntries(
  Object.values(PROBLEM_RESPONSES).map(([s, d]) => [s, d.replace(/ \(.*$/, '.')]),
);

/** `status → codes` named in an operation's text: "422 QUOTE_EXPIRED", "409 INVALID_TRANSITION", "**503** `WEBHOOK_NOT_CONFIGURED`", "(400)". */
export function statusesIn(text: string): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  const re = /(?<![\d.,])\b([45][0-9]{2})\b(?![\d.,])\**\s*(?:\(?`?([A-Z][A-Z0-9_]{2,})\b)?/g;
  for (const m of text.matchAll(re)) {
    if (!TITLES[Number(m[1])]) continue;
    const set = out.get(m[1]) ?? new Set<string>();
    if (m[2]) set.add(m[2]);
    out.set(m[1], set);
  }
  return out;
}

/** Summaries of operations whose route declares none (used only while the route has no `summary`). */
const SUMMARIES: Record<string, string> = {
  getMe: 'The calling user',
  listAppUsers: 'Users of the organization (administrators), filtered by role or text',
  getHealth: 'Health: the database answers (503 DATABASE_UNAVAILABLE when not)',
  getCurrentContract: 'The API contract: version, base path and releases',
  listOperators: 'Operator accounts (platform operators)',
  getSettings: 'Settings of the organization',
  updateSettings: 'Change the settings of the organization (administrators)',
  updateBranding: 'Change the branding of an organization',
  listDocuments: 'Documents submitted for review, filtered by status and subject',
  submitDocument: 'Submit a document for review',
  reviewDocument: 'Approve or reject a submitted document (administrators)',
  listAudit: 'Audit log of the organization, newest first',
  getDashboard: 'Operations dashboard counters',
};

/** Links of the main flows: from a created resource to the operations that follow it. */
const LINKS: Record<string, Record<string, { operationId: string; parameters: Record<string, string>; description: string }>> = {
  createTrip: {
    GetTrip: {
      operationId: 'getTrip',
      parameters: { id: '$response.body#/id' },
      description: 'Read the trip again (status, driver, PINs for whom they are meant).',
    },
    GetTripTracking: {
      operationId: 'getTripTracking',
      parameters: { id: '$response.body#/id' },
      description: 'Follow the new trip (status, driver, positions).',
    },
    AssignTrip: { operationId: 'assignTrip', parameters: { id: '$response.body#/id' }, description: 'Assign a driver to the trip.' },
    ChangeTripStatus: {
      operationId: 'changeTripStatus',
      parameters: { id: '$response.body#/id' },
      description: 'Move the trip through its states.',
    },
    StreamTripEvents: {
      operationId: 'streamTripEvents',
      parameters: { id: '$response.body#/id' },
      description: 'Server-sent events of the trip.',
    },
  },
  createCustomerOrder: {
    GetCustomerTrip: {
      operationId: 'getCustomerTrip',
      parameters: { id: '$response.body#/trip_id' },
      description: 'The delivery trip of the order (when `trip_id` is set).',
    },
    SubmitPaymentProof: {
      operationId: 'submitPaymentProof',
      parameters: { id: '$response.body#/id' },
      description: 'Upload the payment proof of a direct payment.',
    },
    UpdateMerchantOrderStatus: {
      operationId: 'updateMerchantOrderStatus',
      parameters: { id: '$response.body#/id' },
      description: 'The merchant accepts, prepares or cancels the order.',
    },
    CancelOrderAsAdmin: {
      operationId: 'cancelOrderAsAdmin',
      parameters: { id: '$response.body#/id' },
      description: 'An administrator cancels the order (with a reason; payment and review follow).',
    },
  },
};

export function finishOpenApi(doc: Json, opts: FinishOptions): Json {
  doc.info = { ...doc.info, license: doc.info?.license ?? { name: 'Apache-2.0', identifier: 'Apache-2.0' } };
  doc.components ??= {};
  doc.components.schemas ??= {};
  const schemas: Json = doc.components.schemas;

  // Timestamps in requests: the pattern the server enforces (responses are always ISO 8601 in UTC).
  eachRequestSchema(doc, (s) =>
    walkSchema(s, (n) => {
      if (n.format === 'date-time' && !n.pattern) n.pattern = DATE_TIME_PATTERN;
    }),
  );

  // Named resources, hoisted bottom-up: a component's own nested resources are references too.
  const byShape = new Map<string, string>();
  for (const [name, schema] of Object.entries(opts.named)) byShape.set(canon(normalize(clone(schema))), name);
  byShape.set(canon(normalize(clone(Problem))), 'Problem');
  const used = new Set<string>();
  const hoist = (node: any, top = false): any => {
    if (!node || typeof node !== 'object') return node;
    if (Array.isArray(node)) return node.map((x) => hoist(x));
    const name = top ? undefined : byShape.get(canon(normalize(node)));
    const out: Json = {};
    for (const [k, v] of Object.entries(node)) out[k] = k === 'enum' || k === 'examples' || k === 'default' || k === 'const' ? v : hoist(v);
    if (!name) return out;
    if (!schemas[name]) schemas[name] = { title: name, ...out };
    used.add(name);
    return { $ref: `${REF}${name}` };
  };
  eachSchemaSlot(doc, (holder, key) => {
    holder[key] = hoist(holder[key], holder === schemas);
  });

  const problemRef = { $ref: `${REF}Problem` };
  if (!schemas.Problem) schemas.Problem = { title: 'Problem', ...normalize(clone(Problem)) };
  doc.components.responses = { ...(doc.components.responses ?? {}) };
  for (const [name, [, description]] of Object.entries(PROBLEM_RESPONSES)) {
    doc.components.responses[name] = { description, content: { 'application/problem+json': { schema: problemRef } } };
  }

  const tagsSeen = new Set<string>();
  for (const [path, item] of Object.entries<Json>(doc.paths ?? {})) {
    for (const [method, op] of Object.entries<Json>(item)) {
      if (method === 'parameters' || typeof op !== 'object') continue;
      // @fastify/swagger suffixes a HEAD route's operationId with `-head`; a HEAD route of its own keeps its id.
      if (method === 'head' && typeof op.operationId === 'string' && op.operationId.endsWith('-head')) {
        const base = op.operationId.slice(0, -'-head'.length);
        if (!hasOperation(doc, base)) op.operationId = base;
      }
      const opId: string = op.operationId ?? `${method}${pascal(path)}`;
      if (!op.summary)
        op.summary =
          SUMMARIES[opId] ??
          (typeof op.description === 'string' && op.description.length <= 120 && !op.description.includes('\n')
            ? op.description.replace(/\.$/, '')
            : sentence(opId));
      // Who may call (x-roles, x-permission, from each route's config.auth): also said in words.
      if (typeof op['x-access'] === 'string') {
        if (!String(op.description ?? '').includes('**Access**'))
          op.description = op.description ? `${op.description}\n\n${op['x-access']}` : op['x-access'];
        delete op['x-access'];
      }
      if (!op.tags?.length) op.tags = [path.split('/')[3] ?? 'system'];
      for (const t of op.tags) tagsSeen.add(t);
      const isPublic = !op.security || op.security.length === 0;
      if (isPublic) op.security = [];

      // JSON request bodies as named components.
      const body = op.requestBody?.content?.['application/json'];
      if (body?.schema && !body.schema.$ref) {
        const name = `${pascal(opId)}Request`;
        // Alternatives of a oneOf/anyOf body with a title (OrderFromQuote, OrderFromCart, ...) are components too.
        for (const key of ['oneOf', 'anyOf']) {
          body.schema[key] = body.schema[key]?.map((alt: Json) => {
            if (!alt.title || alt.$ref) return alt;
            const altName = schemas[alt.title] && canon(schemas[alt.title]) !== canon(alt) ? `${name}${pascal(alt.title)}` : alt.title;
            schemas[altName] = alt;
            return { $ref: `${REF}${altName}` };
          });
          if (!body.schema[key]) delete body.schema[key];
        }
        schemas[name] = { title: name, ...body.schema };
        body.schema = { $ref: `${REF}${name}` };
      }
      // A body is required (missing or `null` is 400) except on action routes whose fields are all optional.
      if (op.requestBody) {
        const optional = op['x-body-optional'] === true;
        op.requestBody.required = !optional;
        if (optional)
          op.requestBody.description = 'Optional: a request without a body counts as `{}`; a JSON `null` is 400 VALIDATION_FAILED.';
      }
      delete op['x-body-optional'];

      // Errors: problem+json, one shared schema; the statuses this operation can answer.
      const responses: Json = (op.responses ??= {});
      for (const [status, r] of Object.entries<Json>(responses)) {
        if (!/^[45]/.test(status)) continue;
        responses[status] = {
          description:
            r.description && r.description !== 'Default Response' ? r.description : 'Problem details (RFC 9457) with a stable `code`.',
          content: { 'application/problem+json': { schema: problemRef } },
        };
      }
      // Statuses and codes the operation's own text names ("422 QUOTE_EXPIRED", "**503** `WEBHOOK_NOT_CONFIGURED`"): documented.
      for (const [status, codes] of statusesIn(`${op.summary ?? ''}\n${op.description ?? ''}`)) {
        const known = responses[status] && !responses[status].$ref ? responses[status] : null;
        const list = codes.size ? ` Codes: ${[...codes].map((c) => `\`${c}\``).join(', ')}.` : '';
        if (!known)
          responses[status] = {
            description: `${PROBLEM_RESPONSES_BY_STATUS[status] ?? 'Problem details (RFC 9457).'}${list}`,
            content: { 'application/problem+json': { schema: problemRef } },
          };
        else if (list && !known.description.includes('Codes:')) known.description += list;
      }
      const add = (status: string, name: string) => {
        if (!responses[status]) responses[status] = { $ref: `#/components/responses/${name}` };
      };
      const params: Json[] = op.parameters ?? [];
      if (op.requestBody || params.some((p) => p.in !== 'path' || p.schema)) add('400', 'BadRequest');
      if (!isPublic) add('401', 'Unauthorized');
      if (!isPublic) add('403', 'Forbidden');
      if (params.some((p) => p.in === 'path')) add('404', 'NotFound');
      if (method !== 'get' && !isPublic) add('409', 'Conflict');
      if (method !== 'get' && !isPublic) add('422', 'Unprocessable');
      if (/login|refresh|onboarding/.test(path)) add('429', 'TooManyRequests');
      // The edge answers these before any route runs, for every operation (src/platform/edge.ts, http.ts).
      if (op.requestBody) add('413', 'PayloadTooLarge');
      add('414', 'UriTooLong');
      add('431', 'HeadersTooLarge');
      add('500', 'ServerError');
      for (const [status, r] of Object.entries<Json>(responses))
        if (r.description === 'Default Response') r.description = status === '204' ? 'No content' : 'Success';

      // Reserved contracts (always 501) are documented as such.
      const reserved = responses['501'] || /^Reserved/i.test(op.summary ?? '');
      if (reserved) {
        op.deprecated = true;
        op['x-not-released'] = true;
        if (!/not released/i.test(op.description ?? ''))
          op.description = `**Not released**: always answers 501 \`FUTURE_INTEGRATION_NOT_RELEASED\`. ${op.description ?? ''}`.trim();
        responses['501'] ??= {
          description: 'Not released (`FUTURE_INTEGRATION_NOT_RELEASED`).',
          content: { 'application/problem+json': { schema: problemRef } },
        };
      }

      const links = LINKS[opId];
      if (links) {
        const ok = Object.keys(responses).find((s) => /^2/.test(s));
        if (ok) responses[ok].links = Object.fromEntries(Object.entries(links).filter(([, l]) => hasOperation(doc, l.operationId)));
      }
    }
  }
  const declared = new Map<string, Json>((doc.tags ?? []).map((t: Json) => [t.name, t]));
  for (const t of [...tagsSeen].sort())
    if (!declared.has(t)) declared.set(t, { name: t, description: opts.tags?.[t] ?? `${sentence(t)} operations` });
  doc.tags = [...declared.values()];
  return doc;
}

function hasOperation(doc: Json, operationId: string): boolean {
  return Object.values<Json>(doc.paths ?? {}).some((item) => Object.values<Json>(item).some((op) => op?.operationId === operationId));
}
