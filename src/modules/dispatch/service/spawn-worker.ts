import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker, type TransferListItem } from 'node:worker_threads';

/**
 * A worker thread running module `name` of this folder: the compiled `name.js` beside this file; from the TypeScript
 * sources (tests, `npm run dev`, the benchmark) the `.ts` one, loaded through tsx's ESM hooks registered inside the
 * worker. No flags of the main process (a profiler, a preload of the benchmark): the thread only computes.
 */
export function spawnWorker(name: string, workerData?: unknown, transferList?: TransferListItem[]): Worker {
  const fromSource = import.meta.url.endsWith('.ts');
  const entry = new URL(`./${name}.${fromSource ? 'ts' : 'js'}`, import.meta.url);
  if (!fromSource) return new Worker(entry, { execArgv: [], workerData, transferList });
  const tsxApi = pathToFileURL(
    path.join(path.dirname(createRequire(import.meta.url).resolve('tsx/package.json')), 'dist/esm/api/index.mjs'),
  ).href;
  return new Worker(`import(${JSON.stringify(tsxApi)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(entry.href)}); });`, {
    eval: true,
    execArgv: [],
    workerData,
    transferList,
  });
}
