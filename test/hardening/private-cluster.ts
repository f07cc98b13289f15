import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './server-process.js';

/**
 * A private PostgreSQL cluster for a test that must stop, restart or replicate its database: initdb and pg_ctl into
 * a temp dir on an ephemeral port (as the `postgres` user when the test runs as root: initdb and postgres refuse
 * root). Trust authentication, replication included (initdb's defaults).
 */
export const PG_BIN = process.env.PG_BIN ?? '/usr/lib/postgresql/15/bin';
export const privateClustersAvailable = ['initdb', 'pg_ctl', 'pg_basebackup'].every((b) => existsSync(path.join(PG_BIN, b)));
const asRoot = process.getuid?.() === 0;

function runPg(bin: string, args: string[]) {
  const cmd = path.join(PG_BIN, bin);
  if (asRoot) execFileSync('runuser', ['-u', 'postgres', '--', cmd, ...args], { stdio: 'ignore' });
  else execFileSync(cmd, args, { stdio: 'ignore' });
}

export interface PrivateCluster {
  port: number;
  /** The URL of database `name` on this cluster. */
  url(name?: string): string;
  start(): void;
  /** `fast` (clean) or `immediate` (as if killed). */
  stop(mode?: 'fast' | 'immediate'): void;
  /** A hot standby of this cluster, streaming from it (pg_basebackup -R), started. */
  standby(): Promise<PrivateCluster>;
  remove(): void;
}

/** Extra server settings (`-c name=value` at each start), e.g. `{ max_connections: '300' }`; its standbys get them too. */
export type PrivateClusterSettings = Record<string, string>;

function cluster(dir: string, port: number, owned: string[], settings: PrivateClusterSettings): PrivateCluster {
  const data = path.join(dir, 'data');
  const ctl = (...args: string[]) => runPg('pg_ctl', ['-D', data, '-l', path.join(dir, 'log'), ...args]);
  const self: PrivateCluster = {
    port,
    url: (name = 'postgres') => `postgres://postgres@127.0.0.1:${port}/${name}`,
    start: () =>
      ctl(
        '-w',
        '-t',
        '30',
        '-o',
        [
          `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off`,
          ...Object.entries(settings).map(([k, v]) => `-c ${k}=${v}`),
        ].join(' '),
        'start',
      ),
    stop: (mode = 'fast') => ctl('-w', '-m', mode, 'stop'),
    async standby() {
      const sdir = ownedTempDir(owned);
      runPg('pg_basebackup', [
        '-D',
        path.join(sdir, 'data'),
        '-h',
        '127.0.0.1',
        '-p',
        String(port),
        '-U',
        'postgres',
        '-R',
        '-X',
        'stream',
      ]);
      const s = cluster(sdir, await freePort(), owned, settings);
      s.start();
      return s;
    },
    remove() {
      for (const d of owned) {
        try {
          runPg('pg_ctl', ['-D', path.join(d, 'data'), '-m', 'immediate', 'stop']);
        } catch {
          /* not running */
        }
        rmSync(d, { recursive: true, force: true });
      }
    },
  };
  return self;
}

function ownedTempDir(owned: string[]): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pg-private-'));
  if (asRoot) {
    chmodSync(dir, 0o755);
    chownSync(dir, Number(execFileSync('id', ['-u', 'postgres']).toString()), Number(execFileSync('id', ['-g', 'postgres']).toString()));
  }
  owned.push(dir);
  return dir;
}

/** A new private cluster, started. `remove()` stops it and its standbys and deletes their files. */
export async function startPrivateCluster(settings: PrivateClusterSettings = {}): Promise<PrivateCluster> {
  const owned: string[] = [];
  const dir = ownedTempDir(owned);
  runPg('initdb', ['-D', path.join(dir, 'data'), '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
  const c = cluster(dir, await freePort(), owned, settings);
  c.start();
  return c;
}
