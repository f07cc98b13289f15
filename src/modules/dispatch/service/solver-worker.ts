/**
 * The optimizer's worker thread (see solver-thread.ts): solves each request it is sent, one at a time, and answers
 * with the plan and the greedy baseline, or with the error's name and message. A search's second chain runs on a
 * helper thread of its own (see chain-thread.ts).
 */
import { parentPort } from 'node:worker_threads';
import { helperChain } from './chain-thread.js';
import { greedyNearestDriver, solve } from '../optimizer/index.js';
import type { SolveReply, SolveRequest } from './solver-thread.js';

const port = parentPort;
if (!port) throw new Error('solver-worker runs as a worker thread');
port.on('message', (req: SolveRequest) => {
  let reply: SolveReply;
  try {
    reply = {
      id: req.id,
      ok: true,
      plan: solve(req.problem, req.options, { chain: helperChain }),
      baseline: greedyNearestDriver(req.problem, req.options),
    };
  } catch (err) {
    const e = err instanceof Error ? err : new Error(String(err));
    reply = { id: req.id, ok: false, error: { name: e.name, message: e.message } };
  }
  port.postMessage(reply);
});
