import { loadConfig } from '../../config.js';
import { openDatabase } from './index.js';
import { migrate } from './migrate.js';

const config = loadConfig();
// The schema owner migrates (DATABASE_MIGRATION_URL); DATABASE_URL when it is the owner too (or unset: PGlite).
const db = await openDatabase({ databaseUrl: config.databaseMigrationUrl ?? config.databaseUrl, dataDir: config.dataDir });
const applied = await migrate(db);
console.log(applied.length ? `applied: ${applied.join(', ')}` : 'database is up to date');
await db.close();
