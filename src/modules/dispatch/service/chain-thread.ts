import { MessageChannel, receiveMessageOnPort, type MessagePort, type Worker } from 'node:worker_threads';
import type { ChainHandle, ChainRequest, EpochOrder, EpochReport } from '../optimizer/index.js';
import { spawnWorker } from './spawn-worker.js';

/** Sent to the helper thread, in order. */
export type ChainMessage = { type: 'start'; request: ChainRequest } | { type: 'epoch'; id: number; order: EpochOrder } | { type: 'close' };
/** Its answer to epoch `id` (on the port; `flag` holds the id once it is there). */
export type ChainReply = { id: number; ok: true; report: EpochReport } | { id: number; ok: false; message: string };

/** Past the chain's own ceiling, how long a solve waits for the helper before it gives up on it (a thread that died). */
const GRACE_MS = 10_000;

interface Helper {
  worker: Worker;
  port: MessagePort;
  flag: Int32Array;
  busy: boolean;
  /** The last epoch sent (ids grow, so an answer to an epoch of an abandoned solve is told apart and dropped). */
  epoch: number;
}

/** This thread's helper (module state is per thread: the solver thread of the server, or the benchmark's main thread). */
let helper: Helper | null = null;

function helperThread(): Helper | null {
  if (helper) return helper;
  try {
    const { port1, port2 } = new MessageChannel();
    const flag = new Int32Array(new SharedArrayBuffer(4));
    const worker = spawnWorker('chain-worker', { port: port2, flag }, [port2]);
    // kept for the next solve (JIT-warm), never keeping the process alive; it ends with the thread that started it
    worker.unref();
    const forget = () => {
      if (helper?.worker === worker) helper = null;
    };
    worker.on('error', forget);
    worker.on('exit', forget);
    helper = { worker, port: port1, flag, busy: false, epoch: 0 };
    return helper;
  } catch {
    return null;
  }
}

/**
 * SolveEnv.chain on a helper thread: the optimizer's second chain (see CHAINS) runs there, epoch by epoch, while the
 * calling thread runs the first. The calling thread blocks on `end` (Atomics.wait) until the helper has answered, and
 * reads the answer synchronously (receiveMessageOnPort): solve stays a plain synchronous function, and its plan is the
 * one it gives on a single thread. Null (the chain runs on the calling thread) when the helper cannot start or is in
 * use, or when the request holds a distance function (not sent to another thread). If the helper does not answer by
 * the chain's ceiling plus `graceMs`, the solve fails and the helper is ended (the next one starts afresh).
 */
export function helperChain(request: ChainRequest, graceMs = GRACE_MS): (ChainHandle & { close(): void }) | null {
  if (typeof request.options.distance === 'function') return null;
  const h = helperThread();
  if (!h || h.busy) return null;
  h.busy = true;
  const send = (message: ChainMessage) => h.worker.postMessage(message);
  const giveUpAt = performance.now() + Math.max(0, request.remainingMs) + graceMs;
  send({ type: 'start', request });
  return {
    begin(order) {
      h.epoch = (h.epoch + 1) | 0 || 1;
      send({ type: 'epoch', id: h.epoch, order });
    },
    end() {
      const id = h.epoch;
      for (;;) {
        const seen = Atomics.load(h.flag, 0);
        if (seen === id) break;
        const left = giveUpAt - performance.now();
        if (left <= 0 || Atomics.wait(h.flag, 0, seen, left) === 'timed-out') {
          if (helper === h) helper = null;
          void h.worker.terminate();
          throw new Error('optimizer helper thread did not answer');
        }
      }
      // the answer is on the port before the flag says so; older ones (an abandoned solve's) are dropped
      for (let m = receiveMessageOnPort(h.port); m; m = receiveMessageOnPort(h.port)) {
        const reply = m.message as ChainReply;
        if (reply.id !== id) continue;
        if (!reply.ok) throw new Error(`optimizer helper thread: ${reply.message}`);
        return reply.report;
      }
      throw new Error('optimizer helper thread: no answer on its port');
    },
    close() {
      send({ type: 'close' });
      h.busy = false;
    },
  };
}
