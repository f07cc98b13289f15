import path from 'node:path';
import { loadDatabaseSettings, readSecretsKeys } from './config.js';
import { openDatabase } from './platform/db/index.js';
import { BACKUP_SOCKET, holdsData, serverAnswers } from './platform/db/backup.js';
import { loadOrCreateSecret, SECRETS_KEY_KIND } from './platform/secret-file.js';
import { keyring, parseSecretsKey } from './platform/secrets.js';
import { reencryptStoredSecrets } from './platform/secret-store.js';
import { SECRET_COLUMNS } from './modules/index.js';

/**
 * `npm run secrets:rotate`: re-encrypts every stored secret (chat channel tokens, webhook signing secrets) under the
 * current key (SECRETS_KEY; on the embedded database without it, the key kept in DATA_DIR), reading the old values
 * with SECRETS_KEY_PREVIOUS; plain-text values left by an older version are encrypted too. Idempotent (a second run
 * finds nothing to do). On PostgreSQL it runs beside the serving instances (each value is replaced only while it
 * is still the one read); on the embedded database the server re-encrypts at its own start, so this refuses while one runs.
 * Errors are one line, exit code 1.
 */
async function main(): Promise<string> {
  const settings = loadDatabaseSettings();
  const keys = readSecretsKeys(process.env);
  let current = keys.current;
  if (settings.pgliteDir) {
    if (await serverAnswers(path.join(settings.dataDir, BACKUP_SOCKET))) {
      throw new Error(
        `secrets: a server is running on ${settings.dataDir}; the embedded database re-encrypts at the server's start (restart it with SECRETS_KEY_PREVIOUS set), or stop it and run this again`,
      );
    }
    if (!(await holdsData(settings.pgliteDir))) throw new Error(`secrets: no embedded database in ${settings.pgliteDir} (DATA_DIR)`);
    current ??= parseSecretsKey('the key file', await loadOrCreateSecret(settings.dataDir, SECRETS_KEY_KIND));
  }
  if (!current) throw new Error('config: SECRETS_KEY is required with DATABASE_URL (docs/SECRETS.md)');
  const ring = keyring(current, keys.previous);
  const db = await openDatabase({
    databaseUrl: settings.databaseUrl,
    systemUrl: process.env.DATABASE_SYSTEM_URL || null,
    dataDir: settings.pgliteDir,
    pool: { max: 2 },
  });
  try {
    const r = await reencryptStoredSecrets(db, ring, SECRET_COLUMNS, { plainOnly: false });
    if (r.unreadable.length) {
      throw new Error(
        `secrets: ${r.reencrypted} values re-encrypted under key version ${ring.current.id}; left unreadable: ${r.unreadable.join('; ')}`,
      );
    }
    return `secrets: ${r.reencrypted} values re-encrypted under key version ${ring.current.id}${r.raced ? ` (${r.raced} written meanwhile, already under it)` : ''}; every stored secret is under it`;
  } finally {
    await db.close();
  }
}

try {
  console.log(await main());
} catch (err) {
  console.error((err as Error).message);
  process.exit(1);
}
