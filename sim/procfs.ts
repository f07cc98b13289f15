import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';

/** USER_HZ on Linux: /proc counts CPU time in hundredths of a second. */
const CLOCK_TICKS = 100;

export interface ProcStat {
  pid: number;
  ppid: number;
  /** utime + stime, in clock ticks. */
  ticks: number;
  /** cutime + cstime: the CPU of its children that exited and were waited for. */
  reapedTicks: number;
  rssBytes: number;
}

/** One process's CPU time and resident size from /proc; null when it is not running (or this is not Linux). */
export async function procStat(pid: number): Promise<ProcStat | null> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // fields from the third (state) on
    return {
      pid,
      ppid: Number(f[1]),
      ticks: Number(f[11]) + Number(f[12]),
      reapedTicks: Number(f[13]) + Number(f[14]),
      rssBytes: Number(f[21]) * 4096,
    };
  } catch {
    return null;
  }
}

/**
 * The processes of a PostgreSQL cluster on this machine: its postmaster (the first line of `postmaster.pid` in the
 * data directory) and the processes it started (backends, writers, autovacuum). Empty when the file cannot be read
 * (a database on another machine, or no permission).
 */
export async function clusterPids(dataDirectory: string): Promise<number[]> {
  let postmaster: number;
  try {
    postmaster = Number((await readFile(path.join(dataDirectory, 'postmaster.pid'), 'utf8')).split('\n')[0]);
  } catch {
    return [];
  }
  if (!Number.isInteger(postmaster) || postmaster <= 0 || !(await procStat(postmaster))) return [];
  const children = await Promise.all((await readdir('/proc')).filter((d) => /^\d+$/.test(d)).map((d) => procStat(Number(d))));
  return [postmaster, ...children.filter((s) => s?.ppid === postmaster).map((s) => s!.pid)];
}

/**
 * The CPU a cluster has used since its start, in clock ticks: the postmaster's, its running children's, and that of the
 * children that exited (backends come and go with the clients' pools), which the postmaster's reaped time keeps.
 */
export async function clusterTicks(dataDirectory: string): Promise<number | null> {
  const pids = await clusterPids(dataDirectory);
  if (!pids.length) return null;
  const stats = (await Promise.all(pids.map(procStat))).filter((s): s is ProcStat => s !== null);
  const postmaster = stats.find((s) => s.pid === pids[0]);
  if (!postmaster) return null;
  return stats.reduce((a, s) => a + s.ticks, postmaster.reapedTicks);
}

/** CPU in % of one core between successive readings of a total of clock ticks (never below zero). */
export function cpuMeter(now: () => number = () => performance.now()) {
  let last: { at: number; ticks: number } | null = null;
  return (ticks: number): number | null => {
    const at = now();
    const pct = last && at > last.at ? Math.max(0, ((ticks - last.ticks) / CLOCK_TICKS / ((at - last.at) / 1000)) * 100) : null;
    last = { at, ticks };
    return pct;
  };
}
