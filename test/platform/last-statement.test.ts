import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/platform/db/index.js';
import { migrate } from '../../src/platform/db/migrate.js';
import { freshDatabase } from '../helpers.js';

/**
 * `Tx.queryAndCommit` and `Tx.queue`, on either database: the transaction's last statement, the statements sent behind
 * it, and the COMMIT; a write sent ahead of the next statement (each without a round trip of its own on PostgreSQL:
 * test/platform/round-trips.test.ts counts them on the wire).
 */
describe('the last statement of a transaction (queryAndCommit), and queued writes (queue)', () => {
  let fresh: Awaited<ReturnType<typeof freshDatabase>>;
  let db: Database;
  const org = `last-${Date.now()}`;
  const ctx = { organizationId: org, userId: 'u1' };
  const rename = `UPDATE organization SET name = $2 WHERE id = $1 RETURNING name`;
  const nameOf = async () =>
    (await db.withSystem((tx) => tx.query<{ name: string }>('SELECT name FROM organization WHERE id = $1', [org]))).rows[0].name;

  beforeAll(async () => {
    fresh = await freshDatabase();
    db = fresh.db;
    await migrate(db);
    await db.withSystem((tx) => tx.query(`INSERT INTO organization (id, name, slug) VALUES ($1, 'start', $1)`, [org]));
  });

  afterAll(async () => {
    await db?.close();
    await fresh?.drop();
  });

  it('answers with its own rows and commits it, after the statements before it and with those behind it, in order', async () => {
    const rows = await db.withTenant(ctx, async (tx) => {
      await tx.query(rename, [org, 'a']);
      return (
        await tx.queryAndCommit<{ name: string }>(
          `UPDATE organization SET name = name || 'b' WHERE id = $1 RETURNING name`,
          [org],
          [[`UPDATE organization SET name = name || 'c' WHERE id = $1 RETURNING name`, [org]]],
        )
      ).rows;
    });
    expect(rows).toEqual([{ name: 'ab' }]);
    expect(await nameOf()).toBe('abc');
  });

  it('commits nothing when a statement behind it fails', async () => {
    await expect(
      db.withTenant(ctx, async (tx) => {
        await tx.query(rename, [org, 'lost']);
        return tx.queryAndCommit(rename, [org, 'lost too'], [['SELECT 1 / 0']]);
      }),
    ).rejects.toMatchObject({ code: '22012' });
    expect(await nameOf()).toBe('abc');
  });

  it('a queued write runs before the statement after it, and before the COMMIT when it is the last', async () => {
    const seen = await db.withTenant(ctx, async (tx) => {
      await tx.queue(rename, [org, 'queued']);
      const read = (await tx.query<{ name: string }>('SELECT name FROM organization WHERE id = $1', [org])).rows[0].name;
      await tx.queue(`UPDATE organization SET name = name || ' twice' WHERE id = $1`, [org]);
      return read;
    });
    expect(seen).toBe('queued');
    expect(await nameOf()).toBe('queued twice');
    // Queued ahead of the last statement too.
    await db.withTenant(ctx, async (tx) => {
      await tx.queue(rename, [org, 'q']);
      await tx.queryAndCommit(`UPDATE organization SET name = name || ' then last' WHERE id = $1`, [org]);
    });
    expect(await nameOf()).toBe('q then last');
  });

  it('a queued write that fails fails the transaction: nothing of it is committed', async () => {
    await expect(
      db.withTenant(ctx, async (tx) => {
        await tx.query(rename, [org, 'lost']);
        await tx.queue('SELECT 1 / 0');
      }),
    ).rejects.toMatchObject({ code: '22012' });
    expect(await nameOf()).toBe('q then last');
  });

  it('refuses a statement after it, and what it committed stays committed', async () => {
    await expect(
      db.withTenant(ctx, async (tx) => {
        await tx.queryAndCommit(rename, [org, 'kept']);
        await tx.query(rename, [org, 'never']);
      }),
    ).rejects.toThrow(/after the transaction/);
    expect(await nameOf()).toBe('kept');
    // The database is usable as before.
    await db.withTenant(ctx, (tx) => tx.queryAndCommit(rename, [org, 'again']));
    expect(await nameOf()).toBe('again');
  });
});
