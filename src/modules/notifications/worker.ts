import type { Database } from '../../platform/db/index.js';
import type { Worker } from '../../platform/context.js';
import { claimPushes, markPushFailed, markPushSent, type ClaimedPush } from './repo.js';
import type { PushGateway, PushResult } from './service/gateway.js';
import type { Settings } from '../../config.js';

export interface PushWorkerOptions {
  gateway: PushGateway | null;
  /** Rows claimed per tick. */
  batchSize?: number;
  /** After this many attempts a row goes to `failed`. */
  maxAttempts?: number;
  /** First retry delay; doubles per attempt, capped at one hour. */
  backoffMs?: number;
  /** A `sending` row older than this was claimed by a worker that died: it is claimed again. */
  claimTimeoutMs?: number;
  intervalMs?: number;
}

type Claimed = ClaimedPush;

export const backoffDelayMs = (base: number, attempts: number) => Math.min(base * 2 ** Math.max(attempts - 1, 0), 3_600_000);

export function pushWorkerOptions(s: Settings): Omit<PushWorkerOptions, 'gateway'> {
  return {
    batchSize: s.PUSH_BATCH_SIZE,
    maxAttempts: s.PUSH_MAX_ATTEMPTS,
    backoffMs: s.PUSH_BACKOFF_MS,
    claimTimeoutMs: s.PUSH_CLAIM_TIMEOUT_MS,
    intervalMs: s.PUSH_WORKER_INTERVAL_MS,
  };
}

/**
 * Delivers the push outbox. A tick claims due rows in one short transaction (`FOR UPDATE SKIP LOCKED`,
 * so several instances share the work), sends them outside any transaction, then records each outcome.
 * An outcome is written only if the row is still ours (`attempts` unchanged): a row re-claimed after a
 * claim timeout is not overwritten by the late original worker.
 */
export function createPushWorker(db: Database, opts: PushWorkerOptions): Worker {
  const batchSize = opts.batchSize ?? 50;
  const maxAttempts = opts.maxAttempts ?? 6;
  const backoffMs = opts.backoffMs ?? 5_000;
  const claimTimeoutMs = opts.claimTimeoutMs ?? 120_000;
  const gateway = opts.gateway;

  async function record(row: Claimed, result: PushResult) {
    await db.withTenant({ organizationId: row.organization_id, userId: null }, async (tx) => {
      if (result.ok) {
        await markPushSent(tx, row);
        return;
      }
      const giveUp = result.permanent || row.attempts >= maxAttempts;
      await markPushFailed(
        tx,
        row,
        giveUp ? 'failed' : 'pending',
        result.error.slice(0, 500),
        giveUp ? 0 : backoffDelayMs(backoffMs, row.attempts),
      );
    });
  }

  return {
    name: 'push-outbox',
    intervalMs: opts.intervalMs ?? 1_000,
    async tick() {
      // Without a gateway nothing is claimed: rows stay `pending` (NO_GATEWAY) and are sent once one is configured.
      if (!gateway) return 0;
      const claimed = await db.withSystem((tx) => claimPushes(tx, claimTimeoutMs, batchSize));
      await Promise.all(
        claimed.map(async (row) => {
          let result: PushResult;
          try {
            result = await gateway.send({
              id: row.id,
              organization_id: row.organization_id,
              platform: row.platform,
              push_token: row.push_token,
              payload: row.payload,
              attempt: row.attempts,
            });
          } catch (err) {
            result = { ok: false, permanent: false, error: `GATEWAY_ERROR: ${(err as Error).message}` };
          }
          await record(row, result);
        }),
      );
      return claimed.length;
    },
  };
}
