import { MB, rssOf, type BenchEnv } from './lib.js';

/**
 * Memory of the benchmarked server after the load scenarios that ran before this one (warm: JIT,
 * pools, caches filled), and after a forced full garbage collection (what is really retained).
 */
export default async function memoryBench(env: BenchEnv) {
  const warm = await rssOf(env.serverPid);
  await env.forceGc();
  const afterGc = await rssOf(env.serverPid);
  env.report({
    scenario: 'memory',
    metric: 'server RSS after warm-up',
    value: warm / MB,
    unit: 'MB',
    note: 'after the scenarios before this one',
  });
  env.report({
    scenario: 'memory',
    metric: 'server RSS after a forced GC',
    value: afterGc / MB,
    unit: 'MB',
    note: 'SIGUSR2 → global.gc() (bench/gc-hook.mjs)',
  });
}
