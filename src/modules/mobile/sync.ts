import { FormatRegistry, type TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { AppError } from '../../platform/errors.js';
import { tenantOf, type Actor, type Principal } from '../../platform/auth.js';
import { requestHash } from '../../platform/idempotency.js';
import type { AppContext } from '../../platform/context.js';
import type { Tx } from '../../platform/db/index.js';

// Operation payloads are checked with TypeBox's Value (route bodies use ajv); it needs the formats it meets.
if (!FormatRegistry.Has('date-time')) {
  FormatRegistry.Set('date-time', (v) => /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/i.test(v) && !Number.isNaN(Date.parse(v)));
}

/** What a provider returns for its entity: rows changed after `since` (each with `id`, `updated_at`) and tombstones. */
export interface SyncChanges {
  changed: (Record<string, unknown> & { id: string; updated_at: Date | string })[];
  deleted: { id: string; deleted_at: Date | string }[];
}

/**
 * One entity of offline sync (`trips`, `orders`, `catalog_items`, `addresses`...). `pull` runs in the
 * caller's tenant transaction and returns only what the caller may see, oldest change first, at most
 * `limit` changed rows. `since = null` is a first sync: current rows, no tombstones.
 */
export interface SyncProvider {
  entity: string;
  /** Who gets this entity; omitted = everyone. */
  kinds?: Principal[];
  pull(tx: Tx, actor: Actor, window: { since: Date | null; limit: number }): Promise<SyncChanges>;
}

export type SyncStatus = 'applied' | 'conflict' | 'rejected';

/** What a handler decides. `conflict`: the server's newer state wins; `server` carries it. */
export interface SyncOutcome {
  status: SyncStatus;
  code?: string;
  message?: string;
  data?: unknown;
  server?: unknown;
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

declare module '../../platform/context.js' {
  interface ServiceRegistry {
    /** Offline sync registry: other modules add their entities and operation types (see syncRegistry). */
    sync?: SyncRegistry;
  }
}

/** The registry in `ctx.services.sync`, created on first use: a module may register from `init` in any order. */
export function syncRegistry(ctx: { services: { sync?: SyncRegistry } }): SyncRegistry {
  if (ctx.services.sync) return ctx.services.sync;
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
  ctx.services.sync = registry;
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

export function createSyncService(ctx: AppContext, opts: { entityLimit: number; watermarkMarginMs: number }) {
  const registry = syncRegistry(ctx);

  async function applyOne(actor: Actor, op: SyncOperationInput): Promise<SyncResult> {
    const base = { client_operation_id: op.client_operation_id, type: op.type, replayed: false };
    const handler = registry.operation(op.type);
    // Refusals that touch nothing are not stored: the same id may be sent again once it is valid.
    if (!handler) return { ...base, status: 'rejected', code: 'UNKNOWN_OPERATION', message: `Unknown operation type '${op.type}'` };
    if (!Value.Check(handler.payload, op.payload)) {
      const first = [...Value.Errors(handler.payload, op.payload)][0];
      return { ...base, status: 'rejected', code: 'VALIDATION_FAILED', message: `payload${first?.path ?? ''}: ${first?.message ?? 'invalid'}` };
    }
    const hash = requestHash({ type: op.type, payload: op.payload });
    try {
      return await ctx.db.withTenant(tenantOf(actor), async (tx) => {
        // The key row first: a concurrent retry blocks on it until this commits, then reads the stored result.
        const ins = await tx.query(
          `INSERT INTO sync_operation (organization_id, user_id, client_operation_id, type, request_hash, status)
           VALUES ($1, $2, $3, $4, $5, 'applying') ON CONFLICT DO NOTHING RETURNING client_operation_id`,
          [actor.organizationId, actor.userId, op.client_operation_id, op.type, hash],
        );
        if (ins.rowCount === 0) {
          const { rows } = await tx.query<{ request_hash: string; result: SyncOutcome }>(
            'SELECT request_hash, result FROM sync_operation WHERE organization_id = $1 AND user_id = $2 AND client_operation_id = $3',
            [actor.organizationId, actor.userId, op.client_operation_id],
          );
          if (rows[0].request_hash !== hash) {
            return { ...base, status: 'rejected', code: 'CLIENT_OPERATION_ID_REUSED', message: 'This client_operation_id was used for a different operation' };
          }
          return { ...base, ...rows[0].result, replayed: true };
        }
        let outcome: SyncOutcome;
        await tx.query('SAVEPOINT sync_op');
        try {
          outcome = await handler.apply(tx, actor, op.payload);
        } catch (err) {
          if (!(err instanceof AppError) || err.status >= 500) throw err;
          outcome = { status: err.status === 409 ? 'conflict' : 'rejected', code: err.code, message: err.message, ...(err.extra ? { server: err.extra } : {}) };
        }
        if (outcome.status !== 'applied') await tx.query('ROLLBACK TO SAVEPOINT sync_op');
        await tx.query('RELEASE SAVEPOINT sync_op');
        await tx.query('UPDATE sync_operation SET status = $4, result = $5 WHERE organization_id = $1 AND user_id = $2 AND client_operation_id = $3', [
          actor.organizationId,
          actor.userId,
          op.client_operation_id,
          outcome.status,
          JSON.stringify(outcome),
        ]);
        return { ...base, ...outcome };
      });
    } catch (err) {
      // Nothing was stored: the app may retry this id.
      return { ...base, status: 'error', code: 'INTERNAL_ERROR', message: err instanceof Error ? 'The operation failed; retry it later' : 'error' };
    }
  }

  return {
    registry,

    /** Operations are applied in order, each in its own transaction, each with its own result. */
    async push(actor: Actor, operations: SyncOperationInput[]) {
      const results: SyncResult[] = [];
      for (const op of operations) results.push(await applyOne(actor, op));
      return { results };
    },

    /**
     * Changes after `since` for every provider the caller may use. `server_time` (the next `since`) is
     * the read time minus a safety margin, because a row's `updated_at` is its transaction's start time
     * and a transaction that started just before the read may commit after it; records near the
     * watermark may therefore come twice (clients upsert by id). A provider that hit the limit sets
     * `has_more` and pulls the watermark back to its last row.
     */
    async pull(actor: Actor, since: Date | null) {
      return ctx.db.withTenant(tenantOf(actor), async (tx) => {
        const { rows } = await tx.query<{ now: Date }>(`SELECT now() - $1 * interval '1 millisecond' AS now`, [opts.watermarkMarginMs]);
        let watermark = rows[0].now;
        let hasMore = false;
        const entities: Record<string, SyncChanges> = {};
        for (const p of registry.providers()) {
          if (p.kinds && !p.kinds.includes(actor.kind)) continue;
          const changes = await p.pull(tx, actor, { since, limit: opts.entityLimit });
          entities[p.entity] = changes;
          if (changes.changed.length >= opts.entityLimit) {
            hasMore = true;
            const last = new Date(changes.changed[changes.changed.length - 1].updated_at);
            const back = new Date(last.getTime() - 1);
            if (back < watermark) watermark = back;
          }
        }
        return { since, server_time: watermark, has_more: hasMore, entities };
      });
    },
  };
}

export type SyncService = ReturnType<typeof createSyncService>;
