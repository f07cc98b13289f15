import { spawn } from 'node:child_process';
import { MB, rssOf, type BenchEnv } from './lib.js';

/**
 * Start time and idle memory of the compiled server (node dist/server.js), as `npm start` runs it:
 * a second instance on the already migrated and seeded database (a restart: no migration to apply),
 * milliseconds from spawn to the first GET /api/v1/health 200, and its RSS 3 s later, idle.
 */
export default async function startupBench(env: BenchEnv) {
  const runs = env.quick ? 1 : 3;
  const times: number[] = [];
  const rss: number[] = [];
  for (let i = 0; i < runs; i++) {
    const port = 3190 + i;
    const t0 = performance.now();
    const child = spawn(env.serverCommand.command, env.serverCommand.args, {
      env: { ...env.serverCommand.env, PORT: String(port), SEED_DEMO: 'false' },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    try {
      for (let n = 0; ; n++) {
        const ok = await fetch(`http://127.0.0.1:${port}/api/v1/health`).then(
          (r) => r.ok,
          () => false,
        );
        if (ok) break;
        if (n > 2400 || child.exitCode !== null) throw new Error('the second instance did not start');
        await new Promise((r) => setTimeout(r, 25));
      }
      times.push(performance.now() - t0);
      await new Promise((r) => setTimeout(r, 3000));
      rss.push(await rssOf(child.pid!));
    } finally {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
  }
  const median = (a: number[]) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
  env.report({
    scenario: 'startup',
    metric: 'start, migrated database (median)',
    value: median(times),
    unit: 'ms',
    note: `spawn → GET /health 200; runs: ${times.map((t) => Math.round(t)).join(', ')}`,
  });
  env.report({ scenario: 'startup', metric: 'idle RSS 3 s after start (median)', value: median(rss) / MB, unit: 'MB' });
}
