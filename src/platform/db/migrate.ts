import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createPostgresDatabase, type Database } from './index.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
export const MIGRATIONS_DIR = path.join(ROOT, 'db/migrations');
const TENANCY_SQL = path.join(ROOT, 'db/tenancy.sql');

interface Journal {
  entries: { idx: number; tag: string }[];
}

/**
 * Applies the drizzle-kit migrations in journal order (each in its own transaction, recorded in
 * `_migrations`), then `db/tenancy.sql`, which is idempotent and (re)asserts for every table with an
 * `organization_id` column: RLS enabled and forced, the tenant policy, and the grants of the tenant role.
 * Runs as the connecting role (`withOwner`): connect as the schema owner (`DATABASE_MIGRATION_URL`).
 */
export async function migrate(db: Database): Promise<string[]> {
  const journal = JSON.parse(await readFile(path.join(MIGRATIONS_DIR, 'meta/_journal.json'), 'utf8')) as Journal;
  const applied: string[] = [];
  await db.withOwner(async (tx) => {
    if (db.kind === 'postgres') await tx.query('SELECT pg_advisory_xact_lock(7270001)');
    await tx.exec('CREATE TABLE IF NOT EXISTS _migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())');
  });
  for (const entry of [...journal.entries].sort((a, b) => a.idx - b.idx)) {
    const sqlText = await readFile(path.join(MIGRATIONS_DIR, `${entry.tag}.sql`), 'utf8');
    await db.withOwner(async (tx) => {
      if (db.kind === 'postgres') await tx.query('SELECT pg_advisory_xact_lock(7270001)');
      const done = await tx.query('SELECT 1 FROM _migrations WHERE name = $1', [entry.tag]);
      if (done.rowCount > 0) return;
      for (const statement of sqlText.split('--> statement-breakpoint')) {
        if (statement.trim()) await tx.exec(statement);
      }
      await tx.query('INSERT INTO _migrations (name) VALUES ($1)', [entry.tag]);
      applied.push(entry.tag);
    });
  }
  const tenancy = await readFile(TENANCY_SQL, 'utf8');
  await db.withOwner(async (tx) => {
    if (db.kind === 'postgres') await tx.query('SELECT pg_advisory_xact_lock(7270001)');
    await tx.exec(tenancy);
  });
  return applied;
}

/**
 * Migrates before start: through the owner connection (`DATABASE_MIGRATION_URL`, opened for this and
 * closed) when one is set, else through the service's own connection (PGlite, or a privileged DATABASE_URL).
 */
export async function migrateWith(db: Database, migrationUrl: string | null): Promise<string[]> {
  if (!migrationUrl) return migrate(db);
  const owner = createPostgresDatabase(migrationUrl, { max: 1 });
  try {
    return await migrate(owner);
  } finally {
    await owner.close();
  }
}
