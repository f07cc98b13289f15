import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { benchDatabaseUrl } from '../bench/lib.js';
import { startNginx } from '../test/hardening/nginx.js';
import { startServer, stopServer, type ServerProcess } from '../test/hardening/server-process.js';
import { OptionError, parseOptions, simulate, type SimReport } from './simulate.js';

/**
 * `npm run simulate:cluster -- [--instances 3] [--kill-at-s 20] [--down-s 5] [simulate options]`: the city's day
 * through nginx in front of several instances on one PostgreSQL database (a fresh one on BENCH_DATABASE_URL's
 * server); one instance is killed with SIGKILL mid-run and started again. The simulator's own accounting says
 * whether a write or a stream event was lost; this adds when the kill happened, the requests that failed around it
 * (in flight on the killed instance: nginx cannot resend a write it already sent) and the streams that reconnected.
 * Writes cluster.json beside report.json. Exit 0 when nothing was lost.
 */
interface ClusterOptions {
  instances: number;
  killAtS: number;
  downS: number;
}

function clusterOptions(argv: string[]): { cluster: ClusterOptions; rest: string[] } {
  const cluster: ClusterOptions = { instances: 3, killAtS: 20, downS: 5 };
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
    else rest.push(argv[i]!);
  }
  return { cluster, rest };
}

async function freshDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
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
  const db = await freshDatabase();
  const dataDir = path.resolve(probe.out, 'cluster-data');
  await mkdir(dataDir, { recursive: true });
  const servers: ServerProcess[] = [];
  let nginx: Awaited<ReturnType<typeof startNginx>> | null = null;
  // The simulator's webhook receiver is a plain-http loopback address.
  const env = { DATA_DIR: dataDir, LOG_LEVEL: 'warn', WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' };
  try {
    // The first instance migrates and seeds; the others start once it has.
    servers.push(await startServer({ databaseUrl: db.url, env, timeoutMs: 120_000 }));
    servers.push(
      ...(await Promise.all(
        Array.from({ length: cluster.instances - 1 }, () => startServer({ databaseUrl: db.url, env, timeoutMs: 120_000 })),
      )),
    );
    nginx = await startNginx(servers.map((s) => s.port));
    log(`cluster: ${cluster.instances} instances (${servers.map((s) => s.port).join(', ')}) behind nginx on ${nginx.port}`);
    const victim = 1;
    const events: { t_s: number; event: string }[] = [];
    let dayStarted = 0;
    const at = () => Math.round((Date.now() - dayStarted) / 100) / 10;
    let restarted: Promise<void> = Promise.resolve();
    let killer: NodeJS.Timeout | undefined;
    const onDayStart = () => {
      dayStarted = Date.now();
      killer = setTimeout(() => {
        events.push({ t_s: at(), event: `SIGKILL instance ${victim} (port ${servers[victim]!.port})` });
        log(`cluster: SIGKILL instance ${victim} at ${at()} s of the day`);
        restarted = stopServer(servers[victim]!, 'SIGKILL').then(async () => {
          await new Promise((r) => setTimeout(r, cluster.downS * 1000));
          servers[victim] = await startServer({ databaseUrl: db.url, port: servers[victim]!.port, env, timeoutMs: 120_000 });
          events.push({ t_s: at(), event: `instance ${victim} serving again` });
          log(`cluster: instance ${victim} serving again at ${at()} s of the day`);
        });
      }, cluster.killAtS * 1000);
    };
    let report: SimReport;
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
      if (killer) clearTimeout(killer);
      await restarted;
    }
    const killT = events[0]?.t_s ?? Infinity;
    const windowEnd = (events[1]?.t_s ?? killT) + 5;
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
      ok: lost === 0 && duplicated === 0 && elsewhere === 0 && report.orders.mismatches.length === 0 && report.orders.unexpected === 0,
    };
    await writeFile(path.join(probe.out, 'cluster.json'), JSON.stringify(summary, null, 2));
    log(
      `cluster: ${failover} requests failed around the kill (in flight on the killed instance), ${elsewhere} elsewhere; stream events lost ${lost}, duplicated ${duplicated}; ${summary.stream_reconnects} stream reconnects; orders not where expected ${summary.orders_not_where_expected}: ${summary.ok ? 'PASS' : 'FAIL'}`,
    );
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
