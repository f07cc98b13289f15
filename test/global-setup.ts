import { mkdtemp, rm, writeFile } from 'node:fs/promises';
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

let workDir: string | null = null;

/**
 * Migrates one PGlite database per run and dumps its data directory, so each test file loads a copy
 * (test/helpers.ts freshDatabase) instead of initialising and migrating its own (~16 s each).
 * Nothing to do on PostgreSQL (TEST_DATABASE_URL): there each file creates its own database.
 */
export async function setup(project: TestProject): Promise<void> {
  if (process.env.TEST_DATABASE_URL) {
    project.provide('pgliteTemplate', null);
    return;
  }
  workDir = await mkdtemp(path.join(os.tmpdir(), 'delivery-pglite-template-'));
  const lite = new PGlite('memory://');
  const db = await createPgliteDatabase(null, { instance: lite });
  await migrate(db);
  const dump = await lite.dumpDataDir('none');
  await db.close();
  const file = path.join(workDir, 'migrated.tar');
  await writeFile(file, Buffer.from(await dump.arrayBuffer()));
  project.provide('pgliteTemplate', file);
}

export async function teardown(): Promise<void> {
  if (workDir) await rm(workDir, { recursive: true, force: true });
}
