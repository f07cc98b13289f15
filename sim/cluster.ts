import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { benchDatabaseUrl } from '../bench/lib.js';
import { startNginx } from '../test/hardening/nginx.js';
import { privateClustersAvailable, startPrivateCluster } from '../test/hardening/private-cluster.js';
import { startServer, stopServer, type ServerProcess } from '../test/hardening/server-process.js';
import { replicaSummary, watchReplica, type ReplicaWatch } from './replica-watch.js';
import { OptionError, parseOptions, simulate, type SimReport } from './simulate.js';

/**
 * `npm run simulate:cluster -- [--instances 3] [--kill-at-s 20] [--down-s 5] [--replica [--replica-pause-at-s S
 * --replica-pause-s 10]] [--from-source] [simulate options]`: the city's day through nginx in front of several
 * instances on one PostgreSQL database (a fresh one on BENCH_DATABASE_URL's server; with `--replica`, a private
 * primary and a hot standby streaming from it, the instances reading users' GETs there through
 * DATABASE_REPLICA_URL); one instance is killed with SIGKILL mid-run and started again. The simulator's own
 * accounting says whether a write or a stream event was lost; this adds when the kill happened, the requests that
 * failed around it (in flight on the killed instance: nginx cannot resend a write it already sent), the streams that
 * reconnected and, with a replica, its lag over the day and the reads served there and on the primary
 * (`--replica-pause-at-s`: its replay paused for `--replica-pause-s`, reads go back to the primary).
 * Every other option goes to the simulator as it is. Writes cluster.json beside report.json. Exit 0 when nothing was
 * lost.
 */
interface ClusterOptions {
  instances: number;
  killAtS: number;
  downS: number;
  replica: boolean;
  replicaPauseAtS: number | null;
  replicaPauseS: number;
  fromSource: boolean;
}

function clusterOptions(argv: string[]): { cluster: ClusterOptions; rest: string[] } {
  const cluster: ClusterOptions = {
    instances: 3,
    killAtS: 20,
    downS: 5,
    replica: false,
    replicaPauseAtS: null,
    replicaPauseS: 10,
    fromSource: false,
  };
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i]!.includes('=') ? argv[i]!.split('=', 2) : [argv[i]!, undefined];
    const num = (min: number, max: number) => {
      const v = Number(inline ?? argv[++i]);
      if (!Number.isFinite(v) || v < min || v > max) throw new OptionError(`${flag} must be a number from ${min} to ${max}`);
      return v;
    };
    if (flag === '--instances') cluster.instances = num(2, 8);
    else if (flag === '--kill-at-s') cluster.killAtS = num(1, 3600);
    else if (flag === '--down-s') cluster.downS = num(0, 600);
    else if (flag === '--replica') cluster.replica = true;
    else if (flag === '--replica-pause-at-s') cluster.replicaPauseAtS = num(1, 3600);
    else if (flag === '--replica-pause-s') cluster.replicaPauseS = num(1, 600);
    else if (flag === '--from-source') cluster.fromSource = true;
    else if (flag === '--base-url' || flag === '--database-url' || flag === '--server-pid')
      throw new OptionError(`${flag} is the cluster run's own: it starts the servers and their database`);
    else rest.push(argv[i]!);
  }
  if (cluster.replicaPauseAtS !== null && !cluster.replica) throw new OptionError('--replica-pause-at-s needs --replica');
  return { cluster, rest };
}

const ROOT = path.resolve(import.meta.dirname, '..');

/**
 * The compiled server when there is a build (`npm run build`; rebuilt first if a source is newer, as `npm start`
 * does): it starts in a second or two, through tsx in about ten. `--from-source` or no dist/: through tsx.
 */
function useCompiled(fromSource: boolean, log: (line: string) => void): boolean {
  if (fromSource) return false;
  if (!existsSync(path.join(ROOT, 'dist/server.js'))) {
    log('cluster: no dist/server.js: starting the instances through tsx (`npm run build` first to start them faster)');
    return false;
  }
  const r = spawnSync(process.execPath, [path.join(ROOT, 'scripts/build-if-stale.mjs')], { cwd: ROOT, stdio: 'inherit' });
  if (r.status !== 0) throw new Error('the build of dist/ failed (scripts/build-if-stale.mjs)');
  return true;
}

interface ClusterDatabase {
  url: string;
  replicaUrl: string | null;
  drop: () => Promise<void>;
  replay: (sql: 'pause' | 'resume') => Promise<void>;
}

