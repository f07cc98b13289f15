import type { FastifyBaseLogger } from 'fastify';
import type { Worker } from './context.js';

/** Runs each worker in a loop: immediately again while it finds work, else after its interval. */
export function startWorkers(workers: Worker[], log: FastifyBaseLogger): () => Promise<void> {
  let running = true;
  const loops = workers.map(async (w) => {
    while (running) {
      let handled = 0;
      try {
        handled = await w.tick();
      } catch (err) {
        log.error({ err, worker: w.name }, 'worker tick failed');
      }
      if (!running) break;
      if (handled === 0) await new Promise((r) => setTimeout(r, w.intervalMs).unref?.());
    }
  });
  return async () => {
    running = false;
    await Promise.race([Promise.all(loops), new Promise((r) => setTimeout(r, 5_000))]);
  };
}
