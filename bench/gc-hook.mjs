/* global process */
// Preloaded into the benchmarked server only (node --expose-gc --import ./bench/gc-hook.mjs): SIGUSR2 runs a
// full garbage collection, so the runner can read the RSS after a forced GC. Nothing of the service changes.
if (typeof globalThis.gc === 'function') {
  process.on('SIGUSR2', () => {
    globalThis.gc();
    globalThis.gc();
  });
}
