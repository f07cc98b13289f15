import pg from 'pg';
import { maxOf } from './stats.js';

/**
 * The replica's side of a cluster run (`simulate:cluster --replica`): every second, the standby's lag as the primary
 * sees it (`pg_stat_replication`: `replay_lag` and the bytes of WAL not yet replayed) and as each instance sees it
 * (`GET /health` → `replica`: its state, `lag_ms`, and how many users' reads it served from the replica and from the
 * primary since it started).
 */
export interface ReplicaSample {
  t_s: number;
  /** pg_stat_replication.replay_lag (null: PostgreSQL had no recent measure, e.g. nothing to replay). */
  replay_lag_ms: number | null;
  /** WAL the standby has received or not, but not replayed yet. */
  bytes_behind: number | null;
  /** The largest lag an instance reported (its own measure: what it routes reads by). */
  instance_lag_ms: number | null;
  /** Each instance's state: following | behind | unreachable, or down. */
  states: string[];
  /** Summed over every instance process of the run (a killed one counts up to its last sample). */
  reads_on_replica: number;
  reads_on_primary: number;
}

interface InstanceCounts {
  reads_on_replica: number;
  reads_on_primary: number;
}

export interface ReplicaWatch {
  stop(): Promise<void>;
  samples: ReplicaSample[];
}

const sum = (m: Map<object, InstanceCounts>, k: keyof InstanceCounts) => [...m.values()].reduce((a, c) => a + c[k], 0);

export function watchReplica(opts: {
  primaryUrl: string;
  /** The instances now (one replaced by its restart: the old one's counts are kept). */
  instances: () => { baseUrl: string }[];
  /** Seconds of the day now. */
  at: () => number;
  everyMs?: number;
}): ReplicaWatch {
  const samples: ReplicaSample[] = [];
  const counts = new Map<object, InstanceCounts>();
  const client = new pg.Client({ connectionString: opts.primaryUrl });
  const connected = client.connect();
  let stopped = false;

  async function sampleOnce() {
    await connected;
    const rep = await client
      .query<{ replay_lag_ms: string | null; bytes_behind: string | null }>(
        `SELECT extract(epoch FROM replay_lag) * 1000 AS replay_lag_ms,
                pg_wal_lsn_diff(pg_current_wal_lsn(), replay_lsn) AS bytes_behind
           FROM pg_stat_replication ORDER BY backend_start LIMIT 1`,
      )
      .catch(() => ({ rows: [] }));
    const row = rep.rows[0];
    const instances = opts.instances();
    const health = await Promise.all(
      instances.map(async (s) => {
        try {
          const r = await fetch(`${s.baseUrl}/api/v1/health`, { signal: AbortSignal.timeout(2_000) });
          const body = (await r.json()) as {
            replica?: { state: string; lag_ms: number | null; reads_on_replica: number; reads_on_primary: number };
          };
          if (body.replica)
            counts.set(s, { reads_on_replica: body.replica.reads_on_replica, reads_on_primary: body.replica.reads_on_primary });
          return body.replica ?? null;
        } catch {
          return null;
        }
      }),
    );
    const lags = health.flatMap((h) => (h?.lag_ms == null ? [] : [h.lag_ms]));
    samples.push({
      t_s: opts.at(),
      replay_lag_ms: row?.replay_lag_ms == null ? null : Math.round(Number(row.replay_lag_ms)),
      bytes_behind: row?.bytes_behind == null ? null : Number(row.bytes_behind),
      instance_lag_ms: lags.length ? maxOf(lags) : null,
      states: health.map((h) => h?.state ?? 'down'),
      reads_on_replica: sum(counts, 'reads_on_replica'),
      reads_on_primary: sum(counts, 'reads_on_primary'),
    });
  }

  const loop = (async () => {
    while (!stopped) {
      const started = Date.now();
      await sampleOnce().catch(() => undefined);
      await new Promise((r) => setTimeout(r, Math.max(0, (opts.everyMs ?? 1_000) - (Date.now() - started))));
    }
  })();

  return {
    samples,
    async stop() {
      stopped = true;
      await loop;
      await sampleOnce().catch(() => undefined);
      await client.end().catch(() => undefined);
    },
  };
}

function quantile(xs: number[], q: number): number | null {
  if (!xs.length) return null;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
}

const spread = (xs: (number | null)[]) => {
  const v = xs.filter((x): x is number => x !== null);
  return { count: v.length, p50: quantile(v, 0.5), p99: quantile(v, 0.99), max: v.length ? maxOf(v) : null };
};

/** The figures cluster.json keeps: lag over the run, reads by where they ran, and those of the pause window. */
export function replicaSummary(samples: ReplicaSample[], pause: { from_s: number; to_s: number } | null) {
  const first = samples[0];
  const last = samples.at(-1);
  // From the first sample (the day's start) to the last: the city's building is not counted.
  const onReplica = (last?.reads_on_replica ?? 0) - (first?.reads_on_replica ?? 0);
  const onPrimary = (last?.reads_on_primary ?? 0) - (first?.reads_on_primary ?? 0);
  const window = (from: number, to: number) => {
    const before = [...samples].reverse().find((s) => s.t_s <= from) ?? samples[0];
    const after = samples.find((s) => s.t_s >= to) ?? last;
    if (!before || !after) return null;
    const inside = samples.filter((s) => s.t_s >= from && s.t_s <= to);
    return {
      reads_on_replica: after.reads_on_replica - before.reads_on_replica,
      reads_on_primary: after.reads_on_primary - before.reads_on_primary,
      instance_lag_ms_max: spread(inside.map((s) => s.instance_lag_ms)).max,
      bytes_behind_max: spread(inside.map((s) => s.bytes_behind)).max,
      states_seen: [...new Set(inside.flatMap((s) => s.states))].sort(),
    };
  };
  return {
    samples: samples.length,
    replay_lag_ms: spread(samples.map((s) => s.replay_lag_ms)),
    bytes_behind: spread(samples.map((s) => s.bytes_behind)),
    instance_lag_ms: spread(samples.map((s) => s.instance_lag_ms)),
    reads_on_replica: onReplica,
    reads_on_primary: onPrimary,
    replica_share: onReplica + onPrimary ? Math.round((1000 * onReplica) / (onReplica + onPrimary)) / 1000 : null,
    pause: pause ? { ...pause, ...window(pause.from_s, pause.to_s) } : null,
    timeline: samples,
  };
}
