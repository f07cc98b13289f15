import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { loadConfig, withSecretsKey, withStoredSecret, type Config } from './config.js';
import { loadOrCreateSecret, SECRETS_KEY_KIND } from './platform/secret-file.js';
import { openDatabase, poolOptionsFrom } from './platform/db/index.js';
import { migrateWith } from './platform/db/migrate.js';
import { buildApp } from './app.js';
import { DEMO_LOGINS, DEMO_PASSWORD, seedDemo } from './seed.js';
import { startWorkers } from './platform/workers.js';
import { serveBackups } from './platform/db/backup.js';

// A bad setting stops the start with one line naming it (no stack trace), exit code 1.
let config: Config;
try {
  config = loadConfig();
  if (!config.databaseUrl) await mkdir(config.dataDir, { recursive: true });
  // The embedded default without JWT_SECRET: the secret generated once and kept in DATA_DIR, so a restart keeps
  // sessions and recipient links (JWT_SECRET is required with DATABASE_URL and in production).
  if (!config.jwtSecretGiven) config = withStoredSecret(config, await loadOrCreateSecret(config.dataDir));
  // Likewise the key of the secrets at rest (docs/SECRETS.md); with DATABASE_URL it is SECRETS_KEY, needed once secrets are stored.
  if (!config.secrets && !config.databaseUrl) config = withSecretsKey(config, await loadOrCreateSecret(config.dataDir, SECRETS_KEY_KIND));
} catch (err) {
  console.error((err as Error).message);
  process.exit(1);
}
const db = await openDatabase({
  databaseUrl: config.databaseUrl,
  systemUrl: config.databaseSystemUrl,
  replicaUrl: config.databaseReplicaUrl,
  dataDir: config.databaseUrl ? null : path.join(config.dataDir, 'pglite'),
  pool: { ...poolOptionsFrom(config.settings), replicaMaxLagMs: config.settings.REPLICA_MAX_LAG_MS },
});
await migrateWith(db, config.databaseMigrationUrl);
// Least privilege (README, "PostgreSQL"): fail now, not at the first request, when a least-privilege role
// cannot switch to app_tenant / app_worker; say so when the run-time role bypasses row-level security.
const role = await db.connectionRole();
if (!role.superuser && !role.tenantMember) {
  throw new Error(
    `database: the role "${role.user}" of DATABASE_URL must be a member of app_tenant (GRANT app_tenant TO "${role.user}"; README, "PostgreSQL")`,
  );
}
await db.withSystem(async () => undefined);
// A key that does not read the stored secrets (or none when some are stored) stops the start with one `config:` line.
const app = await buildApp({ config, db }).catch(async (err: Error) => {
  if (!err.message.startsWith('config:')) throw err;
  console.error(err.message);
  await db.close();
  process.exit(1);
});
if (config.databaseUrl && (role.superuser || role.bypassrls)) {
  app.log.warn(
    { role: role.user },
    'DATABASE_URL connects as a superuser or BYPASSRLS role; in production use a least-privilege role (README, "PostgreSQL")',
  );
}

if (config.seedDemo) {
  const demo = await seedDemo(app);
  if (demo) {
    app.log.info('seeded a demo organization');
    if (config.databaseUrl)
      app.log.warn('SEED_DEMO=true on DATABASE_URL: the demo organization has a published password; do not use it in production');
    console.log(
      `\nDemo logins (password "${DEMO_PASSWORD}"):\n${Object.entries(DEMO_LOGINS)
        .map(([k, v]) => `  ${k.padEnd(9)} ${v}`)
        .join('\n')}\n`,
    );
  }
}

const stopWorkers = config.workers ? startWorkers(app.ctx.workers, app.log) : async () => undefined;
// The embedded database lives in this process: `npm run backup` asks it for a consistent copy on DATA_DIR/backup.sock.
const stopBackups = db.snapshot ? await serveBackups(config.dataDir, db.snapshot.bind(db), app.log) : async () => undefined;
await app.listen({ port: config.port, host: config.host });
console.log(
  `Dispatcher console: http://${config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host}:${config.port}/console`,
);

let stopping = false;
async function shutdown(signal: string) {
  if (stopping) return;
  stopping = true;
  app.log.info({ signal }, 'shutting down: no new connections, finishing in-flight requests');
  const force = setTimeout(() => process.exit(1), 15_000);
  force.unref();
  try {
    await stopWorkers();
    await stopBackups();
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
