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

type Node = { properties?: Record<string, Node>; required?: string[]; items?: Node; anyOf?: Node[]; oneOf?: Node[]; allOf?: Node[]; type?: unknown };

export function addOrganizationId(schemas: TSchema[]): void {
  for (const s of schemas as Node[]) {
    if (!s.properties || s.properties.organization_id) continue;
    // Not `required`: a resource shown on a public route (no caller) has no organization to state.
    s.properties.organization_id = { ...ORGANIZATION_ID } as Node;
  }
}

export function fillOrganizationId(schema: unknown, value: unknown, organizationId: string, depth = 0): void {
  const s = schema as Node | undefined;
  if (!s || value === null || typeof value !== 'object' || depth > 12) return;
  if (Array.isArray(value)) {
    if (s.items) for (const v of value) fillOrganizationId(s.items, v, organizationId, depth + 1);
    for (const alt of [...(s.anyOf ?? []), ...(s.oneOf ?? [])]) if (alt.items) for (const v of value) fillOrganizationId(alt.items, v, organizationId, depth + 1);
    return;
  }
  if (value instanceof Date || Buffer.isBuffer(value)) return;
  for (const alt of [...(s.anyOf ?? []), ...(s.oneOf ?? []), ...(s.allOf ?? [])]) fillOrganizationId(alt, value, organizationId, depth + 1);
  if (!s.properties) return;
  const obj = value as Record<string, unknown>;
  if (s.properties.organization_id && obj.organization_id === undefined) obj.organization_id = organizationId;
  for (const [k, sub] of Object.entries(s.properties)) if (k !== 'organization_id' && obj[k] && typeof obj[k] === 'object') fillOrganizationId(sub, obj[k], organizationId, depth + 1);
}
