import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { loadConfig } from './config.js';
import { openDatabase, poolOptionsFrom } from './platform/db/index.js';
import { migrate } from './platform/db/migrate.js';
import { buildApp } from './app.js';
import { modules } from './modules/index.js';
import { DEMO_LOGINS, DEMO_PASSWORD, seedDemo } from './seed.js';
import { startWorkers } from './platform/workers.js';

const config = loadConfig();
if (!config.databaseUrl) await mkdir(config.dataDir, { recursive: true });
const db = await openDatabase({
  databaseUrl: config.databaseUrl,
  dataDir: config.databaseUrl ? null : path.join(config.dataDir, 'pglite'),
  pool: poolOptionsFrom(config.raw),
});
await migrate(db);
const app = await buildApp({ config, db });

if (config.seedDemo) {
  const demo = await seedDemo(app.ctx, modules);
  if (demo) {
    app.log.info('seeded a demo organization');
    console.log(`\nDemo logins (password "${DEMO_PASSWORD}"):\n${Object.entries(DEMO_LOGINS).map(([k, v]) => `  ${k.padEnd(9)} ${v}`).join('\n')}\n`);
  }
}

const stopWorkers = config.workers ? startWorkers(app.ctx.workers, app.log) : async () => undefined;
await app.listen({ port: config.port, host: config.host });

let stopping = false;
async function shutdown(signal: string) {
  if (stopping) return;
  stopping = true;
  app.log.info({ signal }, 'shutting down: no new connections, finishing in-flight requests');
  const force = setTimeout(() => process.exit(1), 15_000);
  force.unref();
  try {
    await stopWorkers();
    await app.close(); // stops accepting, waits for in-flight requests, runs onClose hooks
    await db.close();
    process.exit(0);
  } catch (err) {
    app.log.error({ err }, 'shutdown failed');
    process.exit(1);
  }
}
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));
