import { getTableColumns, type Table } from 'drizzle-orm';

/** `pickupLocation` → `pickup_location`: the SQL name of a Drizzle property (the tables name columns this way). */
type Snake<S extends string> = S extends `${infer H}${infer T}` ? `${H extends Lowercase<H> ? H : `_${Lowercase<H>}`}${Snake<T>}` : S;

/**
 * A row as `tx.query` returns it for the columns of a Drizzle record (`typeof table.$inferSelect`): the same
 * properties under their snake_case SQL names. Row types of hand-tuned SQL are built from it, so a column added
 * to a table appears in the row type (and, through `selectList`, in the SELECT) without being written again.
 */
export type SnakeRow<T> = { [K in keyof T as K extends string ? Snake<K> : never]: T[K] };

type ColumnKey<T extends Table> = keyof T['_']['columns'] & string;

/**
 * The select list of a table's columns for SQL text, in the table's order: `alias.column`, except the `omit`ted
 * ones, and each native point column of `points` as two numbers `(alias.col)[0] AS <lon>, (alias.col)[1] AS <lat>`.
 * Built once when the module loads, so the statement text stays a constant.
 */
export function selectList<T extends Table>(
  table: T,
  alias: string,
  opts: { omit?: readonly ColumnKey<T>[]; points?: Partial<Record<ColumnKey<T>, readonly [lon: string, lat: string]>> } = {},
): string {
  const columns = getTableColumns(table) as Record<string, { name: string }>;
  const points = (opts.points ?? {}) as Record<string, readonly [string, string] | undefined>;
  return Object.entries(columns)
    .filter(([key]) => !(opts.omit ?? []).includes(key as ColumnKey<T>))
    .map(([key, c]) => {
      const p = points[key];
      return p ? `(${alias}.${c.name})[0] AS ${p[0]}, (${alias}.${c.name})[1] AS ${p[1]}` : `${alias}.${c.name}`;
    })
    .join(', ');
}
