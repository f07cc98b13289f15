import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import type { TestProject } from 'vitest/node';
import { createPgliteDatabase } from '../src/platform/db/index.js';
import { migrate } from '../src/platform/db/migrate.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A tarball of a migrated PGlite data directory (`dumpDataDir`); each PGlite test database starts from it. */
    pgliteTemplate: string | null;
  }
}

const ROOT = path.resolve(import.meta.dirname, '..');

/** What the migrated database is made of: the migrations, db/tenancy.sql, the migrator and the PGlite version. */
async function templateKey(): Promise<string> {
  const h = createHash('sha256');
  const migrations = path.join(ROOT, 'db/migrations');
  const files = [
    ...(await readdir(migrations))
      .filter((f) => f.endsWith('.sql'))
      .sort()
      .map((f) => path.join(migrations, f)),
    path.join(migrations, 'meta/_journal.json'),
    path.join(ROOT, 'db/tenancy.sql'),
    path.join(ROOT, 'src/platform/db/migrate.ts'),
    path.join(ROOT, 'node_modules/@electric-sql/pglite/package.json'),
  ];
  for (const f of files) h.update(f).update(await readFile(f));
  return h.digest('hex').slice(0, 16);
}

/**
 * Migrates one PGlite database and dumps its data directory, so each test file loads a copy
 * (test/helpers.ts freshDatabase) instead of initialising and migrating its own (~16 s each).
 * The dump is kept in the temporary directory under a hash of what it is made of: the root configuration
 * and each project of vitest.config.ts run this setup, and the next run reuses it while nothing changed.
 * Nothing to do on PostgreSQL (TEST_DATABASE_URL): there each file creates its own database.
 */
export async function setup(project: TestProject): Promise<void> {
  if (process.env.TEST_DATABASE_URL) {
    project.provide('pgliteTemplate', null);
    return;
  }
  const dir = path.join(os.tmpdir(), 'delivery-pglite-templates');
  const file = path.join(dir, `${await templateKey()}.tar`);
  if (!existsSync(file)) {
    await mkdir(dir, { recursive: true });
    const lite = new PGlite('memory://');
    const db = await createPgliteDatabase(null, { instance: lite });
    await migrate(db);
    const dump = await lite.dumpDataDir('none');
    await db.close();
    // Written aside and renamed: a concurrent run never reads a half-written dump.
    const partial = `${file}.${process.pid}.partial`;
    await writeFile(partial, Buffer.from(await dump.arrayBuffer()));
    await rename(partial, file);
  }
  project.provide('pgliteTemplate', file);
}
