/** Reading the served OpenAPI document: operations, their parameters and request schemas, and minimal valid values. */

export type JsonSchema = Record<string, any>;

export interface Operation {
  method: string;
  /** Fastify form: /api/v1/trips/:id */
  url: string;
  operationId: string;
  pathParams: string[];
  query: { name: string; required: boolean; schema: JsonSchema }[];
  body: JsonSchema | null;
  bodyType: string | null;
}

/** The document with every local `$ref` (components) replaced by its target, for walking schemas without a resolver. */
export function dereference(doc: any): any {
  const seen = new Map<string, unknown>();
  const target = (ref: string) =>
    ref
      .slice(2)
      .split('/')
      .reduce((o: any, k) => o?.[k.replace(/~1/g, '/').replace(/~0/g, '~')], doc);
  const walk = (v: any, stack: string[]): any => {
    if (Array.isArray(v)) return v.map((x) => walk(x, stack));
    if (!v || typeof v !== 'object') return v;
    if (typeof v.$ref === 'string' && v.$ref.startsWith('#/')) {
      if (stack.includes(v.$ref)) return {};
      if (!seen.has(v.$ref)) seen.set(v.$ref, walk(target(v.$ref), [...stack, v.$ref]));
      const { $ref: _ref, ...rest } = v;
      return Object.keys(rest).length ? { ...(seen.get(v.$ref) as object), ...walk(rest, stack) } : seen.get(v.$ref);
    }
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x, stack)]));
  };
  return walk(doc, []);
}

export function operationsOf(document: any): Operation[] {
  const doc = dereference(document);
  const out: Operation[] = [];
  for (const [path, methods] of Object.entries<Record<string, any>>(doc.paths)) {
    for (const [method, op] of Object.entries<any>(methods)) {
      if (method === 'head' || method === 'parameters') continue;
      const params: any[] = op.parameters ?? [];
      const content = op.requestBody?.content ?? null;
      const types = content ? Object.keys(content) : [];
      const bodyType = types.find((x) => x.includes('json')) ?? types.find((x) => x === 'image/png') ?? types[0] ?? null;
      out.push({
        method: method.toUpperCase(),
        url: path.replace(/\{([^}]+)\}/g, ':$1'),
        operationId: op.operationId,
        pathParams: params.filter((p) => p.in === 'path').map((p) => p.name),
        query: params.filter((p) => p.in === 'query').map((p) => ({ name: p.name, required: !!p.required, schema: p.schema ?? {} })),
        body: bodyType ? (content[bodyType].schema ?? {}) : null,
        bodyType,
      });
    }
  }
  return out;
}

const STRING_CANDIDATES = [
  '1.00',
  '10',
  'abc',
  'probe_value',
  '#112233',
  '08:00',
  '+59170000000',
  'ABC123',
  'a',
  '1',
  'android',
  'merchant',
  '2026-01-01',
];

const POLYGON = {
  type: 'Polygon',
  coordinates: [
    [
      [-68.17, -16.54],
      [-68.09, -16.54],
      [-68.09, -16.47],
      [-68.17, -16.47],
      [-68.17, -16.54],
    ],
  ],
};

/** A value for a `_id` / `_ids` field, or undefined to use the generic minimal value. */
export type RefResolver = (field: string) => string | undefined;

/**
 * A minimal value that satisfies `schema` (required fields only, plus every optional field named `*_id(s)` when
 * `ref` resolves it: those are the references the isolation probe points at another organization).
 */
export function minimalValue(schema: JsonSchema | undefined, ref?: RefResolver, field = ''): unknown {
  if (!schema) return undefined;
  if (field === 'geometry') return POLYGON;
  if (field === 'location' || field.endsWith('_location')) return { type: 'Point', coordinates: [-68.13, -16.5] };
  if (schema.const !== undefined) return schema.const;
  if (schema.enum) return schema.enum[0];
  if (schema.default !== undefined && typeof schema.default !== 'object') return schema.default;
  if (schema.type === 'object' && schema.anyOf?.every((alt: JsonSchema) => alt.required && !alt.type)) {
    const { anyOf, ...rest } = schema;
    return minimalValue({ ...rest, required: [...(rest.required ?? []), ...anyOf[0].required] }, ref, field);
  }
  if (schema.anyOf || schema.oneOf) {
    const alts: JsonSchema[] = schema.anyOf ?? schema.oneOf;
    const nonNull = alts.find((a) => a.type !== 'null') ?? alts[0];
    return minimalValue(nonNull, ref, field);
  }
  if (schema.allOf) return Object.assign({}, ...schema.allOf.map((s: JsonSchema) => minimalValue(s, ref, field)));
  const type = Array.isArray(schema.type) ? schema.type.find((x: string) => x !== 'null') : schema.type;
  switch (type) {
    case 'object': {
      const out: Record<string, unknown> = {};
      const required: string[] = schema.required ?? [];
      for (const [name, sub] of Object.entries<JsonSchema>(schema.properties ?? {})) {
        const isRef = /_ids?$/.test(name) && ref?.(name) !== undefined;
        if (required.includes(name) || isRef) out[name] = minimalValue(sub, ref, name);
      }
      // PATCH bodies: at least minProperties fields, or the request stops at validation before touching the record.
      for (const [name, sub] of Object.entries<JsonSchema>(schema.properties ?? {})) {
        if (Object.keys(out).length >= (schema.minProperties ?? 0)) break;
        if (!(name in out)) out[name] = minimalValue(sub, ref, name);
      }
      return out;
    }
    case 'array': {
      const n = Math.max(1, schema.minItems ?? 0);
      const fromRef = /_ids$/.test(field) ? ref?.(field) : undefined;
      if (fromRef !== undefined) return [fromRef];
      if (Array.isArray(schema.prefixItems)) return schema.prefixItems.map((s: JsonSchema) => minimalValue(s, ref, field));
      if (Array.isArray(schema.items)) return schema.items.map((s: JsonSchema) => minimalValue(s, ref, field));
      return Array.from({ length: n }, () => minimalValue(schema.items, ref, field.replace(/s$/, '')));
    }
    case 'integer':
    case 'number': {
      const min = schema.minimum ?? (schema.exclusiveMinimum !== undefined ? schema.exclusiveMinimum + 1 : undefined);
      const max = schema.maximum;
      let v = min ?? 1;
      if (max !== undefined && v > max) v = max;
      if (/lat/.test(field)) v = -16.5;
      if (/lon/.test(field)) v = -68.13;
      return v;
    }
    case 'boolean':
      return true;
    case 'string': {
      const fromRef = /_id$/.test(field) ? ref?.(field) : undefined;
      if (fromRef !== undefined) return fromRef;
      if (schema.format === 'date-time') return new Date().toISOString();
      if (schema.format === 'date') return '2026-01-01';
      if (field === 'password') return 'Probe-password-2026';
      if (schema.format === 'email') return 'probe@example.test';
      if (schema.format === 'uri') return 'https://example.test/x';
      const min = schema.minLength ?? 0;
      const max = schema.maxLength ?? Infinity;
      const re = schema.pattern ? new RegExp(schema.pattern, 'u') : null;
      const fits = (s: string) => s.length >= min && s.length <= max && (!re || re.test(s));
      for (const c of STRING_CANDIDATES) if (fits(c)) return c;
      const filled = 'a'.repeat(Math.max(min, 1));
      return fits(filled) ? filled : STRING_CANDIDATES[0];
    }
    default:
      // GeoJSON-like objects without a type keyword, or free values
      if (schema.properties) return minimalValue({ ...schema, type: 'object' }, ref, field);
      return {};
  }
}
