import { mkdir, readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { loadDatabaseSettings } from '../../config.js';
import { BACKUP_SOCKET, holdsData, readBackup, requestBackup, restoreFiles, serverAnswers, writeBackup } from './backup.js';
import { createPgliteDatabase } from './index.js';

/**
 * `npm run backup -- <folder>`: a consistent copy of the embedded default's DATA_DIR, asked of the running server
 * through DATA_DIR/backup.sock, or taken directly when no server runs.
 * `npm run restore -- <folder> [--force]`: that copy into DATA_DIR, which must be empty (or `--force`: replaced), with
 * no server running on it. Reads only the database settings (DATA_DIR; DATABASE_URL means PostgreSQL: refused).
 * Errors are one line, exit code 1.
 */
async function main(argv: string[]): Promise<string> {
  const [command, ...rest] = argv;
  const force = rest.includes('--force');
  const [folder, ...extra] = rest.filter((a) => a !== '--force');
  if ((command !== 'backup' && command !== 'restore') || !folder || extra.length) {
    throw new Error('usage: npm run backup -- <folder> | npm run restore -- <folder> [--force]');
  }
  const settings = loadDatabaseSettings();
  if (settings.databaseUrl || !settings.pgliteDir) {
    throw new Error(`${command}: DATABASE_URL is set; on PostgreSQL use pg_dump or base backups with WAL archiving (README, "PostgreSQL")`);
  }
  const dir = path.resolve(folder);
  if (command === 'backup') {
    const viaServer = await requestBackup(settings.dataDir, dir);
    if (viaServer) return `backup: ${dir} (from the running server: database and ${viaServer.files.length} files)`;
    if (!(await holdsData(settings.pgliteDir))) throw new Error(`backup: no embedded database in ${settings.pgliteDir} (DATA_DIR)`);
    const db = await createPgliteDatabase(settings.pgliteDir);
    try {
      const manifest = await writeBackup(settings.dataDir, dir, db.snapshot!);
      return `backup: ${dir} (no server running: database and ${manifest.files.length} files)`;
    } finally {
      await db.close();
    }
  }
  if (await serverAnswers(path.join(settings.dataDir, BACKUP_SOCKET))) {
    throw new Error(`restore: a server is running on ${settings.dataDir}; stop it first`);
  }
  const { manifest, dump } = await readBackup(dir);
  if (await holdsData(settings.dataDir)) {
    if (!force)
      throw new Error(`restore: ${settings.dataDir} (DATA_DIR) holds data; restore into an empty folder, or pass --force to replace it`);
    for (const e of await readdir(settings.dataDir)) await rm(path.join(settings.dataDir, e), { recursive: true, force: true });
  }
  await mkdir(settings.pgliteDir, { recursive: true, mode: 0o700 });
  const lite = new PGlite(settings.pgliteDir, { loadDataDir: dump });
  await lite.waitReady;
  await lite.close();
  await restoreFiles(dir, manifest, settings.dataDir);
  return `restore: ${settings.dataDir} from ${dir} (taken ${manifest.created_at}: database and ${manifest.files.length} files)`;
}

try {
  console.log(await main(process.argv.slice(2)));
} catch (err) {
  console.error((err as Error).message);
  process.exit(1);
}
