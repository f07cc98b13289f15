import { access, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { clusterPids, clusterTicks, cpuMeter, procStat } from '../../sim/procfs.js';

/** What the simulator reads of the machine's processes to say where the CPU went. */
describe('the simulator reading /proc', () => {
  it('reads a running process and nothing for one that is not', async () => {
    const own = await procStat(process.pid);
    expect(own).toMatchObject({ pid: process.pid, ppid: process.ppid });
    expect(own!.rssBytes).toBeGreaterThan(0);
    expect(await procStat(2 ** 22 + 1)).toBeNull(); // above the kernel's largest pid
  });

  it('turns clock ticks into % of one core over the time between readings', () => {
    let at = 0;
    const meter = cpuMeter(() => at);
    expect(meter(1_000)).toBeNull(); // the first reading has nothing to compare with
    at = 2_000;
    expect(meter(1_100)).toBe(50); // 100 ticks = 1 s of CPU in 2 s
    at = 3_000;
    expect(meter(1_050)).toBe(0); // a process that left took its ticks: never below zero
  });

  it('finds no cluster where there is no postmaster.pid, or where it names no running process', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'procfs-'));
    try {
      expect(await clusterPids(dir)).toEqual([]);
      await writeFile(path.join(dir, 'postmaster.pid'), `${2 ** 22 + 1}\n${dir}\n`);
      expect(await clusterPids(dir)).toEqual([]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it.runIf(process.env.TEST_DATABASE_URL)('lists the postmaster and the backend serving this connection', async () => {
    const c = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
    await c.connect();
    try {
      const dir = (await c.query<{ d: string }>(`SELECT current_setting('data_directory') AS d`)).rows[0]!.d;
      const backend = (await c.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
      const pids = await clusterPids(dir);
      // A data directory this user cannot read (PostgreSQL's own 0700): the simulator then reports no database CPU.
      const readable = await access(path.join(dir, 'postmaster.pid')).then(
        () => true,
        () => false,
      );
      if (!readable) return expect(pids).toEqual([]);
      expect(pids).toContain(backend);
      // Its CPU so far grows as the backend works (and stays counted once a backend has exited).
      const before = (await clusterTicks(dir))!;
      await c.query('SELECT count(*) FROM generate_series(1, 3000000)');
      expect(await clusterTicks(dir)).toBeGreaterThan(before);
    } finally {
      await c.end();
    }
  });
});
