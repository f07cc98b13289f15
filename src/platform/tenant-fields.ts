import type { TSchema } from '@sinclair/typebox';

/**
 * `organization_id` on every resource the API returns, in one place rather than in each module's schema and mapper:
 * - `addOrganizationId` adds the property to the resource schemas (the named components of the document), so the
 *   document lists it and the response serializer keeps it;
 * - `fillOrganizationId` (a preSerialization hook) walks a response along its schema and sets it on each resource
 *   that does not carry it yet: the caller's organization, the only one row-level security lets a request read.
 *   Rows that carry their own (operators, listed by platform operators across organizations) keep it.
 */
const ORGANIZATION_ID = { type: 'string', description: 'the organization (tenant) the resource belongs to' };

type Node = {
  properties?: Record<string, Node>;
  required?: string[];
  items?: Node;
  anyOf?: Node[];
  oneOf?: Node[];
  allOf?: Node[];
  type?: unknown;
};

export function addOrganizationId(schemas: TSchema[]): void {
  for (const s of schemas as Node[]) {
    if (!s.properties || s.properties.organization_id) continue;
    // Not `required`: a resource shown on a public route (no caller) has no organization to state.
    s.properties.organization_id = { ...ORGANIZATION_ID } as Node;
  }
}

type Filler = (value: unknown, organizationId: string) => void;

/** Compiled walkers by schema object: the work of a response is a few property reads per resource, no allocation. */
const fillers = new WeakMap<object, Filler | null>();

/**
 * The walker of one schema, compiled once: null when nothing under it carries `organization_id` (the response is
 * not walked at all). Applied alternatives (anyOf/oneOf/allOf), array items and properties as the schema states them.
 */
function fillerOf(s: Node | undefined, depth: number): Filler | null {
  if (!s || typeof s !== 'object' || depth > 12) return null;
  const known = fillers.get(s);
  if (known !== undefined) return known;
  fillers.set(s, null); // a schema that contains itself ends here
  const alternatives = [...(s.anyOf ?? []), ...(s.oneOf ?? [])];
  const items = [s.items, ...alternatives.map((a) => a.items)].map((i) => fillerOf(i, depth + 1)).filter((f): f is Filler => f !== null);
  const objectAlternatives = [...alternatives, ...(s.allOf ?? [])]
    .map((a) => fillerOf(a, depth + 1))
    .filter((f): f is Filler => f !== null);
  const props = s.properties;
  const own = !!props?.organization_id;
  const nested = Object.entries(props ?? {})
    .filter(([k]) => k !== 'organization_id')
    .map(([k, sub]) => [k, fillerOf(sub, depth + 1)] as const)
    .filter((e): e is readonly [string, Filler] => e[1] !== null);
  if (!items.length && !objectAlternatives.length && !own && !nested.length) return null;
  const filler: Filler = (value, organizationId) => {
    if (value === null || typeof value !== 'object') return;
    if (Array.isArray(value)) {
      for (const f of items) for (const v of value) f(v, organizationId);
      return;
    }
    if (value instanceof Date || Buffer.isBuffer(value)) return;
    for (const f of objectAlternatives) f(value, organizationId);
    if (!props) return;
    const obj = value as Record<string, unknown>;
    if (own && obj.organization_id === undefined) obj.organization_id = organizationId;
    for (const [k, f] of nested) {
      const v = obj[k];
      if (v && typeof v === 'object') f(v, organizationId);
    }
  };
  fillers.set(s, filler);
  return filler;
}

/** Sets the caller's organization on every resource of a response that does not carry one (see above). */
export function fillOrganizationId(schema: unknown, value: unknown, organizationId: string): void {
  fillerOf(schema as Node | undefined, 0)?.(value, organizationId);
}
