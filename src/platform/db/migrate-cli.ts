import { loadConfig } from '../../config.js';
import { openDatabase } from './index.js';
import { migrate } from './migrate.js';

const config = loadConfig();
const db = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
const applied = await migrate(db);
console.log(applied.length ? `applied: ${applied.join(', ')}` : 'database is up to date');
await db.close();
