import { mkdir } from 'node:fs/promises';
import { loadDatabaseSettings } from '../../config.js';
import { openDatabase } from './index.js';
import { migrate } from './migrate.js';

// Only the database settings: migrating signs nothing, so JWT_SECRET and the modules' settings are not needed.
let settings;
try {
  settings = loadDatabaseSettings();
} catch (err) {
  console.error((err as Error).message);
  process.exit(1);
}
// The schema owner migrates (DATABASE_MIGRATION_URL); DATABASE_URL when it is the owner too. Unset: the embedded
// database, in the folder the server opens (DATA_DIR/pglite).
if (settings.pgliteDir) await mkdir(settings.pgliteDir, { recursive: true });
const db = await openDatabase({ databaseUrl: settings.migrationUrl, dataDir: settings.pgliteDir });
const applied = await migrate(db);
console.log(applied.length ? `applied: ${applied.join(', ')}` : 'database is up to date');
await db.close();
