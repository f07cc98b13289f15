import type { Worker } from 'node:worker_threads';
import { AppError } from '../../../platform/errors.js';
import { spawnWorker } from './spawn-worker.js';
import { OptimizerInputError, type OptimizerOptions, type OptimizerProblem, type Plan } from '../optimizer/index.js';

/** A solve sent to the worker thread (plain data: structured clone). */
export interface SolveRequest {
  id: number;
  problem: OptimizerProblem;
  options: OptimizerOptions;
}
export type SolveReply =
  { id: number; ok: true; plan: Plan; baseline: Plan } | { id: number; ok: false; error: { name: string; message: string } };

export interface Solved {
  plan: Plan;
  /** The greedy nearest-driver plan of the same problem, for comparison. */
  baseline: Plan;
}

export interface SolverThread {
  /** Solves on the worker thread; several calls queue there (first come, first served). */
  solve(problem: OptimizerProblem, options: OptimizerOptions): Promise<Solved>;
  /** Solves sent and not answered yet (the one running included). */
  readonly pending: number;
  /** Whether the thread is running (it starts on a solve and ends when idle or closed). */
  readonly running: boolean;
  close(): Promise<void>;
}

/** Seconds a refused caller is told to wait (Retry-After) when the queue is full. */
const BUSY_RETRY_AFTER_S = 5;

/**
 * The optimizer on one worker thread, so a solve (up to its time budget: seconds for 500 trips) never blocks the event
 * loop: the instance keeps answering every other request meanwhile. The thread starts on the first solve and stays
 * (JIT-warm: a fresh thread's first solve costs two to three times a warm one) until it has been idle `idleMs` (its
 * memory and its helper's, about 100–135 MB of RSS after one or two 500 × 60 solves, goes back) or `close`; it does not
 * keep the process alive. The plans are the same as on the main thread (the solver is deterministic for a seed and an
 * iteration budget; the problem and plan are plain data). At most `maxQueued` solves wait or run at once; more are
 * refused with 503 OPTIMIZER_BUSY and Retry-After. If the thread dies, the solves it held fail (500) and the next solve
 * starts a new one.
 */
export function createSolverThread(opts: { maxQueued: number; idleMs?: number }): SolverThread {
  const idleMs = opts.idleMs ?? 5 * 60_000;
  let worker: Worker | null = null;
  let idleTimer: NodeJS.Timeout | null = null;
  let nextId = 1;
  const waiting = new Map<number, { resolve: (s: Solved) => void; reject: (e: Error) => void }>();

  const failAll = (err: Error) => {
    for (const w of waiting.values()) w.reject(err);
    waiting.clear();
  };

  /** Ends the thread once no solve has come for `idleMs`. */
  function idleAfterwards() {
    if (idleTimer) clearTimeout(idleTimer);
    idleTimer = setTimeout(() => {
      idleTimer = null;
      const w = worker;
      if (w && waiting.size === 0) {
        worker = null;
        void w.terminate();
      }
    }, idleMs);
    idleTimer.unref();
  }

  function thread(): Worker {
    if (idleTimer) clearTimeout(idleTimer);
    idleTimer = null;
    if (worker) return worker;
    const w = spawnWorker('solver-worker');
    w.unref();
    w.on('message', (reply: SolveReply) => {
      const caller = waiting.get(reply.id);
      if (!caller) return;
      waiting.delete(reply.id);
      if (reply.ok) caller.resolve({ plan: reply.plan, baseline: reply.baseline });
      else
        caller.reject(
          reply.error.name === 'OptimizerInputError'
            ? new OptimizerInputError(reply.error.message)
            : new Error(`optimizer: ${reply.error.message}`),
        );
    });
    // Only the current thread's death fails the waiting solves (one ended when idle or closed has none of them).
    w.on('error', (err) => {
      if (worker !== w) return;
      worker = null;
      failAll(new Error(`optimizer thread failed: ${err.message}`));
    });
    w.on('exit', (code) => {
      if (worker !== w) return;
      worker = null;
      failAll(new Error(`optimizer thread exited (${code})`));
    });
    worker = w;
    return w;
  }

  return {
    solve(problem, options) {
      if (waiting.size >= opts.maxQueued) {
        return Promise.reject(
          new AppError(503, 'OPTIMIZER_BUSY', `${waiting.size} optimizations are queued on this instance; retry shortly`, undefined, {
            retry_after: BUSY_RETRY_AFTER_S,
          }),
        );
      }
      const id = nextId++;
      return new Promise<Solved>((resolve, reject) => {
        waiting.set(id, { resolve, reject });
        const w = thread();
        // While solves are outstanding the thread keeps the process alive (a shutdown waits for them).
        w.ref();
        const request: SolveRequest = { id, problem, options };
        w.postMessage(request);
      }).finally(() => {
        if (waiting.size > 0) return;
        worker?.unref();
        idleAfterwards();
      });
    },
    get pending() {
      return waiting.size;
    },
    get running() {
      return worker !== null;
    },
    async close() {
      if (idleTimer) clearTimeout(idleTimer);
      idleTimer = null;
      const w = worker;
      worker = null;
      if (w) await w.terminate();
      failAll(new Error('optimizer thread closed'));
    },
  };
}
