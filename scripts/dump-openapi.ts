// `npx tsx scripts/dump-openapi.ts > openapi.json`: the served OpenAPI document, keys sorted, to compare two trees
// operation by operation (a restructuring must leave it unchanged).
import { loadConfig } from '../src/config.js';
import { createPgliteDatabase } from '../src/platform/db/index.js';
import { migrate } from '../src/platform/db/migrate.js';
import { buildApp } from '../src/app.js';

const sorted = (v: unknown): unknown =>
  Array.isArray(v)
    ? v.map(sorted)
    : v && typeof v === 'object'
      ? Object.fromEntries(
          Object.keys(v)
            .sort()
            .map((k) => [k, sorted((v as Record<string, unknown>)[k])]),
        )
      : v;

const config = loadConfig({ ...process.env, NODE_ENV: 'development', JWT_SECRET: 'dump-openapi-dump-openapi-dump-0042' });
const db = await createPgliteDatabase(null);
await migrate(db);
const app = await buildApp({ config, db });
await app.ready();
process.stdout.write(JSON.stringify(sorted(app.swagger()), null, 1) + '\n');
await app.close();
await db.close();
process.exit(0);
