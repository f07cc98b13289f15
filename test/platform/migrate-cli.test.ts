import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createPgliteDatabase, createPostgresDatabase } from '../../src/platform/db/index.js';
import { freshDatabase } from '../helpers.js';

/** `npm run migrate` (src/platform/db/migrate-cli.ts) as an operator runs it before a rollout: the database settings only. */
function migrateCli(env: Record<string, string>) {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(JWT_SECRET|DATABASE_|DATA_DIR)/.test(k)));
  return spawnSync(process.execPath, ['--import', 'tsx', 'src/platform/db/migrate-cli.ts'], {
    env: { ...clean, NODE_ENV: 'production', ...env },
    encoding: 'utf8',
    timeout: 120_000,
  });
}

describe('npm run migrate', () => {
  const cleanup: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const c of cleanup) await c();
  });

  it('migrates with the database settings alone (no JWT_SECRET), into the folder the server opens', async () => {
    let count: () => Promise<number>;
    let env: Record<string, string>;
    if (process.env.TEST_DATABASE_URL) {
      const fresh = await freshDatabase();
      await fresh.db.close();
      cleanup.push(fresh.drop);
      env = { DATABASE_URL: fresh.url! };
      count = async () => {
        const db = createPostgresDatabase(fresh.url!, { max: 1 });
        try {
          return (await db.withOwner((tx) => tx.query('SELECT count(*)::int AS n FROM _migrations'))).rows[0].n;
        } finally {
          await db.close();
        }
      };
    } else {
      const dir = await mkdtemp(path.join(os.tmpdir(), 'migrate-cli-'));
      cleanup.push(() => rm(dir, { recursive: true, force: true }));
      env = { DATA_DIR: dir };
      count = async () => {
        const db = await createPgliteDatabase(path.join(dir, 'pglite'));
        try {
          return (await db.withOwner((tx) => tx.query('SELECT count(*)::int AS n FROM _migrations'))).rows[0].n;
        } finally {
          await db.close();
        }
      };
    }
    const first = migrateCli(env);
    expect(first.stderr).toBe('');
    expect(first.status).toBe(0);
    expect(first.stdout).toMatch(/^applied: 0000_baseline/);
    expect(await count()).toBeGreaterThan(1);
    const again = migrateCli(env);
    expect(again.status).toBe(0);
    expect(again.stdout.trim()).toBe('database is up to date');
  }, 240_000);

  it('a migration URL without DATABASE_URL: one clear line, exit 1', () => {
    const r = migrateCli({ DATABASE_MIGRATION_URL: 'postgres://owner@127.0.0.1:5432/x', DATA_DIR: '/tmp/migrate-cli-never-created' });
    expect(r.status).toBe(1);
    expect(r.stderr.trim()).toBe('config: DATABASE_MIGRATION_URL goes with a PostgreSQL DATABASE_URL; set DATABASE_URL too');
  }, 60_000);
});