/** A primary and a hot standby of its own, in a temp dir (test/hardening/private-cluster.ts), with one database. */
async function privateReplicatedDatabase(): Promise<ClusterDatabase> {
  if (!privateClustersAvailable) throw new OptionError('--replica needs initdb, pg_ctl and pg_basebackup (PG_BIN)', 2);
  // Three instances' pools on one server; pg_stat_statements for the simulator's slowest statements.
  const primary = await startPrivateCluster({ max_connections: '300', shared_preload_libraries: 'pg_stat_statements' });
  try {
    const admin = new pg.Client({ connectionString: primary.url() });
    await admin.connect();
    await admin.query('CREATE DATABASE sim_cluster');
    await admin.end();
    const standby = await primary.standby();
    const onStandby = async (sql: string) => {
      const c = new pg.Client({ connectionString: standby.url() });
      await c.connect();
      try {
        await c.query(sql);
      } finally {
        await c.end();
      }
    };
    return {
      url: primary.url('sim_cluster'),
      replicaUrl: standby.url('sim_cluster'),
      drop: async () => primary.remove(),
      replay: (what) => onStandby(what === 'pause' ? 'SELECT pg_wal_replay_pause()' : 'SELECT pg_wal_replay_resume()'),
    };
  } catch (e) {
    primary.remove();
    throw e;
  }
}

