/**
 * The optimizer's helper thread (see chain-thread.ts): runs one chain of a search at a time, epoch by epoch as the
 * solving thread orders, and answers each epoch on its port, then wakes the solving thread (flag = the epoch's id).
 */
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { startChain, type ChainHandle } from '../optimizer/index.js';
import type { ChainMessage, ChainReply } from './chain-thread.js';

const parent = parentPort;
if (!parent) throw new Error('chain-worker runs as a worker thread');
const { port, flag } = workerData as { port: MessagePort; flag: Int32Array };
let chain: ChainHandle | null = null;
let failed: string | null = null;

const answer = (reply: ChainReply) => {
  port.postMessage(reply);
  Atomics.store(flag, 0, reply.id);
  Atomics.notify(flag, 0);
};

parent.on('message', (message: ChainMessage) => {
  try {
    if (message.type === 'start') {
      failed = null;
      chain = startChain(message.request);
    } else if (message.type === 'close') {
      chain = null;
    } else if (failed || !chain) {
      answer({ id: message.id, ok: false, message: failed ?? 'no chain started' });
    } else {
      chain.begin(message.order);
      answer({ id: message.id, ok: true, report: chain.end() });
    }
  } catch (err) {
    const text = err instanceof Error ? err.message : String(err);
    if (message.type === 'epoch') answer({ id: message.id, ok: false, message: text });
    else failed = text;
  }
});
