import type { Database, Tx } from '../../platform/db/index.js';
import type { StoredEvent } from '../../platform/events.js';
import { scopeSql } from '../../platform/scope.js';
import { selectList, type SnakeRow } from '../../platform/db/columns.js';
import { event } from '../../platform/tables.js';
import type { StreamFilter } from './service/connection.js';

/** The realtime module's SQL: reading the event log (live fetch, catch-up, replay)  */

/** Every column of the event log (StoredEvent is its row: a column added to `event` and not to it fails to compile below). */
const EVENT_COLUMNS = selectList(event, 'event');
export type EventRow = SnakeRow<typeof event.$inferSelect>;
const _storedEventCoversTable: Record<keyof EventRow, true> = {} as Record<keyof StoredEvent, true>;
void _storedEventCoversTable;

/** Events of one organization by sequence, in one round trip (tenantRead); the sequences are validated integers, inlined. */
export function eventsBySeq(db: Database, organizationId: string, seqs: number[]): Promise<StoredEvent[]> {
  return db.tenantRead<StoredEvent>(
    { organizationId, userId: null },
    `SELECT ${EVENT_COLUMNS} FROM event WHERE seq IN (${seqs.map((s) => Math.trunc(s)).join(',')})`,
  );
}

export async function maxEventSeq(tx: Tx): Promise<number> {
  return (await tx.query<{ m: number }>('SELECT coalesce(max(seq), 0)::int8 AS m FROM event')).rows[0].m;
}

/** The oldest kept and the newest sequence of the log. */
export async function eventSeqBounds(tx: Tx): Promise<{ lo: number | null; hi: number }> {
  return (await tx.query<{ lo: number | null; hi: number }>('SELECT min(seq)::int8 AS lo, coalesce(max(seq), 0)::int8 AS hi FROM event'))
    .rows[0];
}

/** Events after `after`, and the `also` sequences (gaps being filled), in order, at most `limit` (every organization). */
export async function eventsSince(tx: Tx, after: number, also: number[], limit: number): Promise<StoredEvent[]> {
  const { rows } = await tx.query<StoredEvent>(
    `SELECT ${EVENT_COLUMNS} FROM event WHERE seq > $1 OR seq = ANY($2::int8[]) ORDER BY seq LIMIT ${Math.trunc(limit)}`,
    [after, also],
  );
  return rows;
}

/** SQL for a stream's filter (the rule of `matchesFilter`), with its parameters starting at `$first`. */
export function replayFilter(filter: StreamFilter, first: number): { sql: string; params: unknown[] } {
  switch (filter.kind) {
    case 'me':
      return { sql: `$${first}::text = ANY(audience_user_ids)`, params: [filter.userId] };
    case 'organization':
      return { sql: `type <> 'notification.created'`, params: [] };
    case 'trip':
      return { sql: `entity_type = 'trip' AND entity_id = $${first}`, params: [filter.tripId] };
    case 'territories':
      return {
        sql: `type <> 'notification.created' AND territory_id IS NOT NULL AND ${scopeSql('territory_id', first)}`,
        params: [filter.territoryIds],
      };
  }
}

/** One page of the events a stream missed, in (after, upTo], matching its filter (the caller's tenant transaction). */
export async function replayPage(tx: Tx, filter: StreamFilter, after: number, upTo: number, limit: number): Promise<StoredEvent[]> {
  const f = replayFilter(filter, 3);
  const { rows } = await tx.query<StoredEvent>(
    `SELECT ${EVENT_COLUMNS} FROM event WHERE seq > $1 AND seq <= $2 AND ${f.sql} ORDER BY seq LIMIT ${Math.trunc(limit)}`,
    [after, upTo, ...f.params],
  );
  return rows;
}