async function freshDatabase(): Promise<ClusterDatabase> {
  const base = benchDatabaseUrl();
  const name = `sim_cluster_${Date.now()}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(base);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    replicaUrl: null,
    replay: async () => undefined,
    drop: async () => {
      const c = new pg.Client({ connectionString: base });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => undefined);
      await c.end();
    },
  };
}

export async function simulateCluster(argv: string[], log: (line: string) => void = console.log) {
  const { cluster, rest } = clusterOptions(argv);
  const probe = parseOptions(rest);
  if (cluster.killAtS >= probe.durationS)
    throw new OptionError(`--kill-at-s (${cluster.killAtS}) must come before the end of --duration-s (${probe.durationS})`);
  if (cluster.replicaPauseAtS !== null && cluster.replicaPauseAtS >= probe.durationS)
    throw new OptionError(
      `--replica-pause-at-s (${cluster.replicaPauseAtS}) must come before the end of --duration-s (${probe.durationS})`,
    );
  const compiled = useCompiled(cluster.fromSource, log);
  const db = cluster.replica ? await privateReplicatedDatabase() : await freshDatabase();
  const dataDir = path.resolve(probe.out, 'cluster-data');
  await mkdir(dataDir, { recursive: true });
  const servers: ServerProcess[] = [];
  let nginx: Awaited<ReturnType<typeof startNginx>> | null = null;
  // The bench settings of server-process.ts (login limits, no per-user rate limits) plus the simulator's webhook
  // receiver, a plain-http loopback address.
  const env: Record<string, string> = {
    DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
    WEBHOOK_ALLOW_HTTP: 'true',
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    ...(db.replicaUrl ? { DATABASE_REPLICA_URL: db.replicaUrl } : {}),
  };
  const start = (port?: number) => startServer({ databaseUrl: db.url, port, env, compiled, timeoutMs: 120_000 });
  let watch: ReplicaWatch | null = null;
  try {
    // The first instance migrates and seeds; the others start once it has.
    servers.push(await start());
    servers.push(...(await Promise.all(Array.from({ length: cluster.instances - 1 }, () => start()))));
    // With a replica, a user's requests go to one instance (read-your-writes, docs/OPERATIONS.md).
    nginx = await startNginx(
      servers.map((s) => s.port),
      { sticky: cluster.replica },
    );
    log(
      `cluster: ${cluster.instances} instances (${servers.map((s) => s.port).join(', ')}, ${compiled ? 'dist/server.js' : 'tsx src/server.ts'}) behind nginx on ${nginx.port}${db.replicaUrl ? `; primary ${new URL(db.url).port}, hot standby ${new URL(db.replicaUrl).port}` : ''}`,
    );
    const victim = 1;
    const events: { t_s: number; event: string }[] = [];
    let dayStarted = 0;
    const at = () => Math.round((Date.now() - dayStarted) / 100) / 10;
    const note = (event: string) => {
      events.push({ t_s: at(), event });
      log(`cluster: ${event} at ${at()} s of the day`);
    };
    let restarted: Promise<void> = Promise.resolve();
    let resumed: Promise<void> = Promise.resolve();
    let pause: { from_s: number; to_s: number } | null = null;
    const timers: NodeJS.Timeout[] = [];
    const onDayStart = () => {
      dayStarted = Date.now();
      if (db.replicaUrl) watch = watchReplica({ primaryUrl: db.url, instances: () => [...servers], at });
      timers.push(
        setTimeout(() => {
          note(`SIGKILL instance ${victim} (port ${servers[victim]!.port})`);
          restarted = stopServer(servers[victim]!, 'SIGKILL').then(async () => {
            await new Promise((r) => setTimeout(r, cluster.downS * 1000));
            servers[victim] = await start(servers[victim]!.port);
            note(`instance ${victim} serving again`);
          });
        }, cluster.killAtS * 1000),
      );
      if (cluster.replicaPauseAtS !== null)
        timers.push(
          setTimeout(() => {
            resumed = db.replay('pause').then(async () => {
              const from = at();
              note('replica replay paused');
              await new Promise((r) => setTimeout(r, cluster.replicaPauseS * 1000));
              await db.replay('resume');
              note('replica replay resumed');
              pause = { from_s: from, to_s: at() };
            });
          }, cluster.replicaPauseAtS * 1000),
        );
    };
    let report: SimReport;
    let replica: ReturnType<typeof replicaSummary> | null = null;
    try {
      report = await simulate(
        {
          ...parseOptions([...rest, '--base-url', `http://127.0.0.1:${nginx.port}`]),
          databaseUrl: db.url,
          serverPids: () => servers.map((s) => s.child.pid ?? 0).filter((pid) => pid > 0),
          onDayStart,
        },
        log,
      );
    } finally {
      for (const t of timers) clearTimeout(t);
      await restarted;
      await resumed;
      const w = watch as ReplicaWatch | null;
      if (w) {
        await w.stop();
        replica = replicaSummary(w.samples, pause);
      }
    }
    const killT = events.find((e) => e.event.startsWith('SIGKILL'))?.t_s ?? Infinity;
    const windowEnd = (events.find((e) => e.event.endsWith('serving again'))?.t_s ?? killT) + 5;
    const failover = report.timeline.filter((b) => b.t >= killT - 1 && b.t <= windowEnd).reduce((a, b) => a + b.errors, 0);
    const elsewhere = report.totals.server_errors - failover;
    const lost = report.streams.reduce((a, s) => a + s.lost, 0);
    const duplicated = report.streams.reduce((a, s) => a + s.duplicates, 0);
    const summary = {
      instances: cluster.instances,
      events,
      errors_around_the_kill: failover,
      errors_elsewhere: elsewhere,
      stream_events_lost: lost,
      stream_events_duplicated: duplicated,
      stream_reconnects: report.streams.reduce((a, s) => a + s.reconnects, 0),
      orders_not_where_expected: report.orders.mismatches.length + report.orders.unexpected,
      orders_unverified: report.orders.unverified.count,
      ok:
        lost === 0 &&
        duplicated === 0 &&
        elsewhere === 0 &&
        report.orders.mismatches.length === 0 &&
        report.orders.unexpected === 0 &&
        report.orders.unverified.count === 0,
      server: compiled ? 'dist/server.js' : 'tsx src/server.ts',
      replica,
    };
    await writeFile(path.join(probe.out, 'cluster.json'), JSON.stringify(summary, null, 2));
    log(
      `cluster: ${failover} requests failed around the kill (in flight on the killed instance), ${elsewhere} elsewhere; stream events lost ${lost}, duplicated ${duplicated}; ${summary.stream_reconnects} stream reconnects; orders not where expected ${summary.orders_not_where_expected}, unverified ${summary.orders_unverified}: ${summary.ok ? 'PASS' : 'FAIL'}`,
    );
    if (replica) {
      const r = replica as ReturnType<typeof replicaSummary>;
      log(
        `cluster: replica lag (pg_stat_replication replay_lag) p50 ${r.replay_lag_ms.p50 ?? '-'} ms, p99 ${r.replay_lag_ms.p99 ?? '-'} ms, max ${r.replay_lag_ms.max ?? '-'} ms; instances' own measure p99 ${r.instance_lag_ms.p99 ?? '-'} ms; users' reads during the day ${r.reads_on_replica} on the replica, ${r.reads_on_primary} on the primary` +
          (r.pause
            ? `; replay paused ${r.pause.from_s}–${r.pause.to_s} s: ${r.pause.reads_on_replica} reads on the replica, ${r.pause.reads_on_primary} on the primary, states ${r.pause.states_seen?.join('/')}`
            : ''),
      );
    }
    return summary;
  } finally {
    await Promise.all(servers.map((s) => stopServer(s).catch(() => undefined)));
    if (nginx) {
      nginx.child.kill('SIGTERM');
      await rm(nginx.dir, { recursive: true, force: true });
    }
    await db.drop();
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(import.meta.filename)) {
  try {
    const summary = await simulateCluster(process.argv.slice(2));
    process.exit(summary.ok ? 0 : 1);
  } catch (e) {
    console.error(`simulate:cluster: ${e instanceof Error ? e.message : e}`);
    process.exit(e instanceof OptionError ? e.code || 2 : 2);
  }
}
