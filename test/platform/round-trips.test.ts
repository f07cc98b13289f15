import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresDatabase, prepared, type Database } from '../../src/platform/db/index.js';
import { migrate } from '../../src/platform/db/migrate.js';
import { freshDatabase } from '../helpers.js';

/**
 * Round trips between the service and PostgreSQL, counted on the wire: a TCP proxy in between counts
 * the times the client speaks after the server did (each such turn is one round trip).
 */
function countingProxy(target: URL) {
  let turns = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port || 5432), target.hostname);
    let serverSpokeLast = true;
    sockets.add(client).add(upstream);
    client.on('data', (chunk) => {
      if (serverSpokeLast) turns++;
      serverSpokeLast = false;
      upstream.write(chunk);
    });
    upstream.on('data', (chunk) => {
      serverSpokeLast = true;
      client.write(chunk);
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
  });
  return {
    async listen(): Promise<number> {
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      return (server.address() as net.AddressInfo).port;
    },
    /** Round trips since the last call. */
    take(): number {
      const n = turns;
      turns = 0;
      return n;
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}

describe.skipIf(!process.env.TEST_DATABASE_URL)('round trips of a tenant transaction (PostgreSQL)', () => {
  let fresh: Awaited<ReturnType<typeof freshDatabase>>;
  let proxy: ReturnType<typeof countingProxy>;
  let db: Database;
  let org: string;

  beforeAll(async () => {
    fresh = await freshDatabase();
    await migrate(fresh.db);
    proxy = countingProxy(new URL(fresh.url!));
    const port = await proxy.listen();
    const url = new URL(fresh.url!);
    url.hostname = '127.0.0.1';
    url.port = String(port);
    // One connection, opened before counting: only the transactions' own exchanges are counted.
    db = createPostgresDatabase(url.toString(), { max: 1 });
    org = `rt-${Date.now()}`;
    await db.withSystem((tx) => tx.query(`INSERT INTO organization (id, name, slug) VALUES ($1, 'round trips', $1)`, [org]));
    await db.withTenant({ organizationId: org, userId: null }, (tx) => tx.query('SELECT 1'));
    proxy.take();
  });

  /** The connection is back to its own role, with no tenant setting left on it. */
  async function expectNoTenantLeft() {
    const after = await db.withOwner(
      async (tx) =>
        (await tx.query<{ role: string; org: string }>(`SELECT current_user AS role, current_setting('app.organization_id', true) AS org`))
          .rows[0],
    );
    expect(after.role).not.toBe('app_tenant');
    expect(after.org ?? '').toBe('');
  }

  afterAll(async () => {
    await db?.close();
    await proxy?.close();
    await fresh?.db.close();
    await fresh?.drop();
  });

  it('a read through tenantRead is one round trip, with real parameters, under the tenant settings and role', async () => {
    const rows = await db.tenantRead<{ org: string; role: string; v: string }>(
      { organizationId: org, userId: null },
      `SELECT current_setting('app.organization_id') AS org, current_user AS role, $1::text AS v`,
      ["it's \\ a 'quoted' value"],
    );
    expect(proxy.take()).toBe(1);
    expect(rows).toEqual([{ org, role: 'app_tenant', v: "it's \\ a 'quoted' value" }]);
    // The settings were local to that transaction: the connection is back to its own role.
    await expectNoTenantLeft();
    proxy.take();
  });

  it('readTenant: each statement is one round trip with the tenant settings, read-only, and nothing stays on the connection', async () => {
    const ctx = { organizationId: org, userId: 'u2' };
    const seen = await db.readTenant(ctx, async (tx) => {
      const a = (
        await tx.query<{ org: string; u: string; role: string; ro: string }>(
          `SELECT current_setting('app.organization_id') AS org, current_setting('app.user_id') AS u, current_user AS role, current_setting('transaction_read_only') AS ro`,
        )
      ).rows[0];
      const b = (await tx.query<{ v: string }>('SELECT $1::text AS v', ['second'])).rows[0];
      return { ...a, v: b.v };
    });
    expect(proxy.take()).toBe(2);
    expect(seen).toEqual({ org, u: 'u2', role: 'app_tenant', ro: 'on', v: 'second' });
    // No BEGIN was sent, none is left open, and the settings ended with each statement.
    const after = await db.withOwner(
      async (tx) =>
        (
          await tx.query<{ role: string; org: string; ro: string }>(
            `SELECT current_user AS role, current_setting('app.organization_id', true) AS org, current_setting('transaction_read_only') AS ro`,
          )
        ).rows[0],
    );
    expect(after.role).not.toBe('app_tenant');
    expect(after.org ?? '').toBe('');
    expect(after.ro).toBe('off');
    proxy.take();
  });

  it('tenantWrite: one round trip under the tenant settings and role, committed on its own, nothing left on the connection', async () => {
    const other = `${org}-other`;
    await db.withSystem((tx) => tx.query(`INSERT INTO organization (id, name, slug) VALUES ($1, 'other', $1)`, [other]));
    proxy.take();
    const ctx = { organizationId: org, userId: 'u3' };
    const rename = `UPDATE organization SET name = $2 || current_setting('app.user_id') WHERE id = $1 RETURNING name, current_user AS role`;
    expect(await db.tenantWrite(ctx, rename, [org, 'written by '])).toEqual([{ name: 'written by u3', role: 'app_tenant' }]);
    expect(proxy.take()).toBe(1);
    // Row-level security holds: another organization's row is not there for it.
    expect(await db.tenantWrite(ctx, rename, [other, 'taken by '])).toEqual([]);
    // A failing statement leaves nothing written.
    await expect(
      db.tenantWrite(ctx, `WITH w AS (UPDATE organization SET name = 'half' WHERE id = $1 RETURNING 1) SELECT 1 / 0 FROM w`, [org]),
    ).rejects.toMatchObject({ code: '22012' });
    const after = await db.withOwner(
      async (tx) =>
        (
          await tx.query<{ role: string; org: string; names: string[] }>(
            `SELECT current_user AS role, current_setting('app.organization_id', true) AS org,
                    (SELECT array_agg(name ORDER BY id) FROM organization WHERE id IN ($1, $2)) AS names`,
            [org, other],
          )
        ).rows[0],
    );
    expect(after.names).toEqual(['written by u3', 'other']);
    expect(after.role).not.toBe('app_tenant');
    expect(after.org ?? '').toBe('');
    await db.withSystem((tx) => tx.query(`UPDATE organization SET name = 'round trips' WHERE id = $1`, [org]));
    proxy.take();
  });

  it('queryAndCommit: the last statement, the statements behind it and the COMMIT are one round trip', async () => {
    const ctx = { organizationId: org, userId: 'u4' };
    const rename = `UPDATE organization SET name = $2 WHERE id = $1 RETURNING name, current_user AS role`;
    const nameOf = async () =>
      db.withSystem(async (tx) => (await tx.query<{ name: string }>('SELECT name FROM organization WHERE id = $1', [org])).rows[0].name);
    // After a first statement: two round trips in all (the setup with the first, the last with its COMMIT).
    const out = await db.withTenant(ctx, async (tx) => {
      await tx.query('SELECT 1');
      return (await tx.queryAndCommit<{ name: string; role: string }>(rename, [org, 'last'])).rows;
    });
    expect(proxy.take()).toBe(2);
    expect(out).toEqual([{ name: 'last', role: 'app_tenant' }]);
    // As the only statement: the setup, the statement, a statement behind it and the COMMIT in one round trip; the one
    // behind it runs after it (it sees its write) and its rows are not the answer's.
    const only = await db.withTenant(
      ctx,
      async (tx) =>
        (
          await tx.queryAndCommit<{ name: string }>(
            rename,
            [org, 'only'],
            [[`UPDATE organization SET name = name || ' then' WHERE id = $1 RETURNING name`, [org]]],
          )
        ).rows,
    );
    expect(proxy.take()).toBe(1);
    expect(only).toEqual([{ name: 'only', role: 'app_tenant' }]);
    expect(await nameOf()).toBe('only then');
    proxy.take();
    // A statement behind it that fails: nothing of the transaction is committed.
    await expect(
      db.withTenant(ctx, async (tx) => {
        await tx.query(`UPDATE organization SET name = 'first' WHERE id = $1`, [org]);
        return tx.queryAndCommit(rename, [org, 'failed'], [['SELECT 1 / 0']]);
      }),
    ).rejects.toMatchObject({ code: '22012' });
    expect(await nameOf()).toBe('only then');
    // Nothing may follow it: a later statement throws, and what was committed stays committed.
    await expect(
      db.withTenant(ctx, async (tx) => {
        await tx.queryAndCommit(rename, [org, 'committed']);
        await tx.query(`UPDATE organization SET name = 'after' WHERE id = $1`, [org]);
      }),
    ).rejects.toThrow(/after the transaction/);
    expect(await nameOf()).toBe('committed');
    // The connection is clean: no transaction left open, no tenant settings left on it.
    await expectNoTenantLeft();
    await db.withSystem((tx) => tx.query(`UPDATE organization SET name = 'round trips' WHERE id = $1`, [org]));
    proxy.take();
  });

  it('queue: a queued write costs no round trip; it goes ahead of the next statement, or of the COMMIT', async () => {
    const ctx = { organizationId: org, userId: 'u5' };
    const rename = `UPDATE organization SET name = $2 WHERE id = $1`;
    // Queued first, then a statement, then queued again: the setup and the first write go with the statement, the
    // second with the COMMIT.
    const read = await db.withTenant(ctx, async (tx) => {
      await tx.queue(rename, [org, 'queued']);
      const name = (await tx.query<{ name: string }>('SELECT name FROM organization WHERE id = $1', [org])).rows[0].name;
      await tx.queue(rename, [org, 'queued last']);
      return name;
    });
    expect(proxy.take()).toBe(2);
    expect(read).toBe('queued');
    // Only queued writes: the setup, the writes and the COMMIT in one round trip.
    await db.withTenant(ctx, async (tx) => {
      await tx.queue(rename, [org, 'only queued']);
      await tx.queue(`UPDATE organization SET name = name || '!' WHERE id = $1`, [org]);
    });
    expect(proxy.take()).toBe(1);
    const name = await db.withSystem(
      async (tx) => (await tx.query<{ name: string }>('SELECT name FROM organization WHERE id = $1', [org])).rows[0].name,
    );
    expect(name).toBe('only queued!');
    await expectNoTenantLeft();
    await db.withSystem((tx) => tx.query(`UPDATE organization SET name = 'round trips' WHERE id = $1`, [org]));
    proxy.take();
  });

  it('readTenant refuses a write (25006) and leaves nothing written; the connection stays usable', async () => {
    const ctx = { organizationId: org, userId: null };
    await expect(
      db.readTenant(ctx, (tx) => tx.query(`UPDATE organization SET name = 'changed' WHERE id = $1`, [org])),
    ).rejects.toMatchObject({ code: '25006' });
    const name = await db.withSystem(
      async (tx) => (await tx.query<{ name: string }>('SELECT name FROM organization WHERE id = $1', [org])).rows[0].name,
    );
    expect(name).toBe('round trips');
    expect(await db.tenantRead<{ x: number }>(ctx, 'SELECT 1 AS x')).toEqual([{ x: 1 }]);
    proxy.take();
  });

  it('a failing setup stops the statement behind it: nothing runs outside the tenant context', async () => {
    // A tenant context that cannot be set (NUL byte in the setting): the statement in the same exchange is skipped.
    const bad = { organizationId: 'bad\u0000id', userId: null };
    await expect(
      db.withTenant(bad, (tx) => tx.query(`UPDATE organization SET name = 'outside' WHERE id = $1`, [org])),
    ).rejects.toBeTruthy();
    await expect(db.tenantRead(bad, 'SELECT id FROM organization')).rejects.toBeTruthy();
    const name = await db.withSystem(
      async (tx) => (await tx.query<{ name: string }>('SELECT name FROM organization WHERE id = $1', [org])).rows[0].name,
    );
    expect(name).toBe('round trips');
    proxy.take();
  });

  it('a prepared statement is parsed once per connection; a generic one is never planned again (readTenant)', async () => {
    const ctx = { organizationId: org, userId: null };
    const generic = prepared(`SELECT id FROM organization WHERE id = $1 AND $2::int > 0 /* rt generic */`, { generic: true });
    const auto = prepared(`SELECT id FROM organization WHERE id = $1 AND $2::int > 0 /* rt auto */`);
    for (let i = 1; i <= 8; i++) {
      expect(await db.tenantRead(ctx, generic, [org, i])).toEqual([{ id: org }]);
      expect(await db.tenantRead(ctx, auto, [org, i])).toEqual([{ id: org }]);
      // Inside a transaction too (after the first statement and as the first one).
      expect((await db.withTenant(ctx, async (tx) => (await tx.query(auto, [org, i])).rows)).length).toBe(1);
    }
    expect(proxy.take()).toBe(8 * 4);
    // One connection (max 1): its session holds each statement once.
    const stmts = await db.withOwner(
      async (tx) =>
        (
          await tx.query<{ name: string; generic_plans: number; custom_plans: number }>(
            `SELECT name, generic_plans::int, custom_plans::int FROM pg_prepared_statements`,
          )
        ).rows,
    );
    const g = stmts.find((x) => x.name === generic.name)!;
    expect(g).toMatchObject({ generic_plans: 8, custom_plans: 0 });
    expect(stmts.filter((x) => x.name === auto.name)).toHaveLength(1);
    proxy.take();
  });

  it('with DB_PREPARED_STATEMENTS off, prepared SQL runs unnamed (a transaction-mode pooler): same rows, no statement kept', async () => {
    const plain = createPostgresDatabase(fresh.url!, { max: 1, preparedStatements: false });
    try {
      const ctx = { organizationId: org, userId: null };
      const generic = prepared(`SELECT id FROM organization WHERE id = $1 AND $2::int > 0 /* rt unnamed */`, { generic: true });
      for (let i = 1; i <= 3; i++) {
        expect(await plain.tenantRead(ctx, generic, [org, i])).toEqual([{ id: org }]);
        expect((await plain.withTenant(ctx, async (tx) => (await tx.query(generic, [org, i])).rows)).length).toBe(1);
      }
      const kept = await plain.withOwner(async (tx) => (await tx.query<{ name: string }>('SELECT name FROM pg_prepared_statements')).rows);
      expect(kept).toEqual([]);
    } finally {
      await plain.close();
    }
    proxy.take();
  });

  it('a prepared statement that fails on its first use does not leave the connection believing it exists', async () => {
    const ctx = { organizationId: org, userId: null };
    const divides = prepared(`SELECT 1 / $1::int AS x /* rt divides */`);
    await expect(db.tenantRead(ctx, divides, [0])).rejects.toMatchObject({ code: '22012' });
    expect(await db.tenantRead(ctx, divides, [1])).toEqual([{ x: 1 }]);
    await expect(db.tenantRead(ctx, divides, [0])).rejects.toMatchObject({ code: '22012' });
    expect(await db.tenantRead(ctx, divides, [1])).toEqual([{ x: 1 }]);
    const broken = prepared(`SELEC 1 /* rt syntax */`);
    for (let i = 0; i < 3; i++) await expect(db.tenantRead(ctx, broken, [])).rejects.toMatchObject({ code: '42601' });
    expect(await db.tenantRead<{ x: number }>(ctx, 'SELECT 1 AS x')).toEqual([{ x: 1 }]);
    proxy.take();
  });

  it('withTenant: the setup travels with the first statement (one statement = 2 round trips, n statements = n + 1)', async () => {
    const ctx = { organizationId: org, userId: 'u1' };
    const one = await db.withTenant(
      ctx,
      async (tx) => (await tx.query<{ u: string }>(`SELECT current_setting('app.user_id') AS u`)).rows[0].u,
    );
    expect(one).toBe('u1');
    expect(proxy.take()).toBe(2);
    await db.withTenant(ctx, async (tx) => {
      await tx.query('SELECT 1');
      await tx.query('SELECT 2');
      await tx.query('SELECT 3');
    });
    expect(proxy.take()).toBe(4);
    // Drizzle on the transaction gets the same treatment.
    await db.withTenant(ctx, (tx) => tx.orm.execute('SELECT 1'));
    expect(proxy.take()).toBe(2);
  });

  it('a transaction that runs no statement sends nothing', async () => {
    expect(await db.withTenant({ organizationId: org, userId: null }, async () => 42)).toBe(42);
    expect(proxy.take()).toBe(0);
  });

  it('a failing statement rolls back and leaves the connection usable; a failing read too', async () => {
    const ctx = { organizationId: org, userId: null };
    await expect(db.withTenant(ctx, (tx) => tx.query('SELECT 1/0'))).rejects.toMatchObject({ code: '22012' });
    await expect(db.tenantRead(ctx, 'SELECT 1/0')).rejects.toMatchObject({ code: '22012' });
    const rows = await db.tenantRead<{ x: number }>(ctx, 'SELECT 1 AS x');
    expect(rows).toEqual([{ x: 1 }]);
    // Row-level security still confines the reads.
    const seen = await db.tenantRead<{ id: string }>({ organizationId: 'someone-else', userId: null }, 'SELECT id FROM organization');
    expect(seen.map((r) => r.id)).not.toContain(org);
  });
});
