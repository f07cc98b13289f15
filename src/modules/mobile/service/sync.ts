import { FormatRegistry, type TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { AppError } from '../../../platform/errors.js';
import type { Actor, Principal } from '../../../platform/auth.js';
import { requestHash } from '../../../platform/idempotency.js';
import type { AppContext } from '../../../platform/context.js';
import type { Tx } from '../../../platform/db/index.js';
import { claimOperation, currentSnapshot, recordOutcome, savepoint, storedOperation } from '../repo.js';

// Operation payloads are checked with TypeBox's Value (route bodies use ajv); it needs the formats it meets.
if (!FormatRegistry.Has('date-time')) {
  FormatRegistry.Set(
    'date-time',
    (v) => /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/i.test(v) && !Number.isNaN(Date.parse(v)),
  );
}

/** What a provider returns for its entity: rows changed in the window (each with `id`) and tombstones. */
export interface SyncChanges {
  changed: (Record<string, unknown> & { id: string })[];
  deleted: { id: string; deleted_at: Date | string }[];
}

/** Where a provider's page ended: the `(changed_xid, id)` of its last row. */
export type SyncPosition = [xid: string, id: string];

export interface SyncPage extends SyncChanges {
  /** Position of the last row read (`lastPosition(rows)`), null when none. */
  last: SyncPosition | null;
  /** Rows read (changed + deleted); `limit` of them means there may be more. */
  read: number;
}

/**
 * The rows a pull must return for one entity. Each synced table has `changed_xid xid8` (the transaction
 * that last wrote the row, set by a trigger). `clause(alias, from)` gives the SQL: a condition, the
 * `ORDER BY ... LIMIT`, and its parameters numbered from `$from`; select `<alias>.changed_xid::text AS
 * sync_xid` (see `withSyncXid`) so the page's last position can be returned.
 */
export interface SyncWindow {
  limit: number;
  /** First sync (no cursor): current rows only, no tombstones. */
  first: boolean;
  clause(alias: string, from: number): { where: string; orderLimit: string; params: unknown[] };
}

/**
 * One entity of offline sync (`trips`, `orders`, `catalog_items`, `addresses`...). `pull` runs in the
 * caller's tenant transaction and returns only what the caller may see, in the window's order, at most
 * `limit` rows.
 */
export interface SyncProvider {
  entity: string;
  /** Who gets this entity; omitted = everyone. */
  kinds?: Principal[];
  pull(tx: Tx, actor: Actor, window: SyncWindow): Promise<SyncPage>;
}

/** `SELECT a, b FROM t x ...` → `SELECT x.changed_xid::text AS sync_xid, a, b FROM t x ...`. */
export function withSyncXid(select: string, alias: string): string {
  return select.replace(/^\s*SELECT\s/i, `SELECT ${alias}.changed_xid::text AS sync_xid, `);
}

/** The position of the last of `rows` (read with `withSyncXid`), for `SyncPage.last`. */
export function lastPosition(rows: { sync_xid?: string; id: string }[]): SyncPosition | null {
  const r = rows[rows.length - 1];
  return r ? [String(r.sync_xid), r.id] : null;
}

export type SyncStatus = 'applied' | 'conflict' | 'rejected';

/** What a handler decides. `conflict`: the server's newer state wins; `server` carries it. */
export interface SyncOutcome {
  status: SyncStatus;
  code?: string;
  message?: string;
  data?: unknown;
  server?: unknown;
  /**
   * A refusal whose writes must stay (a wrong PIN counts towards the lock, as on the route): not rolled back.
   * Only for refusals that record the attempt and change nothing else.
   */
  keep?: boolean;
}

/**
 * An offline operation type (`notification.read`, `device.heartbeat`, ...). `apply` runs inside a
 * savepoint of the caller's tenant transaction: anything but `applied` (or a thrown AppError) is rolled
 * back, so an operation is never half-applied. Throwing AppError 409 gives `conflict`, other 4xx `rejected`.
 */
export interface SyncOperationHandler {
  type: string;
  payload: TSchema;
  apply(tx: Tx, actor: Actor, payload: any): Promise<SyncOutcome>;
}

export interface SyncRegistry {
  registerProvider(provider: SyncProvider): void;
  registerOperation(handler: SyncOperationHandler): void;
  providers(): SyncProvider[];
  operation(type: string): SyncOperationHandler | undefined;
  operationTypes(): string[];
}

/** The offline sync registry, created by the composition root and given to the modules that add entities and operations. */
export function createSyncRegistry(): SyncRegistry {
  const providers = new Map<string, SyncProvider>();
  const operations = new Map<string, SyncOperationHandler>();
  const registry: SyncRegistry = {
    registerProvider(p) {
      if (providers.has(p.entity)) throw new Error(`sync provider '${p.entity}' registered twice`);
      providers.set(p.entity, p);
    },
    registerOperation(h) {
      if (operations.has(h.type)) throw new Error(`sync operation '${h.type}' registered twice`);
      operations.set(h.type, h);
    },
    providers: () => [...providers.values()],
    operation: (type) => operations.get(type),
    operationTypes: () => [...operations.keys()],
  };
  return registry;
}

export interface SyncOperationInput {
  client_operation_id: string;
  type: string;
  payload: Record<string, unknown>;
}

export interface SyncResult extends Partial<Omit<SyncOutcome, 'status'>> {
  client_operation_id: string;
  type: string;
  status: SyncStatus | 'error';
  /** True when this is the stored result of an earlier delivery of the same client_operation_id. */
  replayed: boolean;
}

/**
 * The opaque pull cursor. Offline sync reads rows by the transaction that last wrote them (`changed_xid`)
 * against PostgreSQL snapshots (`pg_current_snapshot()`): a snapshot says, for every transaction id, whether
 * it had committed when the snapshot was taken, so "changed by a transaction visible in the new snapshot and
 * not in the previous one" is exactly the set of changes committed between two pulls, whatever their start
 * time and however long they ran. Nothing is sent twice and nothing is skipped (a row changed again is sent
 * once more, in its latest state).
 * - `a`: every change visible in this snapshot was delivered (absent: first sync, nothing delivered).
 * - `b` + `p` (only while `has_more`): a round in progress up to snapshot `b`; `p[entity]` is the position
 *   reached (`[changed_xid, id]`) or 1 when that entity is done.
 * - `t`: with `a` null, a full sync that includes tombstones (the deprecated `since`).
 */
interface Cursor {
  a: string | null;
  b?: string;
  p?: Record<string, SyncPosition | 1>;
  t?: 1;
}

const XID_MAX = (1n << 63n) - 1n;
const SNAPSHOT_TEXT = /^(\d{1,19}):(\d{1,19}):((?:\d{1,19})(?:,\d{1,19})*)?$/;

/** A snapshot as PostgreSQL writes it (`xmin:xmax:xip,...`), parsed and checked; null when it is not one. */
function parseSnapshot(text: string): { xmin: bigint; xmax: bigint; xip: bigint[] } | null {
  const m = SNAPSHOT_TEXT.exec(text);
  if (!m) return null;
  const xmin = BigInt(m[1]);
  const xmax = BigInt(m[2]);
  const xip = m[3] ? m[3].split(',').map(BigInt) : [];
  if (xmin > xmax || xmax > XID_MAX) return null;
  for (const [i, x] of xip.entries()) if (x < xmin || x >= xmax || (i > 0 && x <= xip[i - 1])) return null;
  return { xmin, xmax, xip };
}

/**
 * Snapshots in the cursor are compact, so that one with many transactions in flight still fits in a URL:
 * base 36, xmax and the in-flight ids as offsets from xmin (`xmin~xmax-xmin~d1.d2`).
 */
function packSnapshot(text: string): string {
  const s = parseSnapshot(text);
  if (!s) throw new Error(`unexpected snapshot ${text}`);
  return [s.xmin.toString(36), (s.xmax - s.xmin).toString(36), s.xip.map((x) => (x - s.xmin).toString(36)).join('.')].join('~');
}

const B36 = /^[0-9a-z]{1,13}$/;

function unpackSnapshot(v: unknown): string | null {
  if (typeof v !== 'string') return null;
  const parts = v.split('~');
  if (parts.length !== 3 || !B36.test(parts[0]) || !B36.test(parts[1])) return null;
  const b36 = (d: string) => [...d].reduce((n, ch) => n * 36n + BigInt(parseInt(ch, 36)), 0n);
  const xmin = b36(parts[0]);
  const xip = parts[2] === '' ? [] : parts[2].split('.');
  if (!xip.every((d) => B36.test(d))) return null;
  const text = `${xmin}:${xmin + b36(parts[1])}:${xip.map((d) => String(xmin + b36(d))).join(',')}`;
  return parseSnapshot(text) ? text : null;
}

const invalidCursor = () =>
  new AppError(400, 'INVALID_CURSOR', 'cursor is not a cursor returned by GET /mobile/sync/pull; pull without it for a full sync');

export function encodeCursor(c: Cursor): string {
  const packed: Record<string, unknown> = { a: c.a === null ? null : packSnapshot(c.a) };
  if (c.b !== undefined) {
    packed.b = packSnapshot(c.b);
    packed.p = c.p;
    if (c.t) packed.t = 1;
  }
  return Buffer.from(JSON.stringify(packed)).toString('base64url');
}

export function decodeCursor(text: string): Cursor {
  let c: unknown;
  try {
    c = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    throw invalidCursor();
  }
  if (!c || typeof c !== 'object' || Array.isArray(c)) throw invalidCursor();
  const { a, b, p, t, ...rest } = c as Record<string, unknown>;
  if (Object.keys(rest).length > 0) throw invalidCursor();
  const lower = a === null ? null : unpackSnapshot(a);
  if (a !== null && lower === null) throw invalidCursor();
  if (b === undefined && p === undefined && t === undefined) return { a: lower };
  if (t !== undefined && (t !== 1 || a !== null)) throw invalidCursor();
  const upper = unpackSnapshot(b);
  if (upper === null || !p || typeof p !== 'object' || Array.isArray(p)) throw invalidCursor();
  for (const v of Object.values(p)) {
    const pos =
      v === 1 ||
      (Array.isArray(v) &&
        v.length === 2 &&
        typeof v[0] === 'string' &&
        /^\d{1,19}$/.test(v[0]) &&
        BigInt(v[0]) <= XID_MAX &&
        typeof v[1] === 'string' &&
        v[1].length <= 100);
    if (!pos) throw invalidCursor();
  }
  return { a: lower, b: upper, p: p as Record<string, SyncPosition | 1>, ...(t === 1 ? { t: 1 as const } : {}) };
}

export function createSyncService(ctx: AppContext, opts: { entityLimit: number; registry: SyncRegistry }) {
  const registry = opts.registry;

  async function applyOne(
    actor: Actor,
    op: SyncOperationInput,
    onError?: (err: unknown, op: SyncOperationInput) => void,
  ): Promise<SyncResult> {
    const base = { client_operation_id: op.client_operation_id, type: op.type, replayed: false };
    const handler = registry.operation(op.type);
    // Refusals that touch nothing are not stored: the same id may be sent again once it is valid.
    if (!handler) return { ...base, status: 'rejected', code: 'UNKNOWN_OPERATION', message: `Unknown operation type '${op.type}'` };
    if (!Value.Check(handler.payload, op.payload)) {
      const first = [...Value.Errors(handler.payload, op.payload)][0];
      return {
        ...base,
        status: 'rejected',
        code: 'VALIDATION_FAILED',
        message: `payload${first?.path ?? ''}: ${first?.message ?? 'invalid'}`,
      };
    }
    const hash = requestHash({ type: op.type, payload: op.payload });
    try {
      return await ctx.db.withTenant(actor, async (tx) => {
        // The key row first: a concurrent retry blocks on it until this commits, then reads the stored result.
        const key = { organization_id: actor.organizationId, user_id: actor.userId, client_operation_id: op.client_operation_id };
        if (!(await claimOperation(tx, key, op.type, hash))) {
          const stored = await storedOperation<SyncOutcome>(tx, key);
          if (stored.request_hash !== hash) {
            return {
              ...base,
              status: 'rejected',
              code: 'CLIENT_OPERATION_ID_REUSED',
              message: 'This client_operation_id was used for a different operation',
            };
          }
          return { ...base, ...stored.result, replayed: true };
        }
        let outcome: SyncOutcome;
        await savepoint(tx, 'begin');
        try {
          outcome = await handler.apply(tx, actor, op.payload);
        } catch (err) {
          if (!(err instanceof AppError) || err.status >= 500) throw err;
          outcome = {
            status: err.status === 409 ? 'conflict' : 'rejected',
            code: err.code,
            message: err.message,
            ...(err.extra ? { server: err.extra } : {}),
          };
        }
        const { keep, ...result } = outcome;
        if (result.status !== 'applied' && !keep) await savepoint(tx, 'rollback');
        await savepoint(tx, 'release');
        await recordOutcome(tx, key, result.status, result);

        return { ...base, ...result };
      });
    } catch (err) {
      // Nothing was stored: the app may retry this id. The caller logs the cause (the app sees only 'error').
      onError?.(err, op);
      return {
        ...base,
        status: 'error',
        code: 'INTERNAL_ERROR',
        message: err instanceof Error ? 'The operation failed; retry it later' : 'error',
      };
    }
  }

  return {
    registry,

    /** Operations are applied in order, each in its own transaction, each with its own result; `onError` hears the cause of an `error` result. */
    async push(actor: Actor, operations: SyncOperationInput[], onError?: (err: unknown, op: SyncOperationInput) => void) {
      const results: SyncResult[] = [];
      for (const op of operations) results.push(await applyOne(actor, op, onError));
      return { results };
    },

    /**
     * Changes since `cursor` for every provider the caller may use (see `Cursor`). Without a cursor: a first
     * sync (current rows; tombstones only with `tombstones`, for the deprecated `since`). A provider that
     * reads `limit` rows sets `has_more`: the returned cursor continues the same round (same upper snapshot)
     * where each provider stopped; a row written after that snapshot waits for the next round.
     * No locks are taken and nothing waits for open transactions: they are simply not in the snapshot yet.
     */
    async pull(actor: Actor, cursor: string | null, options: { tombstones?: boolean } = {}) {
      const from: Cursor = cursor ? decodeCursor(cursor) : { a: null, ...(options.tombstones ? { t: 1 as const } : {}) };
      return ctx.db.withTenant(actor, async (tx) => {
        const current = await currentSnapshot(tx);
        // The upper snapshot of this round: a new one unless a round with has_more is being continued.
        const upper = from.b ?? current.snap;
        const positions: Record<string, SyncPosition | 1> = {};
        let hasMore = false;
        const entities: Record<string, SyncChanges> = {};
        for (const p of registry.providers()) {
          if (p.kinds && !p.kinds.includes(actor.kind)) continue;
          const reached = from.p?.[p.entity];
          if (reached === 1) {
            entities[p.entity] = { changed: [], deleted: [] };
            positions[p.entity] = 1;
            continue;
          }
          const window: SyncWindow = {
            limit: opts.entityLimit,
            first: from.a === null && !from.t,
            clause(alias, n) {
              const x = `${alias}.changed_xid`;
              const params: unknown[] = [upper];
              const conds = [`pg_visible_in_snapshot(${x}, $${n}::pg_snapshot)`];
              if (from.a !== null) {
                params.push(from.a);
                const i = n + params.length - 1;
                conds.push(`${x} >= pg_snapshot_xmin($${i}::pg_snapshot) AND NOT pg_visible_in_snapshot(${x}, $${i}::pg_snapshot)`);
              }
              if (reached) {
                params.push(reached[0], reached[1]);
                const i = n + params.length - 2;
                conds.push(`(${x}, ${alias}.id) > ($${i}::xid8, $${i + 1}::text)`);
              }
              return {
                where: `(${conds.join(' AND ')})`,
                orderLimit: `ORDER BY ${x}, ${alias}.id LIMIT ${Number(opts.entityLimit)}`,
                params,
              };
            },
          };
          const page = await p.pull(tx, actor, window);
          entities[p.entity] = { changed: page.changed, deleted: page.deleted };
          if (page.read >= opts.entityLimit && page.last) {
            hasMore = true;
            positions[p.entity] = page.last;
          } else {
            positions[p.entity] = 1;
          }
        }
        const next: Cursor = hasMore ? { a: from.a, b: upper, p: positions, ...(from.t ? { t: 1 as const } : {}) } : { a: upper };
        return { cursor: encodeCursor(next), server_time: current.now, has_more: hasMore, entities };
      });
    },
  };
}

export type SyncService = ReturnType<typeof createSyncService>;
