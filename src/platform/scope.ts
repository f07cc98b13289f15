import { param, sql, type SQL, type SQLWrapper } from 'drizzle-orm';
import type { Actor } from './auth.js';

/**
 * A caller's territory scope: the territory ids a sub-administrator is confined to, or `null` for everyone
 * else (administrators and dispatch see the whole organization). The one definition; every module uses it.
 */
export type TerritoryScope = string[] | null;

/** What a report or a live view covers, as its answers name it: the whole organization, or a sub-administrator's territories. */
export const READ_SCOPES = ['organization', 'territories'] as const;
export type ReadScope = (typeof READ_SCOPES)[number];

export const scopeOf = (actor: Pick<Actor, 'kind' | 'subadmin'>): TerritoryScope =>
  actor.kind === 'subadmin' ? (actor.subadmin?.territoryIds ?? []) : null;

/**
 * The territory predicate as a Drizzle `sql` fragment: true for an unscoped caller, `column = ANY(scope)`
 * for a sub-administrator (an empty scope matches nothing; a row without territory is outside every scope).
 */
export function inScope(column: SQLWrapper, scope: TerritoryScope): SQL {
  // `param`: one array parameter (a bare array in a `sql` template would expand to a row `($1, $2)`, and `()` when empty).
  return scope === null ? sql`true` : sql`${column} = ANY(${param(scope)}::text[])`;
}

/**
 * The same predicate for parameterised SQL text: `($n::text[] IS NULL OR column = ANY($n))`, with the scope
 * (or null) passed as parameter `$n`.
 */
export function scopeSql(column: string, param: number): string {
  return `($${param}::text[] IS NULL OR ${column} = ANY($${param}::text[]))`;
}

/**
 * The predicate of a known, non-null scope for SQL text built with the filters present (prepared statements, whose
 * generic plan an `IS NULL OR` would spoil): `column = ANY($n)`. An unscoped caller adds no predicate at all.
 */
export function scopedSql(column: string, param: number): string {
  return `${column} = ANY($${param}::text[])`;
}
