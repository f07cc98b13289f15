import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { waitFor } from '../support.js';

/**
 * db/tenancy.sql creates the cluster-wide roles app_tenant and app_worker when they are missing. Databases of one
 * server migrate at once (the test files of a run, or two deployments on one server), and a creation that loses the
 * race must not fail the migration: a CI run on a fresh server failed once with `duplicate key value violates unique
 * constraint "pg_authid_rolname_index"` from the app_tenant block. PostgreSQL only (roles are the server's).
 *
 * Deterministic: session A creates the role in an open transaction; session B runs the same block, sees no role
 * yet, and waits on A's catalog row; A commits, and B must end quietly. Run on a role of this test's own, so the
 * roles of the other test files are never touched.
 */
const BASE = process.env.TEST_DATABASE_URL;
const TENANCY_SQL = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../db/tenancy.sql');

/** The DO block of tenancy.sql that creates `role`, with the role renamed. */
async function creationBlock(role: string, renamed: string): Promise<string> {
  const sql = await readFile(TENANCY_SQL, 'utf8');
  const block = sql.split(/(?=DO \$\$)/).find((part) => part.includes(`CREATE ROLE ${role} `));
  if (!block) throw new Error(`no creation block for ${role}`);
  return block.slice(0, block.indexOf('END $$;') + 'END $$;'.length).replaceAll(role, renamed);
}

async function connect(): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: BASE });
  await client.connect();
  return client;
}

describe.skipIf(!BASE)('db/tenancy.sql role creation on PostgreSQL', () => {
  for (const role of ['app_tenant', 'app_worker']) {
    it(`a migration that loses the race to create ${role} goes on`, async () => {
      const renamed = `t_race_${role}_${process.pid}_${Date.now()}`;
      const block = await creationBlock(role, renamed);
      const [a, b] = [await connect(), await connect()];
      try {
        const bPid = ((await b.query('SELECT pg_backend_pid() AS pid')).rows[0] as { pid: number }).pid;
        await a.query('BEGIN');
        await a.query(block);
        const loser = b.query(block).then(
          () => 'ok',
          (err: Error) => err.message,
        );
        // B waits on A's uncommitted catalog row (its lock shows in pg_locks) before A commits
        await waitFor(
          async () => (await a.query('SELECT 1 FROM pg_stat_activity WHERE pid = $1 AND wait_event_type = $2', [bPid, 'Lock'])).rowCount,
          { message: 'B waiting on the lock' },
        );
        await a.query('COMMIT');
        expect(await loser).toBe('ok');
        const roles = await a.query('SELECT rolbypassrls, rolcanlogin FROM pg_roles WHERE rolname = $1', [renamed]);
        expect(roles.rows).toEqual([{ rolbypassrls: role === 'app_worker', rolcanlogin: false }]);
      } finally {
        await a.query('ROLLBACK').catch(() => undefined);
        await a.query(`DROP ROLE IF EXISTS ${renamed}`).catch(() => undefined);
        await a.end();
        await b.end();
      }
    });
  }
});
