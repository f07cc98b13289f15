import { AsyncLocalStorage } from 'node:async_hooks';
import type pg from 'pg';

/**
 * Read routing to a streaming replica (`DATABASE_REPLICA_URL`).
 *
 * Which reads: the `readTenant` reads of a user made while serving his GET or HEAD request (lists, one record, the
 * live map, his profile, a customer's orders and trips), and those of a recipient's tracking link (a reader with no
 * user and no writes of his own to see). Everything else stays on the primary: writes, `withTenant` transactions
 * (a GET that writes, e.g. a key's last use), and reads with neither user nor reader (the realtime hub fetching the
 * events a NOTIFY announced, workers), which must see what was just committed.
 *
 * How fresh: every `checkMs` the primary's WAL position is sampled and the replica's replay position read. The
 * replica *covers* a moment T when it has replayed the primary's position sampled at T, so every commit before T
 * is visible there. A read goes to the replica only when it covers the caller's last write on this instance
 * (read-your-writes) and is no more than `maxLagMs` behind (a bound for everyone, also for writes made on another
 * instance). A replica that is unreachable, behind, or fails a read with a connection error is skipped: the read
 * runs on the primary and nothing fails.
 */
export interface ReplicaStatus {
  state: 'off' | 'following' | 'behind' | 'unreachable';
  /** How far behind the primary the replica was at the last check (ms since the moment it covers). */
  lag_ms: number | null;
  reads_on_replica: number;
  reads_on_primary: number;
  last_error: string | null;
}

const requestScope = new AsyncLocalStorage<{ readOnly: boolean }>();

/** Runs `next` as a request of this method: GET and HEAD requests may read from the replica. */
export function withRequestScope(method: string, next: () => void): void {
  requestScope.run({ readOnly: method === 'GET' || method === 'HEAD' }, next);
}

/** A replica read may run here: inside a GET or HEAD request. */
export function inReadOnlyRequest(): boolean {
  return requestScope.getStore()?.readOnly === true;
}

export interface ReplicaRouterOptions {
  primary: pg.Pool;
  replica: pg.Pool;
  checkMs?: number;
  maxLagMs?: number;
  now?: () => number;
}

const LSN_SQL = 'SELECT pg_current_wal_lsn()::text AS lsn';
const REPLAY_SQL = 'SELECT pg_is_in_recovery() AS recovering, pg_last_wal_replay_lsn()::text AS lsn';

/** A WAL position ('16/B374D848') as a number of bytes (exact below 2^53: 8 PiB of WAL). */
export function lsnBytes(lsn: string): number {
  const [hi, lo] = lsn.split('/');
  return parseInt(hi!, 16) * 2 ** 32 + parseInt(lo!, 16);
}

export function createReplicaRouter(opts: ReplicaRouterOptions) {
  const checkMs = opts.checkMs ?? 250;
  const maxLagMs = opts.maxLagMs ?? 2_000;
  const now = opts.now ?? Date.now;
  /** Primary positions sampled (time, bytes), oldest first; those the replica has passed are dropped. */
  const samples: { at: number; lsn: number }[] = [];
  let coveredUntil = -Infinity;
  let reachable = false;
  const status: ReplicaStatus = { state: 'behind', lag_ms: null, reads_on_replica: 0, reads_on_primary: 0, last_error: null };
  /** The caller's last committed write on this instance (user id → time), kept for `maxLagMs` past coverage. */
  const lastWrite = new Map<string, number>();
  let timer: NodeJS.Timeout | null = null;
  let checking = false;

  async function check(): Promise<void> {
    if (checking) return;
    checking = true;
    try {
      const at = now();
      const primary = await opts.primary.query<{ lsn: string }>(LSN_SQL);
      samples.push({ at, lsn: lsnBytes(primary.rows[0]!.lsn) });
      const replay = await opts.replica.query<{ recovering: boolean; lsn: string | null }>(REPLAY_SQL);
      const row = replay.rows[0]!;
      reachable = row.recovering && row.lsn !== null;
      if (!reachable) throw new Error('DATABASE_REPLICA_URL is not a standby in recovery');
      const replayed = lsnBytes(row.lsn!);
      while (samples.length && samples[0]!.lsn <= replayed) coveredUntil = Math.max(coveredUntil, samples.shift()!.at);
      status.last_error = null;
    } catch (err) {
      reachable = false;
      status.last_error = err instanceof Error ? err.message : String(err);
    } finally {
      checking = false;
      if (samples.length > 1000) samples.splice(0, samples.length - 1000);
      const lag = Number.isFinite(coveredUntil) ? Math.max(0, now() - coveredUntil) : null;
      status.lag_ms = lag;
      status.state = !reachable ? 'unreachable' : lag !== null && lag <= maxLagMs ? 'following' : 'behind';
      const forgetBefore = coveredUntil - maxLagMs;
      for (const [user, at] of lastWrite) if (at < forgetBefore) lastWrite.delete(user);
    }
  }

  return {
    start() {
      if (timer) return;
      void check();
      timer = setInterval(() => void check(), checkMs);
      timer.unref();
    },
    stop() {
      if (timer) clearInterval(timer);
      timer = null;
    },
    /** Checks now (tests wait on the replica's state without sleeping). */
    check,
    /** A write of this user committed now: his reads stay on the primary until the replica covers it. */
    noteWrite(userId: string | null | undefined) {
      if (userId) lastWrite.set(userId, now());
    },
    /** Whether this read may go to the replica. */
    useReplica(userId: string | null | undefined): boolean {
      const ok =
        !!userId &&
        reachable &&
        inReadOnlyRequest() &&
        now() - coveredUntil <= maxLagMs &&
        (lastWrite.get(userId) ?? -Infinity) < coveredUntil;
      if (ok) status.reads_on_replica++;
      else status.reads_on_primary++;
      return ok;
    },
    /** A replica read failed for want of the replica (not for the query): skip it until the next good check. */
    markUnreachable(err: unknown) {
      reachable = false;
      status.state = 'unreachable';
      status.last_error = err instanceof Error ? err.message : String(err);
    },
    status: (): ReplicaStatus => ({ ...status }),
  };
}

export type ReplicaRouter = ReturnType<typeof createReplicaRouter>;
